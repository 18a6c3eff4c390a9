#!/usr/bin/env bash
# instr_per_packet: instructions one side of a uet-perf pair over memif spends per frame, counted
# by callgrind (valgrind) rather than timed, so two builds or two option sets compare exactly on
# a host whose speed moves by 2-3x over minutes. The measured side runs under callgrind, the other
# natively; each test runs twice (-n N1 and -n N2 iterations) and the difference of the two
# instruction counts over the difference of their frames (the measured side's port counters:
# frames sent for the client, received for the server) is the cost per frame, start-up excluded.
#   bench/e2e/instr_per_packet.sh write_bw -s 65536           (SIDE=client, N1=2000, N2=6000)
#   SIDE=server bench/e2e/instr_per_packet.sh write_bw -s 65536
#   N1=20000 N2=60000 bench/e2e/instr_per_packet.sh send_bw -s 8
# The client (the sender in one-way tests) is the slower side under callgrind, so the counts
# hold no idle polling worth speaking of; measured as the server, the receiver is the slow one and
# the native sender may time out and resend (its counters are printed). BUILD as in lib.sh.
# Both sides run --cc none --lb static (lib.sh's P2P_OPTS): the point-to-point path, comparable
# between builds whatever their defaults; --cc/--lb among the arguments override it.
# OUT=file keeps the last callgrind profile (callgrind_annotate OUT). MEMIF_PORT=uet (the
# default, uet's own memif port) or dpdk (DPDK's net_memif PMD), as in lib.sh.
# FUNCS="name;name..." also prints, for each function whose name contains one of them, its
# inclusive instructions per frame by the same difference of the two runs: a function's count
# does not move with the side's idle polls, which make the whole side's count of a small-message
# run vary by ~12% between runs. E.g. FUNCS="reassembly::place(;endpoint_impl::post_message(".
# The measured side's idle polls are printed too (its "Polling:" line): they are in the whole
# side's count and in the inclusive count of any function called on every poll.
# TOP=N also prints the N functions with the most exclusive (self) instructions per frame, by the
# same difference, each function's code summed over the files callgrind attributes it to (its
# inlined callees' lines count where they came from: a header's inline function is its own row).
source "$(dirname "$0")/lib.sh"
SIDE=${SIDE:-client}
N1=${N1:-2000}
N2=${N2:-6000}
OUT=${OUT:-}
command -v valgrind >/dev/null || { echo "valgrind missing (apt install valgrind)"; exit 1; }
[[ $SIDE == client || $SIDE == server ]] || { echo "SIDE is client or server"; exit 1; }
(($# > 0)) || { echo "usage: [SIDE=client|server] [N1=..] [N2=..] $0 TEST [uet-perf options]"; exit 1; }

# measure NAME N TEST ARGS...: one pair; sets IR and FRAMES of the measured side.
measure() {
    local name=$1 n=$2
    shift 2
    local cg=$WORK/$name.callgrind sock=$WORK/$name.sock dev=uet_memif0
    [[ $MEMIF_PORT == dpdk ]] && dev=net_memif0
    local grind=(valgrind --tool=callgrind "--callgrind-out-file=$cg")
    local server=("$UET_PERF") client=("$UET_PERF")
    if [[ $SIDE == server ]]; then server=("${grind[@]}" "$UET_PERF"); else client=("${grind[@]}" "$UET_PERF"); fi
    rm -f "$sock"
    # --timeout: the control exchange waits for the slow side under valgrind.
    taskset -c 0 "${server[@]}" "${P2P_OPTS[@]}" "$@" -n "$n" --timeout 300 --stats --eal "-l 0" \
        --dev "$dev,role=server,socket=$sock,socket-abstract=no" --ip 10.9.0.1/24 \
        >"$WORK/$name-server.log" 2>&1 &
    local spid=$!
    PIDS+=($spid)
    wait_for 120 "the uet-perf server" grep -q "Waiting for client" "$WORK/$name-server.log"
    taskset -c 1 "${client[@]}" "${P2P_OPTS[@]}" "$@" -n "$n" --timeout 300 --stats --eal "-l 1" \
        --dev "$dev,role=client,socket=$sock,socket-abstract=no" --ip 10.9.0.2/24 10.9.0.1 \
        >"$WORK/$name-client.log" 2>&1 || { echo "FAIL: client"; tail -20 "$WORK/$name-client.log"; return 1; }
    wait "$spid" || { echo "FAIL: server"; tail -20 "$WORK/$name-server.log"; return 1; }
    local log=$WORK/$name-$SIDE.log field=tx
    [[ $SIDE == server ]] && field=rx
    local ir frames
    ir=$(grep -o 'refs: *[0-9,]*' "$log" | tr -d ', ' | cut -d: -f2)
    frames=$(grep -o "Port: rx frames [0-9]*, tx frames [0-9]*" "$log" |
        awk -v f="$field" '{ print f == "rx" ? $4 + 0 : $7 + 0 }')
    [[ -n $ir && -n $frames ]] || { echo "FAIL: no count in $log"; tail -20 "$log"; return 1; }
    grep -E '^ (PDS|RoCE):' "$WORK/$name-client.log" | sed 's/^/  client /' || true
    # Its idle polls, which the whole side's count holds (and inclusive counts of functions
    # called on every poll, such as endpoint_impl::process): they vary between runs.
    grep '^ Polling:' "$log" | sed "s/^/  $SIDE /"
    if [[ -n $OUT ]]; then cp "$cg" "$OUT"; fi
    PROFILE=$cg
    IR=$ir
    FRAMES=$frames
}

# inclusive NAME PROFILE: the largest inclusive count of a function whose name contains NAME
# (callgrind_annotate lists a function once per file its code came from; the largest holds it).
inclusive() {
    callgrind_annotate --inclusive=yes --threshold=100 "$2" 2>/dev/null | tr -d ',' |
        awk -v f="$1" 'index($0, f) && $1 ~ /^[0-9]+$/ { if ($1 > m) m = $1 } END { print m + 0 }'
}

measure small "$N1" "$@"
ir1=$IR f1=$FRAMES
profile1=$WORK/small-profile.callgrind
cp "$PROFILE" "$profile1"
measure large "$N2" "$@"
ir2=$IR f2=$FRAMES
echo "$SIDE, -n $N1: $ir1 instructions, $f1 frames"
echo "$SIDE, -n $N2: $ir2 instructions, $f2 frames"
awk -v a="$ir1" -v b="$ir2" -v x="$f1" -v y="$f2" 'BEGIN {
    if (y <= x) { print "FAIL: no more frames with more iterations"; exit 1 }
    printf "instructions per frame %.0f\n", (b - a) / (y - x) }'
# self_counts PROFILE: "count<TAB>function" per function, exclusive, summed over source files.
self_counts() {
    callgrind_annotate --auto=no --threshold=100 "$1" 2>/dev/null | tr -d ',' |
        awk '$1 ~ /^[0-9]+$/ && !/PROGRAM TOTALS/ {
            c = $1; sub(/^[0-9]+ +(\([ 0-9.%]+\) +)?/, ""); sub(/^[^:]*:/, ""); sub(/ \[[^]]*\]$/, "")
            s[$0] += c } END { for (f in s) printf "%d\t%s\n", s[f], f }'
}

if [[ -n ${TOP:-} ]]; then
    echo "  most self instructions per frame (function):"
    join -t $'\t' -1 2 -2 2 -a 2 -e 0 -o 0,1.1,2.1 <(self_counts "$profile1" | sort -t $'\t' -k2) \
        <(self_counts "$PROFILE" | sort -t $'\t' -k2) |
        awk -F '\t' -v x="$f1" -v y="$f2" '{ printf "%9.1f  %s\n", ($3 - $2) / (y - x), substr($1, 1, 150) }' |
        sort -rn | awk -v n="$TOP" 'NR <= n'
fi
if [[ -n ${FUNCS:-} ]]; then
    IFS=';' read -ra names <<<"$FUNCS"
    for name in "${names[@]}"; do
        awk -v n="$name" -v a="$(inclusive "$name" "$profile1")" -v b="$(inclusive "$name" "$PROFILE")" \
            -v x="$f1" -v y="$f2" 'BEGIN { printf "  %s: %.0f per frame\n", n, (b - a) / (y - x) }'
    done
fi
