#!/bin/sh
# uet-sim's command line (docs/uet-sim.md): one seed gives a byte-identical CSV, every option
# parses, and each bad input is one line on stderr naming it, with exit status 2: sim_cli UET_SIM
set -u
sim=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() {
    echo "FAIL: $*"
    exit 1
}

# seeded NAME SEED OTHER ARGS: uet-sim ARGS with SEED twice (NAME1.csv, NAME2.csv, NAME.out),
# the same CSV both times; with OTHER (unless empty) once more, another CSV (NAME3.csv).
seeded() {
    name=$1 seed=$2 other=$3
    shift 3
    "$sim" "$@" --seed "$seed" --csv "$dir/${name}1.csv" >"$dir/$name.out" ||
        fail "run $name: $(cat "$dir/$name.out")"
    "$sim" "$@" --seed "$seed" --csv "$dir/${name}2.csv" >/dev/null || fail "run $name again"
    cmp -s "$dir/${name}1.csv" "$dir/${name}2.csv" || fail "$name: seed $seed twice: the CSVs differ"
    [ -z "$other" ] && return
    "$sim" "$@" --seed "$other" --csv "$dir/${name}3.csv" >/dev/null || fail "run $name, seed $other"
    cmp -s "$dir/${name}1.csv" "$dir/${name}3.csv" && fail "$name: seeds $seed and $other gave the same CSV"
}

# ---- determinism: a small run with link events, twice with one seed, once with another ----
small="--leaves 2 --hosts-per-leaf 4 --spines 2 --size 256KiB --lb reps --no-progress"
events="--fail leaf1-spine0@20us --slow h1-leaf0=50@0 --restore leaf1-spine0@60us"
# shellcheck disable=SC2086
seeded a 5 6 $small $events
[ "$(head -1 "$dir/a1.csv")" = "flow,src,dst,bytes,start_ns,end_ns,fct_ns,ideal_ns,slowdown,goodput_gbps,messages,failed" ] ||
    fail "CSV header: $(head -1 "$dir/a1.csv")"
[ "$(wc -l <"$dir/a1.csv")" -eq 9 ] || fail "8 flows expected in a.csv"
# Every flow finished, no earlier than its ideal allows (5% for rounding), every byte counted.
awk -F, 'NR > 1 && ($6 == 0 || $9 < 0.95 || $4 != 262144 || $12 != 0) { bad = 1 }
         END { exit bad }' "$dir/a1.csv" || fail "a flow in a.csv: $(cat "$dir/a1.csv")"
grep -q '^flows       8 (0 unfinished, 0 failed messages)$' "$dir/a.out" || fail "summary: $(cat "$dir/a.out")"
grep -q 'blackholed [1-9]' "$dir/a.out" || fail "--fail black-holed nothing: $(cat "$dir/a.out")"
# The last completion is never below its lower bound.
awk '/^last / { found = 1; if ($2 < $5) bad = 1 } END { exit bad || !found }' "$dir/a.out" ||
    fail "last below its ideal: $(cat "$dir/a.out")"
echo "ok: same seed, same CSV; another seed, another"

# ---- --plot: the CSVs, the summary and the plots, byte-identical for one seed ----
# shellcheck disable=SC2086
"$sim" $small $events --seed 5 --sample 2us --plot "$dir/p1" >/dev/null || fail "--plot p1"
# shellcheck disable=SC2086
"$sim" $small $events --seed 5 --sample 2us --plot "$dir/p2" >/dev/null || fail "--plot p2"
for f in flows.csv links.csv series.csv summary.json fct_cdf.svg fct_cdf.png rate.svg rate.png \
    paths.svg paths.png; do
    [ -s "$dir/p1/$f" ] || fail "--plot wrote no $f"
    cmp -s "$dir/p1/$f" "$dir/p2/$f" || fail "--plot: $f differs between two runs of one seed"
