#!/bin/sh
# uet-perf's eight tests over roce_rc on the pipe provider, in both retransmission modes, every
# byte verified: uet_perf_pipe_cli_roce UET_PERF
set -u
perf=$1
for mode in gbn ooo; do
    for t in send_bw write_bw read_bw atomic_bw send_lat write_lat read_lat atomic_lat; do
        size=9000  # three packets of the 4096-byte path MTU
        case $t in atomic*) size=8 ;; esac
        set -- "$t" --provider pipe --transport roce --roce-mode "$mode" -n 40 -s $size --verify
        if ! "$perf" "$@" >/dev/null 2>&1; then
            echo "FAIL: uet-perf $*"
            "$perf" "$@"
            exit 1
        fi
        echo "ok: $t --roce-mode $mode"
    done
done
