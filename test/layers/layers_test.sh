#!/usr/bin/env bash
# The layers of layers.txt hold, and both guards refuse a wrong-way include:
#   1. scripts/check-layers.py finds none in the tree;
#   2. it reports one planted in a copy of the tree (pds including the engine);
#   3. the compiler cannot find a higher layer's header through a library's include directory
#      (build/layers/pds), while a lower layer's is found.
# Usage: layers_test.sh SRCROOT BUILDROOT CXX...
set -euo pipefail
src=$1 build=$2
shift 2
fail() { echo "FAIL: $*"; exit 1; }

python3 "$src/scripts/check-layers.py" "$src" || fail "the tree breaks its layers"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$src/layers.txt" "$tmp/"
for d in lib providers sim include bindings; do cp -r "$src/$d" "$tmp/$d"; done
sed -i '0,/#include "pds\//s//#include "engine\/engine.hpp"\n#include "pds\//' "$tmp/lib/pds/pdc.hpp"
grep -q '#include "engine/engine.hpp"' "$tmp/lib/pds/pdc.hpp" || fail "could not plant the include"
if out=$(python3 "$src/scripts/check-layers.py" "$tmp"); then
    fail "check-layers.py accepted pds including the engine"
fi
echo "$out"
grep -q 'lib/pds/pdc.hpp:[0-9]*: pds includes "engine/engine.hpp", but engine is not below pds' \
    <<<"$out" || fail "check-layers.py did not name the planted include"

echo '#include "engine/engine.hpp"' >"$tmp/up.cpp"
if "$@" -std=c++20 -fsyntax-only -I "$build/layers/pds" "$tmp/up.cpp" 2>"$tmp/up.err"; then
    fail "pds's include directory exposes the engine"
fi
grep -Eq "engine/engine.hpp(: No such file|' file not found)" "$tmp/up.err" || { cat "$tmp/up.err"; fail "unexpected error"; }
echo '#include "wire/uet_pds.hpp"' >"$tmp/down.cpp"
"$@" -std=c++20 -fsyntax-only -I "$build/layers/pds" "$tmp/down.cpp" ||
    fail "pds's include directory does not expose wire"
echo "layers: check-layers.py and the include directories refuse the wrong-way include"
