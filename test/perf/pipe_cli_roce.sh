#!/bin/sh
# uet-perf's eight tests over roce_rc on the pipe provider (atomics: both -A types), in both
# retransmission modes, every byte verified; then write_bw and read_bw over 4 QPs a connection
# under each scheduler, with the per-QP counters of --stats: uet_perf_pipe_cli_roce UET_PERF
set -u
perf=$1
for mode in gbn ooo; do
    for t in send_bw write_bw read_bw atomic_bw send_lat write_lat read_lat atomic_lat; do
        size=9000  # three packets of the 4096-byte path MTU
        types=FETCH_AND_ADD
        case $t in atomic*) size=8 types="FETCH_AND_ADD CMP_AND_SWAP" ;; esac
        for type in $types; do
            set -- "$t" --provider pipe --transport roce --roce-mode "$mode" -n 40 -s $size --verify
            case $t in atomic*) set -- "$@" -A "$type" ;; esac
            if ! "$perf" "$@" >/dev/null 2>&1; then
                echo "FAIL: uet-perf $*"
                "$perf" "$@"
                exit 1
            fi
            echo "ok: $*"
        done
    done
done
# Multi-QP connections: every scheduler spreads 256 KiB requests over the 4 QPs (split, or
# whole in turn / by weight), each QP shown by --stats with work on it.
for sched in rr stripe cast cast-wrr; do
    for t in write_bw read_bw; do
        set -- "$t" --provider pipe --transport roce --qps 4 --qp-sched "$sched" -n 16 -s 262144 \
            --verify --stats
        out=$("$perf" "$@" 2>&1)
        rc=$?
        busy=$(printf '%s\n' "$out" | grep -c '^ QP [0-3] (QPN [1-9][0-9]*): requests [1-9]')
        if [ $rc -ne 0 ] || [ "$busy" -ne 4 ] ||
            ! printf '%s\n' "$out" | grep -q "QPs per peer    : 4, $sched "; then
            echo "FAIL: uet-perf $* (exit $rc, $busy QPs with work)"
            printf '%s\n' "$out"
            exit 1
        fi
        echo "ok: $t --qps 4 --qp-sched $sched"
    done
done
# The QPs' verbs attributes from perftest's options reach the endpoint: a run with them is clean.
set -- write_bw --provider pipe --transport roce -u 10 --retry_count 3 --rnr_retry 2 \
    --min_rnr_timer 4 -n 40 -s 9000 --verify
if ! "$perf" "$@" >/dev/null 2>&1; then
    echo "FAIL: uet-perf $*"
    "$perf" "$@"
    exit 1
fi
echo "ok: write_bw with -u, --retry_count, --rnr_retry, --min_rnr_timer"
