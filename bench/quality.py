"""``make quality``: our edge cut against METIS 5.1's on the shared graphs (and generated ones).

Shared graphs use METIS's reference cuts (k = 2, 8, 64) from the fixtures' table; generated graphs
(--generated, meant for the GPU machine) run METIS's binary in the same run at k = 8, 64, 256.
Prints graph, k, our cut, METIS's cut, ratio, imbalance and the geometric means.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import ROOT, generated_graph, geomean, metis_binary, print_table, run_metis

GENERATED = [("delaunay", 20), ("rgg", 20), ("grid3d", 100), ("rmat", 20), ("road", 20)]


def main() -> None:
    import gpmetis

    metis_cuts = json.loads((ROOT / "fixtures" / "metis_cuts.json").read_text())["cuts"]

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--engine", default="cpu")
    parser.add_argument("--generated", action="store_true")
    parser.add_argument("--workdir", default=str(ROOT / ".bench"))
    parser.add_argument("--ks", default="2,8,64")
    parser.add_argument("--ctype", default=None, help="coarsening scheme (default: the engine's)")
    args = parser.parse_args()
    ks = [int(k) for k in args.ks.split(",")]
    rows = []
    if args.generated:
        metis = metis_binary()
        for kind, size in GENERATED:
            path = generated_graph(kind, size, Path(args.workdir))
            graph = gpmetis.read_graph(path)
            for k in ks:
                ref = run_metis(metis, path, k)["cut"] if metis else None
                rows.append(_row(gpmetis, graph, f"{kind} {size}", k, ref, args))
    else:
        for name, cuts in metis_cuts.items():
            graph = gpmetis.read_graph(ROOT / "fixtures" / f"{name}.graph")
            for k in ks:
                ref = dict(zip((2, 8, 64), cuts)).get(k)
                rows.append(_row(gpmetis, graph, name, k, ref, args))
    print_table(rows, [("graph", "graph", ""), ("k", "k", "d"), ("cut", "our cut", "d"),
                       ("metis", "METIS cut", "d"), ("ratio", "ratio", ".3f"),
                       ("imb", "imbalance", ".3f"), ("seconds", "seconds", ".2f")])
    print()
    for k in ks:
        print(f"geometric mean ratio k={k}: {geomean(r['ratio'] for r in rows if r['k'] == k):.3f}")
    print(f"geometric mean ratio all: {geomean(r['ratio'] for r in rows):.3f}")
    print(f"worst: {max(rows, key=lambda r: r['ratio'] or 0)['graph']} "
          f"{max(r['ratio'] or 0 for r in rows):.3f}; max imbalance "
          f"{max(r['imb'] for r in rows):.4f}")


def _row(gpmetis, graph, name: str, k: int, ref: int | None, args) -> dict:
    start = time.perf_counter()
    result = gpmetis.partition(graph, k, engine=args.engine, ctype=args.ctype)
    return {"graph": name, "k": k, "cut": result.edgecut, "metis": ref,
            "ratio": result.edgecut / ref if ref else None, "imb": result.imbalance,
            "seconds": time.perf_counter() - start}


if __name__ == "__main__":
    main()
