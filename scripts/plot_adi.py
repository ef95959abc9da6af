#!/usr/bin/env python3
"""Plot `adi3d bench adi --json` output: one step per method against its bytes floor and the
device copy; ns per point per step with n; time to solution of heat_sine.

usage: scripts/plot_adi.py [docs/perf/adi_h100.json] [docs/perf/adi_h100.png]
(Debian's python3-matplotlib.)
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

METHODS = [("copy", "device copy (anchor)", "0.6"), ("ours", "Douglas step, ours", "C0"),
           ("cusparse", "Douglas step, cuSPARSE", "C1"), ("ftcs", "explicit FTCS step", "C2")]


def plot_steps(ax, data):
    rows = data.get("steps", [])
    groups = list(dict.fromkeys((r["n"], r["precision"]) for r in rows))
    width = 0.8 / len(METHODS)
    for k, (method, label, color) in enumerate(METHODS):
        for g, (n, prec) in enumerate(groups):
            hit = [r for r in rows if r["n"] == n and r["precision"] == prec and r["method"] == method]
            if not hit:
                continue
            r = hit[0]
            x = g + k * width
            ax.bar(x, r["ms"], width, color=color, label=label if g == 0 else None)
            # The bytes floor at the copy bandwidth of this size: a black tick on the bar.
            ax.plot([x - width / 2, x + width / 2], [r["floor_ms"]] * 2, color="black", lw=2)
            if method != "copy":
                ax.annotate(f"{r['percent_of_copy']:.0f}%", (x, r["ms"]), ha="center", va="bottom", fontsize=7)
    ax.plot([], [], color="black", lw=2, label="bytes floor (7 arrays ADI, 2 FTCS) / copy bandwidth")
    ax.set_xticks([g + 0.4 - width / 2 for g in range(len(groups))])
    ax.set_xticklabels([f"{n}^3 {prec}" for n, prec in groups])
    ax.set_yscale("log")
    ax.set_ylim(top=ax.get_ylim()[1] * 4)
    ax.set_ylabel("ms per step (median, CUDA events)")
    ax.set_title("one step; label: % of copy bandwidth")
    ax.grid(axis="y", alpha=0.3, which="both")
    ax.legend(fontsize=7, loc="upper left")


def plot_scaling(ax, data):
    rows = [r for r in data.get("scaling", []) if "ours_ns_per_point" in r]
    if not rows:
        return
    ns = [r["n"] for r in rows]
    anchor = max(r["copy_gb_per_s"] for r in rows)
    ax.plot(ns, [r["ours_ns_per_point"] for r in rows], "o-", color="C0", label="Douglas step, ours")
    ax.plot(ns, [r["ftcs_ns_per_point"] for r in rows], "s-", color="C2", label="explicit FTCS step")
    ax.axhline(7 * 4 / anchor, color="C0", ls="--", lw=1, label=f"floor, 7 arrays at {anchor:.0f} GB/s")
    ax.axhline(2 * 4 / anchor, color="C2", ls="--", lw=1, label=f"floor, 2 arrays at {anchor:.0f} GB/s")
    for r in rows:
        if not r.get("ours_fused", True):
            ax.annotate("unfused", (r["n"], r["ours_ns_per_point"]), fontsize=7)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks(ns)
    ax.set_xticklabels([str(n) for n in ns])
    ax.set_xlabel("n (n^3 points), float")
    ax.set_ylabel("ns per point per step")
    ax.set_title("scaling (small n: launch-bound)")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7)


def plot_solve(ax, data):
    rows = [r for r in data.get("time_to_solution", []) if "adi" in r]
    if not rows:
        return
    width = 0.25
    for g, r in enumerate(rows):
        bars = [("ADI, ours", r["adi"], "C0", None), ("ADI, cuSPARSE", r["adi_cusparse"], "C1", None),
                ("explicit FTCS", r["explicit"], "C2", "//" if r["explicit"]["projected"] else None)]
        for k, (label, rec, color, hatch) in enumerate(bars):
            x = g + k * width
            ax.bar(x, rec["wall_s"], width, color=color, hatch=hatch, label=label if g == 0 else None)
            note = f"{rec['wall_s']:.3g} s\n{rec['steps']} steps"
            if rec.get("projected"):
                note += "\nprojected"
            ax.annotate(note, (x, rec["wall_s"]), ha="center", va="bottom", fontsize=7)
    ax.set_xticks([g + width for g in range(len(rows))])
    ax.set_xticklabels([f"{r['n']}^3 (x{r['speedup_vs_explicit']:.0f} vs explicit)" for r in rows])
    ax.set_yscale("log")
    ax.set_ylim(top=ax.get_ylim()[1] * 8)
    ax.set_ylabel("seconds of stepping to t_end")
    tol = rows[0]["tolerance"]
    title = f"heat_sine to t_end, max error <= {tol:g} ({rows[0]['precision']})"
    if "time_to_solution_run" in data:  # merged from an earlier run
        title += f"\nrun of {data['time_to_solution_run']['date']}"
    ax.set_title(title)
    ax.grid(axis="y", alpha=0.3, which="both")
    ax.legend(fontsize=7)


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else "docs/perf/adi_h100.json"
    dst = sys.argv[2] if len(sys.argv) > 2 else "docs/perf/adi_h100.png"
    with open(src) as f:
        data = json.load(f)
    fig, axes = plt.subplots(1, 3, figsize=(19, 5.5))
    plot_steps(axes[0], data)
    plot_scaling(axes[1], data)
    plot_solve(axes[2], data)
    title = f"adi3d bench adi, {data['device']}, {data['date']}"
    if "copy_bandwidth_gbs" in data:
        title += f", copy {data['copy_bandwidth_gbs']:.0f} GB/s"
    p = data.get("poisson")
    if p:
        title += (f"\nPoisson {p['n']}^3 {p['precision']}: {p['iterations']} iterations, {p['wall_s']:.3f} s to "
                  f"relative residual {p['tolerance']:g}")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(dst, dpi=110)
    print(f"wrote {dst}")


if __name__ == "__main__":
    main()