done
cmp -s "$dir/a1.csv" "$dir/p1/flows.csv" || fail "sampling changed the flows"
# 8 flows, 2 uplinks: t_us, queued_bytes, max_queue_bytes, 8 hosts, 2 uplinks.
[ "$(head -1 "$dir/p1/series.csv" | tr , '\n' | wc -l)" -eq 13 ] || fail "series.csv columns"
[ "$(grep -c ',up,' "$dir/p1/links.csv")" -eq 4 ] || fail "links.csv: 4 uplink ports expected"
grep -q '^[0-9]*,leaf1->spine0,up,0,.*,[1-9][0-9]*,[0-9]*,[0-9.]*$' "$dir/p1/links.csv" ||
    fail "links.csv: leaf1->spine0 black-holed nothing: $(cat "$dir/p1/links.csv")"
echo "ok: --plot gives the same files twice"

# ---- sweep: a grid of 2 x 2 x 2 x 1 runs, in parallel, twice: the same CSV ----
tiny="--leaves 2 --hosts-per-leaf 2 --spines 2 --size 32KiB"
# shellcheck disable=SC2086
"$sim" sweep --lb static,reps --cc nscc,none --seeds 1-2 --load 1 --jobs 3 $tiny --no-progress \
    --csv "$dir/sw1.csv" >"$dir/sw.out" || fail "sweep 1: $(cat "$dir/sw.out")"
# shellcheck disable=SC2086
"$sim" sweep --lb=static,reps --cc nscc,none --seeds 1,2 --jobs 1 $tiny --no-progress \
    --plot "$dir/sw" >/dev/null || fail "sweep 2"
cmp -s "$dir/sw1.csv" "$dir/sw/sweep.csv" || fail "sweep: two runs of one grid differ"
[ "$(wc -l <"$dir/sw1.csv")" -eq 9 ] || fail "sweep: 8 runs expected: $(cat "$dir/sw1.csv")"
head -1 "$dir/sw1.csv" | grep -q '^run,exit,lb,cc,mode,seed,load,speed_gbps,flows,' ||
    fail "sweep CSV header: $(head -1 "$dir/sw1.csv")"
grep -q '^reps-none-load1-seed2,0,reps,none,rud,2,1,100,4,0,' "$dir/sw1.csv" ||
    fail "sweep: no reps-none-load1-seed2 row: $(cat "$dir/sw1.csv")"
if [ "$(grep -c '^run ' "$dir/sw.out")" -ne 1 ] || [ "$(wc -l <"$dir/sw.out")" -ne 9 ]; then
    fail "sweep table: $(cat "$dir/sw.out")"
fi
for f in sweep_fct.svg sweep_fct.png sweep_cdf.svg sweep_cdf.png runs/static-nscc-load1-seed1.csv; do
    [ -s "$dir/sw/$f" ] || fail "sweep --plot wrote no $f"
done
echo "ok: sweep runs its grid, the same CSV twice"

# ---- ring collectives: dependent steps, the collective against its ideal, deterministic ----
ring="--leaves 2 --hosts-per-leaf 4 --spines 2 --no-progress"
# shellcheck disable=SC2086
seeded r 1 "" $ring --workload ring-allreduce --size 256KiB
# 8 hosts: 2 x 7 steps of 8 flows of 32 KiB.
grep -q '^collective  ring-allreduce over 8 hosts, 14 of 14 steps of 32768 B: ' "$dir/r.out" ||
    fail "ring summary: $(cat "$dir/r.out")"
# Never faster than its ideal (1% for rounding), nor busbw above its ideal.
awk '/^collective / { found = 1; if ($19 + 0 < 0.99 || $24 + 0 > 1.01 * ($27 + 0)) bad = 1 }
     END { exit bad || !found }' "$dir/r.out" || fail "ring below its ideal: $(cat "$dir/r.out")"
# Step s at position p starts after step s - 1 at p - 1 has arrived: after it started, and
# after 0 (flow = s x 8 + p; start_ns is column 5).
awk -F, 'NR > 1 { start[$1] = $5; n++ }
         END { for (f = 8; f < n; f++) { p = (f % 8 + 7) % 8; prev = (int(f / 8) - 1) * 8 + p
                                          if (start[f] <= start[prev]) bad = 1 }
               exit bad || n != 112 }' "$dir/r1.csv" || fail "ring steps out of order: $(cat "$dir/r1.csv")"
