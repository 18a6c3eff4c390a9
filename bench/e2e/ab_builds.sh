#!/usr/bin/env bash
# ab_builds: the same uet-perf test over memif with two builds of uet, interleaved round by round
# (A, B, A, B...) so that both share the machine's conditions; this host's speed moves by
# 20-50% over minutes, so only runs taken side by side compare. Prints each run and, last, the
# median of each build and their ratio B/A.
#   OLD=/path/to/build-a NEW=build bench/e2e/ab_builds.sh send_bw -s 8
#   (ROUNDS=4, SECONDS_PER_RUN=3; KEY=MsgRate by default for send/atomic tests, else BW_average)
# Each build directory holds apps/uet-perf/uet-perf (with the libuet it was linked against).
source "$(dirname "$0")/lib.sh"
ROUNDS=${ROUNDS:-4}
SECONDS_PER_RUN=${SECONDS_PER_RUN:-3}
OLD=${OLD:?set OLD to the build directory of A}
NEW=${NEW:-$BUILD}
(($# > 0)) || { echo "usage: OLD=dir [NEW=dir] $0 TEST [uet-perf options]"; exit 1; }
case "$1" in
    send_bw | atomic_bw) KEY=${KEY:-MsgRate} ;;
    *) KEY=${KEY:-BW_average} ;;
esac
builds=("$OLD" "$NEW")
names=(A B)
for b in "${builds[@]}"; do
    [[ -x $b/apps/uet-perf/uet-perf ]] || { echo "no uet-perf in $b"; exit 1; }
done
for ((r = 1; r <= ROUNDS; r++)); do
    for i in 0 1; do
        n="${names[$i]}-$r"
        UET_PERF=${builds[$i]}/apps/uet-perf/uet-perf \
            uet_memif "$n" "$@" -D "$SECONDS_PER_RUN" --report_gbits >/dev/null
        printf '%s %d %s %s\n' "${names[$i]}" "$r" "$KEY" "$(json_result "$n" "$KEY")" |
            tee -a "$WORK/runs.txt"
    done
done
a=$(grep "^A " "$WORK/runs.txt" | awk '{ print $4 }' | median)
b=$(grep "^B " "$WORK/runs.txt" | awk '{ print $4 }' | median)
echo "median A ($OLD) $KEY $a"
echo "median B ($NEW) $KEY $b"
echo "B/A $(ratio "$b" "$a")"
