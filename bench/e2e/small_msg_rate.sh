#!/usr/bin/env bash
# small_msg_rate: uet-perf send_bw -s 8 message rate over memif vs raw dpdk-testpmd 64-byte
# packet rate (txonly -> rxonly) on the same two cores, in one run. Last line `ratio <uet/raw>`.
#   bench/e2e/small_msg_rate.sh          (BUILD=build, SECONDS_PER_RUN=5)
source "$(dirname "$0")/lib.sh"

pps=$(raw_memif_pps 64)
raw_mpps=$(awk -v p="$pps" 'BEGIN { printf "%.3f", p / 1e6 }')
echo "raw testpmd memif: 64-byte frames $raw_mpps Mpps"

uet_memif msg send_bw -s 8 -D "$SECONDS_PER_RUN" --mode rud --stats
uet_mpps=$(json_result msg MsgRate)
echo "uet-perf send_bw -s 8 rud memif: $uet_mpps Mpps"
echo "ratio $(ratio "$uet_mpps" "$raw_mpps")"
