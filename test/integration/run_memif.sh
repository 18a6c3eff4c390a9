#!/usr/bin/env bash
# integration_memif: two engines over memif (server and client, socket in a temp dir). The
# server sends RUD, ROD, RUDI messages of 1 KiB to 64 MiB and single-packet UUD messages while
# the client sends a smaller plan back; every message is verified byte-exact, exactly once, ROD
# in order. DPDK 22.11 memif: max_rx_pktlen 1518, so 1400-byte payloads. Rates: information only.
source "$(dirname "$0")/lib.sh"

SOCK=$WORK/memif.sock
PLAN_SC=${UET_ITEST_PLAN_AB:-uud:1k*200,rud:1k*200,rud:1m*16,rud:64m*3,rod:1k*200,rod:1m*16,rod:64m*3,rudi:1k*200,rudi:1m*8,rudi:64m*2}
PLAN_CS=${UET_ITEST_PLAN_BA:-uud:1400*100,rud:4k*100,rod:256k*8,rudi:64k*8}
STOP=$WORK/stop
start_engine server -- --dev "net_memif0,role=server,socket=$SOCK,socket-abstract=no" \
    --ip 10.9.0.1/24 --peer 10.9.0.2 --send "$PLAN_SC" --expect "$PLAN_CS" \
    --done-file "$WORK/server.done" --serve-until "$STOP"
# The memif client connects once, when its port starts: start it after the server listens.
WATCH=(server)
wait_until 60 "the memif server's socket" test -S "$SOCK"
start_engine client -- --dev "net_memif1,role=client,socket=$SOCK,socket-abstract=no" \
    --ip 10.9.0.2/24 --peer 10.9.0.1 --send "$PLAN_CS" --expect "$PLAN_SC" \
    --done-file "$WORK/client.done" --serve-until "$STOP"
WATCH=(server client)
wait_until 150 "both engines to finish" test -f "$WORK/server.done" -a -f "$WORK/client.done"
touch "$STOP"
wait_peer server 60
wait_peer client 60
for n in server client; do
    expect "$n" "COMPLETIONS .* retry_limit=0 peer_unreachable=0 other=0 duplicates=0"
    expect "$n" "RECEIVED received ([0-9]+)/\1 reliable, [0-9]+/[0-9]+ uud, 0 errors"
    expect "$n" "RESULT ok"
done
show "OFFLOADS|RATE|RECEIVED|COUNTERS|DROPS|COPIES"

echo "== API: include/uet/ on the dpdk provider, server and client over memif"
# Every delivery mode in turn on one port per side (an endpoint per mode), 1 KiB to 64 MiB, then
# the same operations on a roce_rc endpoint (RoCEv2 RC queue pairs, connected by the IB CM).
API_MODES=(--modes rud,rod,rudi,uud,roce)
ASOCK=$WORK/api-memif.sock
start_api api_server -- --role server --dev "net_memif0,role=server,socket=$ASOCK,socket-abstract=no" \
    --ip 10.9.0.1/24 --peer 10.9.0.2 --ready-file "$WORK/api_server.ready" "${API_MODES[@]}"
WATCH=(api_server)
# The server's port (not its refused first open) must listen before the client connects.
wait_until 60 "the API server's port" test -f "$WORK/api_server.ready"
start_api api_client -- --role client --dev "net_memif1,role=client,socket=$ASOCK,socket-abstract=no" \
    --ip 10.9.0.2/24 --peer 10.9.0.1 "${API_MODES[@]}"
WATCH=(api_server api_client)
wait_peer api_client 150
wait_peer api_server 60
expect_api_run api_server api_client rud rod rudi uud roce
show "$API_LINES"
