# Shared by the bench/e2e scripts: where the binaries are, a cleanup that always runs, the raw
# DPDK baseline (dpdk-testpmd txonly -> rxonly over memif) and a uet-perf pair over memif.
# Each side of a pair is pinned to one core (receiver/server on CPU 0, sender/client on CPU 1),
# so the raw test and uet-perf get the same two cores.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${BUILD:-$ROOT/build}
UET_PERF=${UET_PERF:-$BUILD/apps/uet-perf/uet-perf}
SECONDS_PER_RUN=${SECONDS_PER_RUN:-5}
WORK=$(mktemp -d /tmp/uet-e2e.XXXXXX)
PIDS=()
NETNS=()

cleanup() {
    local rc=$?
    for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null || true; done
    for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
    for n in "${NETNS[@]}"; do ip netns del "$n" 2>/dev/null || true; done
    if [[ $rc -ne 0 ]]; then
        for f in "$WORK"/*.log; do [[ -f $f ]] && { echo "---- $f"; tail -40 "$f"; }; done
    fi
    rm -rf "$WORK"
    exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

[[ $(id -u) -eq 0 ]] || { echo "bench/e2e needs root (DPDK vdevs, namespaces)"; exit 1; }
[[ -x $UET_PERF ]] || { echo "no uet-perf at $UET_PERF (build first: make build)"; exit 1; }
command -v dpdk-testpmd >/dev/null || { echo "dpdk-testpmd missing (apt install dpdk)"; exit 1; }
command -v jq >/dev/null || { echo "jq missing (scripts/install-deps.sh)"; exit 1; }

# wait_for SECONDS WHAT COMMAND...: bounded poll.
wait_for() {
    local limit=$1 what=$2
    shift 2
    local end=$((SECONDS + limit))
    until "$@" >/dev/null 2>&1; do
        ((SECONDS < end)) || { echo "FAIL: waited ${limit}s for $what"; return 1; }
        sleep 0.1
    done
}

# raw_memif_pps FRAME_BYTES: dpdk-testpmd txonly (forwarding on CPU 1) -> rxonly (forwarding on
# CPU 0) over memif for SECONDS_PER_RUN seconds; prints the sender's packets/s. memif's TX only
# counts frames that found room in the ring, so the sender's rate is what the receiver took in.
# Each testpmd's main lcore (statistics, mostly asleep) sits on the other CPU, so it never
# preempts its own forwarding lcore. testpmd prints its rate "since last show" each period; the
# first periods cover EAL start and the memif handshake (0 pps), and a period can stretch when
# its main lcore is starved: the result is the mean of the non-zero periods weighted by time,
# i.e. packets sent over the time they took, from the periodic cumulative counters.
# RAW_MEMIF_ARGS: more memif devargs for both testpmds (",bsize=9216" for jumbo frames).
RAW_MEMIF_ARGS=${RAW_MEMIF_ARGS:-}
raw_memif_pps() {
    local frame=$1 sock=$WORK/raw.sock eal=(--no-huge --no-pci -m 512 --no-telemetry)
    # --mbuf-size before --txpkts: testpmd checks the segment against the mbuf size it knows
    # when it parses --txpkts, and otherwise falls back to 64-byte frames for jumbo sizes.
    local tp=(--total-num-mbufs=8192 --mbuf-size=$((frame > 1900 ? frame + 256 : 2048)))
    rm -f "$sock"
    # --stats-period keeps the receiver running without a terminal (else it waits for Enter).
    dpdk-testpmd --lcores 0@1,1@0 "${eal[@]}" --file-prefix "raw-rx-$$" \
        --vdev "net_memif0,role=server,socket=$sock,socket-abstract=no$RAW_MEMIF_ARGS" \
        -- --forward-mode=rxonly --stats-period 100 "${tp[@]}" >"$WORK/raw-rx.log" 2>&1 &
    local rx=$!
    PIDS+=($rx)
    wait_for 30 "testpmd's memif socket" test -S "$sock"
    dpdk-testpmd --lcores 0@0,1@1 "${eal[@]}" \
        --file-prefix "raw-tx-$$" --vdev "net_memif0,role=client,socket=$sock,socket-abstract=no$RAW_MEMIF_ARGS" \
        -- "${tp[@]}" --forward-mode=txonly --txpkts="$frame" --stats-period 1 \
        >"$WORK/raw-tx.log" 2>&1 &
    local tx=$!
    PIDS+=($tx)
    # The main thread prints the statistics once a second, on the CPU where the receiver's
    # forwarding thread spins: at the default priority it ran every 2-3 s (too few periods in a
    # short run). Only that thread (the process's first) is raised; the forwarding ones are not.
    wait_for 30 "testpmd's forwarding" grep -q "forwarding - ports" "$WORK/raw-tx.log"
    renice -n -10 -p "$tx" >/dev/null 2>&1 || true
    sleep $((SECONDS_PER_RUN + 1))
    kill -INT "$tx" 2>/dev/null || true
    wait "$tx" 2>/dev/null || true
    kill -9 "$rx" 2>/dev/null || true
    wait "$rx" 2>/dev/null || true
    # Each period prints the port's cumulative "TX-packets: N" and its "Tx-pps: R" since the last
    # show; a period's length is its packets over its rate. Sum packets and time over the
    # periods that moved traffic.
    awk '/TX-packets:/ && /TX-errors:/ { cum = $2 }
         /Tx-pps:/ { d = cum - last; last = cum; if ($2 > 0 && d > 0) { pk += d; t += d / $2 } }
         END { if (t > 0) printf "%.0f\n", pk / t; else print 0 }' "$WORK/raw-tx.log"
}

# The point-to-point path these scripts measure: a fixed window on one path (--cc none --lb
# static), uet-perf's defaults before NSCC with REPS spraying became them, so that figures stay
# comparable with raw testpmd, with kernel TCP on one veth, between builds (old ones included)
# and with the figures of docs/results.md. uet_pair and instr_per_packet.sh pass these first:
# --cc or --lb in a script's arguments (A_OPTS, B_OPTS...) come later and win.
P2P_OPTS=(--cc none --lb static)

# uet_pair NAME "SERVER-PREFIX" "CLIENT-PREFIX" SERVER-DEV-ARGS -- CLIENT-DEV-ARGS -- TEST ARGS...
# A uet-perf server pinned to CPU 0 and a client pinned to CPU 1 (taskset and the EAL's lcore);
# each side's command starts with its prefix (e.g. "ip netns exec A", or "" for none). The
# client's JSON ends in $WORK/NAME.json; the client's output is printed. Fails on any error.
# The client's arguments end with the server's address. Both run with P2P_OPTS.
uet_pair() {
    local name=$1 sprefix=$2 cprefix=$3
    shift 3
    local sargs=() cargs=()
    while [[ $1 != -- ]]; do sargs+=("$1"); shift; done
    shift
    while [[ $1 != -- ]]; do cargs+=("$1"); shift; done
    shift
    # shellcheck disable=SC2086
    $sprefix taskset -c 0 "$UET_PERF" "${P2P_OPTS[@]}" "$@" --eal "-l 0" "${sargs[@]}" \
        >"$WORK/$name-server.log" 2>&1 &
    local server=$!
    PIDS+=($server)
    wait_for 60 "the uet-perf server" grep -q "Waiting for client" "$WORK/$name-server.log"
    # shellcheck disable=SC2086
    local crc=0 src=0
    $cprefix taskset -c 1 "$UET_PERF" "${P2P_OPTS[@]}" "$@" --eal "-l 1" --out_json_file "$WORK/$name.json" \
        "${cargs[@]}" >"$WORK/$name-client.log" 2>&1 || crc=$?
    wait "$server" || src=$?
    cat "$WORK/$name-client.log"
    # Callers often run this in $(...), where set -e does not reach: say it and fail here.
    if ((crc != 0 || src != 0)); then
        echo "FAIL: uet-perf $name: client exit $crc, server exit $src; the server said:"
        tail -20 "$WORK/$name-server.log"
        return 1
    fi
}

# uet_memif NAME TEST ARGS...: uet_pair over a memif link on this machine. MEMIF_PORT=uet (the
# default) runs it on uet's own memif port (providers/memif: frames built and read in the
# ring, no copy by the port), MEMIF_PORT=dpdk on DPDK's net_memif PMD (a copy each way).
# MEMIF_ARGS: more device keys for both sides (",rsize=9").
MEMIF_PORT=${MEMIF_PORT:-uet}
MEMIF_ARGS=${MEMIF_ARGS:-}
uet_memif() {
    local name=$1 sock=$WORK/$1.sock dev=uet_memif0
    shift
    [[ $MEMIF_PORT == dpdk ]] && dev=net_memif0
    rm -f "$sock"
    uet_pair "$name" "" "" \
        --dev "$dev,role=server,socket=$sock,socket-abstract=no$MEMIF_ARGS" --ip 10.9.0.1/24 -- \
        --dev "$dev,role=client,socket=$sock,socket-abstract=no$MEMIF_ARGS" --ip 10.9.0.2/24 10.9.0.1 \
        -- "$@"
}

# json_result NAME KEY: a number from the last result of the client's JSON.
json_result() { jq -r "[.results] | flatten | last | .$2" "$WORK/$1.json"; }

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b <= 0) print "nan"; else printf "%.3f\n", a / b }'; }

# The host's mode: the round trip of a cache line between the two CPUs (bench/probe), in ns; "?"
# when the probe is not built. This VM's host keeps both vCPUs on one core complex (~55 ns) or
# puts them on two (~330 ns) and switches every few seconds; memif, whose every frame crosses
# between the cores, runs ~4x slower (raw testpmd up to 10x) in the second mode.
CORE_PROBE=${CORE_PROBE:-$BUILD/bench/uet-core-to-core}
CORE_FAST_NS=${CORE_FAST_NS:-150}
core_ns() {
    if [[ -x $CORE_PROBE ]]; then "$CORE_PROBE" 0 1 | awk '{ print $2 }'; else echo "?"; fi
}

# mode_of NS...: fast when every probe was under CORE_FAST_NS, slow when every one was above,
# mixed otherwise (the host switched during the pair), unknown without the probe.
mode_of() {
    local fast=0 slow=0 n
    for n in "$@"; do
        [[ $n == "?" ]] && { echo unknown; return; }
        if ((n < CORE_FAST_NS)); then fast=$((fast + 1)); else slow=$((slow + 1)); fi
    done
    if ((slow == 0)); then echo fast; elif ((fast == 0)); then echo slow; else echo mixed; fi
}

# judged_rounds: the ratios of the rounds of $WORK/rounds.txt the bars are judged on: made in the
# fast mode by the probe (or without it) and with raw testpmd at its fast rate, at least
# RAW_FAST_SHARE (0.7) of the best raw rate of the run. The probe has said "fast" of rounds in
# which raw testpmd ran at a fifth of its rate (and uet at up to twice raw's): those say nothing
# of the bar. Rounds lines hold "frames X Mpps" (raw) and end with the ratio.
judged_rounds() {
    [[ -f $WORK/rounds.txt ]] || return 0
    awk -v share="${RAW_FAST_SHARE:-0.7}" '
        { raw[NR] = 0; if (match($0, /frames [0-9.]+ Mpps/)) { split(substr($0, RSTART, RLENGTH), w, " "); raw[NR] = w[2] }
          if (raw[NR] > best) best = raw[NR]; ok[NR] = $0 ~ /, (fast|unknown)\):/; r[NR] = $NF }
        END { for (i = 1; i <= NR; i++) if (ok[i] && raw[i] >= share * best) print r[i] }' "$WORK/rounds.txt"
}

# more_rounds R: whether to run round R: until ROUNDS rounds count (judged_rounds), and at most
# MAX_ROUNDS (3 x ROUNDS by default) in all. Reads rounds.txt.
more_rounds() {
    local r=$1 max=${MAX_ROUNDS:-$((ROUNDS * 3))}
    ((r <= max)) || return 1
    (($(judged_rounds | wc -l) < ROUNDS))
}

# summarize_rounds: from $WORK/rounds.txt, lines "round N (cores A/B/C ns, MODE): ...; ratio R"
# (probes before the raw run, between the two, after uet's), the ratios of each mode and, last,
# `ratio R`: the median of the judged rounds (judged_rounds: both runs made with the two cores in
# one complex, the mode the bars are judged in, and raw testpmd at its fast rate), or of every
# round when none was (said so).
summarize_rounds() {
    local f=$WORK/rounds.txt mode judged
    echo "ratios: $(awk '{ print $NF }' "$f" | tr '\n' ' ')"
    for mode in fast slow mixed unknown; do
        grep -q ", $mode):" "$f" || continue
        echo "$mode-mode rounds: $(grep ", $mode):" "$f" | awk '{ print $NF }' | tr '\n' ' ')(median" \
            "$(grep ", $mode):" "$f" | awk '{ print $NF }' | median | xargs printf '%.3f'))"
    done
    judged=$(judged_rounds)
    if [[ -n $judged ]]; then
        echo "judged rounds (fast mode, raw at ${RAW_FAST_SHARE:-0.7}+ of its best, $(grep -o 'frames [0-9.]* Mpps' "$f" | awk '{ print $2 }' | sort -g | tail -1) Mpps): $(echo "$judged" | tr '\n' ' ')"
        echo "ratio $(echo "$judged" | median | xargs printf '%.3f')"
    else
        echo "no round ran in the fast mode with raw testpmd at its fast rate: no verdict; the median of every round follows"
        echo "ratio $(awk '{ print $NF }' "$f" | median | xargs printf '%.3f')"
    fi
}

# median: the median of the numbers on stdin, one per line (mean of the middle two if even).
median() {
    sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else printf "%.4f\n", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# This host's speed moves by 2-3x over minutes (the raw memif rate has been 4-27 Mpps with the
# same command), so one raw run and one uet run a minute apart can land in different modes.
# The ratio scripts measure ROUNDS pairs, each raw then uet back to back, and report the median
# of the pairs' ratios (ROUNDS, 3 by default).
