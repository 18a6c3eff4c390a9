#!/usr/bin/env bash
# integration_perf_pair: the two-host commands of docs/uet-perf.md ("Two hosts over any NIC"),
# run verbatim. Each fenced block tagged "sh perf-pair" holds one "A$ " line (the server, host A)
# and one "B$ " line (the client, host B); this script takes them from the doc, so the doc and
# the test cannot drift. Two network namespaces play the hosts, joined by a veth pair whose end
# in each is called eth0 (as the commands say), with kernel addresses 10.1.0.1 and 10.1.0.2 on
# the subnet, as on real hosts. Each pair must end with exit 0 on both sides, a result row on
# each, the same rows on both, "Verify: OK" on both where the command has --verify, and the
# JSON file (with its fields) on each host where it has --out_json_file.
# The DPDK-bound NIC (vfio-pci, PCI address) cannot be exercised here; the output says so.
# Needs root (DPDK, namespaces); skipped (77) otherwise. Figures: information only.
set -u
PERF=${1:?usage: $0 PATH/TO/uet-perf [PATH/TO/uet-perf.md]}
DOC=${2:-$(dirname "$0")/../../docs/uet-perf.md}
[ "$(id -u)" = 0 ] || { echo "integration_perf_pair: needs root, skipped"; exit 77; }
command -v ip >/dev/null || { echo "integration_perf_pair: no 'ip' (iproute2), skipped"; exit 77; }

PROC_LIMIT=60 # seconds: the `timeout` of every uet-perf process
READY_LIMIT=30 # seconds: for the server's "Waiting for client to connect..."
NS_A=uetpair$$a NS_B=uetpair$$b
WORK=$(mktemp -d /tmp/uetperf-pair.XXXXXX)
source "$(dirname "$0")/netns_run.sh"

# ---- the commands, from the doc
[ -r "$DOC" ] || { echo "FAIL: cannot read $DOC"; exit 1; }
SERVERS=()
CLIENTS=()
parse_doc() {
    local in_block=0 line cmd="" a="" b="" n=0
    while IFS= read -r line || [ -n "$line" ]; do
        n=$((n + 1))
        if [ "$in_block" = 0 ]; then
            [ "$line" = '```sh perf-pair' ] && { in_block=1; a=""; b=""; }
            continue
        fi
        if [ "$line" = '```' ]; then
            in_block=0
            if [ -z "$a" ] || [ -z "$b" ]; then
                echo "FAIL: $DOC:$n: a perf-pair block needs one A\$ and one B\$ line"
                return 1
            fi
            SERVERS+=("$a")
            CLIENTS+=("$b")
            continue
        fi
        cmd+="$line"
        if [[ $cmd == *\\ ]]; then cmd=${cmd%\\}; continue; fi # continued on the next line
        case $cmd in
        "A\$ "* | "B\$ "*)
            if { [ -n "$a" ] && [[ $cmd == A* ]]; } || { [ -n "$b" ] && [[ $cmd == B* ]]; }; then
                echo "FAIL: $DOC:$n: two ${cmd:0:2} lines in one perf-pair block"
                return 1
            fi
            if [[ $cmd == A* ]]; then a=${cmd#A\$ }; else b=${cmd#B\$ }; fi
            ;;
        "") ;;
        *) echo "FAIL: $DOC:$n: not an A\$/B\$ line in a perf-pair block: $cmd"; return 1 ;;
        esac
        cmd=""
    done <"$DOC"
    [ "$in_block" = 0 ] || { echo "FAIL: $DOC: unterminated perf-pair block"; return 1; }
}
parse_doc || exit 1

# What the doc must keep showing (so that deleting a block does not quietly shrink the test).
has_pair() { # has_pair REGEX...: a server command matching every REGEX
    local c r ok
    for c in "${SERVERS[@]}"; do
        ok=1
        for r in "$@"; do [[ $c =~ $r ]] || ok=0; done
        [ "$ok" = 1 ] && return 0
    done
    return 1
}
has_pair '^uet-perf write_bw ' ' --verify( |$)' ' --dev eth0( |$)' || bad "the doc has no af_packet write_bw --verify pair"
has_pair '^uet-perf send_lat ' ' --dev eth0( |$)' || bad "the doc has no af_packet send_lat pair"
has_pair ' --out_json_file ' || bad "the doc has no pair with --out_json_file"
has_pair ' --dev xdp:eth0( |$)' || bad "the doc has no af_xdp pair"
[ "$failures" = 0 ] || exit 1

# ---- the two hosts
mkdir -p "$WORK/bin" "$WORK/A" "$WORK/B"
ln -s "$(realpath "$PERF")" "$WORK/bin/uet-perf" # the commands say "uet-perf"
ip netns add "$NS_A" && NETNS+=("$NS_A") || exit 1
ip netns add "$NS_B" && NETNS+=("$NS_B") || exit 1
# One queue pair on each end: what `ethtool -L eth0 combined 1` gives a real NIC for af_xdp.
ip link add eth0 netns "$NS_A" numtxqueues 1 numrxqueues 1 type veth \
    peer name eth0 netns "$NS_B" numtxqueues 1 numrxqueues 1 || exit 1
