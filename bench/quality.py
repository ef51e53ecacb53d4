"""``make quality``: our presets' edge cuts against METIS 5.1, pymetis, KaMinPar's default and
strong presets, side by side in one run.

Graphs: the shared graphs (fixtures listed in ``fixtures/metis_cuts.json``) and generated ones of
several kinds and seeds (``--generated kind:size:seed,...``). For each graph and k: every
method's cut, imbalance (heaviest part over the average) and time (METIS: its own Partitioning
line; pymetis and KaMinPar: the call; ours: the engine's time, metrics excluded, on the gpu
engine the faster of two runs, so that CuPy's compiles of a kernel's first use, once per
installation, are not counted). Then, per
method, the geometric means of its cut over METIS 5.1's and over KaMinPar strong's, the runs
above 1.05x METIS, the largest imbalance and the total time. Peers that are not installed are
skipped and named. ``--json`` writes every row.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from bench.common import ROOT, generated_graph, geomean, metis_peer, print_table

# Small enough for the 2-core development machine (about 2^15 vertices); the GPU machine runs
# larger ones with --generated
GENERATED = ("delaunay:15:1,delaunay:15:2,rgg:15:1,rgg:15:2,grid3d:32:1,rmat:14:1,rmat:14:2,"
             "road:15:1,road:15:2")
EPS = 0.03  # KaMinPar's imbalance, as METIS's ufactor 30
PEERS = ("metis", "pymetis", "kaminpar", "kaminpar_strong")
OVER = 1.05  # a run above this many times METIS's cut is counted


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--engine", default="cpu")
    parser.add_argument("--presets", default="default,strong")
    parser.add_argument("--ks", default="2,8,64,256")
    parser.add_argument("--shared", default="all",
                        help="comma list of shared graph names, 'all' or 'none'")
    parser.add_argument("--generated", default=GENERATED,
                        help="comma list kind:size:seed, or 'none'")
    parser.add_argument("--threads", type=int, default=2, help="KaMinPar's threads")
    parser.add_argument("--workdir", default=str(ROOT / ".bench"))
    parser.add_argument("--json", default=None, help="write the rows here")
    args = parser.parse_args()
    ks = [int(k) for k in args.ks.split(",")]
    presets = args.presets.split(",")
    methods = [*PEERS, *presets]
    skipped: set[str] = set()
    rows = []
    for name, path in _graphs(args):
        for k in ks:
            row = {"graph": name, "k": k}
            _peers(row, path, k, args.threads, skipped)
            _ours(row, path, k, args.engine, presets)
            rows.append(row)
            print(json.dumps(row), file=sys.stderr, flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": rows, "skipped": sorted(skipped)},
                                              indent=1))
    for row in rows:
        for m in presets:
            row[f"{m}_x"] = _ratio(row, m, "metis")
        row["strong_x_kmp"] = _ratio(row, presets[-1], "kaminpar_strong")
    print_table(rows, [("graph", "graph", ""), ("k", "k", "d"),
                       *((f"{m}_cut", _label(m), "d") for m in methods),
                       *((f"{m}_x", f"{m} / METIS", ".3f") for m in presets),
                       ("strong_x_kmp", f"{presets[-1]} / KaMinPar strong", ".3f")])
    print()
    summary = []
    for m in methods:
        cuts = [r for r in rows if r.get(f"{m}_cut") is not None]
        if not cuts:
            continue
        summary.append({
            "method": _label(m),
            "x_metis": geomean(_ratio(r, m, "metis") for r in cuts),
            "x_kmp": geomean(_ratio(r, m, "kaminpar_strong") for r in cuts),
            "over": sum((_ratio(r, m, "metis") or 0) > OVER for r in cuts),
            "imb": max(r[f"{m}_imb"] for r in cuts),
            "seconds": sum(r[f"{m}_s"] for r in cuts),
        })
    print_table(summary, [("method", "method", ""), ("x_metis", "cut / METIS 5.1", ".3f"),
                          ("x_kmp", "cut / KaMinPar strong", ".3f"),
                          ("over", f"runs > {OVER}x METIS", "d"),
                          ("imb", "max imbalance", ".3f"), ("seconds", "total s", ".1f")])
    print(f"\n{len(rows)} runs; geometric means over the runs where both cuts are positive")
    if skipped:
        print(f"skipped (not installed): {', '.join(sorted(skipped))}")


def _graphs(args) -> list[tuple[str, Path]]:
    names = json.loads((ROOT / "fixtures" / "metis_cuts.json").read_text())["cuts"]
    if args.shared == "none":
        names = []
    elif args.shared != "all":
        names = args.shared.split(",")
    graphs = [(name, ROOT / "fixtures" / f"{name}.graph") for name in names]
    if args.generated != "none":
        for spec in args.generated.split(","):
            kind, size, seed = spec.split(":")
            path = generated_graph(kind, int(size), Path(args.workdir), int(seed))
            graphs.append((f"{kind} {size} s{seed}", path))
    return graphs


def _label(method: str) -> str:
    return {"metis": "METIS 5.1", "pymetis": "pymetis", "kaminpar": "KaMinPar",
            "kaminpar_strong": "KaMinPar strong"}.get(method, f"ours {method}")


def _ratio(row: dict, method: str, ref: str) -> float | None:
    a, b = row.get(f"{method}_cut"), row.get(f"{ref}_cut")
    return a / b if a and b else None


def _imbalance(part, vwgt: np.ndarray, k: int) -> float:
    pw = np.bincount(np.asarray(part), weights=vwgt, minlength=k)
    return float(pw.max() * k / vwgt.sum())


def _peers(row: dict, path: Path, k: int, threads: int, skipped: set[str]) -> None:
    import gpmetis

    graph = gpmetis.read_graph(path)
    vwgt = graph.vwgt[:, 0]
    if m := metis_peer(path, k, skipped):
        row.update(metis_cut=m["cut"], metis_imb=m["imbalance"], metis_s=m["seconds"])
    try:
        import pymetis

        start = time.perf_counter()
        ref = pymetis.part_graph(k, pymetis.CSRAdjacency(graph.xadj, graph.adjncy),
                                 vweights=vwgt if graph.has_vwgt else None,
                                 eweights=graph.adjwgt if graph.has_adjwgt else None,
                                 recursive=False)
        row.update(pymetis_s=time.perf_counter() - start, pymetis_cut=ref.edge_cuts,
                   pymetis_imb=_imbalance(ref.vertex_part, vwgt, k))
    except ImportError:
        skipped.add("pymetis")
    try:
        import kaminpar
    except ImportError:
        skipped.add("KaMinPar")
        return
    kg = kaminpar.load_graph(str(path), kaminpar.GraphFileFormat.METIS)
    for name, ctx in (("kaminpar", kaminpar.default_context()),
                      ("kaminpar_strong", kaminpar.strong_context())):
        solver = kaminpar.KaMinPar(threads, ctx)
        start = time.perf_counter()
        part = solver.compute_partition(kg, k, EPS)
        row.update({f"{name}_s": time.perf_counter() - start,
                    f"{name}_cut": kaminpar.edge_cut(kg, part),
                    f"{name}_imb": _imbalance(part, vwgt, k)})


def _ours(row: dict, path: Path, k: int, engine: str, presets: list[str]) -> None:
    import gpmetis

    graph = gpmetis.read_graph(path)
    for preset in presets:
        results = [gpmetis.partition(graph, k, engine=engine, preset=preset)
                   for _ in range(2 if engine == "gpu" else 1)]
        result = results[-1]
        row.update({f"{preset}_cut": result.edgecut, f"{preset}_imb": result.imbalance,
                    f"{preset}_s": min(r.seconds for r in results)})


if __name__ == "__main__":
    main()
