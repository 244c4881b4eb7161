#!/usr/bin/env python3
"""trnsim plots (matplotlib): roofline of runs, Pareto front of a sweep, per-engine utilisation over time.

  trnsim_plot.py roofline STATS.json... | RESULTS.json [--group KEY...] [-o out.png] [-o out.svg]
  trnsim_plot.py pareto RESULTS.json [--x sim_ns] [--y energy_j] [--size pe_count] [--color array] [--marker workload.dtype] [-o FILE]
  trnsim_plot.py utilisation TIMELINE.json [--bins 200] [-o FILE]

STATS.json is `trnsim run --stats`, RESULTS.json is a sweep's results.json, TIMELINE.json is `trnsim run --timeline`.
-o FILE (repeatable) names the output; its extension picks the format (png, svg, pdf). Without -o the plot goes to
KIND.png in the current directory (roofline.png, pareto.png, utilisation.png); every file written is printed.
"""
import argparse
import json
import math
import os
import re
import sys
from collections import defaultdict

PROG = "trnsim plot"

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: E402
    from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
except ImportError as e:
    sys.exit(f"{PROG}: error: {sys.executable} cannot import matplotlib ({e}); "
             "install python3-matplotlib or set TRNSIM_PYTHON")

MAX_BINS = 100000


class InputError(Exception):
    """A bad input (or unwritable output) file: `trnsim plot: error: MESSAGE`, exit status 1."""


class OptionError(Exception):
    """An option that does not fit the input (e.g. an unknown column): a usage error, exit status 2."""

    def __init__(self, option, message):
        super().__init__(f"argument {option}: {message}")


class Row(dict):
    """One run's flat keys, plus where it came from (`where`) for error messages."""
    where = ""


def is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def output_file(path):
    """argparse type of -o: a file name whose extension is a format matplotlib writes, in an existing directory."""
    formats = sorted(FigureCanvasAgg.get_supported_filetypes())
    if os.path.isdir(path):
        raise argparse.ArgumentTypeError(f"'{path}': is a directory")
    ext = os.path.splitext(path)[1][1:]
    if not ext:
        raise argparse.ArgumentTypeError(f"'{path}': no file extension to choose the format from "
                                         f"(supported: {', '.join(formats)})")
    if ext.lower() not in formats:
        raise argparse.ArgumentTypeError(f"'{path}': unsupported format '{ext}' (supported: {', '.join(formats)})")
    d = os.path.dirname(path) or "."
    if not os.path.isdir(d):
        raise argparse.ArgumentTypeError(f"'{path}': directory {d} does not exist")
    try:
        kind, where = destination(path)
    except OSError as e:
        raise argparse.ArgumentTypeError(f"'{path}': {e}") from None
    if kind == "replace" and where != path:
        d = os.path.dirname(where) or "."
        if not os.path.isdir(d):
            raise argparse.ArgumentTypeError(f"'{path}': directory {d} does not exist (where the link leads)")
    if kind == "replace" and (not os.access(d, os.W_OK) or (os.path.exists(where) and not os.access(where, os.W_OK))):
        raise argparse.ArgumentTypeError(f"'{path}': is not writable")
    if kind == "in_place" and not os.access(path, os.W_OK):
        raise argparse.ArgumentTypeError(f"'{path}': is not writable")
    return path


def bin_count(text):
    """argparse type of --bins: a whole number from 1 to MAX_BINS."""
    try:
        n = int(text)
    except ValueError:
        n = 0
    if not 1 <= n <= MAX_BINS:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number from 1 to {MAX_BINS}")
    return n


def load_json(path):
    """The JSON document in `path`; an InputError naming the file if it cannot be read or is not JSON."""
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except OSError as e:
        raise InputError(f"{path}: cannot open file ({e.strerror or e})") from None
    except UnicodeDecodeError:
        raise InputError(f"{path}: not a JSON file (not UTF-8 text)") from None
    except json.JSONDecodeError as e:
        hint = " (a sweep's results.csv cannot be plotted: give its results.json)" if path.endswith(".csv") else ""
        raise InputError(f"{path}:{e.lineno}:{e.colno}: JSON syntax error: {e.msg}{hint}") from None
    except RecursionError:
        raise InputError(f"{path}: JSON nested too deeply") from None


