#!/usr/bin/env bash
# roce_tshark: RoCEv2 RC over real DPDK ports (net_af_packet on veths in two namespaces), captured
# on the wire and decoded by tshark's InfiniBand dissector.
#
#   ns A: a0 (stack 10.0.0.1) --- pa \
#                                     br0 (ns BR; dumpcap on pa sees both directions)
#   ns B: b0 (stack 10.0.0.2) --- pb /
#
# 1. The API peer's roce phase (transport roce_rc): sends and tagged sends, writes and
#    write_data, reads, fetch_atomic sum and compare_atomic, 1 KiB and 64 KiB, every byte checked
#    by the server's verdict.
# 2. uet-perf --transport roce, each test with --verify: send_bw, read_bw, atomic_bw, and
#    write_bw through a token bucket on pb (BR to B) that drops what exceeds it, so that B's QP
#    sees PSN gaps and NAKs them (go-back-N).
# Every frame the runs put on the wire is in the capture; roce_capture_check.py then checks with
# tshark: no malformed or expert packet, every opcode the stack uses (and the CM's REQ, REP, RTU,
# DREQ, DREP) present, a NAK, PSNs consecutive per QP and direction (retransmissions repeat
# them), lengths against the path MTU and the RETH, and the number of messages of each size
# against what the runs sent. No CNP: this kernel has no qdisc that marks ECN.
# Args: the suite's three peers (lib.sh), then uet-perf and the checker. ROCE_TSHARK_KEEP=FILE
# keeps a copy of the capture.
source "$(dirname "$0")/lib.sh"
UET_PERF=${4:?usage: $0 PEER ENGINE_PEER API_PEER UET_PERF CHECKER}
CHECK=${5:?usage: $0 PEER ENGINE_PEER API_PEER UET_PERF CHECKER}
command -v tshark >/dev/null || { echo "FAIL: tshark missing (apt-get install tshark)"; exit 1; }
command -v dumpcap >/dev/null || { echo "FAIL: dumpcap missing (apt-get install tshark)"; exit 1; }

A=${TAG}a B=${TAG}b BR=${TAG}br
for n in "$A" "$B" "$BR"; do add_ns "$n"; done
ip -n "$BR" link add br0 type bridge
ip -n "$BR" link set br0 up
for x in a b; do
    ns_var=${x^^}
    ip link add "${x}0" netns "${!ns_var}" type veth peer name "p$x" netns "$BR"
    ip -n "$BR" link set "p$x" master br0 up
    ip -n "${!ns_var}" link set "${x}0" up
    ip netns exec "${!ns_var}" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
done

PCAP=$WORK/roce.pcap
ip netns exec "$BR" dumpcap -i pa -B 64 -P -w "$PCAP" >"$WORK/dumpcap.log" 2>&1 &
PID_dumpcap=$!
PIDS+=("$PID_dumpcap")
WATCH=(dumpcap)
wait_until 30 "dumpcap to capture" grep -q "Capturing on" "$WORK/dumpcap.log"

echo "== 1. the API peer's roce phase: 1 KiB and 64 KiB"
API=(--modes roce --sizes 1k,64k)
start_api api_server ip netns exec "$B" -- --role server --dev b0 --ip 10.0.0.2/24 \
    --peer 10.0.0.1 --ready-file "$WORK/api_server.ready" "${API[@]}"
WATCH=(api_server)
wait_until 60 "the API server's port" test -f "$WORK/api_server.ready"
start_api api_client ip netns exec "$A" -- --role client --dev a0 --ip 10.0.0.1/24 \
    --peer 10.0.0.2 "${API[@]}"
WATCH=(api_server api_client)
wait_peer api_client 60
wait_peer api_server 30
expect api_client "VERDICT roce from the server: ok"
expect api_server "VERDICT roce ok"
show "^api_[a-z]+: (roce |VERDICT|RESULT)"

# perf NAME TEST ARGS...: a uet-perf pair over the veths, server in B, client in A, --verify.
N=200
perf() {
    local name=$1
    shift
    local args=(--transport roce "$@" --verify --timeout 20)
    ip netns exec "$B" timeout 60 "$UET_PERF" "${args[@]}" --dev b0 --ip 10.0.0.2/24 \
        >"$WORK/$name-server.log" 2>&1 &
    PIDS+=($!)
    printf -v "PID_$name" '%s' "$!"
    WATCH=("$name")
    wait_until 30 "the $name server" grep -q "Waiting for client" "$WORK/$name-server.log"
    ip netns exec "$A" timeout 60 "$UET_PERF" "${args[@]}" --dev a0 --ip 10.0.0.1/24 10.0.0.2 \
        >"$WORK/$name-client.log" 2>&1 || { echo "FAIL: uet-perf $name client"; return 1; }
    wait_peer "$name" 30
    expect "$name-client" "Verify: OK"
    grep -E '^ +[0-9]+ +[0-9]+ ' "$WORK/$name-client.log" | sed "s/^/$name: /"
}

echo "== 2. uet-perf --transport roce over af_packet: send_bw, read_bw, atomic_bw, write_bw"
perf send send_bw -s 4000 -n "$N"
perf read read_bw -s 4096 -n "$N"
perf atomic atomic_bw -n "$N"
# A token bucket of 32 KiB at 200 Mb/s on the way to B: the requester's window (1,024 packets)
# is far larger, so frames are dropped and go-back-N resends from each NAK. Fewer writes: each
# loss resends the window behind it.
NW=30
ip netns exec "$BR" tc qdisc add dev pb root tbf rate 200mbit burst 32k limit 32k
perf write write_bw -s 65536 -n "$NW"
ip netns exec "$BR" tc -s qdisc show dev pb | grep -o "dropped [0-9]*" | sed 's/^/tbf on pb: /'
ip netns exec "$BR" tc qdisc del dev pb root

kill -INT "$PID_dumpcap"
wait "$PID_dumpcap" || true
cat "$WORK/dumpcap.log"
# "Packets received/dropped on interface 'pa': R/D (...)": a dropped frame would look like a gap.
if ! grep -Eq "received/dropped on interface 'pa': [0-9]+/0 " "$WORK/dumpcap.log"; then
    echo "FAIL: dumpcap dropped frames (or said nothing): the capture is incomplete"
    exit 1
fi

echo "== 3. the capture, decoded by tshark"
[[ -n ${ROCE_TSHARK_KEEP:-} ]] && cp "$PCAP" "$ROCE_TSHARK_KEEP"
# What the runs sent besides their control messages (SENDs of other sizes). api_peer: 8 sends
# and 2 tagged sends of each size, a write and a write_data of each, a read of each of those,
# 16 fetch-and-adds and 2 compare-and-swaps; uet-perf: N (write_bw: NW) operations of its test.
# A send's size counts roce_rc's 16-byte message header.
python3 "$CHECK" "$PCAP" --nak \
    --expect send:1040=10 --expect send:65552=10 --expect send:4016=$N \
    --expect write:1024=2 --expect write:65536=$((2 + NW)) \
    --expect read:1024=2 --expect read:65536=2 --expect read:4096=$N \
    --expect atomic:8=$((16 + 2 + N))
