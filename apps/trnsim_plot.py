#!/usr/bin/env python3
"""trnsim plots (matplotlib): roofline of runs, Pareto front of a sweep, per-engine utilisation over time.

  trnsim_plot.py roofline STATS.json... | RESULTS.json   -o out.png [-o out.svg]
  trnsim_plot.py pareto RESULTS.json [--x sim_ns] [--y energy_j] [--size pe_count] [--color array] [--marker workload.dtype]
  trnsim_plot.py utilisation TIMELINE.json [--bins 200]

STATS.json is `trnsim run --stats`, RESULTS.json is a sweep's results.json, TIMELINE.json is `trnsim run --timeline`.
The output format follows each -o file's extension (png, svg, pdf).
"""
import argparse
import json
import math
import re
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def save(fig, outs):
    for o in outs:
        fig.savefig(o, dpi=110, bbox_inches="tight")
        print("wrote", o)


def load_runs(files):
    """Rows with flat keys from --stats files or sweep results.json files (ok rows only)."""
    rows = []
    for f in files:
        doc = json.load(open(f))
        if "rows" in doc:  # sweep results
            rows += [r for r in doc["rows"] if r.get("status") == "ok"]
        elif "result" in doc:  # trnsim run --stats
            r = dict(doc["result"])
            for k, v in doc.get("workload", {}).items():
                r["workload." + k] = v
            r["preset"] = doc.get("preset", "")
            r["label"] = f
            rows.append(r)
        else:
            sys.exit(f"{f}: neither a --stats file nor a sweep results.json")
    if not rows:
        sys.exit("no successful runs to plot")
    return rows


def natural(v):
    """Sort key that orders '32x32' before '128x128' and numbers numerically."""
    return [(0, int(t), "") if t.isdigit() else (1, 0, t) for t in re.split(r"(\d+)", str(v))]


def label_of(r, keys):
    return " ".join(str(r.get(k)) for k in keys if r.get(k) is not None)


def roofline(args):
    rows = load_runs(args.files)
    fig, ax = plt.subplots(figsize=(7, 4.8))
    ais = [r["arithmetic_intensity"] for r in rows if r.get("arithmetic_intensity", 0) > 0]
    lo, hi = min(ais) / 4, max(ais) * 4
    # One horizontal compute roof per distinct peak and one diagonal HBM roof per distinct bandwidth, so every
    # point sits under the roofs of its own configuration (its peak and its HBM bandwidth).
    peaks = sorted({r["peak_tflops"] for r in rows})
    bws = sorted({r["hbm_peak_gbps"] for r in rows})
    xs = [lo * (hi / lo) ** (i / 200) for i in range(201)]
    top = max(peaks)
    for peak in peaks:
        ax.plot([lo, hi], [peak, peak], color="0.55", lw=1, ls="-", zorder=1)
        ax.annotate(f"{peak:.0f} TFLOP/s", (hi, peak), fontsize=7, color="0.35", ha="right", va="bottom")
    for bw in bws:
        ys = [x * bw / 1000 for x in xs]
        keep = [(x, y) for x, y in zip(xs, ys) if y <= top]
        if keep:
            ax.plot([x for x, _ in keep], [y for _, y in keep], color="0.7", lw=1, ls="--", zorder=1)
            ax.annotate(f"{bw:.0f} GB/s", keep[-1], fontsize=7, color="0.45", rotation=35, ha="right", va="bottom")
    groups = defaultdict(list)
    for r in rows:
        groups[label_of(r, args.group) or "run"].append(r)
    for name, rs in sorted(groups.items()):
        ax.scatter([r["arithmetic_intensity"] for r in rs], [r["achieved_tflops"] for r in rs], s=28, label=name, zorder=3)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (FLOP per HBM byte)")
    ax.set_ylabel("achieved TFLOP/s")
    ax.set_title("Roofline: achieved vs compute and HBM roofs")
    if len(groups) > 1 or args.group:
        ax.legend(fontsize=7, ncol=2)
    ax.grid(True, which="both", alpha=0.3)
    save(fig, args.o)


def pareto_front(points):
    """Indices of points not dominated in all coordinates (minimise every one)."""
    front = []
    for i, p in enumerate(points):
        if not any(all(q[k] <= p[k] for k in range(len(p))) and any(q[k] < p[k] for k in range(len(p)))
                   for j, q in enumerate(points) if j != i):
            front.append(i)
    return front


