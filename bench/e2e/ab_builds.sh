#!/usr/bin/env bash
# ab_builds: the same uet-perf test over memif with two builds of uet, or with two sets of
# options, interleaved round by round (A, B, A, B...) so that both share the machine's
# conditions; this host's speed moves by 2-3x over minutes, so only runs taken side by side
# compare. Prints each run and, last, the median of each and their ratio B/A.
#   OLD=/path/to/build-a NEW=build bench/e2e/ab_builds.sh send_bw -s 8
#   A_OPTS="--distinct-buffers" bench/e2e/ab_builds.sh write_bw -s 65536   (one build: OLD=NEW)
#   (ROUNDS=4, SECONDS_PER_RUN=3; KEY=MsgRate by default for send/atomic tests, else BW_average)
# Each build directory holds apps/uet-perf/uet-perf (with the libuet it was linked against).
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
    for i in 0 1; do
        n="${names[$i]}-$r"
        # shellcheck disable=SC2086
        UET_PERF=${builds[$i]}/apps/uet-perf/uet-perf \
            uet_memif "$n" "$@" ${opts[$i]} -D "$SECONDS_PER_RUN" --report_gbits >/dev/null
        printf '%s %d %s %s\n' "${names[$i]}" "$r" "$KEY" "$(json_result "$n" "$KEY")" |
            tee -a "$WORK/runs.txt"
    done
done
a=$(grep "^A " "$WORK/runs.txt" | awk '{ print $4 }' | median)
b=$(grep "^B " "$WORK/runs.txt" | awk '{ print $4 }' | median)
echo "median A ($OLD $A_OPTS) $KEY $a"
echo "median B ($NEW $B_OPTS) $KEY $b"
echo "B/A $(ratio "$b" "$a")"
