#!/usr/bin/python3
"""Merges `adi3d bench scaling` runs (one JSON per rank count and mode) and works out the
efficiencies: weak = t(1) / t(P) at the same points per rank, strong = t(1) / (P t(P)) on
the same grid. Writes the merged JSON and a PNG (step time split into kernels, ghost-plane
exchange and reduced systems, per rank count).

usage: plot_scaling.py RUN.json... --json OUT.json [--png OUT.png]
"""
import argparse
import json

p = argparse.ArgumentParser()
p.add_argument("runs", nargs="+")
p.add_argument("--json", required=True)
p.add_argument("--png")
a = p.parse_args()

rows, meta = [], {}
for path in a.runs:  # runs of adi3d bench scaling, or a file this script merged before
    d = json.load(open(path))
    meta.setdefault("commands", []).extend(d.get("commands", [d.get("command")]))
    meta.setdefault("dates", []).extend(d.get("dates", [d.get("date")]))
    meta["host"], meta["version"] = d["host"], d["version"]
    rows += [{k: v for k, v in r.items() if k != "efficiency"} for r in d["rows"]]
base = {(r["mode"], r["precision"], r["n"]): r["step_ms"] for r in rows if r["ranks"] == 1}
for r in rows:
    t1 = base.get((r["mode"], r["precision"], r["n"]))
    if t1:
        r["efficiency"] = t1 / r["step_ms"] if r["mode"] == "weak" else t1 / (r["ranks"] * r["step_ms"])
for r in rows:  # rows from before the overlap: all of the reduced time was waited for
    r.setdefault("waiting_ms", r["reduced_ms"])
    r.setdefault("timed_step_ms", r["step_ms"])
rows.sort(key=lambda r: (r["mode"], r["precision"], r["ranks"]))
json.dump(dict(meta, benchmark="scaling", rows=rows), open(a.json, "w"), indent=2)
print(f"{'mode':6} {'prec':6} {'ranks':>5} {'grid':>16} {'step ms':>9} {'timed':>7} {'halo':>7} {'reduced':>8} "
      f"{'waiting':>8} {'compute':>8} {'eff':>6}")
for r in rows:
    grid = "x".join(map(str, r["grid"]))
    eff = f"{100 * r['efficiency']:5.1f}%" if "efficiency" in r else "   -"
    print(f"{r['mode']:6} {r['precision']:6} {r['ranks']:5} {grid:>16} {r['step_ms']:9.3f} {r['timed_step_ms']:7.3f} "
          f"{r['halo_ms']:7.3f} {r['reduced_ms']:8.3f} {r['waiting_ms']:8.3f} {r['compute_ms']:8.3f} {eff:>6}")

if a.png:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    groups = sorted({(r["mode"], r["precision"]) for r in rows})
    fig, axes = plt.subplots(1, len(groups), figsize=(4.2 * len(groups), 3.8), squeeze=False)
    for ax, (mode, prec) in zip(axes[0], groups):
        g = [r for r in rows if r["mode"] == mode and r["precision"] == prec]
        x = range(len(g))
        parts = [("compute_ms", "kernels"), ("halo_ms", "ghost planes"), ("waiting_ms", "waiting for the reduced systems")]
        bottom = [0.0] * len(g)
        for key, label in parts:
            vals = [r[key] for r in g]
            ax.bar(x, vals, bottom=bottom, label=label)
            bottom = [b + v for b, v in zip(bottom, vals)]
        ax.set_xticks(list(x))
        ax.set_xticklabels([f"{r['ranks']} ({100 * r.get('efficiency', 0):.0f}%)" for r in g])
        ax.set_xlabel("ranks (efficiency)")
        ax.set_ylabel("ms per step")
        size = f"{g[0]['n']}^3 per rank" if mode == "weak" else "x".join(map(str, g[0]["grid"]))
        ax.set_title(f"{mode} scaling, {prec}, {size}")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(a.png, dpi=110)
