"""The scaling table and plot from ``bench/dist.py --json`` files (``make bench-scaling``):
strong scaling per graph and k (engine seconds, speed-up over the fewest ranks, cut against
theirs, imbalance, the most peak GPU memory of a rank), weak scaling (``--weak``: engine
seconds and each level's seconds), and with ``--plot`` engine seconds against GPUs, log-log,
one line per graph and k (matplotlib, of the ``bench`` extra).

    python bench/scaling_report.py dist-*.json --weak weak-*.json --plot scaling.svg
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict


def _rows(paths: list[str]) -> list[dict]:
    """Every row of the files; of the rows of one graph, k and rank count, the last (the
    first k=64 run of a process also compiles its kernels)."""
    last = {}
    for path in paths:
        with open(path) as f:
            for row in json.load(f):
                last[row["side"], row["k"], row["ranks"]] = row
    return [last[key] for key in sorted(last)]


def _edges(side: int, ranks: int = 1) -> str:
    """Grid3d ``side``'s edges (per rank), in billions or millions."""
    edges = 3 * side * side * (side - 1) / ranks
    return f"{edges / 1e9:.2f}B" if edges >= 1e8 else f"{edges / 1e6:.2f}M"


def strong_table(rows: list[dict]) -> list[str]:
    lines = ["| graph | edges | k | GPUs | engine s | speed-up | edgecut | cut / fewest GPUs' "
             "| imbalance | peak GPU GB (most of a rank) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    series = defaultdict(list)
    for row in rows:
        series[row["side"], row["k"]].append(row)
    for (side, k), runs in sorted(series.items()):
        first = runs[0]
        for row in runs:
            lines.append(
                f"| grid3d {side} | {_edges(side)} | {k} | {row['ranks']} | "
                f"{row['seconds']:.2f} | {first['seconds'] / row['seconds']:.2f}x over "
                f"{first['ranks']} | {row['edgecut']:,} | {row['edgecut'] / first['edgecut']:.4f} "
                f"| {row['imbalance']:.3f} | {max(row['peak_gpu_bytes']) / 1e9:.1f} |")
    return lines


def weak_table(rows: list[dict]) -> list[str]:
    lines = ["| GPUs | graph | edges per GPU | k | engine s | coarsening s | refinement s "
             "| seconds per level |", "|---|---|---|---|---|---|---|---|"]
    for row in sorted(rows, key=lambda r: r["ranks"]):
        levels = ", ".join(f"{level['seconds']:.2f}" for level in row.get("levels", []))
        phases = " | ".join("" if row.get(p) is None else f"{row[p]:.2f}"
                            for p in ("coarsening", "refinement"))
        lines.append(f"| {row['ranks']} | grid3d {row['side']} | "
                     f"{_edges(row['side'], row['ranks'])} | {row['k']} | "
                     f"{row['seconds']:.2f} | {phases} | {levels} |")
    return lines


def plot(rows: list[dict], weak: list[dict], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4.5))
    series = defaultdict(list)
    for row in rows:
        series[f"grid3d {row['side']}, k={row['k']}"].append(row)
    if weak:
        first = min(weak, key=lambda r: r["ranks"])
        series[f"weak, {_edges(first['side'], first['ranks'])} edges per GPU"] = sorted(
            weak, key=lambda r: r["ranks"])
    for label, runs in series.items():
        ax.plot([r["ranks"] for r in runs], [r["seconds"] for r in runs], marker="o",
                label=label)
    ax.set_xscale("log", base=2)
    gpus = sorted({r["ranks"] for runs in series.values() for r in runs})
    ax.set_xticks(gpus, [str(g) for g in gpus])
    ax.set_yscale("log")
    ax.set_xlabel("GPUs")
    ax.set_ylabel("engine seconds")
    ax.legend(fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="*", help="strong scaling: dist.py --json files")
    ap.add_argument("--weak", nargs="*", default=[], help="weak scaling: dist.py --json files")
    ap.add_argument("--plot", help="write the log-log plot here (.svg or .png)")
    args = ap.parse_args()
    rows, weak = _rows(args.files), _rows(args.weak)
    print("\n".join(strong_table(rows)))
    if weak:
        print()
        print("\n".join(weak_table(weak)))
    if args.plot:
        plot(rows, weak, args.plot)
        print(f"\n{args.plot}: engine seconds against GPUs")


if __name__ == "__main__":
    main()