# shellcheck disable=SC2086
"$sim" $ring --workload ring-allgather --size 256KiB --load 0.5 --steps 2 >"$dir/r.out" ||
    fail "ring-allgather: $(cat "$dir/r.out")"
grep -q '^collective  ring-allgather over 4 hosts, 2 of 3 steps of 65536 B: ' "$dir/r.out" ||
    fail "ring-allgather --steps 2: $(cat "$dir/r.out")"
grep -q '^flows       8 (0 unfinished' "$dir/r.out" || fail "ring-allgather flows: $(cat "$dir/r.out")"
# One-packet steps on an idle leaf meet their ideal within 5%: a step starts as the chunk is in
# (not at the receiver's next ACK), and the ideal counts the chunk's own frame, not a full one.
"$sim" --leaves 1 --hosts-per-leaf 4 --no-progress --workload ring-allgather --size 4KiB --cc none \
    >"$dir/r.out" || fail "1 KiB ring: $(cat "$dir/r.out")"
awk '/^collective / { found = 1; if ($19 + 0 < 0.99 || $19 + 0 > 1.05) bad = 1 }
     END { exit bad || !found }' "$dir/r.out" || fail "1 KiB ring off its ideal: $(cat "$dir/r.out")"
echo "ok: ring collectives step in order, at or above their ideal, the same CSV twice"

# ---- uniform random traffic, sizes from a CDF: deterministic, distinct pairs, sizes in range ----
printf '# size probability\n1000 0\n16KiB 0.5 # mid\n65536 1\n' >"$dir/small.cdf"
uni="--workload uniform --cdf $dir/small.cdf --flows 20 --load 0.3 --no-progress"
# shellcheck disable=SC2086
seeded u 4 5 $ring $uni
grep -q '^flows       20 (0 unfinished' "$dir/u.out" || fail "uniform summary: $(cat "$dir/u.out")"
# src != dst, hosts 0..7, 1000 <= bytes <= 65536, starts rising, and not all at once; no flow
# beats its ideal (flows under the MTU counted with their own frame).
awk -F, 'NR > 1 { if ($2 == $3 || $2 > 7 || $3 > 7 || $4 < 1000 || $4 > 65536 || $5 < last ||
                     $9 < 0.999) bad = 1
                  last = $5; if ($4 != 1000 && $4 != 65536) mid = 1 }
         END { exit bad || last == 0 || !mid }' "$dir/u1.csv" || fail "uniform flows: $(cat "$dir/u1.csv")"
echo "ok: uniform traffic from a CDF, the same CSV twice"

# ---- every option parses (and the run completes) ----
printf '# src dst bytes start\n0 5 64KiB\n3 9 100000 10us\n' >"$dir/plain.txt"
printf 'Nodes 16\nConnections 2\n0->5 id 1 start 0 size 65536\n3->9 id 2 start 10 size 1MB\n' >"$dir/m.cm"
# uet-sim (or uet-sim sweep, when the first argument is sweep) --no-progress ARGS
quiet() {
    if [ "$1" = sweep ]; then
        shift
        "$sim" sweep --no-progress "$@"
    else
        "$sim" --no-progress "$@"
    fi
}
ok() {
    quiet "$@" >"$dir/ok.out" 2>"$dir/ok.err" || fail "uet-sim $*: $(cat "$dir/ok.err")"
}
ok --topology leafspine --leaves 2 --spines 4 --hosts-per-leaf 8 --oversub 2 --speed 200 \
    --hop-latency 500ns --queue 200KB --ecn-min 40KB --ecn-max 160KB --trim off --mtu 2048 \
    --workload incast --incast-degree 4 --size 64KiB --message 16KiB --outstanding 2 \
    --lb bitmap --cc rccc --mode rod --seed 3 --time-limit 100ms --csv "$dir/o.csv" \
    --json "$dir/o.json"
# 4 flows; 48 ports: 16 NICs, 16 to hosts, 8 up, 8 down.
python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); assert len(j["per_flow"]) == 4
assert len(j["per_link"]) == 48 and sorted({l["uplink"] for l in j["per_link"] if l["kind"] == "up"}) == [0, 1, 2, 3]' \
    "$dir/o.json" || fail "--json: $(cat "$dir/o.json")"
