#!/usr/bin/env bash
# integration_tap: two engines on net_tap ports in two subnets, with the kernel routing between
# them. Both processes run in namespace R, so both tap interfaces are there; R forwards:
#
#   stack A 10.1.0.1/24 (gw .254) = tapA [kernel 10.1.0.254] --ip_forward-- [kernel 10.2.0.254] tapB = stack B 10.2.0.1/24
#
# Each stack resolves its gateway's MAC by ARP (the peer is off-subnet), then A sends B RUD, ROD,
# RUDI messages of 1 KiB to 64 MiB and single-packet UUD messages (B sends A a smaller plan at
# the same time) through the kernel's forwarding path, every message verified; finally R's
# kernel pings both stacks. The tap interfaces appear when the stacks open their ports; the
# script configures them then, and the stacks' ARP retries carry them over the gap.
# DPDK 22.11 net_tap refuses frames over its ethdev MTU (1500): 1400-byte payloads.
source "$(dirname "$0")/lib.sh"

R=${TAG}r
TA=${TAG}ta TB=${TAG}tb
PLAN_AB=${UET_ITEST_PLAN_AB:-uud:1k*100,rud:1k*100,rud:1m*8,rud:64m*1,rod:1k*100,rod:1m*8,rod:64m*1,rudi:1k*100,rudi:1m*4,rudi:64m*1}
PLAN_BA=${UET_ITEST_PLAN_BA:-uud:1400*50,rud:4k*50,rod:256k*4,rudi:64k*4}
add_ns "$R"
ip netns exec "$R" sysctl -qw net.ipv4.ip_forward=1
ip netns exec "$R" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
ip netns exec "$R" sysctl -qw net.ipv6.conf.default.disable_ipv6=1

STOP=$WORK/stop
start_engine A ip netns exec "$R" -- --dev "net_tap0,iface=$TA" --ip 10.1.0.1/24 --gw 10.1.0.254 \
    --peer 10.2.0.1 --send "$PLAN_AB" --expect "$PLAN_BA" --done-file "$WORK/A.done" --serve-until "$STOP"
start_engine B ip netns exec "$R" -- --dev "net_tap1,iface=$TB" --ip 10.2.0.1/24 --gw 10.2.0.254 \
    --peer 10.1.0.1 --send "$PLAN_BA" --expect "$PLAN_AB" --done-file "$WORK/B.done" --serve-until "$STOP"
WATCH=(A B)
wait_until 60 "tap interface $TA" ip -n "$R" link show "$TA"
wait_until 60 "tap interface $TB" ip -n "$R" link show "$TB"
ip -n "$R" link set "$TA" up
ip -n "$R" link set "$TB" up
ip -n "$R" addr add 10.1.0.254/24 dev "$TA"
ip -n "$R" addr add 10.2.0.254/24 dev "$TB"

wait_until 150 "both engines to finish" test -f "$WORK/A.done" -a -f "$WORK/B.done"
ip netns exec "$R" ping -c 3 -i 0.2 -W 5 10.1.0.1 >"$WORK/ping-A.log" 2>&1 || { echo "FAIL: ping 10.1.0.1"; exit 1; }
ip netns exec "$R" ping -c 3 -i 0.2 -W 5 10.2.0.1 >"$WORK/ping-B.log" 2>&1 || { echo "FAIL: ping 10.2.0.1"; exit 1; }
touch "$STOP"
wait_peer A 60
wait_peer B 60
expect A "RESOLVED 10.2.0.1 via 10.1.0.254"
expect B "RESOLVED 10.1.0.1 via 10.2.0.254"
for n in A B; do
    expect "$n" "COMPLETIONS .* retry_limit=0 peer_unreachable=0 other=0 duplicates=0"
    expect "$n" "RECEIVED received ([0-9]+)/\1 reliable, [0-9]+/[0-9]+ uud, 0 errors"
    expect "$n" "SERVED echo_replies=[1-9]"
    expect "$n" "RESULT ok"
done
show "OFFLOADS|RATE|RECEIVED|COUNTERS|DROPS|COPIES"
grep -h "packets transmitted" "$WORK"/ping-*.log

echo "== API: include/uet/ on the dpdk provider over net_tap, two subnets, the kernel routing"
# New tap interfaces (the engines' went with their ports); configured once both API peers have
# opened their ports (each first opens and closes one to show a refused MTU). Until then the
# client's hellos fail (no ARP answer from the gateway yet) and are sent again.
XA=${TAG}xa XB=${TAG}xb
start_api api_server ip netns exec "$R" -- --role server --dev "net_tap0,iface=$XB" --ip 10.2.0.1/24 \
    --gw 10.2.0.254 --peer 10.1.0.1 --ready-file "$WORK/api_server.ready"
start_api api_client ip netns exec "$R" -- --role client --dev "net_tap1,iface=$XA" --ip 10.1.0.1/24 \
    --gw 10.1.0.254 --peer 10.2.0.1 --ready-file "$WORK/api_client.ready"
WATCH=(api_server api_client)
wait_until 60 "both API peers' ports" test -f "$WORK/api_server.ready" -a -f "$WORK/api_client.ready"
ip -n "$R" link set "$XA" up
ip -n "$R" link set "$XB" up
ip -n "$R" addr add 10.1.0.254/24 dev "$XA"
ip -n "$R" addr add 10.2.0.254/24 dev "$XB"
wait_peer api_client 150
wait_peer api_server 60
expect_api_run api_server api_client rud rod rudi uud
expect api_client "PORT .* arp_requests=[1-9]"
show "$API_LINES"
