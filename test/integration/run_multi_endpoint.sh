#!/usr/bin/env bash
# integration_multi_endpoint: several endpoints on one dpdk fabric (issue 57), told apart by
# PIDonFEP, over memif (DPDK's net_memif, socket in a temp dir). Each of two processes opens two
# UET endpoints on its one address; messages and RMA between every pair, every byte checked
# (multi_endpoint_peer.cpp says what is checked).
# Args: the suite's three peers (lib.sh), then uet-itest-multi-endpoint.
source "$(dirname "$0")/lib.sh"
MULTI=${4:?usage: $0 PEER ENGINE_PEER API_PEER MULTI_ENDPOINT_PEER}

SOCK=$WORK/memif.sock
PROG=$MULTI start_prog side1 -- --side 1 --ready-file "$WORK/side1.ready" \
    --dev "net_memif0,role=server,socket=$SOCK,socket-abstract=no"
WATCH=(side1)
# The memif client connects once, when its port starts: start it after the server listens.
wait_until 30 "side 1's port" test -f "$WORK/side1.ready"
PROG=$MULTI start_prog side2 -- --side 2 \
    --dev "net_memif1,role=client,socket=$SOCK,socket-abstract=no"
WATCH=(side1 side2)
wait_peer side2 40
wait_peer side1 20
for s in side1 side2; do
    expect $s "REFUSED a roce_rc endpoint beside them"
    expect $s "HELLO ok"
    expect $s "MESSAGES ok"
    expect $s "RMA ok"
    expect $s "RESULT ok"
done
show "REFUSED|READY|HELLO|MESSAGES|RMA|PORT|RESULT"
