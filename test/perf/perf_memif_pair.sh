#!/usr/bin/env bash
# perf_memif_pair: uet-perf's server and client as two processes over memif (the dpdk provider),
# exactly as docs/uet-perf.md shows: every run must end with exit 0 on both sides, "Verify: OK"
# and the same result rows on both; a server with other settings must refuse the client, and
# both must say why and exit 1. Whichever side leaves first says goodbye to the other's port.
# Needs root (DPDK); skipped (77) otherwise. Figures: information.
set -u
PERF=$1
[ "$(id -u)" = 0 ] || { echo "perf_memif_pair: needs root, skipped"; exit 77; }
WORK=$(mktemp -d /tmp/uetperf-test.XXXXXX)
SPID=
cleanup() { [ -n "$SPID" ] && kill "$SPID" 2>/dev/null; rm -rf "$WORK"; }
trap cleanup EXIT
failures=0
bad() { echo "FAIL: $*"; failures=$((failures + 1)); }

# start_server NAME ARGS...: the server in the background, once its memif socket listens.
start_server() {
    local name=$1; shift
    local sock=$WORK/$name.sock
    timeout 120 "$PERF" "$@" --dev "$DEV,role=server,socket=$sock,socket-abstract=no" \
        --ip 10.9.0.1/24 > "$WORK/$name.server" 2>&1 &
    SPID=$!
    for _ in $(seq 600); do [ -S "$sock" ] && return 0; sleep 0.1; done
    bad "$name: the server's memif socket never appeared"; cat "$WORK/$name.server"; return 1
}
# run_client NAME ARGS...: the client in the foreground; sets CRC and SRC (the server's status).
# CLIENT_DEVARGS: more memif devargs for the client's device.
run_client() {
    local name=$1; shift
    local sock=$WORK/$name.sock
    timeout 120 "$PERF" "$@" \
        --dev "$DEV,role=client,socket=$sock,socket-abstract=no${CLIENT_DEVARGS:-}" \
        --ip 10.9.0.2/24 10.9.0.1 > "$WORK/$name.client" 2>&1
    CRC=$?
    wait "$SPID"; SRC=$?; SPID=
}
DEV=net_memif0  # DPDK's memif PMD; uet's own memif port further down
rows() { grep -E '^ [0-9]+ +[0-9]+ ' "$1"; }
# The side that closed first told the other before its driver unmapped the rings (goodbye.hpp):
# without that, the side still polling crashed now and then inside rte_eth_rx_burst.
said_goodbye() {
    local name=$1
    if [ "$DEV" = uet_memif0 ]; then  # the control channel's DISCONNECT, no frames
        grep -q "closed (told the peer)" "$WORK/$name.client" "$WORK/$name.server" ||
            bad "$name: neither side's port told the other it closed"
        return
    fi
    grep -qE "closed \(the memif peer (heard our goodbye|was leaving too)\)" \
        "$WORK/$name.client" "$WORK/$name.server" ||
        bad "$name: neither side's port closed with the goodbye handshake"
}

pair() {
    local name=$1; shift
    start_server "$name" "$@" || return
    run_client "$name" "$@"
    echo "== uet-perf $* (client | server exit $CRC | $SRC)"
    rows "$WORK/$name.client"
    [ "$CRC" = 0 ] || { bad "$name: client exit $CRC"; cat "$WORK/$name.client"; }
    [ "$SRC" = 0 ] || { bad "$name: server exit $SRC"; cat "$WORK/$name.server"; }
    for side in client server; do
        grep -q "Verify: OK" "$WORK/$name.$side" || bad "$name: no 'Verify: OK' from the $side"
    done
    [ -n "$(rows "$WORK/$name.client")" ] || bad "$name: no result row"
    [ "$(rows "$WORK/$name.client")" = "$(rows "$WORK/$name.server")" ] ||
        bad "$name: the server printed other rows than the client"
    said_goodbye "$name"
}