for n in A B; do
    ns_var=NS_$n
    ip -n "${!ns_var}" link set lo up || exit 1
    ip -n "${!ns_var}" link set eth0 up || exit 1
done
ip -n "$NS_A" addr add 10.1.0.1/24 dev eth0 || exit 1
ip -n "$NS_B" addr add 10.1.0.2/24 dev eth0 || exit 1

# host NAME CMD: runs CMD (a doc line without its prompt) as host NAME would: in its namespace
# and its own directory (relative --out_json_file paths land there), uet-perf on the PATH,
# under `timeout`; output to $WORK/NAME.log.
host() {
    local name=$1 cmd=$2 ns_var=NS_$1
    (cd "$WORK/$name" && exec timeout -k 5 "$PROC_LIMIT" ip netns exec "${!ns_var}" \
        env PATH="$WORK/bin:$PATH" bash -c "$cmd") >"$WORK/$name.log" 2>&1 &
}

# The server is ready once it prints perftest's "Waiting for client to connect..." (after its
# port and endpoint are up); bounded, and stops early if the server has exited.
wait_ready() {
    local pid=$1 end=$((SECONDS + READY_LIMIT))
    until grep -q "Waiting for client to connect" "$WORK/A.log"; do
        kill -0 "$pid" 2>/dev/null || { echo "the server exited before it was ready"; return 1; }
        ((SECONDS < end)) || { echo "the server was not ready after ${READY_LIMIT}s"; return 1; }
        sleep 0.1
    done
}

