#!/usr/bin/env bash
# fi_pingpong_vs_perf: Debian's unmodified fi_pingpong over the uet provider against uet-perf's
# send_lat over the same memif link, side by side, round by round (fi_pingpong, then uet-perf,
# then the other order). Both pinned the same way (server CPU 0, client CPU 1), both RDM over
# RUD, NSCC and REPS (the provider's defaults). fi_pingpong's usec/xfer is half a round trip,
# as uet-perf's t_avg is (its mean; t_typical, the median, is printed beside it): the ratio of
# the means is what the libfabric layer and fi_pingpong's loop cost, or save.
# fi_pingpong runs in a network namespace of its own (its TCP control port).
#   bench/e2e/fi_pingpong_vs_perf.sh            (ROUNDS=2, ITERS=1000, FI_DIR=$BUILD/bindings/libfabric)
source "$(dirname "$0")/lib.sh"
P2P_OPTS=(--cc nscc --lb reps)  # the provider's defaults, not lib.sh's point-to-point ones
ROUNDS=${ROUNDS:-2}
ITERS=${ITERS:-1000}
FI_DIR=${FI_DIR:-$BUILD/bindings/libfabric}
SIZES=(64 256 1024 4096 65536 1048576)
command -v fi_pingpong >/dev/null || { echo "fi_pingpong missing (apt install libfabric-bin)"; exit 1; }
[[ -f $FI_DIR/libuet-fi.so ]] || { echo "no libuet-fi.so in $FI_DIR (build first)"; exit 1; }

NS=uetfpp$$
ip netns add "$NS"
NETNS+=("$NS")
ip -n "$NS" link set lo up

# fi_pingpong_round N: the pair's whole default sweep; its rows into $WORK/fpp-N.rows as
# "bytes usec_per_xfer".
fi_pingpong_round() {
    local n=$1 sock=$WORK/fpp.sock
    rm -f "$sock"
    local env=(ip netns exec "$NS" env FI_PROVIDER_PATH="$FI_DIR")
    "${env[@]}" FI_UET_DEVICE="uet_memif0,role=server,socket=$sock" FI_UET_ADDRESS=10.77.0.1/24 \
        taskset -c 0 timeout 300 fi_pingpong -p uet -e rdm -I "$ITERS" >"$WORK/fpp-server.log" 2>&1 &
    local server=$!
    PIDS+=($server)
    wait_for 30 "fi_pingpong's control port" sh -c "ip netns exec $NS ss -ltn | grep -q ':47592 '"
    "${env[@]}" FI_UET_DEVICE="uet_memif1,role=client,socket=$sock" FI_UET_ADDRESS=10.77.0.2/24 \
        taskset -c 1 timeout 300 fi_pingpong -p uet -e rdm -I "$ITERS" 127.0.0.1 \
        >"$WORK/fpp-client.log" 2>&1 || { echo "FAIL: fi_pingpong client"; return 1; }
    wait "$server" || { echo "FAIL: fi_pingpong server"; return 1; }
    # Rows: bytes (64, 256, 1k, 4k, 64k, 1m), then usec/xfer in the seventh column.
    awk '/^[0-9]+[km]? / { s = $1; m = 1; if (s ~ /k$/) m = 1024; if (s ~ /m$/) m = 1048576;
         sub(/[km]$/, "", s); print s * m, $7 }' "$WORK/fpp-client.log" >"$WORK/fpp-$n.rows"
    [[ $(wc -l <"$WORK/fpp-$n.rows") -eq ${#SIZES[@]} ]] ||
        { echo "FAIL: fi_pingpong printed $(wc -l <"$WORK/fpp-$n.rows") rows"; return 1; }
}

# perf_round N: uet-perf send_lat at each size; "bytes t_avg t_typical" into $WORK/perf-N.rows.
perf_round() {
    local n=$1
    : >"$WORK/perf-$n.rows"
    for s in "${SIZES[@]}"; do
        uet_memif "lat-$s" send_lat -s "$s" -n "$ITERS" >/dev/null
        echo "$s $(json_result "lat-$s" t_avg) $(json_result "lat-$s" t_typical)" >>"$WORK/perf-$n.rows"
    done
}

for ((r = 1; r <= ROUNDS; r++)); do
    if ((r % 2)); then fi_pingpong_round "$r"; perf_round "$r"; else perf_round "$r"; fi_pingpong_round "$r"; fi
    echo "round $r (cores $(core_ns) ns)"
    paste -d' ' "$WORK/fpp-$r.rows" "$WORK/perf-$r.rows" |
        awk '{ printf "  %8d B  fi_pingpong mean %9.2f us  uet-perf send_lat mean %9.2f us (median %8.2f)  means %.2f\n",
               $1, $2, $4, $5, ($4 > 0 ? $2 / $4 : 0) }'
done