# Most runs check uet-perf and the ports, not congestion control: p2p runs them on the
# point-to-point path (--cc none --lb static), as bench/e2e does. write_bw and uet_write_bw
# keep the defaults (NSCC with REPS), one on each port.
p2p() {
    local name=$1; shift
    pair "$name" "$@" --cc none --lb static
}

# memif is shared memory: UDP checksums are off by default there; --udp-checksum sums anyway.
# memif copies every frame into its ring: by default payloads under 4 KiB are copied into the
# mbuf there (one segment per frame), larger ones chained; --zero-copy chains from 1 KiB.
pair write_bw write_bw -s 65536 -n 2000 --verify --time-stages
# --time-stages times the port's stages: the sender's transmit and the receiver's receive moved data.
for side in client server; do
    line=$(grep "^ Stages (ns per frame): " "$WORK/write_bw.$side")
    [[ $line =~ receive\ driver\ ([0-9.]+),\ stack\ ([0-9.]+)\;\ transmit\ stack\ ([0-9.]+),\ driver\ ([0-9.]+)$ ]] ||
        { bad "write_bw: the $side's --stats has no stages line"; continue; }
    first=1
    [ "$side" = client ] && first=3  # the sender's transmit stages, the receiver's receive ones
    awk -v a="${BASH_REMATCH[first]}" -v b="${BASH_REMATCH[first + 1]}" \
        'BEGIN { exit !(a > 0 && b > 0) }' ||
        bad "write_bw: the $side's data stages were not timed: $line"
done
# The defaults are for a shared fabric, NSCC with REPS spraying; --cc none --lb static, the
# point-to-point baseline bench/e2e measures, still runs. The settings block names each.
pair write_bw_p2p write_bw -s 65536 -n 500 --verify --cc none --lb static
for side in client server; do
    grep -q "^ Delivery mode   : RUD .* Congestion ctl : nscc$" "$WORK/write_bw.$side" &&
        grep -q "^ Load balancing  : reps " "$WORK/write_bw.$side" ||
        bad "write_bw: the $side's settings block does not name NSCC and REPS (the defaults)"
    grep -q "^ Delivery mode   : RUD .* Congestion ctl : none$" "$WORK/write_bw_p2p.$side" &&
        grep -q "^ Load balancing  : static " "$WORK/write_bw_p2p.$side" ||
        bad "write_bw_p2p: the $side's settings block does not name --cc none --lb static"
done
p2p write_bw_csum write_bw -s 65536 -n 500 --verify --udp-checksum --zero-copy --stats
for side in client server; do
    grep -q "^ Port: .*; UDP checksum off; zero-copy transmit from 4096 bytes$" \
        "$WORK/write_bw.$side" ||
        bad "write_bw: the $side summed UDP checksums or chained small payloads on memif"
    grep -q "^ Port: .*; UDP checksum on; zero-copy transmit from 1024 bytes$" \
        "$WORK/write_bw_csum.$side" ||
        bad "write_bw_csum: the $side ignored --udp-checksum or --zero-copy"
done
# --stats alone does not time the stages (their clock reads cost small messages a few percent).
! grep -q "^ Stages (ns per frame): " "$WORK/write_bw_csum.client" ||
    bad "write_bw_csum: --stats timed the port's stages without --time-stages"
grep -q "^ Port: .*(zero-copy 0)" "$WORK/write_bw.client" ||
    bad "write_bw: the client chained 1344-byte payloads on memif by default"
grep -q "^ Port: .*(zero-copy [1-9]" "$WORK/write_bw_csum.client" ||
    bad "write_bw_csum: no payload left without a copy under --zero-copy"
p2p send_bw_copy send_bw -s 4000 -n 500 --verify --zero-copy-min 0
# memif's own zero-copy (the client shares its DPDK memory; EAL --single-file-segments): the
# port must copy payloads into mbufs rather than chain the application's memory, which the
# peer cannot see (it crashed in rte_eth_rx_burst, and the sender never heard back), even
# when asked to chain them (--zero-copy).
CLIENT_DEVARGS=",zero-copy=yes" p2p memif_zc write_bw -s 65536 -n 1000 --verify --stats \
    --zero-copy --eal "--single-file-segments"