def destination(path):
    """Where an output named `path` goes (the simulator's rules, tlm/output_file.cpp): ("in_place", path) for a
    device, FIFO or socket; ("stream", fd) for a regular file that is this process's stdout or stderr named through
    a link; ("replace", file) otherwise, `file` the end of the name's chain of links (a link the user named is never
    replaced). Raises OSError for a link that cannot be followed to a nameable file."""
    import stat
    special = (stat.S_ISCHR, stat.S_ISFIFO, stat.S_ISSOCK)
    try:
        st = os.stat(path)
    except OSError:
        st = None
    if not os.path.islink(path):
        if st is not None and any(f(st.st_mode) for f in special):
            return "in_place", path
        return "replace", path
    if st is not None and any(f(st.st_mode) for f in special):
        return "in_place", path
    if st is not None and stat.S_ISREG(st.st_mode):
        for fd in (1, 2):
            try:
                o = os.fstat(fd)
            except OSError:
                continue
            if stat.S_ISREG(o.st_mode) and (o.st_dev, o.st_ino) == (st.st_dev, st.st_ino):
                return "stream", fd
    cur = path
    for _ in range(41):
        if not os.path.islink(cur):
            break
        to = os.readlink(cur)
        cur = to if os.path.isabs(to) else os.path.join(os.path.dirname(cur) or ".", to)
    else:
        raise OSError(f"{path} is a link in a loop of links (or a chain over 40 long)")
    try:
        end = os.stat(cur)
        same = st is not None and (end.st_dev, end.st_ino) == (st.st_dev, st.st_ino)
    except OSError:
        same = st is None
    if not same:
        raise OSError(f"{path} is a link to a file that has no name to write it by ({cur})")
    return "replace", cur


def identity(path):
    """What a file is, to compare two names: None for a device, FIFO, stream or what cannot be resolved."""
    try:
        kind, where = destination(path)
    except OSError:
        return None
    if kind != "replace":
        return None
    try:
        st = os.stat(where)
        return ("inode", st.st_dev, st.st_ino) if os.path.isfile(where) else None
    except OSError:
        pass
    d = os.path.dirname(where) or "."
    if not os.path.isdir(d):
        return None
    return ("path", os.path.join(os.path.realpath(d), os.path.basename(where)))


def same_file_problem(inputs, outputs):
    """A message if an output is the same file as an input or another output (by identity, not spelling)."""
    named = [(f, False) for f in inputs] + [(f, True) for f in outputs]
    ids = [identity(f) for f, _ in named]
    for j, (fj, oj) in enumerate(named):
        for i in range(j):
            fi, oi = named[i]
            if ids[i] is None or ids[i] != ids[j] or not (oi or oj):
                continue
            if oi and oj:
                return f"-o {fj} is the same file as -o {fi}: one plot would overwrite the other"
            out, inp = (fj, fi) if oj else (fi, fj)
            return f"-o {out} is the same file as the input {inp}: the plot would overwrite its input"
    return None


def write_output(path, write):
    """Calls write(f) with a binary file whose content becomes `path` (the simulator's rules,
    tlm/output_file.h): a regular file is written to a unique temporary in its directory, created
    exclusively without following links (a planted link or a user's FILE.tmp is never touched), flushed, then
    renamed over `path` (over where it leads, if `path` is a link: the link stays); a device or FIFO is written in
    place; this process's stdout or stderr named through a link is written through that stream. Raises OSError (or
    write's error)."""
    import secrets
    import stat
    kind, where = destination(path)
    if kind == "stream":
        sys.stdout.flush()
        sys.stderr.flush()
        with os.fdopen(os.dup(where), "wb") as f:
            write(f)
        return
    if kind == "in_place":
        with open(path, "wb") as f:
            write(f)
        return
    path = where
    try:
        st = os.stat(path)
        mode = stat.S_IMODE(st.st_mode) if stat.S_ISREG(st.st_mode) else None
    except FileNotFoundError:
        mode = None
    d, name = os.path.split(path)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    for _ in range(100):
        tmp = os.path.join(d, f".{name}.{secrets.token_hex(5)}.tmp")
        try:
            fd = os.open(tmp, flags, 0o666)
            break
        except FileExistsError:
            continue
    else:
        raise FileExistsError(f"no unique temporary name beside {path}")
    try:
        with os.fdopen(fd, "wb") as f:
            if mode is not None:
                os.fchmod(f.fileno(), mode)
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def save(fig, outs):
    for o in outs:
        ext = os.path.splitext(o)[1].lstrip(".").lower()
        try:
            write_output(o, lambda f: fig.savefig(f, format=ext, dpi=110, bbox_inches="tight"))
        except Exception as e:  # noqa: BLE001 - OSError, or a backend's error (pgf without LaTeX, ...)
            raise InputError(f"{o}: cannot write the plot ({getattr(e, 'strerror', None) or e})") from None
        print("wrote", o)