ok --workload alltoall --size 4KiB --lb static --cc none --speed 400 --load 0.5
grep -q '^flows       56 ' "$dir/ok.out" || fail "alltoall at load 0.5: $(cat "$dir/ok.out")"
ok --workload permutation --size 64KiB --load 0.25 --links "$dir/l.csv" --series "$dir/s.csv" \
    --sample 500ns
grep -q '^flows       4 ' "$dir/ok.out" || fail "permutation at load 0.25: $(cat "$dir/ok.out")"
[ -s "$dir/l.csv" ] || fail "--links wrote nothing"
[ -s "$dir/s.csv" ] || fail "--series wrote nothing"
ok --workload permutation --lb oblivious --cc nscc --speed 800 --size 2MB
ok --lb ecmp --size 64KiB
grep -q '^policies    lb static,' "$dir/ok.out" || fail "--lb ecmp: $(cat "$dir/ok.out")"
ok --matrix "$dir/plain.txt" --lb reps
ok --topology fattree --k 4 --size 128KiB --fail agg0-core1@5us --slow 'edge0->agg1=25@0' \
    --restore agg0-core1@30us --csv "$dir/ft.csv"
grep -q '^topology    fattree: k 4, 16 hosts' "$dir/ok.out" || fail "fattree: $(cat "$dir/ok.out")"
[ "$(wc -l <"$dir/ft.csv")" -eq 17 ] || fail "16 flows expected in ft.csv"
# Oversubscribed tiers: 2 hosts an edge over 2 uplinks at 2:1 (50 Gb/s), 2 edges a pod over 2
# core links at 2:1 again (25 Gb/s).
ok --topology fattree --k 4 --oversub 2 --core-oversub 2 --size 64KiB
grep -q ' 100 Gb/s hosts, 50.0 Gb/s fabric, 25.0 Gb/s core;' "$dir/ok.out" ||
    fail "--core-oversub: $(cat "$dir/ok.out")"
ok --topology fattree --hosts 100 --workload incast --incast-degree 8 --size 64KiB
grep -q '^topology    fattree: k 8, 128 hosts (4 an edge)' "$dir/ok.out" || fail "--hosts 100: $(cat "$dir/ok.out")"
ok --workload cm --matrix "$dir/m.cm" --csv "$dir/m.csv"
grep -q '^1,3,9,1000000,10000,' "$dir/m.csv" || fail ".cm start in us: $(cat "$dir/m.csv")"
# Switch spraying with path IDs, small queues and no trimming: packets are dropped, and the
# receivers find (nearly) all of them lost by path ID.
ok --leaves 4 --hosts-per-leaf 4 --spines 4 --size 1MB --trim off --queue 24KB --lb static \
    --switch-spray on --path-id on --summary-csv "$dir/pid.csv"
grep -q '^policies    lb static, cc nscc, mode rud, seed 1, switch spray, path IDs$' "$dir/ok.out" ||
    fail "--path-id policies: $(cat "$dir/ok.out")"
awk -F, 'NR == 1 { for (i = 1; i <= NF; ++i) col[$i] = i }
         NR == 2 { drops = $col["drops"]; found = $col["path_id_nacks"] }
         END { exit !(drops > 0 && found > drops / 2 && found <= drops) }' "$dir/pid.csv" ||
    fail "--path-id found too few losses: $(cat "$dir/pid.csv")"
grep -q 'losses found by path ID [1-9][0-9]* (path IDs out of range 0)' "$dir/ok.out" ||
    fail "--path-id engines line: $(cat "$dir/ok.out")"
ok --help
ok sweep --help
echo "ok: every option parses"

# ---- RoCE: deterministic, every RoCE option parses, each policy completes every flow ----
roce="--transport roce --leaves 2 --hosts-per-leaf 4 --spines 2 --size 256KiB --no-progress"
# shellcheck disable=SC2086
seeded q 5 6 $roce --roce-mode ooo --lb spray
grep -q '^flows       8 (0 unfinished, 0 failed messages)$' "$dir/q.out" || fail "roce: $(cat "$dir/q.out")"
grep -q '^policies    lb spray, cc dcqcn, mode ooo, seed 5; RoCEv2 RC, 1 QP a host pair$' "$dir/q.out" ||
    fail "roce policies: $(cat "$dir/q.out")"
