#!/usr/bin/env bash
# roce_vs_uet: in one run, over memif on the same two cores (lib.sh: server on CPU 0, client on
# CPU 1), side by side:
#   (a) raw DPDK: dpdk-testpmd txonly -> rxonly, frames the size of RoCE's full WRITE packets
#       (RAW_FRAME, 1082 bytes: Ethernet 14, IPv4 20, UDP 8, BTH 12, 1024 bytes, ICRC 4);
#   (b) UET: uet-perf write_bw -s 65536 (RUD, 1344-byte payloads on a 1500-byte port);
#   (c) RoCEv2 RC: uet-perf --transport roce write_bw -s 65536 (go-back-N, path MTU 1024, the
#       largest IB MTU that fits the port; every frame with its ICRC, summed on each side).
# Each round runs the three back to back; issue 53's gates are roce >= 0.8 x uet and
# roce >= 0.6 x raw, judged on the medians of the rounds' ratios (ROUNDS, 3 by default).
# uet-perf runs on lib.sh's point-to-point path (--cc none --lb static: for roce no DCQCN), on
# uet's own memif port unless MEMIF_PORT=dpdk. Gb/s: raw counts whole frames, uet-perf message
# bytes only, so the roce/raw ratio charges RoCE for its headers.
#   bench/e2e/roce_vs_uet.sh            (BUILD=build, SECONDS_PER_RUN=5, ROUNDS=3, SIZE=65536)
#   ROCE_MODE=ooo bench/e2e/roce_vs_uet.sh   RoCE in out-of-order mode
source "$(dirname "$0")/lib.sh"

SIZE=${SIZE:-65536}
ROUNDS=${ROUNDS:-3}
RAW_FRAME=${RAW_FRAME:-1082}
ROCE_MODE=${ROCE_MODE:-gbn}
ROUNDS_FILE=$WORK/roce-rounds.txt

for ((r = 1; r <= ROUNDS; r++)); do
    c1=$(core_ns)
    pps=$(raw_memif_pps "$RAW_FRAME")
    raw_gbps=$(awk -v p="$pps" -v f="$RAW_FRAME" 'BEGIN { printf "%.2f", p * f * 8 / 1e9 }')
    uet_memif "uet-$r" write_bw -s "$SIZE" -D "$SECONDS_PER_RUN" --report_gbits >/dev/null
    uet_gbps=$(json_result "uet-$r" BW_average)
    uet_memif "roce-$r" write_bw --transport roce --roce-mode "$ROCE_MODE" -s "$SIZE" \
        -D "$SECONDS_PER_RUN" --report_gbits >/dev/null
    roce_gbps=$(json_result "roce-$r" BW_average)
    c2=$(core_ns)
    printf 'round %d (cores %s/%s ns, %s): raw %d-byte frames %.2f Mpps = %.2f Gb/s; uet %.2f Gb/s; roce %.2f Gb/s; roce/uet %s; roce/raw %s\n' \
        "$r" "$c1" "$c2" "$(mode_of "$c1" "$c2")" "$RAW_FRAME" \
        "$(awk -v p="$pps" 'BEGIN { print p / 1e6 }')" "$raw_gbps" "$uet_gbps" "$roce_gbps" \
        "$(ratio "$roce_gbps" "$uet_gbps")" "$(ratio "$roce_gbps" "$raw_gbps")" |
        tee -a "$ROUNDS_FILE"
    echo "$raw_gbps $uet_gbps $roce_gbps" >>"$WORK/figures.txt"
done

# column N: the median of the rounds' column N of figures.txt (1 raw, 2 uet, 3 roce);
# ratio_median A B: the median of the rounds' ratios column A / column B.
column() { awk -v c="$1" '{ print $c }' "$WORK/figures.txt" | median; }
ratio_median() { awk -v a="$1" -v b="$2" '$b > 0 { print $a / $b }' "$WORK/figures.txt" | median; }
printf '\n| | Gb/s (median of %d rounds) |\n| --- | --- |\n' "$ROUNDS"
printf '| raw testpmd, %d-byte frames | %.2f |\n' "$RAW_FRAME" "$(column 1)"
printf '| uet-perf write_bw -s %s | %.2f |\n' "$SIZE" "$(column 2)"
printf '| uet-perf --transport roce --roce-mode %s write_bw -s %s | %.2f |\n' "$ROCE_MODE" "$SIZE" \
    "$(column 3)"
vs_uet=$(ratio_median 3 2)
vs_raw=$(ratio_median 3 1)
gate() { awk -v v="$1" -v g="$2" 'BEGIN { print (v >= g ? "met" : "NOT met") }'; }
printf '\nroce/uet %.3f (gate 0.8: %s); roce/raw %.3f (gate 0.6: %s)\n' "$vs_uet" \
    "$(gate "$vs_uet" 0.8)" "$vs_raw" "$(gate "$vs_raw" 0.6)"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
