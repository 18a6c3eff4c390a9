#!/usr/bin/env bash
# libfabric_fi_info: Debian's fi_info finds the uet provider in the build directory
# (FI_PROVIDER_PATH), lists it with its endpoint type and capabilities, lists its FI_UET_*
# variables, and says no to what it cannot do.
set -uo pipefail
export FI_PROVIDER_PATH=$1
unset FI_UET_PROVIDER FI_UET_DEVICE FI_UET_ADDRESS
failed=0
expect() {  # what, text, regex
    if grep -qE -- "$3" <<<"$2"; then echo "ok      $1"; else echo "FAILED  $1 (no /$3/)"; failed=1; fi
}

out=$(fi_info -p uet 2>&1)
expect "fi_info -p uet lists the provider" "$out" '^provider: uet$'
expect "... its fabric" "$out" 'fabric: uet-pipe'
expect "... an FI_EP_RDM endpoint" "$out" 'type: FI_EP_RDM'
out=$(fi_info -p uet -v 2>&1)
for c in FI_MSG FI_TAGGED FI_DIRECTED_RECV FI_MULTI_RECV FI_SOURCE FI_RMA FI_ATOMIC FI_READ FI_WRITE FI_REMOTE_READ FI_REMOTE_WRITE; do
    expect "fi_info -v: caps $c" "$out" "^    caps: \\[.* $c[ ,]"
done
expect "... FI_SOCKADDR_IN addresses" "$out" 'addr_format: FI_SOCKADDR_IN'
expect "... manual progress" "$out" 'data_progress: FI_PROGRESS_MANUAL'
expect "... provider keys" "$out" 'mr_mode: \[ FI_MR_PROV_KEY \]'
out=$(FI_UET_DEVICE='net_memif0,role=server,socket=/tmp/x.sock' FI_UET_ADDRESS=10.1.0.1/24 \
    fi_info -p uet 2>&1)
expect "FI_UET_DEVICE=net_memif0: fabric uet-memif" "$out" 'fabric: uet-memif'
expect "... domain net_memif0" "$out" 'domain: net_memif0'

out=$(fi_info -p uet -e 2>&1 | tr -d '\0')
for v in PROVIDER DEVICE ADDRESS EAL_ARGS MTU MODE CC LB JOB BUSY_POLL CAPTURE STATS TSS_KEY_FILE TSS_SDI TSS_EPOCH ANSWERS_IN_ACKS; do
    expect "fi_info -e lists FI_UET_$v" "$out" "^# FI_UET_${v}: "
done

out=$(fi_info -p uet -t FI_EP_MSG 2>&1)
expect "-t FI_EP_MSG: no provider" "$out" 'No data available|-61'
out=$(fi_info -p uet -t FI_EP_DGRAM -v 2>&1)
expect "-t FI_EP_DGRAM: the provider" "$out" 'type: FI_EP_DGRAM'
expect "... one packet per message" "$out" 'max_msg_size: 4096$'
expect "... caps FI_MSG, FI_TAGGED" "$out" '^    caps: \[ FI_MSG, FI_TAGGED,'
expect "... and FI_MULTI_RECV" "$out" '^    caps: \[.* FI_MULTI_RECV[ ,]'
out=$(fi_info -t FI_EP_RDM 2>&1 | grep -c '^provider: uet;ofi_rxd$')
expect "no ofi_rxd layered over uet's datagrams" "$out" '^0$'
out=$(fi_info -p uet -t FI_EP_DGRAM -c FI_RMA 2>&1)
expect "-t FI_EP_DGRAM -c FI_RMA: no provider" "$out" 'No data available|-61'
out=$(fi_info -p uet -c FI_RMA 2>&1)
expect "-c FI_RMA: the provider" "$out" '^provider: uet$'
out=$(fi_info -p uet -c FI_ATOMIC 2>&1)
expect "-c FI_ATOMIC: the provider" "$out" '^provider: uet$'
out=$(fi_info -p uet -c FI_RMA_EVENT 2>&1)
expect "-c FI_RMA_EVENT: no provider" "$out" 'No data available|-61'
out=$(FI_UET_MODE=sideways fi_info -p uet 2>&1)
expect "FI_UET_MODE=sideways: no provider" "$out" 'No data available|-61'
out=$(FI_LOG_LEVEL=warn FI_UET_TSS_KEY_FILE=/nonexistent/uet.key fi_info -p uet 2>&1)
expect "FI_UET_TSS_KEY_FILE of no file: refused, saying why" "$out" \
    'FI_UET_TSS_KEY_FILE /nonexistent/uet.key: No such file'
out=$(FI_LOG_LEVEL=warn FI_UET_TSS_SDI=5 fi_info -p uet 2>&1)
expect "FI_UET_TSS_SDI without a key file: refused" "$out" 'need FI_UET_TSS_KEY_FILE'
exit $failed
