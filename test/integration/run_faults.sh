#!/usr/bin/env bash
# integration_faults:
#  1. garbage: B floods A (af_packet over a veth pair) with malformed frames of every kind
#     (random bytes, wrong UDP port, truncated headers, bad IP/UDP/ICMP checksums, bad UDP
#     length, fragments, non-IPv4 ethertype, bad ARP, bad magic) before the verified exchange:
#     A must count drops by reason, not crash, and still complete the exchange.
#  1b. the same flood into an engine peer (random UET payloads reach the engine's parsers) ahead
#     of a verified transfer in every mode: drops counted by reason, every message intact.
#  2. reopen: the same pair runs two rounds, each opening, using, and closing (detaching) the
#     same vdev in the same process.
#  3. SIGKILL (engines, af_packet): receiver B is killed mid-transfer; sender A's messages must
#     complete with an error after the retry limit (retry_limit / peer_unreachable), and a new
#     transfer to a restarted B must succeed through new PDCs.
source "$(dirname "$0")/lib.sh"

A=${TAG}a B=${TAG}b
add_ns "$A"
add_ns "$B"
ip link add fa0 netns "$A" type veth peer name fb0 netns "$B"
ip -n "$A" link set fa0 up
ip -n "$B" link set fb0 up

echo "== 1. garbage flood, then the exchange"
start_peer A1 ip netns exec "$A" -- --dev fa0 --ip 10.7.0.1/24 --peer 10.7.0.2 --count 2000 --max-frame 1514
start_peer B1 ip netns exec "$B" -- --dev fb0 --ip 10.7.0.2/24 --peer 10.7.0.1 --count 2000 --max-frame 1514 --garbage 2200
wait_peer A1 90
wait_peer B1 90
expect B1 "GARBAGE sent 2200"
expect A1 "RESULT ok"
for reason in steer.other_udp steer.runt steer.other_ethertype host.icmp_bad_checksum \
    host.bad_arp wire.bad_ip_checksum wire.bad_udp_checksum wire.bad_udp_length bad_magic; do
    expect A1 "DROPS.* $reason=[1-9]"
done
show "DROPS"

echo "== 1b. garbage flood into an engine, then a verified transfer"
PLAN_G="uud:1k*20,rud:64k*40,rod:64k*20,rudi:64k*20"
start_engine AG ip netns exec "$A" -- --dev fa0 --ip 10.7.0.1/24 --peer 10.7.0.2 --expect "$PLAN_G" \
    --serve-until "$WORK/BG.done"
start_engine BG ip netns exec "$B" -- --dev fb0 --ip 10.7.0.2/24 --peer 10.7.0.1 --send "$PLAN_G" \
    --garbage 2200 --done-file "$WORK/BG.done"
wait_peer BG 90
wait_peer AG 60
expect BG "GARBAGE sent 2200"
expect AG "RECEIVED received ([0-9]+)/\1 reliable, [0-9]+/[0-9]+ uud, 0 errors"
expect AG "RESULT ok"
for reason in steer.other_udp steer.runt steer.other_ethertype host.icmp_bad_checksum host.bad_arp \
    wire.bad_ip_checksum wire.bad_udp_checksum wire.bad_udp_length wire.bad_pds_type; do
    expect AG "DROPS.* $reason=[1-9]"
done
show "AG: DROPS"

echo "== 2. two rounds: open, exchange, close, reopen the same vdev"
start_peer A2 ip netns exec "$A" -- --dev fa0 --ip 10.7.0.1/24 --peer 10.7.0.2 --count 1000 --max-frame 1514 --rounds 2
start_peer B2 ip netns exec "$B" -- --dev fb0 --ip 10.7.0.2/24 --peer 10.7.0.1 --count 1000 --max-frame 1514 --rounds 2
wait_peer A2 120
wait_peer B2 120
expect A2 "ROUND 2 ok"
expect B2 "ROUND 2 ok"

echo "== 3. engines: SIGKILL of the receiver mid-transfer, then a restarted receiver"
# A's messages to the dead B must complete with an error after the retry limit (retry_limit on
# the open PDC, peer_unreachable on PDCs whose SYN is never answered): nothing hangs. Then a
# restarted B (a fresh engine) takes a new transfer through new PDCs. B stops polling once it
# has written its progress file, so the kill finds the transfer unfinished however fast it runs
# (30 MiB over af_packet can end between the file and the kill).
# The engine fails the messages of a dead peer a PDC at a time (each new PDC's SYN must time out
# on its own), so the first plan stays short and the retry limit low. RUD only: a ROD PDC to a
# dead peer rewinds its whole window on every timeout and took ~20 s to reach the limit.
PLAN1="rud:1m*30"
PLAN2="uud:1k*20,rud:1k*50,rud:1m*8,rod:1m*4,rudi:64k*8"
start_engine B3 ip netns exec "$B" -- --dev fb0 --ip 10.7.0.2/24 --peer 10.7.0.1 --expect "$PLAN1" \
    --progress-file "$WORK/B3.progress" --progress-after 3 --stall-after-progress
