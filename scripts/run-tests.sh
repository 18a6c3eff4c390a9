#!/usr/bin/env bash
# Runs every suite of the plain and the sanitizer build, then prints one closing line
# "tests: N passed, N failed, N skipped" counted from meson's test logs.
# Usage: run-tests.sh PLAIN_BUILD_DIR SAN_BUILD_DIR
set -uo pipefail
plain=${1:-build}
san=${2:-build-san}
export FUZZ_SECONDS=${FUZZ_SECONDS:-20}
status=0

run_suite() {  # build-dir suite...
    local dir=$1
    shift
    local args=()
    for s in "$@"; do args+=(--suite "$s"); done
    echo "== meson test -C $dir ${args[*]}"
    meson test -C "$dir" --print-errorlogs --num-processes 2 "${args[@]}" || status=1
    cp "$dir/meson-logs/testlog.json" "$dir/meson-logs/testlog-$(echo "$*" | tr ' ' '-').json"
}

run_suite "$plain" unit pds api roce
# Real DPDK ports in network namespaces: root only (CI runs as root).
if [[ $(id -u) -eq 0 ]]; then
    run_suite "$plain" integration
else
    echo "== integration suite needs root: not run"
    status=1
fi
run_suite "$san" unit pds api roce
run_suite "$san" fuzz

python3 - "$plain" "$san" <<'PY'
import glob, json, sys
passed = failed = skipped = 0
for d in sys.argv[1:]:
    for path in glob.glob(f"{d}/meson-logs/testlog-*.json"):
        for line in open(path):
            r = json.loads(line).get("result", "")
            if r in ("OK", "EXPECTEDFAIL"):
                passed += 1
            elif r == "SKIP":
                skipped += 1
            else:
                failed += 1
print(f"tests: {passed} passed, {failed} failed, {skipped} skipped")
PY
exit $status
