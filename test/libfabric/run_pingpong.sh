#!/usr/bin/env bash
# libfabric_pingpong: Debian's unmodified fi_pingpong over the uet provider (FI_PROVIDER_PATH),
# server and client in two processes joined by a memif link (uet's own memif port, a socket in a
# temporary directory), every size of its default sweep; both must exit 0 and print a row for
# each size. Both run in a network namespace of their own, so that fi_pingpong's TCP control
# port cannot collide with anything.
# FI_EP_RDM unless the options name an endpoint type (-e dgram: datagrams of one packet, so the
# sweep stops at 1 KiB). --af-packet: server and client in two namespaces instead, each on its
# end of a veth pair (af_packet; the veths also carry kernel addresses for the TCP control
# connection).
# --tss: both sides seal every frame (FI_UET_TSS_KEY_FILE, a fresh random key), and each must
# report frames sealed and opened and none dropped by the security sublayer.
#   run_pingpong.sh PROVIDER_DIR [--af-packet] [--tss] [fi_pingpong options, e.g. -m tagged,
#                   -e dgram, -I 1000 (the stress run of docs/libfabric.md)]
set -euo pipefail
export FI_PROVIDER_PATH=${1:?usage: $0 PROVIDER_DIR [--af-packet] [fi_pingpong options]}
shift
LINK=memif
if [[ ${1:-} == --af-packet ]]; then
    LINK=af_packet
    shift
fi
TSS=0
if [[ ${1:-} == --tss ]]; then
    TSS=1
    shift
fi
[[ $(id -u) -eq 0 ]] || { echo "needs root (a network namespace, DPDK)"; exit 1; }
WORK=$(mktemp -d /tmp/uet-fi-pingpong.XXXXXX)
if ((TSS)); then
    head -c 32 /dev/urandom >"$WORK/tss.key"
    export FI_UET_TSS_KEY_FILE=$WORK/tss.key
fi
NS=uetfi$$
NS_S=$NS NS_C=$NS
[[ $LINK == af_packet ]] && NS_S=${NS}s NS_C=${NS}c
PIDS=()
cleanup() {
    local rc=$?
    for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null || true; done
    for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
    ip netns del "$NS_S" 2>/dev/null || true
    ip netns del "$NS_C" 2>/dev/null || true
    if [[ $rc -ne 0 ]]; then
        for f in "$WORK"/*.log; do [[ -f $f ]] && { echo "---- $f"; cat "$f"; }; done
    fi
    rm -rf "$WORK"
    exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM
for ns in $(printf '%s\n' "$NS_S" "$NS_C" | sort -u); do
    ip netns add "$ns"
    ip -n "$ns" link set lo up
done
if [[ $LINK == memif ]]; then
    SOCK=$WORK/memif.sock
    DEV_S="uet_memif0,role=server,socket=$SOCK" DEV_C="uet_memif1,role=client,socket=$SOCK"
    CTRL=127.0.0.1
else
    DEV_S=fps$$ DEV_C=fpc$$
    ip link add "$DEV_S" netns "$NS_S" type veth peer name "$DEV_C" netns "$NS_C"
    ip -n "$NS_S" addr add 192.168.77.1/24 dev "$DEV_S"
    ip -n "$NS_C" addr add 192.168.77.2/24 dev "$DEV_C"
    ip -n "$NS_S" link set "$DEV_S" up
    ip -n "$NS_C" link set "$DEV_C" up
    CTRL=192.168.77.1
fi
run() {  # name namespace device address [client's server address]
    local name=$1 ns=$2 dev=$3 addr=$4
    shift 4
    ip netns exec "$ns" env FI_UET_DEVICE="$dev" FI_UET_ADDRESS="$addr" FI_UET_STATS=1 \
        timeout 50 fi_pingpong -p uet "${EP[@]}" "${PP_ARGS[@]}" "$@" >"$WORK/$name.log" 2>&1 &
    PIDS+=($!)
}
PP_ARGS=("$@")
EP=(-e rdm)
SIZES=(64 256 1k 4k 64k 1m)
for ((i = 0; i < ${#PP_ARGS[@]}; ++i)); do
    [[ ${PP_ARGS[i]} == -e ]] || continue
    EP=()
    [[ ${PP_ARGS[i + 1]:-} == dgram ]] && SIZES=(64 256 1k)
done
run server "$NS_S" "$DEV_S" 10.77.0.1/24
# The client connects to the server's control port; the server opens its fabric (and the memif
# socket) once the client is there, and the client its own after the server's name came.
end=$((SECONDS + 10))
until ip netns exec "$NS_S" ss -ltn | grep -q ':47592 '; do
    ((SECONDS < end)) || { echo "FAIL: the server never listened"; exit 1; }
    kill -0 "${PIDS[0]}" 2>/dev/null || { echo "FAIL: the server exited"; exit 1; }
    sleep 0.1
done
run client "$NS_C" "$DEV_C" 10.77.0.2/24 "$CTRL"
status=0
wait "${PIDS[1]}" || { echo "FAIL: client exited $?"; status=1; }
wait "${PIDS[0]}" || { echo "FAIL: server exited $?"; status=1; }
PIDS=()
for n in server client; do
    for size in "${SIZES[@]}"; do
        grep -qE "^$size +[0-9]+k? += *[0-9]+k? " "$WORK/$n.log" ||
            { echo "FAIL: $n has no row for $size"; status=1; }
    done
done
if ((TSS)); then
    for n in server client; do
        grep -qE "^uet: endpoint .*: TSS sealed [1-9][0-9]* opened [1-9][0-9]* dropped 0$" \
            "$WORK/$n.log" || { echo "FAIL: $n has no TSS line with frames sealed and opened"; status=1; }
    done
fi
echo "== client"; grep -aE '^(bytes|[0-9]+[km]? )|^uet: endpoint' "$WORK/client.log" || true
echo "== server"; grep -aE '^uet: endpoint' "$WORK/server.log" || true
exit $status