rows() { grep -E '^ [0-9]+ +[0-9]+ ' "$1"; }
opt_value() { # opt_value CMD OPTION: the word after OPTION in CMD
    local -a w
    read -ra w <<<"$1"
    for ((i = 0; i + 1 < ${#w[@]}; i++)); do [ "${w[i]}" = "$2" ] && { echo "${w[i + 1]}"; return; }; done
}

# check_stats NAME LOG PAIR COMMAND: --stats printed the port's counters (af_packet and af_xdp
# leave the host: UDP checksums on by default; both are virtual devices, which copy every frame
# into their own ring: zero-copy transmit from 4 KiB only by default) and the poll loop's time,
# and the loop polled and was busy some of the time (a side that moved frames cannot be idle
# always); the port's stages were timed where COMMAND asked for it (--time-stages), else not.
check_stats() {
    local name=$1 log=$2 n=$3 line
    grep -q "^ Port: rx frames [1-9]" "$log" || bad "pair $n: $name's --stats has no port counters"
    grep -q "^ Port: .*; UDP checksum on; zero-copy transmit from 4096 bytes$" "$log" ||
        bad "pair $n: $name sent without UDP checksums or chained small payloads (virtual device)"
    line=$(grep "^ Polling: " "$log")
    [[ $line =~ ^\ Polling:\ [1-9][0-9]*\ polls.*busy\ ([0-9.]+)\ s ]] ||
        bad "pair $n: $name's --stats has no poll loop line"
    awk -v b="${BASH_REMATCH[1]:-0}" 'BEGIN { exit !(b > 0) }' ||
        bad "pair $n: $name's poll loop was never busy: $line"
    # --time-stages times the port's stages: both directions moved frames, so all four count;
    # --stats alone does not time them.
    if [[ " $4 " != *" --time-stages "* ]]; then
        ! grep -q "^ Stages (ns per frame): " "$log" || bad "pair $n: $name timed stages unasked"
        return
    fi
    line=$(grep "^ Stages (ns per frame): " "$log")
    [[ $line =~ receive\ driver\ ([0-9.]+),\ stack\ ([0-9.]+)\;\ transmit\ stack\ ([0-9.]+),\ driver\ ([0-9.]+)$ ]] ||
        { bad "pair $n: $name's --stats has no stages line"; return; }
    awk -v a="${BASH_REMATCH[1]}" -v b="${BASH_REMATCH[2]}" -v c="${BASH_REMATCH[3]}" \
        -v d="${BASH_REMATCH[4]}" 'BEGIN { exit !(a > 0 && b > 0 && c > 0 && d > 0) }' ||
        bad "pair $n: $name's stages were not all timed: $line"
}

# check_json NAME FILE CMD: FILE (host NAME's) holds perftest's keys, agreeing with the row.
check_json() {
    local name=$1 f=$2 cmd=$3 row keys
    [ -s "$f" ] || { bad "$name: no JSON file $f"; return; }
    if ! command -v jq >/dev/null; then
        echo "   (no jq: $name's JSON only checked for its keys by grep)"
        for k in test_info results MsgSize n_iterations; do
            grep -q "\"$k\"" "$f" || bad "$name: $f lacks \"$k\""
        done
        return
    fi
    jq -e . "$f" >/dev/null 2>&1 || { bad "$name: $f is not JSON"; return; }
    if [[ $cmd == *_lat* ]]; then
        keys='"t_min","t_max","t_typical","t_avg","t_stdev","99%","99.9%"'
    else
        keys='"BW_peak","BW_average","MsgRate"'
    fi
    [[ $cmd == *--verify* ]] && keys+=',"verify"'
    jq -e ".test_info | has(\"test\") and has(\"Device\") and has(\"Provider\") and
           has(\"Connection_type\") and has(\"Mtu\")" "$f" >/dev/null ||
        bad "$name: $f: test_info lacks a field"
    jq -e ".results | ([\"MsgSize\",\"n_iterations\",$keys] - keys) == []" "$f" >/dev/null ||
        bad "$name: $f: results lack a field"
    [[ $cmd == *--verify* ]] && { jq -e '.results.verify | startswith("OK")' "$f" >/dev/null ||
        bad "$name: $f: verify is not OK"; }
    row=$(rows "$WORK/$name.log" | head -1)
    read -r -a row <<<"$row"
    [ "$(jq -r '"\(.results.MsgSize) \(.results.n_iterations)"' "$f")" = "${row[0]:-} ${row[1]:-}" ] ||
        bad "$name: $f: MsgSize/n_iterations differ from the row"
}

pair() { # pair N SERVER-CMD CLIENT-CMD
    local n=$1 scmd=$2 ccmd=$3 spid cpid src crc t0=$SECONDS
    echo "== pair $n"
    echo "   A\$ $scmd"
    echo "   B\$ $ccmd"
    rm -f "$WORK/A.log" "$WORK/B.log"
    host A "$scmd"
    spid=$!
    PIDS+=("$spid")
    if ! wait_ready "$spid"; then
        bad "pair $n: the server never became ready"
        cat "$WORK/A.log"
        return
    fi
    host B "$ccmd"
    cpid=$!
    PIDS+=("$cpid")
    wait "$cpid"; crc=$?
    # A server whose client failed may wait for it until its own timeout: once the client has
    # failed, give the server 15 s to say why, then stop it (the pair has failed either way).
    if [ "$crc" != 0 ]; then
        for _ in $(seq 150); do kill -0 "$spid" 2>/dev/null || break; sleep 0.1; done
        kill -TERM "$spid" 2>/dev/null
    fi
    wait "$spid"; src=$?
    PIDS=() # both reaped: nothing left for the cleanup to stop
    echo "   exit: server $src, client $crc; $((SECONDS - t0)) s"
    rows "$WORK/B.log" | sed 's/^/   /'
    [ "$src" = 0 ] || bad "pair $n: server exit $src"
    [ "$crc" = 0 ] || bad "pair $n: client exit $crc"
    [ -n "$(rows "$WORK/A.log")" ] || bad "pair $n: no result row from the server"
    [ -n "$(rows "$WORK/B.log")" ] || bad "pair $n: no result row from the client"
    [ "$(rows "$WORK/A.log")" = "$(rows "$WORK/B.log")" ] ||
        bad "pair $n: the server printed other rows than the client"
    if [[ " $scmd " == *" --verify "* ]]; then
        grep -q "^ Verify: OK" "$WORK/A.log" || bad "pair $n: no 'Verify: OK' from the server"
        grep -q "^ Verify: OK" "$WORK/B.log" || bad "pair $n: no 'Verify: OK' from the client"
    fi
    if [[ " $scmd " == *" --stats "* || " $scmd " == *" --time-stages "* ]]; then
        check_stats A "$WORK/A.log" "$n" "$scmd"
        check_stats B "$WORK/B.log" "$n" "$scmd"
    fi
    local json
    json=$(opt_value "$scmd" --out_json_file)
    [ -n "$json" ] && check_json A "$WORK/A/$json" "$scmd"
    local cjson
    cjson=$(opt_value "$ccmd" --out_json_file)
    [ -n "$cjson" ] && check_json B "$WORK/B/$cjson" "$ccmd"
    if [ -n "$json" ] && [ -n "$cjson" ] && command -v jq >/dev/null; then
        [ "$(jq -S .results "$WORK/A/$json" 2>&1)" = "$(jq -S .results "$WORK/B/$cjson" 2>&1)" ] ||
            bad "pair $n: the server's JSON results differ from the client's"
    fi
    if [ "$failures" != 0 ]; then
        echo "---- server (A)"; cat "$WORK/A.log"
        echo "---- client (B)"; cat "$WORK/B.log"
    fi
}

for i in "${!SERVERS[@]}"; do
    pair $((i + 1)) "${SERVERS[i]}" "${CLIENTS[i]}"
    [ "$failures" = 0 ] || break
done

echo "NOT EXERCISED: \"Two hosts over a DPDK-bound NIC\" (vfio-pci, --dev <PCI address>): no NIC"
echo "  to bind here; docs/uet-perf.md gives the commands, they are not run by this test."
echo "integration_perf_pair: ${#SERVERS[@]} pair(s) from $DOC, $failures failure(s)"
[ "$failures" = 0 ]
