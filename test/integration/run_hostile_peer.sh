#!/usr/bin/env bash
# hostile_peer (issue 55): an attacker on the segment sends crafted frames (hostile_sender,
# lib/wire through AF_PACKET) to a uet-perf server while a legitimate client's write_bw --verify
# runs to it:
#
#   ns V: eth0 (kernel 10.1.0.1, uet-perf server 10.1.0.101) -- pv \
#   ns C: eth0 (kernel 10.1.0.2, uet-perf client 10.1.0.102) -- pc -- br0 (ns BR)
#   ns A: eth0 (kernel 10.1.0.3, hostile_sender)             -- pa /
#
# Five server runs (HOSTILE_PEER_RUNS), each a transfer during which attack classes run one
# after another, each its own attacker process, each class of a run counted for reasons of its
# own: against an unsecured server syn_flood alone, forged_pdc and guessed_rkey, wrong_job and
# malformed; against a server in a secure domain (both sides --tss, a fresh key, epoch 9),
# forged_icv, replay, wrong_sdi, truncated_icv, unsealed and stale_epoch (one TSS reason each),
# and bit_flips alone. The client's switch port is mirrored to the attacker's (tc mirred), which
# is how it captures the sealed frames it replays and rewrites; it is given the key only for
# stale_epoch and bit_flips, which need frames a member sealed.
#
# Each run must show: the transfer verified on both sides (exit 0, "Verify: OK"); every frame
# of a class counted by the server for the reason hostile_sender expected (EXPECT lines:
# equal, reason by reason, and no reason expected of two classes of one run; at least, for the
# port's drops and unknown_pdc, where strays count too); nothing of the attacker's delivered (no
# WRITE placed beyond the client's, no message at the control channel, no frame opened by the
# server's TSS beyond those the client sealed); every answer to it an error without data; state
# bounded under the SYN flood. HOSTILE_PEER_RUNS picks runs and classes ("replay | bit_flips"),
# HOSTILE_PEER_SECONDS the transfers' length (4).
# No byte of the server's region written by the attacker: every WRITE placed in it is counted
# (writes placed directly), and their number must be the client's (its result row), besides
# the server's --verify of the region; the attacker aims its writes and reads inside it. No byte
# read: the answers that came back to the attacker carry none.
# Prints a table: class, sent, delivered, dropped (by reason).
# Needs root (namespaces, DPDK) and, for the secured runs, tc's u32 and mirred; skipped (77)
# without root.
set -u
PERF=${1:?usage: $0 PATH/TO/uet-perf PATH/TO/hostile_sender}
SENDER=${2:?usage: $0 PATH/TO/uet-perf PATH/TO/hostile_sender}
[ "$(id -u)" = 0 ] || { echo "hostile_peer: needs root, skipped"; exit 77; }
command -v ip >/dev/null || { echo "hostile_peer: no 'ip' (iproute2), skipped"; exit 77; }

PROC_LIMIT=40  # seconds: the `timeout` of every process
READY_LIMIT=20 # seconds: for the server to listen and the client to start its run
JOB=4242
SIZE=4096 DEPTH=32 DURATION=${HOSTILE_PEER_SECONDS:-4}
# Server runs, separated by '|', each of attack classes run one after another during one
# transfer; classes of one run must be counted for different reasons (checked below).
RUNS=${HOSTILE_PEER_RUNS:-syn_flood | forged_pdc guessed_rkey | wrong_job malformed |
    forged_icv replay wrong_sdi truncated_icv unsealed stale_epoch | bit_flips}
TSS_SDI=1516 TSS_EPOCH=9
TAG=uethp$$
NS_V=${TAG}v NS_C=${TAG}c NS_A=${TAG}a NS_BR=${TAG}br
WORK=$(mktemp -d /tmp/uet-hostile.XXXXXX)
source "$(dirname "$0")/../perf/netns_run.sh"

# ---- the segment
for n in "$NS_V" "$NS_C" "$NS_A" "$NS_BR"; do
    ip netns add "$n" && NETNS+=("$n") || exit 1
    ip -n "$n" link set lo up || exit 1
    ip netns exec "$n" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
done
ip -n "$NS_BR" link add br0 type bridge || exit 1
# A switch forwards what it is given: with br_netfilter loaded the bridge would check IPv4
# headers itself (and drop the malformed ones before the server sees them).
if [ -e /proc/sys/net/bridge/bridge-nf-call-iptables ]; then
    ip netns exec "$NS_BR" sysctl -qw net.bridge.bridge-nf-call-iptables=0 || exit 1