grep -q "^ Port: .*(zero-copy 0).*; zero-copy transmit off$" "$WORK/memif_zc.client" ||
    bad "memif_zc: the client chained payloads through memif's zero-copy"
grep -q "memif zero-copy: payloads are copied" "$WORK/memif_zc.client" ||
    bad "memif_zc: the client did not say that it copies payloads"
# Jumbo frames over memif (the port sizes memif's buffers to hold a whole frame: DPDK 22.11's
# memif returns bogus frames and can crash on frames split over several buffers).
# 8 KiB payloads are chained by default (the copy would cost more than memif's second segment).
p2p write_bw_jumbo write_bw -s 65536 -n 1000 --verify --port-mtu 9000 --trust-link-mtu --stats
grep -q "^ Port: .*(zero-copy [1-9]" "$WORK/write_bw_jumbo.client" ||
    bad "write_bw_jumbo: the client copied its 8 KiB payloads"
p2p read_bw_jumbo read_bw -s 1000000 -n 50 --verify --port-mtu 9000 --trust-link-mtu -m 8192
p2p send_lat send_lat -s 8 -n 1000 --verify
p2p read_bw read_bw -a -n 16 -t 16 --verify -b
p2p send_bw send_bw -s 4000 -D 0.3 --verify
p2p atomic_lat atomic_lat -n 500 --verify
# RoCEv2 RC queue pairs (--transport roce): connected by the CM over the port, every byte checked.
pair roce_write_bw write_bw --transport roce -s 65536 -n 500 --verify

# uet's own memif port (providers/memif): frames built and read in the shared ring; the
# client's payloads leave its shared send buffers without a copy (zero-copy transmit), each
# byte checked on arrival (--verify).
DEV=uet_memif0
pair uet_write_bw write_bw -s 65536 -n 2000 --verify --time-stages
grep -q "^ Port: .*(zero-copy [1-9][0-9]*),.*tx dropped 0.*; UDP checksum off; zero-copy transmit from 1024 bytes$" \
    "$WORK/uet_write_bw.client" || bad "uet_write_bw: the client's port line"
grep -q "^ Port: .*(zero-copy 0),.*tx dropped 0.*; UDP checksum off; zero-copy transmit off$" \
    "$WORK/uet_write_bw.server" || bad "uet_write_bw: the server's port line"
grep -q "^ Stages (ns per frame): receive driver [0-9.]*[1-9][0-9.]*, stack [0-9.]*[1-9]" \
    "$WORK/uet_write_bw.server" || bad "uet_write_bw: the receiver's stages were not timed"
# --ack-every reaches the engine (its policy is the PDS tests'): --stats says what each side owes.
p2p uet_ack_every write_bw -s 65536 -n 500 --verify --stats --ack-every 64
for side in client server; do
    grep -q "^ Port: .*; ACKs every 16 packets or 16384 bytes; " "$WORK/uet_write_bw.$side" ||
        bad "uet_write_bw: the $side's ACK coalescing is not the engine's default"
    grep -q "^ Port: .*; ACKs every 64 packets or 86016 bytes; " "$WORK/uet_ack_every.$side" ||
        bad "uet_ack_every: the $side does not coalesce ACKs over 64 packets of 1344 bytes"
