# Shared by the run_*.sh integration scripts: bounded waits, and a cleanup that always runs.
# Every namespace, link and file a script creates is registered here first, then removed on exit
# whatever happened (set -e failure, a failed check, a signal).
set -euo pipefail

USAGE="usage: $0 PATH/TO/uet-itest-peer PATH/TO/uet-itest-engine-peer PATH/TO/uet-itest-api-peer"
PEER=${1:?$USAGE}
ENGINE_PEER=${2:?$USAGE}
API_PEER=${3:?$USAGE}
TAG=uet$$                      # unique per run: names of namespaces and links
WORK=$(mktemp -d /tmp/uet-itest.XXXXXX)
NETNS=()
LINKS=()
PIDS=()

cleanup() {
    local rc=$?
    for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null || true; done
    for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
    for l in "${LINKS[@]}"; do ip link del "$l" 2>/dev/null || true; done
    for n in "${NETNS[@]}"; do ip netns del "$n" 2>/dev/null || true; done
    if [[ $rc -ne 0 ]]; then
        for f in "$WORK"/*.log; do
            [[ -f $f ]] && { echo "---- $f"; cat "$f"; }
        done
    fi
    rm -rf "$WORK"
    exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

[[ $(id -u) -eq 0 ]] || { echo "integration tests need root"; exit 1; }

add_ns() { ip netns add "$1"; NETNS+=("$1"); ip -n "$1" link set lo up; }

# wait_until SECONDS DESCRIPTION COMMAND...: polls COMMAND until it succeeds; gives up early if
# a peer in WATCH (names) has exited.
WATCH=()
wait_until() {
    local limit=$1 what=$2
    shift 2
    local end=$((SECONDS + limit))
    until "$@" >/dev/null 2>&1; do
        for w in "${WATCH[@]}"; do
            local pidvar="PID_$w"
            if ! kill -0 "${!pidvar}" 2>/dev/null; then
                echo "FAIL: $w exited while waiting for $what"
                return 1
            fi
        done
        if ((SECONDS >= end)); then
            echo "FAIL: waited ${limit}s for $what"
            return 1
        fi
        sleep 0.1
    done
}

# start_peer NAME [ip netns exec NS] -- ARGS...: runs the frame-exchange peer in the background,
# logging to $WORK/NAME.log; sets PID_<NAME>. start_engine: the same with the engine peer.
start_peer() { PROG=$PEER start_prog "$@"; }
# UET_ITEST_ENGINE_ARGS is appended to every engine peer's arguments (tuning experiments).
start_engine() {
    local extra=()
    read -ra extra <<<"${UET_ITEST_ENGINE_ARGS:-}"
    PROG=$ENGINE_PEER start_prog "$@" "${extra[@]}"
}
# start_api: the same with the API peer (include/uet/ on the dpdk provider).
start_api() { PROG=$API_PEER start_prog "$@"; }
start_prog() {
    local name=$1
    shift
    local prefix=()
    while [[ $1 != -- ]]; do prefix+=("$1"); shift; done
    shift
    "${prefix[@]}" "$PROG" --name "$name" "$@" >"$WORK/$name.log" 2>&1 &
    PIDS+=($!)
    printf -v "PID_$name" '%s' "$!"
}

# wait_peer NAME SECONDS: waits (bounded) for the peer to exit; fails unless it exited 0.
wait_peer() {
    local name=$1 limit=$2 pidvar="PID_$1"
    local pid=${!pidvar}
    local end=$((SECONDS + limit))
    while kill -0 "$pid" 2>/dev/null; do
        if ((SECONDS >= end)); then
            echo "FAIL: $name still running after ${limit}s"
            return 1
        fi
        sleep 0.1
    done
    local rc=0
    wait "$pid" || rc=$?
    if [[ $rc -ne 0 ]]; then
        echo "FAIL: $name exited with $rc"
        return 1
    fi
}

# expect LOGNAME PATTERN: the peer's log must match (grep -E).
expect() {
    if ! grep -Eq "$2" "$WORK/$1.log"; then
        echo "FAIL: $1 log lacks /$2/"
        return 1
    fi
}

show() { grep -hE "$1" "$WORK"/*.log || true; }

# expect_api_run SERVER CLIENT MODES...: both API peers ended well and every phase was verified.
expect_api_run() {
    local server=$1 client=$2
    shift 2
    for m in "$@"; do
        expect "$client" "PHASE [0-9]+ $m: HANDSHAKE"
        expect "$client" "VERDICT $m from the server: ok"
        expect "$server" "VERDICT $m ok"
    done
    expect "$server" "REFUSED mtu 8192: .*exceeds the port"
    # Zero-copy transmit: the client's registered send/write sources and the server's read
    # source left as external buffers (every port here takes multi-segment frames), and the
    # VERDICTs above checked every byte.
    expect "$client" "PORT .* tx_zero_copy=[1-9]"
    expect "$server" "PORT .* tx_zero_copy=[1-9]"
    expect "$server" "RESULT ok"
    expect "$client" "RESULT ok"
}
API_LINES="^[a-zA-Z0-9_]+: (REFUSED|PHASE|(rud|rod|rudi|uud|roce) |VERDICT|FAULT|COUNTERS|PORT|RESULT)"