fi
ip -n "$NS_BR" link set br0 up || exit 1
i=1
for x in v c a; do
    ns_var=NS_${x^^}
    ip link add eth0 netns "${!ns_var}" numtxqueues 1 numrxqueues 1 type veth \
        peer name "p$x" netns "$NS_BR" || exit 1
    ip -n "$NS_BR" link set "p$x" master br0 up || exit 1
    ip -n "${!ns_var}" link set eth0 up || exit 1
    ip -n "${!ns_var}" addr add "10.1.0.$i/16" dev eth0 || exit 1
    i=$((i + 1))
done
mac_of() { ip -n "$1" -o link show eth0 | grep -o 'link/ether [0-9a-f:]*' | cut -d' ' -f2; }
VICTIM_MAC=$(mac_of "$NS_V")
# The server's af_packet ring: 8192 frames (the eth0 shorthand's is 512), so that a stall of the
# server on a busy host (a few hundred ms) loses none of the frames it must count.
VICTIM_DEV=net_af_packet_eth0,iface=eth0,qpairs=1,blocksz=4096,framesz=2048,framecnt=8192

in_ns() { # in_ns NS LOG CMD...: in the background, under `timeout`
    local ns=$1 log=$2
    shift 2
    timeout -k 5 "$PROC_LIMIT" ip netns exec "$ns" "$@" >"$log" 2>&1 &
}
wait_for() { # wait_for PID LOG TEXT
    local pid=$1 log=$2 text=$3 end=$((SECONDS + READY_LIMIT))
    until grep -q -- "$text" "$log"; do
        kill -0 "$pid" 2>/dev/null || { echo "exited before printing '$text'"; return 1; }
        ((SECONDS < end)) || { echo "no '$text' after ${READY_LIMIT}s"; return 1; }
        sleep 0.1
    done
}

# counter LOG REGEX: the number REGEX's group matched in the server's --stats (0 when absent).
counter() { grep -oE -- "$2" "$1" | head -1 | grep -oE '[0-9]+$' || echo 0; }
# The server's count for a reason named in an EXPECT line.
count_for() {
    local log=$1 reason=$2
    case $reason in
    rejected_job | rejected_key) counter "$log" "counters: .*$reason [0-9]+" ;;
    port) counter "$log" "^ Port: .*rx dropped [0-9]+" ;;
    tss_*) counter "$log" "^ TSS: .*[( ]${reason#tss_} [0-9]+" ;;
    syn_accounted)
        # A SYN opened a target PDC, or was answered NO_PDC_AVAIL, or found the peer table
        # full; less the client's own: the PDCs it opened, the NACKs it received.
        local client=${log%.server.log}.client.log
        echo $(($(counter "$log" "target PDCs opened [0-9]+") - $(counter "$client" "PDCs opened [0-9]+") +
            $(counter "$log" "nacks sent [0-9]+") - $(counter "$client" "nacks sent [0-9]+, received [0-9]+") +
            $(counter "$log" "peer table full [0-9]+")))
        ;;
    *) counter "$log" "(Refused frames:|; dropped packets:).* $reason [0-9]+" ;;
    esac
}

ROWS=()
MIRROR=
# The classes against a secured server, and those of them given the key.
secured() {
    case $1 in
    forged_icv | replay | wrong_sdi | truncated_icv | unsealed | stale_epoch | bit_flips) return 0 ;;
    esac
    return 1
}
keyed() { [ "$1" = stale_epoch ] || [ "$1" = bit_flips ]; }

# The client's switch port mirrored to the attacker's: what it sends, the attacker sees.
mirror_client() {
    [ -n "$MIRROR" ] && return 0
    ip netns exec "$NS_BR" tc qdisc add dev pc ingress &&
        ip netns exec "$NS_BR" tc filter add dev pc parent ffff: protocol all u32 match u32 0 0 \
            action mirred egress mirror dev pa || return 1
    MIRROR=1
}