awk -F, 'NR > 1 && ($6 == 0 || $9 < 0.95 || $4 != 262144 || $12 != 0) { bad = 1 }
         END { exit bad }' "$dir/q1.csv" || fail "a RoCE flow: $(cat "$dir/q1.csv")"
# roce_ok WANT ARGS: a small RoCE run completes every flow, its summary holding WANT.
roce_ok() {
    want=$1
    shift
    # shellcheck disable=SC2086
    ok $roce "$@"
    grep -q ' (0 unfinished, 0 failed messages)$' "$dir/ok.out" || fail "roce $*: $(cat "$dir/ok.out")"
    grep -qF -- "$want" "$dir/ok.out" || fail "roce $*: '$want' not in: $(cat "$dir/ok.out")"
}
roce_ok "lb ecmp, cc dcqcn, mode gbn" --roce-mode gbn --lb ecmp --cc dcqcn
roce_ok "lb ecmp, cc none, mode gbn" --lb static --cc none --trim off --mtu 4096
roce_ok "lb switch-spray, cc dcqcn, mode gbn" --lb switch-spray --slow leaf1-spine0=50@20us
roce_ok "lb switch-spray, cc dcqcn, mode ooo" --roce-mode ooo --lb switch-spray
roce_ok "2 QPs a host pair, rr" --qps 2 --qp-sched rr
roce_ok "4 QPs a host pair, stripe" --qps 4 --qp-sched stripe --roce-mode ooo
roce_ok "3 QPs a host pair, cast-wrr" --qps 3 --qp-sched cast-wrr
roce_ok "2 QPs a host pair, cast" --qps 2 --workload ring-allgather --json "$dir/rr.json"
grep -q '"collective": {"workload": "ring-allgather", "hosts": 8, .*"finished": true' "$dir/rr.json" ||
    fail "roce ring: $(cat "$dir/rr.json")"
roce_ok "flows       56 " --workload alltoall --size 16KiB
# A sweep over RoCE's modes: gbn with spray is left out, the other three run, with RoCE's
# default cc; the plot names the modes.
# shellcheck disable=SC2086
"$sim" sweep --transport roce --roce-mode gbn,ooo --lb ecmp,spray $tiny --no-progress \
    --plot "$dir/rsw" >"$dir/rsw.out" || fail "roce sweep: $(cat "$dir/rsw.out")"
[ "$(cut -d, -f1 "$dir/rsw/sweep.csv" | tr '\n' ' ')" = \
    "run ecmp-dcqcn-gbn-load1-seed1 ecmp-dcqcn-ooo-load1-seed1 spray-dcqcn-ooo-load1-seed1 " ] ||
    fail "roce sweep grid: $(cat "$dir/rsw/sweep.csv")"
grep -q '^spray-dcqcn-ooo-load1-seed1,0,spray,dcqcn,ooo,' "$dir/rsw/sweep.csv" ||
    fail "roce sweep row: $(cat "$dir/rsw/sweep.csv")"
[ -s "$dir/rsw/sweep_fct.png" ] || fail "roce sweep --plot wrote no sweep_fct.png"
echo "ok: RoCE runs"

