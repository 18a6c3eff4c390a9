#!/usr/bin/env bash
# small_msg_rate: uet-perf send_bw -s 8 message rate over memif vs raw dpdk-testpmd 64-byte
# packet rate (txonly -> rxonly) on the same two cores, in one run: pairs, each raw then
# uet back to back (see lib.sh), each labelled with the host's mode (the core-to-core probe
# before, between and after: fast, slow or mixed). uet-perf posts its sends and receives in
# lists of 32 (perftest's -l 32 --recv_post_list 32; endpoint::send_list and recv_list), as
# testpmd sends and receives in bursts of 32; each round also runs uet-perf with one post per
# call (perftest's default), printed beside it. Last line `ratio <uet/raw>`, the median of the
# ratios of the post lists' runs in the fast-mode rounds with raw testpmd at its fast rate
# (RAW_FAST_SHARE, 0.7, of its best in the run; uet's default: OK answers in the PDS ACKs); pairs
# run until ROUNDS of them count, MAX_ROUNDS (3 x ROUNDS) at most. It also prints, once each, the
# rate with --no-ack-answers and with --multi-recv (the receiver's messages into multi-receive
# buffers, libfabric's FI_MULTI_RECV, instead of perftest's one receive posted per message; the
# bar stays on the latter).
# uet-perf runs --cc none --lb static (lib.sh's P2P_OPTS), the point-to-point path testpmd's
# packets take too: no congestion control, one path (not uet-perf's default, NSCC with REPS).
#   bench/e2e/small_msg_rate.sh          (BUILD=build, SECONDS_PER_RUN=5, ROUNDS=3)
source "$(dirname "$0")/lib.sh"

ROUNDS=${ROUNDS:-3}
# For comparison, once: every answer as a response message of its own (the target's choice).
uet_memif msg_nack send_bw -s 8 -D "$SECONDS_PER_RUN" --mode rud --stats --no-ack-answers
echo "uet-perf send_bw -s 8 rud memif, answers as messages: $(json_result msg_nack MsgRate) Mpps"
uet_memif msg_multi send_bw -s 8 -D "$SECONDS_PER_RUN" --mode rud --stats --multi-recv
echo "uet-perf send_bw -s 8 rud memif, multi-receive buffers: $(json_result msg_multi MsgRate) Mpps"

LISTS=(-l 32 --recv_post_list 32)
for ((r = 1; ; r++)); do
    more_rounds "$r" || break
    c1=$(core_ns)
    pps=$(raw_memif_pps 64)
    raw_mpps=$(awk -v p="$pps" 'BEGIN { printf "%.3f", p / 1e6 }')
    c2=$(core_ns)
    uet_memif "msg-$r" send_bw -s 8 -D "$SECONDS_PER_RUN" --mode rud --stats "${LISTS[@]}"
    uet_mpps=$(json_result "msg-$r" MsgRate)
    c3=$(core_ns)
    uet_memif "msg-plain-$r" send_bw -s 8 -D "$SECONDS_PER_RUN" --mode rud --stats
    plain_mpps=$(json_result "msg-plain-$r" MsgRate)
    echo "$(ratio "$plain_mpps" "$raw_mpps")" >>"$WORK/plain.txt"
    echo "round $r (cores $c1/$c2/$c3 ns, $(mode_of "$c1" "$c2" "$c3")): raw testpmd memif" \
        "64-byte frames $raw_mpps Mpps; uet-perf send_bw -s 8 rud memif, answers in ACKs, one" \
        "post per call $plain_mpps Mpps (ratio $(ratio "$plain_mpps" "$raw_mpps")), post lists" \
        "of 32 $uet_mpps Mpps; ratio $(ratio "$uet_mpps" "$raw_mpps")" | tee -a "$WORK/rounds.txt"
done
echo "one post per call: median ratio of every round $(median <"$WORK/plain.txt" | xargs printf '%.3f')"
summarize_rounds
