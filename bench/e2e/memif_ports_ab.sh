#!/usr/bin/env bash
# memif_ports_ab: the same uet-perf test over DPDK's memif PMD (net_memif) and over uet's own
# memif port (uet_memif), interleaved on the same two cores: ROUNDS rounds, each one run per port
# with the core-to-core probe before and after it (lib.sh). Prints each run (average Gb/s, peak,
# message rate, the sender's and the receiver's --stats stages) and, per port, the medians over
# the runs the probe found wholly in the host's fast mode (else over all, said so); last line
# `uet/dpdk <ratio of those medians' message rates>`.
#   bench/e2e/memif_ports_ab.sh                        write_bw -s 65536, ROUNDS=6, 3 s per run
# Both ports run --cc none --lb static (lib.sh's P2P_OPTS): the point-to-point path.
#   ROUNDS=8 bench/e2e/memif_ports_ab.sh send_bw -s 8
source "$(dirname "$0")/lib.sh"

ROUNDS=${ROUNDS:-6}
SECONDS_PER_RUN=${SECONDS_PER_RUN:-3}
(($# > 0)) || set -- write_bw -s 65536
for ((r = 1; r <= ROUNDS; r++)); do
    for port in dpdk uet; do
        c1=$(core_ns)
        MEMIF_PORT=$port uet_memif "$port-$r" "$@" -D "$SECONDS_PER_RUN" --report_gbits --time-stages \
            >"$WORK/$port-$r.out"
        c2=$(core_ns)
        bw=$(json_result "$port-$r" BW_average)
        peak=$(json_result "$port-$r" BW_peak)
        rate=$(json_result "$port-$r" MsgRate)
        tx=$(grep '^ Stages' "$WORK/$port-$r-client.log" | sed 's/.*transmit/transmit/')
        rx=$(grep '^ Stages' "$WORK/$port-$r-server.log" | sed 's/;.*//; s/.*frame): //')
        printf '%d %s %s (cores %s/%s ns): %.2f Gb/s (peak %.2f), %.3f Mpps; sender %s; receiver %s\n' \
            "$r" "$port" "$(mode_of "$c1" "$c2")" "$c1" "$c2" "$bw" "$peak" "$rate" "$tx" "$rx" |
            tee -a "$WORK/runs.txt"
    done
done
declare -A med
for port in dpdk uet; do
    sel=$(grep -E "^[0-9]+ $port (fast|unknown) " "$WORK/runs.txt" || true)
    what="fast-mode runs"
    [[ -n $sel ]] || { sel=$(grep -E "^[0-9]+ $port " "$WORK/runs.txt"); what="all runs (none in the fast mode)"; }
    gbits=$(awk '{ for (i = 1; i <= NF; i++) if ($i == "Gb/s") print $(i - 1) }' <<<"$sel" | median)
    med[$port]=$(awk '{ for (i = 1; i <= NF; i++) if ($i == "Mpps;") print $(i - 1) }' <<<"$sel" | median)
    printf '%s: median of %s %.2f Gb/s, %.3f Mpps over %d run(s)\n' "$port" "$what" "$gbits" \
        "${med[$port]}" "$(wc -l <<<"$sel")"
done
# The message rate, which the Gb/s follow for one message size (and keeps 3 digits for small ones).
echo "uet/dpdk $(ratio "${med[uet]}" "${med[dpdk]}")"