# ---- bad input: exit 2, one line naming it ----
bad() {
    want=$1
    shift
    quiet "$@" >/dev/null 2>"$dir/err"
    rc=$?
    [ $rc -eq 2 ] || fail "uet-sim $*: exit $rc, not 2 ($(cat "$dir/err"))"
    [ "$(wc -l <"$dir/err")" -eq 1 ] || fail "uet-sim $*: not one line: $(cat "$dir/err")"
    grep -qF -- "$want" "$dir/err" || fail "uet-sim $*: '$want' not in: $(cat "$dir/err")"
}
bad "unknown policy 'sprinkle'" --lb sprinkle
bad "unknown congestion control 'cubic'" --cc cubic
bad "unknown topology 'torus'" --topology torus
bad "unknown workload 'ring'" --workload ring
bad "unknown delivery mode 'uud'" --mode uud
bad "link 'leaf0-spine9' does not exist" --fail leaf0-spine9@1us
bad "link 'leaf5-spine0' does not exist" --slow leaf5-spine0=10@1us
bad "link 'h99-leaf0' does not exist" --restore h99-leaf0@1us
bad "--fail: 'leaf0-spine1' has no time" --fail leaf0-spine1
bad "link 'leaf0-spine0' does not exist" --topology fattree --k 4 --fail leaf0-spine0@1us
bad "link 'agg0-core2' does not exist" --topology fattree --k 4 --fail agg0-core2@1us
bad "--k: must be even" --topology fattree --k 5
bad "--core-oversub: fat tree only" --core-oversub 2
bad "--core-oversub: '0' is not a ratio" --topology fattree --k 4 --core-oversub 0
bad "--spines: leaf-spine only" --topology fattree --spines 4
bad "--hosts: fat tree only" --hosts 64
bad "--k: give --k or --hosts, not both" --topology fattree --k 4 --hosts 16
bad "--slow: 'leaf0-spine1@1us' has no rate" --slow leaf0-spine1@1us
bad "--size: '-5'" --size -5
bad "--size: '2XB'" --size 2XB
bad "--size: '0'" --size 0
bad "--speed: '300'" --speed 300
bad "--leaves: 'two'" --leaves two
bad "--hop-latency: '1 parsec'" --hop-latency "1 parsec"
bad "--trim: unknown setting 'maybe'" --trim maybe
bad "--switch-spray: unknown setting 'yes'" --switch-spray yes
bad "--path-id: unknown setting '1'" --path-id 1
bad "--path-id: UET only" --transport roce --path-id on
bad "--path-id: leaf-spine only" --topology fattree --k 4 --path-id on
bad "--path-id: at most 64 spines" --spines 65 --path-id on
bad "--load: '1.5' is not a fraction" --load 1.5
bad "--load: not with a matrix" --matrix "$dir/plain.txt" --load 0.5
bad "--sample: must be > 0" --sample 0
bad "--plot: cannot create" --plot "$dir/missing/plots"
(
    export UET_SIM_PYTHON=/nonexistent
    bad "--plot: no python3 with matplotlib" --plot "$dir/p3"
) || exit 1
[ -e "$dir/p3" ] && fail "--plot without python made its directory"
bad "sweep: --lb: 'spray' is RoCE's" sweep --lb static,spray
bad "sweep: --cc: an empty item in 'nscc,,none'" sweep --cc nscc,,none
bad "sweep: --seeds: '3-1' is not a seed or a range" sweep --seeds 3-1
bad "sweep: --load: '2' is not a fraction" sweep --load 0.5,2
bad "sweep: --seed: not in a sweep" sweep --seed 3
bad "sweep: --jobs: '0'" sweep --jobs 0
bad "sweep: --lb: needs a value" sweep --lb --size 1MB
bad "sweep: --size: '-1'" sweep --size -1
bad "sweep: unknown option '--bogus'" sweep --bogus 1
# shellcheck disable=SC2086
bad "sweep: run oblivious-nscc-load1-seed1: --fail: link 'leaf0-spine9' does not exist" \
    sweep $tiny --fail leaf0-spine9@1us
