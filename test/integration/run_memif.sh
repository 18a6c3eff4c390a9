#!/usr/bin/env bash
# integration_memif: two processes over memif (server and client, socket in a temp dir), the
# verified exchange of 64..1514-byte frames both ways (DPDK 22.11 memif: max_rx_pktlen 1518), and the frame rate (information only).
# The client runs its loop on a dedicated lcore; the server polls inline.
source "$(dirname "$0")/lib.sh"

SOCK=$WORK/memif.sock
COUNT=${UET_ITEST_COUNT:-20000}
start_peer server -- --dev "net_memif0,role=server,socket=$SOCK,socket-abstract=no" \
    --ip 10.9.0.1/24 --peer 10.9.0.2 --count "$COUNT"
# The memif client connects once, when its port starts: start it after the server listens.
WATCH=(server)
wait_until 60 "the memif server's socket" test -S "$SOCK"
start_peer client -- --dev "net_memif1,role=client,socket=$SOCK,socket-abstract=no" \
    --ip 10.9.0.2/24 --peer 10.9.0.1 --count "$COUNT" --eal "-l 0-1" --lcore 1
wait_peer server 120
wait_peer client 120
expect server "RESULT ok"
expect client "RESULT ok"
show "OFFLOADS|STEERING|RESULT|RATE"
