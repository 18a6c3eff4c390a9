#!/usr/bin/env bash
# integration_faults:
#  1. garbage: B floods A (af_packet over a veth pair) with malformed frames of every kind
#     (random bytes, wrong UDP port, truncated headers, bad IP/UDP/ICMP checksums, bad UDP
#     length, fragments, non-IPv4 ethertype, bad ARP, bad magic) before the verified exchange:
#     A must count drops by reason, not crash, and still complete the exchange.
#  2. reopen: the same pair runs two rounds, each opening, using, and closing (detaching) the
#     same vdev in the same process.
#  3. SIGKILL: over memif, client B is killed mid-exchange; server A must notice (it reports the
#     silence, stays responsive) and complete a new exchange with a restarted B.
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

echo "== 2. two rounds: open, exchange, close, reopen the same vdev"
start_peer A2 ip netns exec "$A" -- --dev fa0 --ip 10.7.0.1/24 --peer 10.7.0.2 --count 1000 --max-frame 1514 --rounds 2
start_peer B2 ip netns exec "$B" -- --dev fb0 --ip 10.7.0.2/24 --peer 10.7.0.1 --count 1000 --max-frame 1514 --rounds 2
wait_peer A2 120
wait_peer B2 120
expect A2 "ROUND 2 ok"
expect B2 "ROUND 2 ok"

echo "== 3. SIGKILL of the peer mid-exchange, then a restarted peer"
SOCK=$WORK/memif.sock
COUNT=300000
start_peer A3 -- --dev "net_memif0,role=server,socket=$SOCK,socket-abstract=no" \
    --ip 10.9.0.1/24 --peer 10.9.0.2 --count "$COUNT" --timeout 120
WATCH=(A3)
wait_until 60 "the memif server's socket" test -S "$SOCK"
start_peer B3 -- --dev "net_memif1,role=client,socket=$SOCK,socket-abstract=no" \
    --ip 10.9.0.2/24 --peer 10.9.0.1 --count "$COUNT" --progress-file "$WORK/B3.progress"
WATCH=(A3 B3)
wait_until 60 "B3 to receive 1000 frames" test -f "$WORK/B3.progress"
kill -9 "$PID_B3"
wait "$PID_B3" 2>/dev/null || true
WATCH=(A3)
wait_until 60 "A3 to report the silent peer" grep -q "peer silent" "$WORK/A3.log"
start_peer B4 -- --dev "net_memif1,role=client,socket=$SOCK,socket-abstract=no" \
    --ip 10.9.0.2/24 --peer 10.9.0.1 --count "$COUNT"
wait_peer A3 120
wait_peer B4 120
expect A3 "RESULT ok .*abandoned=1"
expect B4 "RESULT ok"
show "RESULT"