bad "--ecn-min: above --ecn-max" --ecn-min 100KB --ecn-max 10KB
bad "--transport: unknown transport 'ib'" --transport ib
bad "--roce-mode: unknown RoCE mode 'sr'" --transport roce --roce-mode sr
bad "--roce-mode: only with --transport roce" --roce-mode ooo
bad "--qps: only with --transport roce" --qps 2
bad "--qp-sched: only with --transport roce" --qp-sched cast
bad "--qps: '0'" --transport roce --qps 0
bad "--qp-sched: unknown scheduler 'fair'" --transport roce --qps 2 --qp-sched fair
bad "--qp-sched: needs --qps 2 or more" --transport roce --qp-sched cast
bad "--cc: 'nscc' is UET's" --transport roce --cc nscc
bad "--cc: 'rccc' is UET's" --cc rccc --transport roce
bad "--cc: 'dcqcn' is RoCE's" --cc dcqcn
bad "--lb: 'reps' is UET's" --transport roce --lb reps
bad "--lb: 'spray' is RoCE's" --lb spray
bad "--lb: unknown policy 'sprinkle'" --transport roce --lb sprinkle
bad "--lb spray: needs --roce-mode ooo" --transport roce --lb spray
bad "--mode: UET's delivery mode" --transport roce --mode rod
bad "--trim on: RoCE frames are not trimmed" --transport roce --trim on
bad "--mtu: RoCE runs a path MTU of 4096" --transport roce --mtu 2048
bad "sweep: --lb spray: needs --roce-mode ooo" sweep --transport roce --roce-mode gbn --lb spray
bad "sweep: --roce-mode: only with --transport roce" sweep --roce-mode gbn,ooo
bad "sweep: --roce-mode: unknown RoCE mode 'sr'" sweep --transport roce --roce-mode gbn,sr
bad "unknown option '--bogus'" --bogus
bad "--seed: needs a value" --seed
bad "--incast-degree: 40 senders" --workload incast --incast-degree 40
bad "--matrix: cannot open" --matrix "$dir/missing"
printf '0 5 64KiB\n0 5 -3\n' >"$dir/neg.txt"
bad "neg.txt:2: '-3' is not a size" --matrix "$dir/neg.txt"
printf '0 5 64KiB\n\n7 x 100\n' >"$dir/host.txt"
bad "host.txt:3: 'x' is not a host number" --matrix "$dir/host.txt"
printf '0 5 64KiB\n0 99 100\n' >"$dir/far.txt"
bad "far.txt:2: host 99 does not exist" --matrix "$dir/far.txt"
printf '0 5\n' >"$dir/short.txt"
bad "short.txt:1: expected 'source destination bytes [start]'" --matrix "$dir/short.txt"
printf 'Nodes 16\nConnections 2\n0->5 id 1 start 0 size 65536\n' >"$dir/count.cm"
bad "Connections 2 but 1 flows" --matrix "$dir/count.cm"
printf 'Nodes 16\nConnections 1\n0->5 id 1 start 0 size 65536 trigger 3\n' >"$dir/trig.cm"
bad "trig.cm:3: 'trigger' is not supported" --matrix "$dir/trig.cm"
bad "--workload ring-allgather: a ring needs at least 2 hosts, the fabric has 1" \
    --workload ring-allgather --leaves 1 --hosts-per-leaf 1
bad "--steps: only with --workload ring-allgather or ring-allreduce" --steps 3
bad "--steps: '0'" --workload ring-allreduce --steps 0
bad "--workload ring-allreduce: 4354 steps of 2178 hosts are more than 2097152 flows" \
    --topology fattree --hosts 2048 --workload ring-allreduce
bad "--cdf: only with --workload uniform" --cdf "$dir/small.cdf"
bad "--flows: only with --workload uniform" --flows 3
bad "--flows: '-2'" --workload uniform --flows -2
bad "--cdf: cannot open" --workload uniform --cdf "$dir/missing"
# bad_cdf FILE LINES WANT: a CDF of LINES (printf's escapes) is refused, naming WANT.
bad_cdf() {
    printf '%b' "$2" >"$dir/$1"
    bad "$3" --workload uniform --cdf "$dir/$1"
}
bad_cdf mal.cdf '4096 0.5\n8192\n' "mal.cdf:2: expected 'size_bytes cumulative_probability'"
bad_cdf down.cdf '4096 0.5\n8192 0.4\n9000 1\n' "down.cdf:2: probability 0.4 is below the previous line's"
bad_cdf end.cdf '4096 0.5\n8192 0.9\n' "end.cdf: the last probability is 0.9, not 1"
bad_cdf neg.cdf '4096 0.5\n-3 1\n' "neg.cdf:2: '-3' is not a size"
bad_cdf size.cdf '4096 0.5\n1000 1\n' "size.cdf:2: size 1000 is below the previous line's"
bad_cdf prob.cdf '4096 1.5\n' "prob.cdf:1: '1.5' is not a probability"
echo "ok: every bad input exits 2 with one line naming it"
