#!/usr/bin/env bash
# integration_tap: two stacks on net_tap ports in two subnets, with the kernel routing between
# them. Both processes run in namespace R, so both tap interfaces are there; R forwards:
#
#   stack A 10.1.0.1/24 (gw .254) = tapA [kernel 10.1.0.254] --ip_forward-- [kernel 10.2.0.254] tapB = stack B 10.2.0.1/24
#
# Each stack resolves its gateway's MAC by ARP (the peer is off-subnet), then the verified
# exchange runs through the kernel's forwarding path; finally R's kernel pings both stacks.
# The tap interfaces appear when the stacks open their ports; the script configures them then,
# and the stacks' ARP retries carry them over the gap.
source "$(dirname "$0")/lib.sh"

R=${TAG}r
TA=${TAG}ta TB=${TAG}tb
COUNT=${UET_ITEST_COUNT:-3000}
# DPDK 22.11 net_tap refuses to send frames over its ethdev MTU (1504 at most): no jumbo here.
MAXF=${UET_ITEST_MAX_FRAME:-1514}
add_ns "$R"
ip netns exec "$R" sysctl -qw net.ipv4.ip_forward=1
ip netns exec "$R" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
ip netns exec "$R" sysctl -qw net.ipv6.conf.default.disable_ipv6=1

STOP=$WORK/stop
start_peer A ip netns exec "$R" -- --dev "net_tap0,iface=$TA" --ip 10.1.0.1/24 --gw 10.1.0.254 \
    --peer 10.2.0.1 --count "$COUNT" --max-frame "$MAXF" \
    --done-file "$WORK/A.done" --serve-until "$STOP"
start_peer B ip netns exec "$R" -- --dev "net_tap1,iface=$TB" --ip 10.2.0.1/24 --gw 10.2.0.254 \
    --peer 10.1.0.1 --count "$COUNT" --max-frame "$MAXF" \
    --done-file "$WORK/B.done" --serve-until "$STOP"
WATCH=(A B)
wait_until 60 "tap interface $TA" ip -n "$R" link show "$TA"
wait_until 60 "tap interface $TB" ip -n "$R" link show "$TB"
ip -n "$R" link set "$TA" up
ip -n "$R" link set "$TB" up
ip -n "$R" addr add 10.1.0.254/24 dev "$TA"
ip -n "$R" addr add 10.2.0.254/24 dev "$TB"

wait_until 90 "both stacks to finish the exchange" test -f "$WORK/A.done" -a -f "$WORK/B.done"
ip netns exec "$R" ping -c 3 -i 0.2 -W 5 10.1.0.1 >"$WORK/ping-A.log" 2>&1 || { echo "FAIL: ping 10.1.0.1"; exit 1; }
ip netns exec "$R" ping -c 3 -i 0.2 -W 5 10.2.0.1 >"$WORK/ping-B.log" 2>&1 || { echo "FAIL: ping 10.2.0.1"; exit 1; }
touch "$STOP"
wait_peer A 60
wait_peer B 60
expect A "RESOLVED 10.2.0.1 via 10.1.0.254"
expect B "RESOLVED 10.1.0.1 via 10.2.0.254"
expect A "RESULT ok"
expect B "RESULT ok"
expect A "SERVED echo_replies=[1-9]"
show "OFFLOADS|STEERING|RESULT|SERVED"
grep -h "packets transmitted" "$WORK"/ping-*.log
