# Sourced by the scripts that run processes in network namespaces (test/perf/perf_pair_netns.sh,
# test/integration/run_hostile_peer.sh), once they set WORK (a scratch directory): PIDS and NETNS
# to register processes and namespaces in, bad() to count a failed check in failures, and a
# cleanup that runs whatever happens (a failed check, set -u, a signal, meson's timeout): it
# stops the processes, then deletes the namespaces (which takes their links with them) and WORK.
PIDS=()
NETNS=()
failures=0
bad() { echo "FAIL: $*"; failures=$((failures + 1)); }

cleanup() {
    local rc=$?
    for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
    for p in "${PIDS[@]}"; do
        for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$p" 2>/dev/null
        wait "$p" 2>/dev/null
    done
    for n in "${NETNS[@]}"; do ip netns del "$n" 2>/dev/null; done
    rm -rf "$WORK"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