done
# -Q, by default 100 (no --verify): of 3000 sends every 100th asks for an entry (the last among
# them), the other 2970 end without one and --stats counts them; the receiver initiates nothing.
start_server uet_cq_mod send_bw -s 8 -n 3000 --stats && {
    run_client uet_cq_mod send_bw -s 8 -n 3000 --stats
    echo "== uet-perf send_bw -s 8 -n 3000 --stats (client | server exit $CRC | $SRC)"
    [ "$CRC" = 0 ] && [ "$SRC" = 0 ] || bad "uet_cq_mod: exits $CRC | $SRC"
    [ "$(rows "$WORK/uet_cq_mod.client" | awk '{ print $2 }')" = 3000 ] ||
        bad "uet_cq_mod: the client's row does not count 3000 sends"
    grep -q "^ CQ Moderation   : 100$" "$WORK/uet_cq_mod.client" ||
        bad "uet_cq_mod: the settings block does not show -Q 100"
    grep -q "; completed without an entry 2970; unsignaled sends 2970 (adopted " "$WORK/uet_cq_mod.client" ||
        bad "uet_cq_mod: the client did not count 2970 sends completed without an entry, all unsignaled"
    grep -q "; completed without an entry 0; unsignaled sends 0 (adopted 0); delivered directly " "$WORK/uet_cq_mod.server" ||
        bad "uet_cq_mod: the server counted operations of its own"
}
# --pcap: each side records the frames its port received and those handed to it to send
# (fabric_attr::capture_file): 200 round trips are 400 messages at least on either side. The
# counts differ a little: frames handed to the port before the peer connected never arrive.
start_server uet_pcap send_lat -s 8 -n 200 --verify --pcap "$WORK/server.pcap" && {
    run_client uet_pcap send_lat -s 8 -n 200 --verify --pcap "$WORK/client.pcap"
    echo "== uet-perf send_lat -s 8 -n 200 --verify --pcap F (client | server exit $CRC | $SRC)"
    [ "$CRC" = 0 ] && [ "$SRC" = 0 ] || bad "uet_pcap: exits $CRC | $SRC"
    captured() { sed -n "s|^ Capture: \([0-9]*\) frames in $WORK/$1.pcap\$|\1|p" "$WORK/uet_pcap.$1"; }
    c=$(captured client) s=$(captured server)
    [ -n "$c" ] && [ "$c" -ge 400 ] || bad "uet_pcap: the client captured '$c' frames, not 400 or more"
    [ -n "$s" ] && [ "$s" -ge 400 ] || bad "uet_pcap: the server captured '$s' frames, not 400 or more"
    [ "$(stat -c %s "$WORK/client.pcap")" -gt $((24 + 400 * 16)) ] ||
        bad "uet_pcap: the client's pcap file is too short"
}
# With UDP checksums the chained payloads are summed where they lie; the receiver checks each
# frame whole. A server asked for --zero-copy says why it copies.
p2p uet_write_bw_csum write_bw -s 65536 -n 500 --verify --udp-checksum --zero-copy --stats
grep -q "^ Port: .*(zero-copy [1-9][0-9]*),.*; UDP checksum on; zero-copy transmit from 1024 bytes$" \
    "$WORK/uet_write_bw_csum.client" || bad "uet_write_bw_csum: the client's port line"
grep -q "zero-copy transmit has nothing to chain (only a client" "$WORK/uet_write_bw_csum.server" ||
    bad "uet_write_bw_csum: --zero-copy on a uet_memif server was not explained"
p2p uet_jumbo write_bw -s 65536 -n 1000 --verify --port-mtu 9000 --stats
p2p uet_read_bw read_bw -a -n 16 -t 16 --verify -b
p2p uet_send_lat send_lat -s 8 -n 1000 --verify
p2p uet_atomic_lat atomic_lat -n 500 --verify
# --tss: every frame sealed and authenticated (UET's TSS), the key from the environment; both
# sides say so in their settings block and count what they sealed and opened, nothing dropped.
KEY_A=$(printf '%064x' 1) KEY_B=$(printf '%064x' 2)
UET_TSS_KEY=$KEY_A p2p uet_write_bw_tss write_bw -s 65536 -n 500 --verify --tss --tss-sdi 9 --stats
for side in client server; do
    grep -q "^ TSS             : on (SDI 9, epoch 0)$" "$WORK/uet_write_bw_tss.$side" &&
        grep -q "^ TSS: sealed [1-9][0-9]*, opened [1-9][0-9]*, seal failures 0; dropped 0$" \
            "$WORK/uet_write_bw_tss.$side" ||
        bad "uet_write_bw_tss: the $side's settings block or TSS counters"
