#!/usr/bin/env bash
# Usage: fuzz_smoke.sh FUZZER SEED_GENERATOR CORPUS_NAME
# Writes the golden seeds into a fresh corpus directory, then fuzzes for FUZZ_SECONDS (default 20).
# libFuzzer exits non-zero on a crash, a leak or a sanitizer report, which fails the test.
set -euo pipefail
fuzzer=$1 seeds=$2 name=$3
seconds=${FUZZ_SECONDS:-20}
work=$(mktemp -d "${TMPDIR:-/tmp}/uet-fuzz-$name.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/corpus" "$work/artifacts"
"$seeds" "$name" "$work/corpus"
echo "seeds: $(ls "$work/corpus" | wc -l) files"
"$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$work/artifacts/" "$work/corpus" 2>&1 | tail -n 25
rc=${PIPESTATUS[0]}
if ((rc != 0)); then
    echo "fuzz_$name: libFuzzer exited $rc; reproducer(s):"
    for f in "$work"/artifacts/*; do [ -e "$f" ] && { echo "$f"; od -An -tx1 "$f" | head -20; }; done
    exit "$rc"
fi