def load_runs(files):
    """Rows with flat keys from --stats files or sweep results.json files (ok rows only)."""
    rows = []
    not_ok = 0
    for f in files:
        doc = load_json(f)
        if not isinstance(doc, dict):
            raise InputError(f"{f}: a JSON {type(doc).__name__}, not a --stats file or a sweep results.json (objects)")
        if "rows" in doc:  # sweep results
            if not isinstance(doc["rows"], list):
                raise InputError(f"{f}: key 'rows' is not a list")
            for i, r in enumerate(doc["rows"]):
                if not isinstance(r, dict):
                    raise InputError(f"{f}: rows[{i}] is not an object")
                if r.get("status") != "ok":
                    not_ok += 1
                    continue
                row = Row(r)
                row.where = f"{f}: rows[{i}]" + (f" (id {r['id']})" if "id" in r else "")
                rows.append(row)
        elif "result" in doc:  # trnsim run --stats
            if not isinstance(doc["result"], dict):
                raise InputError(f"{f}: key 'result' is not an object")
            r = Row(doc["result"])
            workload = doc.get("workload", {})
            if not isinstance(workload, dict):
                raise InputError(f"{f}: key 'workload' is not an object")
            for k, v in workload.items():
                r["workload." + k] = v
            r["preset"] = doc.get("preset", "")
            r["label"] = f
            r.where = f"{f}: result"
            rows.append(r)
        else:
            hint = " (it is a timeline: use trnsim plot utilisation)" if "traceEvents" in doc else ""
            raise InputError(f"{f}: neither a --stats file (no key 'result') nor a sweep results.json "
                             f"(no key 'rows'){hint}")
    if not rows:
        raise InputError("no successful runs to plot in " + ", ".join(files) +
                         (f" ({not_ok} sweep row{'s' * (not_ok != 1)}, none with status ok)" if not_ok else ""))
    return rows


def require_numbers(rows, keys, what):
    """Every row has each of `keys` as a number, else an InputError naming the row and the key."""
    for r in rows:
        for k in keys:
            if r.get(k) is None:
                raise InputError(f"{r.where}: missing key '{k}' (needed by the {what})")
            if not is_number(r[k]):
                raise InputError(f"{r.where}: key '{k}' is {json.dumps(r[k])}, not a number")


def columns(rows, numeric=False):
    """Keys with a value in some row (only keys whose values are all numbers with numeric=True), sorted."""
    seen, bad = set(), set()
    for r in rows:
        for k, v in r.items():
            if v is None:
                continue
            seen.add(k)
            if numeric and not is_number(v):
                bad.add(k)
    return sorted(seen - bad, key=natural)


def check_column(rows, option, key, numeric=False):
    """A usage error unless some row has `key` (with numeric=True: and all its values are numbers)."""
    if key in columns(rows, numeric):
        return
    known = key in columns(rows)
    problem = f"column '{key}' is not numeric" if known else f"unknown column '{key}'"
    avail = columns(rows, numeric)
    raise OptionError(option, f"{problem}; the {'numeric ' if numeric else ''}columns of the input are: "
                              + (", ".join(avail) if avail else "(none)"))


def natural(v):
    """Sort key that orders '32x32' before '128x128' and numbers numerically."""
    return [(0, int(t), "") if t.isdigit() else (1, 0, t) for t in re.split(r"(\d+)", str(v))]


def label_of(r, keys):
    return " ".join(str(r.get(k)) for k in keys if r.get(k) is not None)


