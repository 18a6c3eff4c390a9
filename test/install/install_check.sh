#!/usr/bin/env bash
# Installs the build into a scratch DESTDIR and builds examples/version.cpp against it with
# nothing but `pkg-config uet`, as a user would; then runs it.
# Usage: install_check.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 src=$2
dest=$(mktemp -d "${TMPDIR:-/tmp}/uet-install.XXXXXX")
trap 'rm -rf "$dest"' EXIT
meson install -C "$build" --destdir "$dest" --no-rebuild --quiet >/dev/null
pc=$(find "$dest" -name uet.pc | head -n 1)
[ -n "$pc" ] || { echo "uet.pc was not installed"; exit 1; }
export PKG_CONFIG_PATH=$(dirname "$pc") PKG_CONFIG_SYSROOT_DIR=$dest
flags=$(pkg-config --cflags --libs uet)
echo "pkg-config uet: $flags"
c++ -std=c++20 -Wall -Werror "$src/examples/version.cpp" $flags -o "$dest/version"
libdir=$(dirname "$(find "$dest" -name 'libuet.so' | head -n 1)")
LD_LIBRARY_PATH=$libdir "$dest/version"
