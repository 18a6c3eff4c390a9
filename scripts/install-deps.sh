#!/usr/bin/env bash
# Installs what uet needs from Debian 12 packages. Idempotent and non-interactive:
# packages already present are not touched, and apt is only updated when something is missing.
set -euo pipefail

packages=(
  meson ninja-build pkg-config g++ clang libclang-rt-14-dev lld
  dpdk dpdk-dev libdpdk-dev libssl-dev libgtest-dev libgmock-dev libbenchmark-dev
  libbpf-dev libpcap-dev libelf-dev libnuma-dev tshark iproute2 clang-format python3
  libfabric-dev libfabric-bin openmpi-bin libopenmpi-dev
  nlohmann-json3-dev iputils-ping jq iperf3 valgrind
)

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done

if ((${#missing[@]} == 0)); then
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
if [[ $(id -u) -ne 0 ]]; then
  echo "install-deps: missing packages and not root; run as root: $0" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
# tshark asks whether non-root users may capture; answer it here so the install never prompts.
echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
# iperf3 (bench/e2e/vs_kernel_tcp.sh) asks whether to start a daemon: no.
echo "iperf3 iperf3/start_daemon boolean false" | debconf-set-selections
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