# run_group CLASS...: one server and client run, the attacker's classes one after another.
run_group() {
    local t0=$SECONDS spid cpid src crc cls
    local name=${1}${2:+_etc}
    local S=$WORK/$name.server.log C=$WORK/$name.client.log A=$WORK/$name.attacker.log
    local tss=()
    echo "== $*"
    : >"$A"
    if secured "$1"; then
        mirror_client || { bad "$*: could not mirror the client's port (tc u32, mirred)"; return; }
        tss=(--tss --tss-key-file "$WORK/tss.key" --tss-sdi "$TSS_SDI" --tss-epoch "$TSS_EPOCH")
    fi
    in_ns "$NS_V" "$S" "$PERF" write_bw -s "$SIZE" -D "$DURATION" -t "$DEPTH" -p "$JOB" --verify --stats \
        "${tss[@]}" --dev "$VICTIM_DEV" --ip 10.1.0.101/16
    spid=$!
    PIDS+=("$spid")
    wait_for "$spid" "$S" "Waiting for client to connect" || { bad "$*: server not ready"; cat "$S"; return; }
    in_ns "$NS_C" "$C" "$PERF" write_bw -s "$SIZE" -D "$DURATION" -t "$DEPTH" -p "$JOB" --verify --stats \
        "${tss[@]}" --dev eth0 --ip 10.1.0.102/16 10.1.0.101
    cpid=$!
    PIDS+=("$cpid")
    # The run has begun once the client printed the header of its result table.
    wait_for "$cpid" "$C" "#bytes" || { bad "$*: client did not start"; cat "$C"; return; }
    local arcs=()
    for cls in "$@"; do
        local attack=(--tss-sdi "$TSS_SDI" --tss-epoch "$TSS_EPOCH")
        keyed "$cls" && attack+=(--tss-key-file "$WORK/tss.key")
        timeout -k 5 "$PROC_LIMIT" ip netns exec "$NS_A" "$SENDER" --iface eth0 \
            --victim-mac "$VICTIM_MAC" --victim-ip 10.1.0.101 --own-ip 10.1.0.3 \
            --client-ip 10.1.0.102 --job "$JOB" --region-bytes $((SIZE * DEPTH)) --mtu-payload 1344 \
            "${attack[@]}" --class "$cls" >>"$A" 2>&1
        arcs+=($?)
    done
    kill -0 "$cpid" 2>/dev/null || bad "$*: the client ended before the attack did (raise HOSTILE_PEER_SECONDS)"
    wait "$cpid"; crc=$?
    if [ "$crc" != 0 ]; then
        for _ in $(seq 150); do kill -0 "$spid" 2>/dev/null || break; sleep 0.1; done
        kill -TERM "$spid" 2>/dev/null
    fi
    wait "$spid"; src=$?
    PIDS=()
    echo "   exit: server $src, client $crc, attacker ${arcs[*]}; $((SECONDS - t0)) s"
    local before=$failures
    for a in "${arcs[@]}"; do [ "$a" = 0 ] || bad "$*: attacker exit $a"; done
    [ "$src" = 0 ] || bad "$*: server exit $src"
    [ "$crc" = 0 ] || bad "$*: client exit $crc"
    grep -q "^ Verify: OK" "$S" || bad "$*: no 'Verify: OK' from the server"
    grep -q "^ Verify: OK" "$C" || bad "$*: no 'Verify: OK' from the client"

    # Delivered: attacker messages the server's application saw. Every frame sent is accounted
    # for below by the reason it was refused (a SYN flood's message never ends); besides, a WRITE
    # placed in the region would count beyond the client's writes, and a message reaching
    # write_bw's control channel would be ignored as a stranger's. (Its "unexpected" counter
    # is no witness: the client's own control messages may arrive before their receive.) In a
    # secure domain, a frame of the attacker's that passed authentication would be opened beyond
    # the frames the client sealed.
    local delivered placed writes
    placed=$(counter "$S" "writes placed directly [0-9]+")
    writes=$(grep -E '^ [0-9]+ +[0-9]+ ' "$C" | awk '{ print $2 }' | head -1)
    # No result row: the client failed (counted above), and the writes placed are not compared.
    [ -n "$writes" ] || writes=$placed
    delivered=$(($(counter "$S" "from strangers [0-9]+") + $(counter "$S" "bad nonce [0-9]+") +
        $(counter "$S" "ignored: .*malformed [0-9]+") + placed - writes))
    if [ ${#tss[@]} != 0 ]; then
        local opened sealed
        opened=$(counter "$S" "^ TSS: sealed [0-9]+, opened [0-9]+")
        sealed=$(counter "$C" "^ TSS: sealed [0-9]+")
        ((opened > sealed)) && delivered=$((delivered + opened - sealed))
    fi
    [ "$delivered" = 0 ] || bad "$*: $delivered attacker messages delivered ($placed writes placed, the client's $writes)"

    # Per reason, the frames the classes of this run expected there (no reason of two classes).
    local -A want_of=() class_of=()
    local reason want got
    while read -r _ cls reason want; do
        if [ -n "${class_of[$reason]:-}" ] && [ "${class_of[$reason]}" != "$cls" ]; then
            bad "$*: $reason expected of both ${class_of[$reason]} and $cls: not told apart"
        fi
        class_of[$reason]=$cls
        want_of[$reason]=$((${want_of[$reason]:-0} + want))
    done < <(grep "^EXPECT " "$A")
    for reason in "${!want_of[@]}"; do
        got=$(count_for "$S" "$reason")
        want=${want_of[$reason]}
        if [ "$reason" = port ] || [ "$reason" = unknown_pdc ]; then
            # Strays count there too: the port's drops ARP for others and ICMP; unknown_pdc the
            # client's late retransmissions to a PDC already closed. At least ours.
            ((got >= want)) || bad "$*: $reason $got, expected at least $want"
        elif [ "$got" != "$want" ]; then
            bad "$*: $reason $got, expected $want"
        fi
    done

    for cls in "$@"; do
        local sent expected=0 dropped=""
        sent=$(awk -v c="$cls" '$1 == "SENT" && $2 == c { print $3 }' "$A")
        [ -n "$sent" ] || { bad "$cls: the attacker printed no SENT line"; sent=0; }
        while read -r _ _ reason want; do
            expected=$((expected + want))
            dropped+="${dropped:+, }$reason $(count_for "$S" "$reason")"
        done < <(grep "^EXPECT $cls " "$A")
        [ "$expected" = "$sent" ] || bad "$cls: EXPECT lines cover $expected of $sent frames"
        local answers
        answers=$(awk -v c="$cls" '$1 == "ANSWERS" && $2 == c { print $3, $4, $5 }' "$A")
        if [ -n "$answers" ]; then
            read -r n_ans n_err n_bytes <<<"$answers"
            [ "$n_bytes" = 0 ] || bad "$cls: $n_bytes bytes came back in answers"
            [ "$n_ans" = "$n_err" ] || bad "$cls: $((n_ans - n_err)) answers were not errors"
            dropped+=", error answers received $n_err"
        fi
        if [ "$cls" = syn_flood ]; then
            # Bounded: the flood's PDCs (what the server's target PDCs were beyond the client's)
            # within the PDC table (128 a uet-perf endpoint: idle ones expire after 2 s, longer
            # than the flood lasts), the peers learned within the peer table (1024) plus those
            # forgotten; and the transfer completed (above).
            local learned forgotten pdcs nacks full
            learned=$(counter "$S" "peers learned [0-9]+")
            forgotten=$(counter "$S" "forgotten [0-9]+")
            pdcs=$(($(counter "$S" "target PDCs opened [0-9]+") - $(counter "$C" "PDCs opened [0-9]+")))
            nacks=$(counter "$S" "nacks sent [0-9]+")
            full=$(counter "$S" "peer table full [0-9]+")
            ((pdcs <= 128)) || bad "$cls: $pdcs PDCs opened by the flood, more than the table"
            ((learned <= 1024 + forgotten)) || bad "$cls: $learned peers learned, $forgotten forgotten"
            dropped+=" (PDCs opened $pdcs, NO_PDC_AVAIL $nacks, peer table full $full; peers learned"
            dropped+=" $learned, forgotten $forgotten; ARP requests $(counter "$S" "ARP requests [0-9]+"))"
        fi
        # Delivered is the run's: in a run of several classes, any of them.
        ROWS+=("$(printf '%-13s %6s  %-9s %s' "$cls" "$sent" "$delivered" "$dropped")")
    done
    if [ ${#tss[@]} != 0 ]; then
        local server_tss client_tss
        server_tss=$(grep -h "^ TSS:" "$S" | head -1 | sed 's/^ //')
        client_tss=$(grep -h "^ TSS:" "$C" | head -1 | sed 's/^ TSS: //')
        ROWS+=("$(printf '%-13s %s' "  (TSS run)" "$server_tss; the client's $client_tss")")
    fi
    if [ "$failures" != "$before" ]; then
        echo "---- server"; cat "$S"
        echo "---- client"; cat "$C"
        echo "---- attacker"; cat "$A"
    fi
}

od -An -tx1 -N32 /dev/urandom | tr -d ' \n' >"$WORK/tss.key" && chmod 600 "$WORK/tss.key" || exit 1
IFS='|' read -ra GROUPS_ <<<"${RUNS//$'\n'/ }"
for g in "${GROUPS_[@]}"; do
    read -ra classes <<<"$g"
    [ ${#classes[@]} != 0 ] || continue
    kinds=""
    for cls in "${classes[@]}"; do secured "$cls" && kinds+=s || kinds+=u; done
    if [[ $kinds == *s* && $kinds == *u* ]]; then
        bad "run '$g': secured and unsecured classes need different servers"
        continue
    fi
    run_group "${classes[@]}"
done

echo
printf '%-13s %6s  %-9s %s\n' class sent delivered "dropped (by reason, the server's counters)"
for r in "${ROWS[@]}"; do echo "$r"; done
echo "hostile_peer: $failures failure(s)"
[ "$failures" = 0 ]
