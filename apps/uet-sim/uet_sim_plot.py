#!/usr/bin/env python3
"""uet-sim's plots (docs/uet-sim.md): SVG and PNG from the CSV files uet-sim writes.

  uet_sim_plot.py run DIR     DIR/flows.csv, series.csv, links.csv, summary.json ->
                              fct_cdf, rate, paths (.svg and .png)
  uet_sim_plot.py sweep DIR   DIR/sweep.csv (and DIR/runs/*.csv) -> sweep_fct, sweep_cdf
  uet_sim_plot.py compare OUT LABEL=DIR...
                              sweeps of one scenario run with other options, side by side:
                              each DIR/sweep.csv -> OUT/compare (last completion,
                              p50 FCT and retransmit timeouts per label, mean over its runs,
                              min..max)

uet-sim calls it for --plot DIR; it can be run again by hand on the same directory. The files are
reproducible: the same CSV gives the same SVG and PNG (no dates, a fixed SVG hash salt).
"""
import csv
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
matplotlib.rcParams["svg.hashsalt"] = "uet-sim"
matplotlib.rcParams["svg.fonttype"] = "none"  # text as text: small SVGs
matplotlib.rcParams["font.size"] = 9
import matplotlib.pyplot as plt  # noqa: E402


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def save(fig, directory, name):
    fig.tight_layout()
    fig.savefig(os.path.join(directory, name + ".svg"), metadata={"Date": None})
    fig.savefig(os.path.join(directory, name + ".png"), dpi=100, metadata={"Software": None})
    plt.close(fig)


def cdf(values):
    xs = sorted(values)
    n = len(xs)
    return xs, [(i + 1) / n for i in range(n)]


def title_of(summary):
    return "lb %s, cc %s, %d flows" % (summary["lb"], summary["cc"], summary["flows"])


def fct_cdf(directory, flows, summary):
    done = [f for f in flows if f["end_ns"] != "0"]
    fig, ax = plt.subplots(figsize=(6, 3.6))
    if done:
        x, y = cdf([int(f["fct_ns"]) / 1e3 for f in done])
        ax.step(x, y, where="post", label="FCT")
        x, y = cdf([int(f["ideal_ns"]) / 1e3 for f in done])
        ax.step(x, y, where="post", linestyle="--", color="grey", label="ideal FCT")
    ax.set_xlabel("flow completion time (us)")
    ax.set_ylabel("fraction of flows")
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right")
    ax.set_title("FCT CDF: " + title_of(summary))
    save(fig, directory, "fct_cdf")