start_engine A3 ip netns exec "$A" -- --dev fa0 --ip 10.7.0.1/24 --peer 10.7.0.2 --retries 8 --rto-us 5000 \
    --send "$PLAN1" --allow-errors --then-send "$PLAN2" --then-after "$WORK/go" \
    --done-file "$WORK/A3.done"
WATCH=(A3 B3)
wait_until 60 "B3 to receive 3 messages" test -f "$WORK/B3.progress"
kill -9 "$PID_B3"
wait "$PID_B3" 2>/dev/null || true
WATCH=(A3)
wait_until 60 "A3 to complete every message of the first plan" grep -q "COMPLETIONS epoch=1" "$WORK/A3.log"
expect A3 "COMPLETIONS epoch=1 completed 30/30 \([1-9][0-9]* failed\).* other=0 duplicates=0"
start_engine B4 ip netns exec "$B" -- --dev fb0 --ip 10.7.0.2/24 --peer 10.7.0.1 --expect "$PLAN2" \
    --epoch 2 --ready-file "$WORK/B4.ready" --serve-until "$WORK/A3.done"
WATCH=(A3 B4)
wait_until 60 "the restarted B4 to open its port" test -f "$WORK/B4.ready"
touch "$WORK/go"
wait_peer A3 120
wait_peer B4 60
expect A3 "COMPLETIONS epoch=2 completed ([0-9]+)/\1 \(0 failed\)"
expect A3 "COUNTERS .* pdcs_failed=[1-9]"
expect A3 "RESULT ok"
expect B4 "RECEIVED received ([0-9]+)/\1 reliable, [0-9]+/[0-9]+ uud, 0 errors"
expect B4 "COUNTERS .* target_pdcs_opened=[1-9]"
expect B4 "RESULT ok"
show "COMPLETIONS|RESULT|RECEIVED"

echo "== 4. API: SIGKILL of the server mid-transfer, then a restarted server"
# The client floods the server with sends and writes; the server is killed after 20 messages.
# Every operation the client has outstanding must end in an error completion (retry_limit, or
# peer_unreachable on a PDC whose SYN is never answered), with nothing else failing and nothing
# hanging; then a restarted server (a new engine) takes a full verified phase from the same
# client endpoint, through new PDCs.
start_api S1 ip netns exec "$B" -- --role server --dev fb0 --ip 10.7.0.2/24 --peer 10.7.0.1 \
    --modes rud --fault --progress-file "$WORK/S1.progress" --progress-after 20 \
    --ready-file "$WORK/S1.ready"
WATCH=(S1)
wait_until 60 "the API server S1's port" test -f "$WORK/S1.ready"
start_api C1 ip netns exec "$A" -- --role client --dev fa0 --ip 10.7.0.1/24 --peer 10.7.0.2 \
    --modes rud --sizes 1k,64k,1m,8m --fault --rto-us 5000 --retries 8
WATCH=(S1 C1)
wait_until 60 "S1 to receive 20 messages" test -f "$WORK/S1.progress"
kill -9 "$PID_S1"
wait "$PID_S1" 2>/dev/null || true
WATCH=(C1)
wait_until 60 "C1's outstanding operations to complete" grep -q "FAULT completed" "$WORK/C1.log"
expect C1 "FAULT completed ([0-9]+)/\1: ok=[0-9]+ retry_limit=[0-9]+ peer_unreachable=[0-9]+ other=0"
start_api S2 ip netns exec "$B" -- --role server --dev fb0 --ip 10.7.0.2/24 --peer 10.7.0.1 \
    --modes rud --sizes 1k,64k,1m,8m
WATCH=(C1 S2)
wait_peer C1 120
wait_peer S2 60
expect C1 "HANDSHAKE"
expect C1 "VERDICT rud from the server: ok"
expect C1 "COUNTERS pdcs_opened=([2-9]|[1-9][0-9]+) pdcs_failed=[1-9]"
expect S2 "COUNTERS rud .*target_pdcs_opened=[1-9]"
expect C1 "RESULT ok"
expect S2 "RESULT ok"
show "$API_LINES"
