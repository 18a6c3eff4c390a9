#!/usr/bin/env bash
# libfabric_mpi: Debian's Open MPI runs mpi_check (ping-pong, MPI_Allreduce, MPI_Alltoall,
# wildcard receives, sends to oneself, probes, MPI_Cancel) over the uet provider: pml cm, mtl ofi,
# provider uet,
# two ranks joined by a memif link (uet's own memif port, a socket in a temporary directory).
# mpirun's MPMD form gives each rank its own FI_UET_DEVICE (memif role) and FI_UET_ADDRESS.
#   run_mpi.sh PROVIDER_DIR MPI_PROGRAM
set -euo pipefail
export FI_PROVIDER_PATH=${1:?usage: $0 PROVIDER_DIR MPI_PROGRAM}
PROG=${2:?usage: $0 PROVIDER_DIR MPI_PROGRAM}
if [[ $(id -u) -ne 0 ]]; then
    echo "SKIP: needs root (DPDK)"
    exit 77
fi
WORK=$(mktemp -d /tmp/uet-fi-mpi.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
SOCK=$WORK/memif.sock
# mpirun refuses root unless told; -x NAME passes the variable on, to the ranks of its context.
rank=(-np 1 -x FI_PROVIDER_PATH -x FI_UET_STATS=1)
status=0
timeout 100 mpirun --allow-run-as-root --oversubscribe \
    --mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include uet \
    "${rank[@]}" -x FI_UET_DEVICE="uet_memif0,role=server,socket=$SOCK" \
    -x FI_UET_ADDRESS=10.77.0.1/24 "$PROG" : \
    "${rank[@]}" -x FI_UET_DEVICE="uet_memif1,role=client,socket=$SOCK" \
    -x FI_UET_ADDRESS=10.77.0.2/24 "$PROG" >"$WORK/out.log" 2>&1 || status=$?
grep -aE '^(ok|FAIL|mpi_check|rank [0-9]+: FAILED)|^uet: endpoint' "$WORK/out.log" || true
if [[ $status -ne 0 ]] || ! grep -q '^mpi_check: all passed$' "$WORK/out.log"; then
    echo "FAIL: mpirun exited $status"
    cat "$WORK/out.log"
    exit 1
fi
