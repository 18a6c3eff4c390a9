#!/bin/sh
# Re-runs every command of docs/policy-study.md and copies the plots it shows into this
# directory: regenerate.sh [UET_SIM [OUT]] (defaults: build/apps/uet-sim/uet-sim, /tmp/policy-study).
# Each sweep's CSV, per-run flows and plots stay in OUT. The comparison plot runs the
# uet_sim_plot.py beside UET_SIM with UET_SIM_PYTHON (default /usr/bin/python3).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
sim=${1:-build/apps/uet-sim/uet-sim}
out=${2:-/tmp/policy-study}
mkdir -p "$out"

# 1. Permutation: static ECMP against spraying.
"$sim" sweep --lb static,oblivious,reps --cc nscc --seeds 1-3 \
    --leaves 16 --hosts-per-leaf 16 --spines 16 --size 4MB --plot "$out/permutation"
cp "$out/permutation/sweep_fct.png" "$here/permutation.png"

# 2. Asymmetry: one leaf-spine link at 10 Gb/s.
"$sim" sweep --lb static,oblivious,reps --cc nscc --seeds 1-3 \
    --leaves 8 --hosts-per-leaf 8 --spines 8 --size 4MB --slow leaf0-spine0=10@0 \
    --plot "$out/asymmetry"
cp "$out/asymmetry/sweep_cdf.png" "$here/asymmetry.png"

# 3. Link failure: one leaf-spine link black-holed 50 us in.
"$sim" sweep --lb oblivious,reps --cc nscc --seeds 1-3 \
    --leaves 8 --hosts-per-leaf 8 --spines 8 --size 4MB --fail leaf0-spine0@50us \
    --plot "$out/failure"
cp "$out/failure/sweep_fct.png" "$here/failure.png"

# 4. Drops under switch spraying: ECMP, spraying, spraying with path-ID loss detection.
common="--lb static --cc nscc --seeds 1-5 --leaves 4 --hosts-per-leaf 8 --spines 8 --trim off"
# shellcheck disable=SC2086
"$sim" sweep $common --size 4MB --queue 32KB --plot "$out/pid-ecmp"
# shellcheck disable=SC2086
"$sim" sweep $common --size 4MB --queue 32KB --switch-spray on --plot "$out/pid-spray"
# shellcheck disable=SC2086
"$sim" sweep $common --size 4MB --queue 32KB --switch-spray on --path-id on \
    --plot "$out/pid-pathid"
"${UET_SIM_PYTHON:-/usr/bin/python3}" "$(dirname "$sim")/uet_sim_plot.py" compare "$out/path-id" \
    "ECMP=$out/pid-ecmp" "switch spray=$out/pid-spray" "spray + path ID=$out/pid-pathid"
cp "$out/path-id/compare.png" "$here/path-id.png"
# Where path IDs do not help: 16 MB flows, 24 KB and 32 KB queues (the tables' figures only).
for q in 24KB 32KB; do
    for opts in "" "--switch-spray on" "--switch-spray on --path-id on"; do
        # shellcheck disable=SC2086
        "$sim" sweep $common --size 16MB --queue $q $opts
    done
done

# 5. Incast: NSCC and RCCC against the ideal completion time.
"$sim" sweep --lb reps --cc nscc,rccc,none --seeds 1-3 \
    --leaves 4 --hosts-per-leaf 8 --spines 4 --workload incast --incast-degree 16 --size 1MiB \
    --plot "$out/incast"
cp "$out/incast/sweep_fct.png" "$here/incast.png"
"$sim" --lb reps --cc nscc --leaves 4 --hosts-per-leaf 8 --spines 4 --workload incast \
    --incast-degree 16 --size 1MiB --sample 25us --plot "$out/incast-nscc"
cp "$out/incast-nscc/rate.png" "$here/incast-rate.png"

# 5. RoCE: go-back-N against out-of-order placement under spraying.
"$sim" sweep --transport roce --roce-mode gbn,ooo --lb ecmp,spray,switch-spray --seeds 1-3 \
    --leaves 4 --hosts-per-leaf 8 --spines 8 --size 4MB --plot "$out/roce-spray"
cp "$out/roce-spray/sweep_fct.png" "$here/roce-spray.png"

# 6. CAST: four QPs per host pair, spine 0 at a quarter of the rate (the table's other rows:
# --qps 1, or --qp-sched rr, stripe, cast-wrr; and without the --slow options).
"$sim" --transport roce --qps 4 --qp-sched cast --leaves 4 --hosts-per-leaf 4 --spines 4 \
    --size 16MB --message 512KiB --outstanding 4 --queue 4MB --ecn-min 50KB --ecn-max 400KB \
    --slow leaf0-spine0=25@0 --slow leaf1-spine0=25@0 --slow leaf2-spine0=25@0 \
    --slow leaf3-spine0=25@0 --plot "$out/cast"
cp "$out/cast/paths.png" "$here/cast-paths.png"
