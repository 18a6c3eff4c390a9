#!/usr/bin/env bash
# ab_builds: the same uet-perf test over memif with two builds of uet, or with two sets of
# options, interleaved round by round (A B, B A, A B...) so that both share the machine's
# conditions; this host's speed moves by 2-3x over minutes, so only runs taken side by side
# compare. Prints each run (with the core-to-core probe after it, lib.sh), the median of each
# and their ratio B/A, the geometric mean of the rounds' own B/A with how many B won, and the
# same over the rounds made wholly in the host's fast mode. An A/A run (one build, A_OPTS="-Q
# 100", the default spelled out) gave a geometric mean of 1.082 over 12 rounds (9 "won"):
# a difference of less than ~10% needs more rounds, or instruction counts (instr_per_packet.sh).
#   OLD=/path/to/build-a NEW=build bench/e2e/ab_builds.sh send_bw -s 8
#   A_OPTS="--distinct-buffers" bench/e2e/ab_builds.sh write_bw -s 65536   (one build: OLD=NEW)
#   (ROUNDS=4, SECONDS_PER_RUN=3; KEY=MsgRate by default for send/atomic tests, else BW_average)
# Each build directory holds apps/uet-perf/uet-perf (with the libuet it was linked against).
# Both run the point-to-point path, --cc none --lb static (lib.sh's P2P_OPTS), whatever the
# builds' defaults, so a build from before NSCC with REPS became uet-perf's default compares like
# for like; B_OPTS="--cc nscc --lb reps" measures what the default costs against that.
source "$(dirname "$0")/lib.sh"
ROUNDS=${ROUNDS:-4}
SECONDS_PER_RUN=${SECONDS_PER_RUN:-3}
NEW=${NEW:-$BUILD}
OLD=${OLD:-$NEW}
A_OPTS=${A_OPTS:-}
B_OPTS=${B_OPTS:-}
[[ $OLD != "$NEW" || $A_OPTS != "$B_OPTS" ]] || { echo "A and B are the same: set OLD, A_OPTS or B_OPTS"; exit 1; }
(($# > 0)) || { echo "usage: [OLD=dir] [NEW=dir] [A_OPTS=..] [B_OPTS=..] $0 TEST [uet-perf options]"; exit 1; }
case "$1" in
    send_bw | atomic_bw) KEY=${KEY:-MsgRate} ;;
    *) KEY=${KEY:-BW_average} ;;
esac
builds=("$OLD" "$NEW")
opts=("$A_OPTS" "$B_OPTS")
names=(A B)
for b in "${builds[@]}"; do
    [[ -x $b/apps/uet-perf/uet-perf ]] || { echo "no uet-perf in $b"; exit 1; }
done
for ((r = 1; r <= ROUNDS; r++)); do
    probes=("$(core_ns)")
    # The order alternates, so that whatever favours a pair's first or second run (the host's
    # drift within a round) is not booked to A or B.
    order=(0 1)
    ((r % 2 == 0)) && order=(1 0)
    for i in "${order[@]}"; do
        n="${names[$i]}-$r"
        # shellcheck disable=SC2086
        UET_PERF=${builds[$i]}/apps/uet-perf/uet-perf \
            uet_memif "$n" "$@" ${opts[$i]} -D "$SECONDS_PER_RUN" --report_gbits >/dev/null
        probes+=("$(core_ns)")
        printf '%s %d %s %s (cores %s ns)\n' "${names[$i]}" "$r" "$KEY" "$(json_result "$n" "$KEY")" \
            "${probes[-1]}" | tee -a "$WORK/runs.txt"
    done
    echo "$r $(mode_of "${probes[@]}")" >>"$WORK/modes.txt"
done
# medians NAME [ROUNDS...]: the median of NAME's runs in those rounds (all without any).
medians() {
    local name=$1
    shift
    grep "^$name " "$WORK/runs.txt" |
        awk -v keep=" $* " '$2 + 0 > 0 && (keep == "  " || index(keep, " " $2 " ")) { print $4 }' | median
}
a=$(medians A)
b=$(medians B)
echo "median A ($OLD $A_OPTS) $KEY $a"
echo "median B ($NEW $B_OPTS) $KEY $b"
echo "B/A $(ratio "$b" "$a")"
awk '{ v[$1 " " $2] = $4; if ($2 > m) m = $2 }
     END { p = 0; n = 0; w = 0
           for (r = 1; r <= m; r++) {
               if (!(("A " r) in v) || !(("B " r) in v) || v["A " r] <= 0 || v["B " r] <= 0) continue
               p += log(v["B " r] / v["A " r]); n++; if (v["B " r] > v["A " r]) w++ }
           if (n) printf "geometric mean of the rounds'"'"' B/A %.3f over %d rounds (B higher in %d)\n", exp(p / n), n, w }' \
    "$WORK/runs.txt"
# Only rounds whose probes (before the pair, after its first run, after its second) all found
# the cores in one complex compare without the host's mode in between.
fast=$(awk '$2 == "fast" { print $1 }' "$WORK/modes.txt" | tr '\n' ' ')
if [[ -n $fast ]]; then
    a=$(medians A $fast)
    b=$(medians B $fast)
    echo "fast-mode rounds ($fast): median A $a, median B $b, B/A $(ratio "$b" "$a")"
else
    echo "no round ran wholly in the host's fast mode"
fi
