#!/usr/bin/env bash
# memif_vs_raw: in one run, on the same two cores, (a) the raw DPDK capacity of a memif link
# (dpdk-testpmd txonly -> rxonly, frames as large as uet-perf's) and (b) uet-perf write_bw
# -s 65536 RUD over memif, every payload copied into the target region: pairs, each raw then uet
# back to back (see lib.sh). uet runs on its own memif port (providers/memif: the sender builds
# each frame in the ring, the receiver reads it there; MEMIF_PORT=dpdk for DPDK's net_memif PMD
# in the pairs instead). Once each, for comparison: uet on DPDK's net_memif PMD (memif copies each
# frame into the ring from an mbuf and out of it into one), and uet with UDP checksums (off by
# default on memif, whose frames stay in this host's memory; testpmd's txonly sends none either).
# Prints them in Gb/s and, last, `ratio <uet/raw>`: the median of the ratios of the rounds made
# in the host's fast mode (lib.sh: the core-to-core probe before, between and after each pair)
# with raw testpmd at its fast rate (RAW_FAST_SHARE, 0.7, of the best raw rate of the run).
# Pairs run until ROUNDS of them count, MAX_ROUNDS (3 x ROUNDS) at most.
# uet-perf runs --cc none --lb static (lib.sh's P2P_OPTS), the point-to-point path testpmd's
# frames take too: no congestion control, one path (not uet-perf's default, NSCC with REPS).
#   bench/e2e/memif_vs_raw.sh       (BUILD=build, SECONDS_PER_RUN=5, MTU=1344, SIZE=65536, ROUNDS=3)
#   MTU=8192 bench/e2e/memif_vs_raw.sh   jumbo frames (8290 bytes) on both
# MTU is uet-perf's -m (SES payload bytes per packet); 1344 is its default on a 1500-byte port.
# A RUD write packet adds 98 header bytes (Ethernet 14, IPv4 20, UDP 8, PDS RUD request 12, SES
# standard request 44), so the raw test sends MTU + 98-byte frames. Raw Gb/s counts whole frames;
# uet-perf's counts message bytes only, so the ratio charges uet for its headers too.
source "$(dirname "$0")/lib.sh"

MTU=${MTU:-1344}
FRAME=$((MTU + 98))
SIZE=${SIZE:-65536}
# Payloads that do not fit a 1500-byte port: both sides go jumbo (port MTU 9000, which uet's
# port carries over memif in buffers that hold a whole frame: bsize 9216, given to testpmd too).
JUMBO=()
if ((MTU > 1372)); then
    JUMBO=(--port-mtu 9000 --trust-link-mtu)
    RAW_MEMIF_ARGS=",bsize=9216"
fi

ROUNDS=${ROUNDS:-3}
# For comparison, once: uet-perf on the other memif port (DPDK's PMD, or uet's with
# MEMIF_PORT=dpdk), and with UDP checksums (--udp-checksum: summed as each frame is built).
other_port=dpdk
[[ $MEMIF_PORT == dpdk ]] && other_port=uet
MEMIF_PORT=$other_port uet_memif other write_bw -s "$SIZE" -m "$MTU" "${JUMBO[@]}" \
    -D "$SECONDS_PER_RUN" --mode rud --report_gbits --stats
other_gbps=$(json_result other BW_average)
uet_memif csum write_bw -s "$SIZE" -m "$MTU" "${JUMBO[@]}" -D "$SECONDS_PER_RUN" --mode rud --report_gbits \
    --stats --udp-checksum
csum_gbps=$(json_result csum BW_average)

# The pairs: raw, then uet-perf as it runs by default (no UDP checksum).
for ((r = 1; ; r++)); do
    more_rounds "$r" || break
    c1=$(core_ns)
    pps=$(raw_memif_pps "$FRAME")
    raw_gbps=$(awk -v p="$pps" -v f="$FRAME" 'BEGIN { printf "%.2f", p * f * 8 / 1e9 }')
    c2=$(core_ns)
    uet_memif "bw-$r" write_bw -s "$SIZE" -m "$MTU" "${JUMBO[@]}" -D "$SECONDS_PER_RUN" --mode rud \
        --report_gbits --stats
    uet_gbps=$(json_result "bw-$r" BW_average)
    c3=$(core_ns)
    printf 'round %d (cores %s/%s/%s ns, %s): raw testpmd memif %d-byte frames %.2f Mpps = %.2f Gb/s; uet-perf write_bw -s %s -m %s rud %s memif: %.2f Gb/s; ratio %s\n' \
        "$r" "$c1" "$c2" "$c3" "$(mode_of "$c1" "$c2" "$c3")" "$FRAME" \
        "$(awk -v p="$pps" 'BEGIN { print p / 1e6 }')" "$raw_gbps" "$SIZE" "$MTU" "$MEMIF_PORT" \
        "$uet_gbps" "$(ratio "$uet_gbps" "$raw_gbps")" | tee -a "$WORK/rounds.txt"
done
printf 'uet-perf write_bw -s %s -m %s rud memif, on the %s memif port: %.2f Gb/s\n' "$SIZE" "$MTU" \
    "$other_port" "$other_gbps"
printf 'uet-perf write_bw -s %s -m %s rud memif, UDP checksums: %.2f Gb/s\n' "$SIZE" "$MTU" "$csum_gbps"
uet_median=$(grep -o 'memif: [0-9.]*' "$WORK/rounds.txt" | awk '{ print $NF }' | median)
echo "$other_port port/$MEMIF_PORT port (the median of the rounds) $(ratio "$other_gbps" "$uet_median")"
summarize_rounds
