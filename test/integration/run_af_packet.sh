#!/usr/bin/env bash
# integration_af_packet: "any NIC". Engines A and B run on net_af_packet ports on veths in their
# own namespaces; the veths meet on a bridge (namespace BR) together with a third namespace C
# whose kernel has an address on the same subnet:
#
#   ns A: a0 (stack 10.0.0.1) --- pa \
#   ns B: b0 (stack 10.0.0.2) --- pb -- br0 (ns BR)
#   ns C: c0 (kernel 10.0.0.3) -- pc /
#
# A and B resolve each other by ARP (the engines know only IPs; the host stack fills the MACs).
# Run 1 (MTU 1500 frames, 1400-byte payloads): A sends B RUD, ROD, RUDI messages of 1 KiB to
# 64 MiB and single-packet UUD messages, while B sends A a smaller plan; every message is
# verified byte-exact, exactly once, ROD in order. Run 2 (jumbo: MTU 9000, trust_link_mtu, 8 KiB
# payloads) repeats the large transfers. Then the kernel in C pings both stacks.
# A uses the interface-name shorthand (--dev a0), B the full vdev string.
source "$(dirname "$0")/lib.sh"

A=${TAG}a B=${TAG}b C=${TAG}c BR=${TAG}br
PLAN_AB=${UET_ITEST_PLAN_AB:-uud:1k*200,rud:1k*200,rud:1m*16,rud:64m*3,rod:1k*200,rod:1m*16,rod:64m*3,rudi:1k*200,rudi:1m*8,rudi:64m*2}
PLAN_BA=${UET_ITEST_PLAN_BA:-uud:1400*100,rud:4k*100,rod:256k*8,rudi:64k*8}
PLAN_JUMBO=${UET_ITEST_PLAN_JUMBO:-uud:8k*100,rud:64m*3,rod:64m*3,rudi:64m*2}
for n in "$A" "$B" "$C" "$BR"; do add_ns "$n"; done
ip -n "$BR" link add br0 type bridge
ip -n "$BR" link set br0 mtu 9000 up
for x in a b c; do
    ns_var=${x^^}
    ip link add "${x}0" netns "${!ns_var}" mtu 9000 type veth peer name "p$x" netns "$BR" mtu 9000
    ip -n "$BR" link set "p$x" master br0 up
    ip -n "${!ns_var}" link set "${x}0" up
done
ip netns exec "$A" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
ip netns exec "$B" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
ip -n "$C" addr add 10.0.0.3/24 dev c0
DEV_B="net_af_packet1,iface=b0,qpairs=1,blocksz=20480,framesz=10240,framecnt=512"

echo "== 1. MTU 1500: A -> B $PLAN_AB; B -> A $PLAN_BA"
STOP=$WORK/stop1
start_engine A1 ip netns exec "$A" -- --dev a0 --ip 10.0.0.1/24 --peer 10.0.0.2 \
    --send "$PLAN_AB" --expect "$PLAN_BA" --done-file "$WORK/A1.done" --serve-until "$STOP"
start_engine B1 ip netns exec "$B" -- --dev "$DEV_B" --ip 10.0.0.2/24 --peer 10.0.0.1 \
    --send "$PLAN_BA" --expect "$PLAN_AB" --done-file "$WORK/B1.done" --serve-until "$STOP"
WATCH=(A1 B1)
wait_until 150 "both engines to finish run 1" test -f "$WORK/A1.done" -a -f "$WORK/B1.done"
ip netns exec "$C" ping -c 3 -i 0.2 -W 5 10.0.0.1 >"$WORK/ping-A.log" 2>&1 || { echo "FAIL: ping 10.0.0.1"; exit 1; }
ip netns exec "$C" ping -c 3 -i 0.2 -W 5 -s 1400 10.0.0.2 >"$WORK/ping-B.log" 2>&1 || { echo "FAIL: ping 10.0.0.2"; exit 1; }
touch "$STOP"
wait_peer A1 60
wait_peer B1 60
expect A1 "RESOLVED 10.0.0.2 via 10.0.0.2"
expect B1 "RESOLVED 10.0.0.1 via 10.0.0.1"
for n in A1 B1; do
    expect "$n" "COMPLETIONS .* failed\), .* retry_limit=0 peer_unreachable=0 other=0 duplicates=0"
    expect "$n" "RECEIVED received ([0-9]+)/\1 reliable, [0-9]+/[0-9]+ uud, 0 errors"
    expect "$n" "SERVED echo_replies=[1-9]"
    expect "$n" "RESULT ok"
