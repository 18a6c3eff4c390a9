#!/usr/bin/env bash
# integration_af_packet: "any NIC". Stacks A and B run net_af_packet on veths in their own
# namespaces; the veths meet on a bridge (namespace BR) together with a third namespace C whose
# kernel has an address on the same subnet:
#
#   ns A: a0 (stack 10.0.0.1) --- pa \
#   ns B: b0 (stack 10.0.0.2) --- pb -- br0 (ns BR)
#   ns C: c0 (kernel 10.0.0.3) -- pc /
#
# A and B resolve each other by ARP (through runtime::neighbor_table), exchange frames of
# 64..9014 bytes (MTU 9000) both ways verified byte by byte, then the kernel in C pings both.
# A uses the interface-name shorthand (--dev a0), B the full vdev string.
source "$(dirname "$0")/lib.sh"

A=${TAG}a B=${TAG}b C=${TAG}c BR=${TAG}br
COUNT=${UET_ITEST_COUNT:-3000}
MAXF=${UET_ITEST_MAX_FRAME:-9014}
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

STOP=$WORK/stop
start_peer A ip netns exec "$A" -- --dev a0 --ip 10.0.0.1/24 --peer 10.0.0.2 --count "$COUNT" --max-frame "$MAXF" --trust-link-mtu \
    --done-file "$WORK/A.done" --serve-until "$STOP"
start_peer B ip netns exec "$B" -- \
    --dev "net_af_packet1,iface=b0,qpairs=1,blocksz=20480,framesz=10240,framecnt=512" \
    --ip 10.0.0.2/24 --peer 10.0.0.1 --count "$COUNT" --max-frame "$MAXF" --trust-link-mtu --done-file "$WORK/B.done" --serve-until "$STOP"

WATCH=(A B)
wait_until 90 "both stacks to finish the exchange" test -f "$WORK/A.done" -a -f "$WORK/B.done"
ip netns exec "$C" ping -c 3 -i 0.2 -W 5 10.0.0.1 >"$WORK/ping-A.log" 2>&1 || { echo "FAIL: ping 10.0.0.1"; exit 1; }
ip netns exec "$C" ping -c 3 -i 0.2 -W 5 -s 1400 10.0.0.2 >"$WORK/ping-B.log" 2>&1 || { echo "FAIL: ping 10.0.0.2"; exit 1; }
touch "$STOP"
wait_peer A 60
wait_peer B 60
expect A "RESOLVED 10.0.0.2 via 10.0.0.2"
expect B "RESOLVED 10.0.0.1 via 10.0.0.1"
expect A "RESULT ok"
expect B "RESULT ok"
expect A "SERVED echo_replies=[1-9]"
expect B "SERVED echo_replies=[1-9]"
show "OFFLOADS|STEERING|RESULT|SERVED"
grep -h "packets transmitted" "$WORK"/ping-*.log