def roofline(args):
    rows = load_runs(args.files)
    for k in args.group:
        check_column(rows, "--group", k)
    require_numbers(rows, ["arithmetic_intensity", "achieved_tflops", "peak_tflops", "hbm_peak_gbps"], "roofline")
    ais = [r["arithmetic_intensity"] for r in rows if r.get("arithmetic_intensity", 0) > 0]
    if not ais:
        raise InputError("no run with arithmetic_intensity > 0 to place on the roofline's log axis in "
                         + ", ".join(args.files))
    fig, ax = plt.subplots(figsize=(7, 4.8))
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


PARETO_DEFAULTS = {"x": "sim_ns", "y": "energy_j", "size": "pe_count", "color": "array", "marker": "workload.dtype"}


def pareto(args):
    rows = load_runs(args.files)
    # --x and --y must be numeric columns of the input; --size, --color and --marker, when given, columns of it
    # (their defaults may be missing, e.g. `array` in --stats files: then every point gets the same one).
    check_column(rows, "--x", args.x or PARETO_DEFAULTS["x"], numeric=True)
    check_column(rows, "--y", args.y or PARETO_DEFAULTS["y"], numeric=True)
    for opt in ("size", "color", "marker"):
        if getattr(args, opt) is not None:
            check_column(rows, "--" + opt, getattr(args, opt), numeric=opt == "size")
    for opt, default in PARETO_DEFAULTS.items():
        if getattr(args, opt) is None:
            setattr(args, opt, default)
    for r in rows:
        s = r.get(args.size)
        if s is not None and (not is_number(s) or s < 0):
            raise InputError(f"{r.where}: key '{args.size}' (--size) is {json.dumps(s)}, not a number >= 0")
    rows = [r for r in rows if r.get(args.x) is not None and r.get(args.y) is not None]
    if not rows:
        raise OptionError("--x/--y", f"no run has both '{args.x}' and '{args.y}'")
    if not any(r[args.x] > 0 and r[args.y] > 0 for r in rows):
        raise OptionError("--x/--y", f"no run has both '{args.x}' and '{args.y}' > 0 (the axes are logarithmic)")
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


def load_timeline(f):
    """The timeline's document and events, checked for what utilisation() reads (an InputError naming the key)."""
    doc = load_json(f)
    if not isinstance(doc, dict) or "traceEvents" not in doc:
        hint = ""
        if isinstance(doc, dict) and ("rows" in doc or "result" in doc):
            hint = " (it is a sweep's results or --stats file: use trnsim plot roofline or pareto)"
        raise InputError(f"{f}: no key 'traceEvents': not a `trnsim run --timeline` file{hint}")
    ev = doc["traceEvents"]
    if not isinstance(ev, list):
        raise InputError(f"{f}: key 'traceEvents' is not a list")
    for i, e in enumerate(ev):
        if not isinstance(e, dict):
            raise InputError(f"{f}: traceEvents[{i}] is not an object")
        ph = e.get("ph")
        need = {"X": ("pid", "tid", "ts", "dur"), "M": ("pid", "tid") if e.get("name") == "thread_name" else ()}
        for k in need.get(ph, ()):
            if k not in e:
                raise InputError(f"{f}: traceEvents[{i}] (ph {ph}): missing key '{k}'")
        if ph == "X":
            for k in ("ts", "dur"):
                if not is_number(e[k]) or e[k] < 0:
                    raise InputError(f"{f}: traceEvents[{i}]: key '{k}' is {json.dumps(e[k])}, not a number >= 0")
        elif ph == "M" and e.get("name") == "thread_name":
            if not isinstance(e.get("args"), dict) or not isinstance(e["args"].get("name"), str):
                raise InputError(f"{f}: traceEvents[{i}] (thread_name): missing key 'args.name'")
    other = doc.get("otherData", {})
    dropped = other.get("events_dropped_over_budget", "0") if isinstance(other, dict) else "0"
    try:
        dropped = int(dropped)
    except (TypeError, ValueError):
        raise InputError(f"{f}: key 'otherData.events_dropped_over_budget' is {json.dumps(dropped)}, "
                         "not a whole number") from None
    # The writer's own words ("yes: N events ... dropped; spans ending after T us are missing"), if it said any.
    note = other.get("truncated", "") if isinstance(other, dict) else ""
    note = note[len("yes: "):] if isinstance(note, str) and note.startswith("yes: ") else ""
    return ev, dropped, note