done
# Another key on the client: the server drops every frame as unauthentic and never answers;
# the client gives up after --timeout and says why (exit 1), not a hang.
UET_TSS_KEY=$KEY_A start_server tss_mismatch write_bw -s 65536 -n 10 --tss --timeout 2 && {
    UET_TSS_KEY=$KEY_B timeout 60 "$PERF" write_bw -s 65536 -n 10 --tss --timeout 2 \
        --dev "$DEV,role=client,socket=$WORK/tss_mismatch.sock,socket-abstract=no" \
        --ip 10.9.0.2/24 10.9.0.1 > "$WORK/tss_mismatch.client" 2>&1
    CRC=$?
    kill "$SPID" 2>/dev/null; wait "$SPID"; SPID=
    echo "== uet-perf write_bw --tss with two keys (client exit $CRC)"
    [ "$CRC" = 1 ] || bad "tss_mismatch: client exit $CRC (1 expected)"
    grep -q "no answer from 10.9.0.1:4793: .*with --tss both sides need the same key" \
        "$WORK/tss_mismatch.client" || { bad "tss_mismatch: the client does not say why"; cat "$WORK/tss_mismatch.client"; }
}
# --multi-recv: the receiving sides take the messages in multi-receive buffers (1000-byte
# messages: 65 to a 64 KiB buffer, released by an entry of length 0), both directions at once.
p2p uet_send_bw_multi_recv send_bw -s 1000 -n 5000 -t 64 --verify --multi-recv -b
p2p uet_send_lat_multi_recv send_lat -s 1000 -n 1000 --verify --multi-recv
for name in uet_send_bw_multi_recv uet_send_lat_multi_recv; do
    for side in client server; do
        grep -q "^ Multi-receive   : ON, 2 buffers of 65536\[B\]$" "$WORK/$name.$side" ||
            bad "$name: the $side's settings block does not show --multi-recv"
    done
done
# RoCEv2 RC on uet's memif port.
pair uet_roce_write_bw write_bw --transport roce -s 65536 -n 500 --verify --stats
# The WRITEs' payloads leave the client's memory by reference, their ICRC in a third slot.
grep -Eq '^ Port: .*\(zero-copy [1-9][0-9]*\)' "$WORK/uet_roce_write_bw.client" ||
    bad "uet_roce_write_bw: no payload was sent by reference (the client's Port: line)"
pair uet_roce_read_bw read_bw --transport roce -s 65536 -n 200 --verify
# Four QPs a connection, CAST-scheduled (issue 54): every byte checked, and the client's --stats
# shows each QP with work on it.
pair uet_roce_cast write_bw --transport roce --qps 4 --qp-sched cast -s 262144 -n 200 --verify --stats
[ "$(grep -c '^ QP [0-3] (QPN [1-9][0-9]*): requests [1-9]' "$WORK/uet_roce_cast.client")" = 4 ] ||
    bad "uet_roce_cast: the client's --stats does not show 4 QPs with work"
DEV=net_memif0

# Settings that differ: refused, both sides say why, both exit 1.
start_server mismatch send_bw -s 4096 -n 10 && {
    run_client mismatch send_bw -s 8192 -n 10
    echo "== mismatched -s (client | server exit $CRC | $SRC)"
    [ "$CRC" = 1 ] && [ "$SRC" = 1 ] || bad "mismatch: exits $CRC | $SRC (1 | 1 expected)"
    grep -q "settings differ: -s: client 8192, server 4096" "$WORK/mismatch.client" ||
        { bad "mismatch: the client does not say why"; cat "$WORK/mismatch.client"; }
    grep -q "settings differ: -s: client 8192, server 4096" "$WORK/mismatch.server" ||
        { bad "mismatch: the server does not say why"; cat "$WORK/mismatch.server"; }
    said_goodbye mismatch
}

echo "perf_memif_pair: $failures failure(s)"
[ "$failures" = 0 ]
