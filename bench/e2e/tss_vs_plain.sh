#!/usr/bin/env bash
# tss_vs_plain: what transport security costs end to end. The same uet-perf test over memif
# without and with --tss (every frame sealed with AES-256-GCM and authenticated before the PDS),
# interleaved round by round by ab_builds.sh (A: plain, B: --tss), with a fresh random key in
# UET_TSS_KEY for both sides. Prints ab_builds' runs, medians and ratio B/A.
#   bench/e2e/tss_vs_plain.sh write_bw -s 65536          (ROUNDS=4, SECONDS_PER_RUN=3, BUILD=build)
set -eu
(($# > 0)) || { echo "usage: $0 TEST [uet-perf options]"; exit 1; }
UET_TSS_KEY=$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')
export UET_TSS_KEY
A_OPTS=${A_OPTS:-} B_OPTS="${B_OPTS:-} --tss" exec "$(dirname "$0")/ab_builds.sh" "$@"