def utilisation(args):
    f = args.files[0]
    ev, dropped, note = load_timeline(f)
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev if e.get("ph") == "M" and e.get("name") == "thread_name"}
    spans = [e for e in ev if e.get("ph") == "X"]
    if not spans:
        raise InputError(f"{f}: no spans (events with ph X) in the timeline")
    if dropped:
        print(f"warning: the timeline dropped {dropped} events over its budget: it ends early "
              "(raise --timeline-max-events or use --timeline-window)", file=sys.stderr)
    end = max(e["ts"] + e["dur"] for e in spans)
    if end <= 0:
        raise InputError(f"{f}: the timeline's spans cover no time (all end at 0)")
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
    if not order:
        raise InputError(f"{f}: no spans on Tensor Engine (coreN.te), DMA (coreN.dmaN) or HBM (hbm.chN) tracks")
    grid = [[min(1.0, v / (width * len(members[g]))) * 100 for v in busy[g]] for g in order]
    fig, ax = plt.subplots(figsize=(8, 0.8 + 0.22 * len(order)))
    im = ax.imshow(grid, aspect="auto", interpolation="nearest", cmap="magma", vmin=0, vmax=100,
                   extent=(0, end, len(order) - 0.5, -0.5))
    ax.set_yticks(range(len(order)))
    ax.set_yticklabels([f"{g} (mean of {len(members[g])})" if len(members[g]) > 1 else g for g in order], fontsize=7)
    ax.set_xlabel("simulated time (us)")
    if dropped:
        what = note or f"{dropped} events over the --timeline-max-events budget were dropped"
        ax.set_title(f"TRUNCATED TIMELINE: {what}\n"
                     "Per-engine utilisation over time (busy % per time bin; the end is incomplete)", color="red",
                     fontsize=9)
    else:
        ax.set_title("Per-engine utilisation over time (busy % per time bin)")
    fig.colorbar(im, ax=ax, label="busy %", fraction=0.03, pad=0.02)
    save(fig, args.o)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    p = argparse.ArgumentParser(prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="kind", required=True)
    r = sub.add_parser("roofline")
    r.add_argument("files", nargs="+")
    r.add_argument("--group", nargs="*", default=[], help="keys whose values name a point's group (legend)")
    q = sub.add_parser("pareto")
    q.add_argument("files", nargs="+")
    # Defaults (PARETO_DEFAULTS) are filled in after the input is read, so that only given options must be columns.
    q.add_argument("--x")
    q.add_argument("--y")
    q.add_argument("--size", help="third objective, shown as marker size (area proxy)")
    q.add_argument("--color")
    q.add_argument("--marker")
    q.add_argument("--title", default="")
    u = sub.add_parser("utilisation")
    u.add_argument("files", nargs=1)
    u.add_argument("--bins", type=bin_count, default=120, help=f"time bins, 1 to {MAX_BINS} (default 120)")
    for s in (r, q, u):
        s.add_argument("-o", action="append", type=output_file,
                       help="output file (.png, .svg, .pdf, ...: the extension picks the format); repeatable; "
                            "default KIND.png in the current directory")
    if not argv:  # `trnsim plot` alone: a usage error
        p.print_help(sys.stderr)
        return 2
    args = p.parse_args(argv)
    kinds = {"roofline": (roofline, r), "pareto": (pareto, q), "utilisation": (utilisation, u)}
    run, parser = kinds[args.kind]
    if not args.o:
        try:
            args.o = [output_file(f"{args.kind}.png")]
        except argparse.ArgumentTypeError as e:
            parser.error(f"argument -o: (default) {e}")
    problem = same_file_problem(args.files, args.o)
    if problem:
        parser.error(problem)  # usage error, exit status 2, before anything is read or written
    try:
        run(args)
    except OptionError as e:
        parser.error(str(e))  # usage, `trnsim plot KIND: error: argument --x: ...`, exit status 2
    except InputError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception as e:  # noqa: BLE001 - last resort: a message, never a traceback
        print(f"{PROG}: error: {type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(1)
