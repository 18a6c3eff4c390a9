#!/usr/bin/env bash
# tx_options_ab: uet-perf write_bw -s 65536 RUD over memif with the sender's payload handled
# three ways, interleaved round by round so that all three share the machine's conditions:
#   copy        the default on memif under 4 KiB: copied into the mbuf (no UDP checksum: memif's
#               default)
#   zero-copy   --zero-copy: chained from the registered buffer; the engine never touches it
#   checksum    --udp-checksum --zero-copy: summed (read once) for the UDP checksum, and
#               verified by the receiver
# Prints each run and, last, the median average and peak of each (Gb/s).
# All three run --cc none --lb static (lib.sh's P2P_OPTS): the point-to-point path.
#   bench/e2e/tx_options_ab.sh      (BUILD=build, SECONDS_PER_RUN=3, ROUNDS=4)
source "$(dirname "$0")/lib.sh"
ROUNDS=${ROUNDS:-4}
SECONDS_PER_RUN=${SECONDS_PER_RUN:-3}
names=(copy zero-copy checksum)
opts=("" "--zero-copy" "--udp-checksum --zero-copy")
for ((r = 1; r <= ROUNDS; r++)); do
    for i in 0 1 2; do
        n="${names[$i]}-$r"
        # shellcheck disable=SC2086
        uet_memif "$n" write_bw -s 65536 -D "$SECONDS_PER_RUN" --mode rud --report_gbits ${opts[$i]} >/dev/null
        printf '%s %s avg %.2f peak %.2f\n' "${names[$i]}" "$r" "$(json_result "$n" BW_average)" \
            "$(json_result "$n" BW_peak)" | tee -a "$WORK/runs.txt"
    done
done
for name in "${names[@]}"; do
    avg=$(grep "^$name " "$WORK/runs.txt" | awk '{ print $4 }' | median)
    peak=$(grep "^$name " "$WORK/runs.txt" | awk '{ print $6 }' | median)
    printf 'median %-11s avg %.2f peak %.2f Gb/s\n' "$name" "$avg" "$peak"
done
