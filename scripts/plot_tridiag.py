#!/usr/bin/env python3
"""Plot `adi3d bench tridiag --json` output: GPU time per workload and solver, one panel per precision.

usage: scripts/plot_tridiag.py [docs/perf/tridiag_h100.json] [docs/perf/tridiag_h100.png]
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else "docs/perf/tridiag_h100.json"
    dst = sys.argv[2] if len(sys.argv) > 2 else "docs/perf/tridiag_h100.png"
    with open(src) as f:
        data = json.load(f)
    rows = [r for r in data["rows"] if not r["solver"].startswith("cpu-")]
    workloads = list(dict.fromkeys(r["workload"] for r in rows))
    solvers = list(dict.fromkeys(r["solver"] for r in rows))
    fig, axes = plt.subplots(1, 2, figsize=(14, 5), sharey=False)
    width = 0.8 / len(solvers)
    for ax, prec in zip(axes, ["float", "double"]):
        for k, s in enumerate(solvers):
            xs, ys = [], []
            for i, w in enumerate(workloads):
                hit = [r for r in rows if r["workload"] == w and r["solver"] == s and r["precision"] == prec]
                if hit:
                    xs.append(i + k * width)
                    ys.append(hit[0]["pct_copy_bw"])
            ax.bar(xs, ys, width, label=s)
        ax.set_xticks([i + 0.4 - width / 2 for i in range(len(workloads))])
        ax.set_xticklabels(workloads, rotation=30)
        ax.set_ylabel("% of device-to-device copy bandwidth (floor: 5 arrays)")
        ax.set_title(f"{prec}, {data['device']}")
        ax.grid(axis="y", alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.suptitle(f"batched tridiagonal solve, {data['date']} (copy {data['copy_bandwidth_gbs']:.0f} GB/s)")
    fig.tight_layout()
    fig.savefig(dst, dpi=110)
    print("wrote", dst)


if __name__ == "__main__":
    main()
