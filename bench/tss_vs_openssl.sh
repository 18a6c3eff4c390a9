#!/usr/bin/env bash
# tss_vs_openssl: lib/tss's seal+open of a 4 KiB-payload frame against OpenSSL's raw AES-256-GCM
# on the same core, in one run: ROUNDS rounds, each `openssl speed -evp aes-256-gcm -bytes 4096`
# then tss_bench's BM_tss_seal_open/4096, both pinned with taskset to CPU (default 1).
# Both rates are bytes per CPU second (openssl speed times its process's user time; Google
# Benchmark's bytes_per_second uses CPU time), so a core shared with other work slows neither
# figure much. tss_bench counts each payload byte twice per iteration (sealed, then opened):
# the ratio is what a byte costs through OpenSSL alone over what it costs through lib/tss,
# frame parsing, KDF cache, IV/AAD, replay window and header rewrite included.
# Prints each round and last `ratio <tss/openssl>`, the median of the rounds' ratios (issue 55's
# gate: >= 0.8).
#   bench/tss_vs_openssl.sh          (BUILD=build, CPU=1, ROUNDS=3, SECONDS_PER_RUN=3)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
CPU=${CPU:-1}
ROUNDS=${ROUNDS:-3}
SECONDS_PER_RUN=${SECONDS_PER_RUN:-3}
BENCH=$BUILD/bench/micro/tss_bench
[[ -x $BENCH ]] || { echo "tss_vs_openssl: no $BENCH (ninja -C $BUILD bench/micro/tss_bench)" >&2; exit 1; }

ratios=()
for ((r = 1; r <= ROUNDS; r++)); do
  ossl=$(taskset -c "$CPU" openssl speed -mr -evp aes-256-gcm -bytes 4096 \
           -seconds "$SECONDS_PER_RUN" 2>/dev/null | awk -F: '/^\+F:/ {print $4}')
  tss=$(taskset -c "$CPU" "$BENCH" --benchmark_filter='^BM_tss_seal_open/4096$' \
          --benchmark_min_time="$SECONDS_PER_RUN" --benchmark_format=json 2>/dev/null |
        jq '.benchmarks[0].bytes_per_second')
  ratio=$(awk -v a="$tss" -v b="$ossl" 'BEGIN {printf "%.3f", a / b}')
  ratios+=("$ratio")
  awk -v r="$r" -v a="$tss" -v b="$ossl" -v x="$ratio" 'BEGIN {
    printf "round %d: openssl aes-256-gcm %.2f GB/s, tss seal+open %.2f GB/s, ratio %s\n",
           r, b / 1e9, a / 1e9, x }'
done
printf '%s\n' "${ratios[@]}" | sort -n | awk '{v[NR] = $1} END {printf "ratio %s\n", v[int((NR + 1) / 2)]}'
