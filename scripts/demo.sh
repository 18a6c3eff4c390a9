#!/usr/bin/env bash
# make run: a uet-perf server and client on this machine over memif, one core each (server on
# CPU 0, client on CPU 1): write_bw for 4 KiB .. 4 MiB, then send_lat for small messages, every
# byte received checked (--verify). Each size is its own server/client pair, as in perftest.
# A point-to-point link: both sides run --cc none --lb static (bench/e2e/lib.sh's P2P_OPTS, shown
# in the settings block), the path the figures of docs/results.md were measured on, not
# uet-perf's defaults for a shared fabric (NSCC with REPS spraying).
#   scripts/demo.sh [BUILD_DIR]          (SECONDS_PER_RUN=2: duration of each write_bw size)
set -euo pipefail
BUILD=$(cd "${1:-build}" && pwd)
export BUILD
export SECONDS_PER_RUN=${SECONDS_PER_RUN:-2}
source "$(dirname "$0")/../bench/e2e/lib.sh"

rows() { grep -E '^ *[0-9]+ +[0-9]+ ' || true; }
# Every run must say how its check went; a missing verdict is a failure, not a blank line.
verdict() {
    local v
    v=$(grep -E '^ *Verify:' | sed 's/^ */    /') || true
    [[ -n $v ]] || { echo "    FAIL: no 'Verify:' line from uet-perf"; exit 1; }
    echo "$v"
}
settings() { sed -n '/^-\{20,\}/,/#bytes/{p;/#bytes/q}'; }

echo "== uet-perf write_bw over memif: RUD, ${P2P_OPTS[*]}, ${SECONDS_PER_RUN} s per size, --verify"
first=1
for shift in $(seq 12 22); do
    out=$(uet_memif "w$shift" write_bw -s $((1 << shift)) -D "$SECONDS_PER_RUN" --verify --report_gbits) ||
        { echo "$out"; exit 1; }
    if ((first)); then echo "$out" | settings; first=0; fi
    echo "$out" | rows
    echo "$out" | verdict
done

echo
echo "== uet-perf send_lat over memif: RUD, ${P2P_OPTS[*]}, --verify"
first=1
for size in 8 64 512; do
    out=$(uet_memif "l$size" send_lat -s "$size" -n 5000 --verify) || { echo "$out"; exit 1; }
    if ((first)); then echo "$out" | settings | sed -n '/#bytes/p'; first=0; fi
    echo "$out" | rows
    echo "$out" | verdict
done