def pareto(args):
    rows = load_runs(args.files)
    rows = [r for r in rows if r.get(args.x) is not None and r.get(args.y) is not None]
    fig, ax = plt.subplots(figsize=(7.5, 5))
    markers = "os^Dv<>ph*"
    mvals = sorted({str(r.get(args.marker)) for r in rows}, key=natural)
    cvals = sorted({r.get(args.color) for r in rows}, key=natural)
    cmap = plt.get_cmap("viridis", max(2, len(cvals)))
    sizes = [r.get(args.size, 1) or 1 for r in rows]
    smax = max(sizes)
    for r, s in zip(rows, sizes):
        ax.scatter(r[args.x], r[args.y], marker=markers[mvals.index(str(r.get(args.marker))) % len(markers)],
                   color=cmap(cvals.index(r.get(args.color))), s=18 + 120 * math.sqrt(s / smax), alpha=0.85,
                   edgecolors="none", zorder=2)
    f2 = pareto_front([(r[args.x], r[args.y]) for r in rows])
    f2 = sorted(f2, key=lambda i: rows[i][args.x])
    ax.plot([rows[i][args.x] for i in f2], [rows[i][args.y] for i in f2], "k--", lw=1, zorder=3,
            label=f"Pareto front ({args.x}, {args.y})")
    f3 = pareto_front([(r[args.x], r[args.y], r.get(args.size, 0)) for r in rows])
    ax.scatter([rows[i][args.x] for i in f3], [rows[i][args.y] for i in f3], s=200, facecolors="none",
               edgecolors="red", lw=1, zorder=4, label=f"non-dominated with {args.size} (area proxy)")
    for i in f2:
        ax.annotate(label_of(rows[i], [args.color, "hbm", args.marker]), (rows[i][args.x], rows[i][args.y]), fontsize=6,
                    xytext=(4, 2), textcoords="offset points")
    for k, c in enumerate(cvals):
        ax.scatter([], [], color=cmap(k), label=f"{args.color} {c}")
    for k, m in enumerate(mvals):
        ax.scatter([], [], color="0.3", marker=markers[k % len(markers)], label=f"{args.marker} {m}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(args.x)
    ax.set_ylabel(args.y)
    ax.set_title(args.title or "Sweep: Pareto front (marker size = %s)" % args.size)
    ax.legend(fontsize=7, loc="best")
    ax.grid(True, which="both", alpha=0.3)
    save(fig, args.o)


def utilisation(args):
    doc = json.load(open(args.files[0]))
    ev = doc["traceEvents"]
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev if e.get("ph") == "M" and e["name"] == "thread_name"}
    spans = [e for e in ev if e.get("ph") == "X"]
    if not spans:
        sys.exit("no spans in the timeline")
    dropped = int(doc.get("otherData", {}).get("events_dropped_over_budget", "0"))
    if dropped:
        print(f"warning: the timeline dropped {dropped} events over its budget: it ends early "
              "(raise --timeline-max-events or use --timeline-window)", file=sys.stderr)
    end = max(e["ts"] + e["dur"] for e in spans)
    bins = args.bins
    width = end / bins
    # Engine groups: coreN.te (the array streaming), coreN DMA engines (mean over engines), HBM (mean over channels).
    group_of = {}
    members = defaultdict(set)
    for key, name in names.items():
        base = name.split(" #")[0]
        if re.fullmatch(r"core\d+\.te", base):
            g = base
        elif re.fullmatch(r"core\d+\.dma\d+", base):
            g = base.rsplit(".", 1)[0] + ".dma"
        elif base.startswith("hbm.ch"):
            g = "hbm"
        else:
            continue
        group_of[key] = g
        members[g].add(base)
    busy = defaultdict(lambda: [0.0] * bins)
    for e in spans:
        g = group_of.get((e["pid"], e["tid"]))
        if not g:
            continue
        t0, t1 = e["ts"], e["ts"] + e["dur"]
        b = int(t0 / width)
        while b < bins and b * width < t1:
            lo, hi = max(t0, b * width), min(t1, (b + 1) * width)
            if hi > lo:
                busy[g][b] += hi - lo
            b += 1
    order = sorted(busy, key=lambda g: (g == "hbm", natural(g.split(".")[-1]), natural(g)))
    grid = [[min(1.0, v / (width * len(members[g]))) * 100 for v in busy[g]] for g in order]
    fig, ax = plt.subplots(figsize=(8, 0.8 + 0.22 * len(order)))
    im = ax.imshow(grid, aspect="auto", interpolation="nearest", cmap="magma", vmin=0, vmax=100,
                   extent=(0, end, len(order) - 0.5, -0.5))
    ax.set_yticks(range(len(order)))
    ax.set_yticklabels([f"{g} (mean of {len(members[g])})" if len(members[g]) > 1 else g for g in order], fontsize=7)
    ax.set_xlabel("simulated time (us)")
    ax.set_title("Per-engine utilisation over time (busy % per time bin)" +
                 (f"\n(truncated: {dropped} events over the budget were dropped)" if dropped else ""))
    fig.colorbar(im, ax=ax, label="busy %", fraction=0.03, pad=0.02)
    save(fig, args.o)


def main(argv=None):
    p = argparse.ArgumentParser(prog="trnsim plot", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="kind", required=True)
    r = sub.add_parser("roofline")
    r.add_argument("files", nargs="+")
    r.add_argument("--group", nargs="*", default=[], help="keys whose values name a point's group (legend)")
    q = sub.add_parser("pareto")
    q.add_argument("files", nargs="+")
    q.add_argument("--x", default="sim_ns")
    q.add_argument("--y", default="energy_j")
    q.add_argument("--size", default="pe_count", help="third objective, shown as marker size (area proxy)")
    q.add_argument("--color", default="array")
    q.add_argument("--marker", default="workload.dtype")
    q.add_argument("--title", default="")
    u = sub.add_parser("utilisation")
    u.add_argument("files", nargs=1)
    u.add_argument("--bins", type=int, default=120)
    for s in (r, q, u):
        s.add_argument("-o", action="append", required=True, help="output file (.png, .svg, ...); repeatable")
    args = p.parse_args(argv)
    {"roofline": roofline, "pareto": pareto, "utilisation": utilisation}[args.kind](args)


if __name__ == "__main__":
    main()
