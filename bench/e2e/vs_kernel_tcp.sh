#!/usr/bin/env bash
# vs_kernel_tcp: over one veth pair between two network namespaces, kernel TCP (iperf3, one
# stream) against uet-perf write_bw on af_packet (the "any NIC" path), one after the other.
# Information for users choosing between them; last line `ratio <uet/tcp>`.
# uet-perf runs --cc none --lb static (lib.sh's P2P_OPTS): the point-to-point path of one veth,
# comparable with the figures of the other bench/e2e scripts.
#   bench/e2e/vs_kernel_tcp.sh           (BUILD=build, SECONDS_PER_RUN=5, SIZE=65536)
source "$(dirname "$0")/lib.sh"
command -v iperf3 >/dev/null || { echo "iperf3 missing (scripts/install-deps.sh)"; exit 1; }

SIZE=${SIZE:-65536}
A=uetb$$a B=uetb$$b
ip netns add "$A"; NETNS+=("$A")
ip netns add "$B"; NETNS+=("$B")
ip link add v0 netns "$A" type veth peer name v1 netns "$B"
for n in "$A" "$B"; do ip -n "$n" link set lo up; done
ip -n "$A" link set v0 up
ip -n "$B" link set v1 up
ip -n "$A" addr add 10.78.0.1/24 dev v0
ip -n "$B" addr add 10.78.0.2/24 dev v1

ip netns exec "$A" taskset -c 0 iperf3 -s -1 >"$WORK/iperf-server.log" 2>&1 &
PIDS+=($!)
# iperf3 block-buffers its log when it is not a terminal: watch for the listening socket instead.
wait_for 30 "the iperf3 server" sh -c "ip netns exec $A ss -Hltn 'sport = :5201' | grep -q 5201"
ip netns exec "$B" taskset -c 1 iperf3 -c 10.78.0.1 -t "$SECONDS_PER_RUN" -l "$SIZE" -J >"$WORK/iperf.json"
tcp_gbps=$(jq -r '.end.sum_received.bits_per_second / 1e9' "$WORK/iperf.json")
printf 'kernel TCP (iperf3 -l %s, 1 stream, veth): %.2f Gb/s\n' "$SIZE" "$tcp_gbps"

# uet takes the veths over with af_packet (default -m: 1344 payload bytes in 1500-byte frames);
# its stack answers ARP itself, on addresses of its own.
uet_pair tcp "ip netns exec $A" "ip netns exec $B" --dev v0 --ip 10.78.1.1/24 -- \
    --dev v1 --ip 10.78.1.2/24 10.78.1.1 -- \
    write_bw -s "$SIZE" -D "$SECONDS_PER_RUN" --report_gbits --stats
uet_gbps=$(json_result tcp BW_average)
printf 'uet-perf write_bw -s %s af_packet (veth): %.2f Gb/s\n' "$SIZE" "$uet_gbps"
echo "ratio $(ratio "$uet_gbps" "$tcp_gbps")"
