#!/usr/bin/env bash
# libfabric_multi_ep: fi_multi_ep.c's two roles over a memif link (uet's own memif port, a
# socket in a temporary directory): the host process with two endpoints on one port (one
# address, PIDonFEP 0 and 1), the peer with one.
#   run_multi_ep.sh PROVIDER_DIR FI_MULTI_EP
set -euo pipefail
export FI_PROVIDER_PATH=${1:?usage: $0 PROVIDER_DIR FI_MULTI_EP}
export FI_UET_STATS=1  # each endpoint's counters when it closes: what a failure left
# The peer closes once its last answer is in, while the host may still wait for the answer to
# its own last message: in a PDS ACK, the close sends it (what the engine owes leaves before
# it goes); as a response message of its own (the provider's default), it may be left behind.
export FI_UET_ANSWERS_IN_ACKS=1
PROG=${2:?usage: $0 PROVIDER_DIR FI_MULTI_EP}
if [[ $(id -u) -ne 0 ]]; then
    echo "SKIP: needs root (DPDK)"
    exit 77
fi
WORK=$(mktemp -d /tmp/uet-fi-multi.XXXXXX)
HOST_PID=
cleanup() {
    [[ -n $HOST_PID ]] && kill -9 "$HOST_PID" 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT
SOCK=$WORK/memif.sock
FI_UET_DEVICE="uet_memif0,role=server,socket=$SOCK" FI_UET_ADDRESS=10.78.0.1/24 \
    timeout 40 "$PROG" host "$WORK/ready" >"$WORK/host.log" 2>&1 &
HOST_PID=$!
# The memif client connects once, when its port starts: start it after the host's endpoints.
for _ in $(seq 300); do
    [[ -f $WORK/ready ]] && break
    kill -0 "$HOST_PID" 2>/dev/null || break
    sleep 0.1
done
status=0
FI_UET_DEVICE="uet_memif1,role=client,socket=$SOCK" FI_UET_ADDRESS=10.78.0.2/24 \
    timeout 30 "$PROG" peer >"$WORK/peer.log" 2>&1 || status=$?
wait "$HOST_PID" || status=$?
HOST_PID=
cat "$WORK/host.log" "$WORK/peer.log"
if [[ $status -ne 0 ]] || ! grep -q '^host: all passed$' "$WORK/host.log" ||
    ! grep -q '^peer: all passed$' "$WORK/peer.log"; then
    echo "FAIL: exit status $status"
    exit 1
fi