done
show "OFFLOADS|RATE|RECEIVED|COUNTERS|DROPS|COPIES"
grep -h "packets transmitted" "$WORK"/ping-*.log

echo "== 2. MTU 9000 (trust_link_mtu), 8 KiB payloads: A -> B $PLAN_JUMBO"
# Run 1's ports set the kernel interfaces to their 1500-byte MTU: back to jumbo. A window of 64
# jumbo packets (512 KiB) keeps the queueing delay well under the RTO.
ip -n "$A" link set a0 mtu 9000
ip -n "$B" link set b0 mtu 9000
start_engine B2 ip netns exec "$B" -- --dev "$DEV_B" --ip 10.0.0.2/24 --peer 10.0.0.1 \
    --mtu 9000 --trust-link-mtu --payload 8192 --mpr 64 --expect "$PLAN_JUMBO" --serve-until "$WORK/A2.done"
start_engine A2 ip netns exec "$A" -- --dev a0 --ip 10.0.0.1/24 --peer 10.0.0.2 \
    --mtu 9000 --trust-link-mtu --payload 8192 --mpr 64 --send "$PLAN_JUMBO" --done-file "$WORK/A2.done"
wait_peer A2 150
wait_peer B2 60
expect A2 "COMPLETIONS .* retry_limit=0 peer_unreachable=0 other=0 duplicates=0"
expect B2 "RECEIVED received ([0-9]+)/\1 reliable, [0-9]+/[0-9]+ uud, 0 errors"
expect A2 "RESULT ok"
expect B2 "RESULT ok"
show "RATE|RECEIVED|COUNTERS|DROPS"

echo "== 3. API: include/uet/ on the dpdk provider over af_packet, every mode, 1 KiB to 64 MiB"
# The API server in B, the client in A (interface-name shorthand); addresses resolved by ARP.
start_api api_server ip netns exec "$B" -- --role server --dev "$DEV_B" --ip 10.0.0.2/24 \
    --peer 10.0.0.1 --ready-file "$WORK/api_server.ready"
WATCH=(api_server)
wait_until 60 "the API server's port" test -f "$WORK/api_server.ready"
start_api api_client ip netns exec "$A" -- --role client --dev a0 --ip 10.0.0.1/24 --peer 10.0.0.2
WATCH=(api_server api_client)
wait_peer api_client 150
wait_peer api_server 60
expect_api_run api_server api_client rud rod rudi uud
expect api_client "PORT .* arp_requests=[1-9]"
show "$API_LINES"

echo "== 4. API with jumbo frames: port MTU 9000 (trust_link_mtu), 8 KiB payloads, RUD and RUDI"
ip -n "$A" link set a0 mtu 9000
ip -n "$B" link set b0 mtu 9000
JUMBO_API=(--port-mtu 9000 --trust-link-mtu --mtu 8192 --modes rud,rudi --sizes 8k,1m,64m)
start_api api_jserver ip netns exec "$B" -- --role server --dev "$DEV_B" --ip 10.0.0.2/24 \
    --peer 10.0.0.1 --ready-file "$WORK/api_jserver.ready" "${JUMBO_API[@]}"
WATCH=(api_jserver)
wait_until 60 "the jumbo API server's port" test -f "$WORK/api_jserver.ready"
start_api api_jclient ip netns exec "$A" -- --role client --dev a0 --ip 10.0.0.1/24 --peer 10.0.0.2 \
    "${JUMBO_API[@]}"
WATCH=(api_jserver api_jclient)
wait_peer api_jclient 150
wait_peer api_jserver 60
for m in rud rudi; do
    expect api_jclient "VERDICT $m from the server: ok"
    expect api_jserver "VERDICT $m ok"
done
expect api_jclient "RESULT ok"
expect api_jserver "RESULT ok"
show "^api_j[a-z]+: ((rud|rudi) |VERDICT|PORT|RESULT)"