def percentile(sorted_values, p):
    if not sorted_values:
        return 0.0
    k = max(1, min(len(sorted_values), int(-(-p * len(sorted_values) // 1))))
    return sorted_values[k - 1]


def rate(directory, series, flows, summary):
    if not series:
        return
    t = [float(r["t_us"]) for r in series]
    senders = sorted({int(f["src"]) for f in flows})
    uplinks = [k for k in series[0] if k.startswith("up")]
    panels = 3 if uplinks else 2
    fig, axes = plt.subplots(panels, 1, figsize=(6, 2.2 * panels), sharex=True)
    ax = axes[0]
    if len(senders) <= 16:
        for h in senders:
            ax.plot(t, [float(r["h%d_gbps" % h]) for r in series], linewidth=0.8, label="h%d" % h)
        if len(senders) <= 8:
            ax.legend(loc="upper right", fontsize=7, ncol=2)
    else:
        rows = [sorted(float(r["h%d_gbps" % h]) for h in senders) for r in series]
        lo = [percentile(v, 0.01) for v in rows]
        hi = [percentile(v, 0.99) for v in rows]
        ax.fill_between(t, lo, hi, alpha=0.3, label="p1..p99 of senders")
        ax.plot(t, [percentile(v, 0.5) for v in rows], label="median sender")
        ax.plot(t, [sum(v) / len(v) for v in rows], linestyle="--", label="mean")
        ax.legend(loc="upper right", fontsize=7)
    ax.set_ylabel("sender NIC Gb/s")
    ax.grid(alpha=0.3)
    ax.set_title("rate over time: " + title_of(summary))
    if uplinks:
        ax = axes[1]
        for k in uplinks:
            ax.plot(t, [float(r[k]) for r in series], linewidth=0.8, label=k[: -len("_gbps")])
        if len(uplinks) <= 8:
            ax.legend(loc="upper right", fontsize=7, ncol=2)
        ax.set_ylabel("uplink Gb/s (all leaves)")
        ax.grid(alpha=0.3)
    ax = axes[-1]
    ax.plot(t, [int(r["queued_bytes"]) / 1e3 for r in series], label="all switch ports")
    ax.plot(t, [int(r["max_queue_bytes"]) / 1e3 for r in series], label="fullest port")
    ax.set_ylabel("queued KB")
    ax.set_xlabel("virtual time (us)")
    ax.legend(loc="upper right", fontsize=7)
    ax.grid(alpha=0.3)
    save(fig, directory, "rate")


def paths(directory, links, summary):
    share = {}
    for link in links:
        if link["kind"] == "up":
            a = int(link["uplink"])
            share[a] = share.get(a, 0) + int(link["tx_bytes"])
    if not share:
        return
    total = sum(share.values()) or 1
    keys = sorted(share)
    fig, ax = plt.subplots(figsize=(6, 3))
    ax.bar([str(k) for k in keys], [100.0 * share[k] / total for k in keys])
    ax.axhline(100.0 / len(keys), color="grey", linestyle="--", label="even share")
    ax.set_xlabel("uplink (spine, or aggregation switch of the pod)")
    ax.set_ylabel("% of uplink bytes")
    ax.legend(loc="lower right", fontsize=7)
    ax.set_title("per-path share: " + title_of(summary))
    save(fig, directory, "paths")


def plot_run(directory):
    flows = read_csv(os.path.join(directory, "flows.csv"))
    with open(os.path.join(directory, "summary.json")) as f:
        summary = json.load(f)
    fct_cdf(directory, flows, summary)
    rate(directory, read_csv(os.path.join(directory, "series.csv")), flows, summary)
    paths(directory, read_csv(os.path.join(directory, "links.csv")), summary)


def plot_sweep(directory):
    rows = read_csv(os.path.join(directory, "sweep.csv"))
    rows = [r for r in rows if r["exit"] in ("0", "1")]
    if not rows:
        sys.exit("uet_sim_plot.py: no run of the sweep finished")
    loads = sorted({r["load"] for r in rows}, key=float)
    # (lb, cc, mode) in the sweep's order; the mode is named only when the sweep has several
    # (RoCE's --roce-mode gbn,ooo).
    policies = []
    for r in rows:
        if (r["lb"], r["cc"], r["mode"]) not in policies:
            policies.append((r["lb"], r["cc"], r["mode"]))
    modes = len({p[2] for p in policies}) > 1

    def name(policy, sep):
        return sep.join(policy if modes else policy[:2])
    # Per policy and load, mean over seeds with min..max as the error bar: p50 and p99 FCT, and
    # each flow's own rate (bytes over its FCT, averaged over flows) as a share of line rate.
    width = max(4, 0.7 * len(policies) + 2)
    fig, axes = plt.subplots(2, len(loads), figsize=(width * len(loads), 6.4), squeeze=False,
                             sharey="row")

    def bars(ax, load, metric, scale, offset, bar_width, label):
        means, errs = [], [[], []]
        for policy in policies:
            v = [float(r[metric]) * scale(r) for r in rows
                 if ((r["lb"], r["cc"], r["mode"]), r["load"]) == (policy, load)]
            m = sum(v) / len(v) if v else 0
            means.append(m)
            errs[0].append(m - min(v) if v else 0)
            errs[1].append(max(v) - m if v else 0)
        xs = [i + offset for i in range(len(policies))]
        ax.bar(xs, means, width=bar_width, yerr=errs, capsize=2, label=label)
        ax.set_xticks(range(len(policies)))
        ax.set_xticklabels([name(p, "\n") for p in policies], fontsize=7)
        ax.grid(alpha=0.3, axis="y")

    for col, load in enumerate(loads):
        ax = axes[0][col]
        bars(ax, load, "fct_p50_us", lambda r: 1, -0.2, 0.4, "p50 FCT")
        bars(ax, load, "fct_p99_us", lambda r: 1, 0.2, 0.4, "p99 FCT")
        ideal = [float(r["ideal_last_us"]) for r in rows if r["load"] == load]
        if ideal:
            ax.axhline(min(ideal), color="grey", linestyle="--", label="ideal last completion")
        ax.set_title("load %s" % load)
        ax = axes[1][col]
        bars(ax, load, "mean_flow_gbps", lambda r: 1 / float(r["speed_gbps"]), 0, 0.6,
             "mean flow rate")
        ax.set_ylim(0, 1.05)
    axes[0][0].set_ylabel("FCT (us), mean over seeds")
    axes[1][0].set_ylabel("flow rate / line rate")
    axes[0][-1].legend(loc="upper right", fontsize=7)
    save(fig, directory, "sweep_fct")
    # FCT CDF of each policy at each load (the first seed's run).
    fig, axes = plt.subplots(1, len(loads), figsize=(5 * len(loads), 3.6), squeeze=False, sharey=True)
    for ax, load in zip(axes[0], loads):
        for policy in policies:
            mine = [r for r in rows if ((r["lb"], r["cc"], r["mode"]), r["load"]) == (policy, load)]
            path = os.path.join(directory, "runs", mine[0]["run"] + ".csv") if mine else ""
            if not path or not os.path.exists(path):
                continue
            done = [f for f in read_csv(path) if f["end_ns"] != "0"]
            if done:
                x, y = cdf([int(f["fct_ns"]) / 1e3 for f in done])
                ax.step(x, y, where="post", label=name(policy, " / "))
        ax.set_title("FCT CDF, load %s, seed %s" % (load, rows[0]["seed"]))
        ax.set_xlabel("flow completion time (us)")
        ax.grid(alpha=0.3)
        ax.legend(loc="lower right", fontsize=7)
    axes[0][0].set_ylabel("fraction of flows")
    save(fig, directory, "sweep_cdf")


def plot_compare(out, labelled):
    groups = []  # (label, finished runs of its sweep)
    for item in labelled:
        label, sep, directory = item.partition("=")
        if not sep or not label:
            sys.exit("uet_sim_plot.py compare: '%s' is not LABEL=DIR" % item)
        rows = [r for r in read_csv(os.path.join(directory, "sweep.csv")) if r["exit"] == "0"]
        if not rows:
            sys.exit("uet_sim_plot.py compare: no run of %s finished" % directory)
        groups.append((label, rows))
    fig, axes = plt.subplots(1, 3, figsize=(3.2 * 3, 3.4))
    panels = [("last_us", "last completion (us)"), ("fct_p50_us", "p50 FCT (us)"),
              ("timeouts", "retransmit timeouts")]
    for ax, (metric, title) in zip(axes, panels):
        means, errs = [], [[], []]
        for _, rows in groups:
            v = [float(r[metric]) for r in rows]
            m = sum(v) / len(v)
            means.append(m)
            errs[0].append(m - min(v))
            errs[1].append(max(v) - m)
        ax.bar(range(len(groups)), means, yerr=errs, capsize=3,
               color=["C%d" % i for i in range(len(groups))])
        for i, m in enumerate(means):
            ax.annotate("%.4g" % m, (i, m), textcoords="offset points", xytext=(8, 2), fontsize=7)
        ax.set_xticks(range(len(groups)))
        ax.set_xticklabels([label for label, _ in groups], fontsize=7)
        ax.set_title(title)
        ax.grid(alpha=0.3, axis="y")
        if metric != "timeouts":
            ideal = min(float(r["ideal_last_us"]) for _, rows in groups for r in rows)
            ax.axhline(ideal, color="grey", linestyle="--", label="ideal last completion")
    axes[0].legend(loc="upper right", fontsize=7)
    seeds = sorted({r["seed"] for _, rows in groups for r in rows}, key=int)
    fig.suptitle("mean over seeds %s, error bars min..max" % ",".join(seeds), fontsize=8)
    os.makedirs(out, exist_ok=True)
    save(fig, out, "compare")


def main():
    if len(sys.argv) >= 4 and sys.argv[1] == "compare":
        return plot_compare(sys.argv[2], sys.argv[3:])
    if len(sys.argv) != 3 or sys.argv[1] not in ("run", "sweep"):
        sys.exit("usage: uet_sim_plot.py run|sweep DIR | compare OUT LABEL=DIR...")
    (plot_run if sys.argv[1] == "run" else plot_sweep)(sys.argv[2])


if __name__ == "__main__":
    main()
