"""SPAC edge partitioning (``gpmetis -edgepart``) against SPAC with METIS 5.1 and a streaming
greedy, in one run.

For every graph and k: our replication factor, edge balance and time (``partition_edges``, the
graph in memory; the best of --repeat runs after a warm-up); SPAC + METIS 5.1 (the paper's
pipeline: the split graph built here, written as a METIS file, partitioned by METIS's
``gpmetis`` binary, each edge given its lower endpoint's slot's part; METIS's "Partitioning"
time and the whole command's wall time); PowerGraph's greedy vertex-cut (edges streamed in file
order; graphs up to --greedy-max edges). Graphs: the fixtures' METIS graphs, and --generated
KIND:SIZE graphs from gen_graph.py (e.g. rmat:16 for a power-law graph with hubs).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import ROOT, generated_graph, geomean, metis_binary, print_table

TOKENS_PER_CHUNK = 1 << 22


def write_split_graph(path: Path, split) -> None:
    """The split graph (cpu backend) as a METIS file: fmt 011 (slot weights = edge loads, edge
    weights), tokens turned into text a chunk of rows at a time."""
    g = split.graph
    n = g.nvtxs
    degree = np.diff(g.xadj)
    per_row = 1 + 2 * degree
    ends = np.cumsum(per_row)
    with open(path, "wb") as f:
        f.write(f"{n} {g.nnz // 2} 011\n".encode())
        first = 0
        while first < n:
            base = ends[first - 1] if first else 0
            last = int(np.searchsorted(ends, base + TOKENS_PER_CHUNK, side="right"))
            last = max(last, first + 1)
            rows = np.arange(first, last)
            length = per_row[rows]
            row_of = np.repeat(rows, length)
            offset = np.arange(int(length.sum())) - np.repeat(np.cumsum(length) - length, length)
            entry = g.xadj[row_of] + (offset - 1) // 2
            tokens = np.where(offset == 0, g.vwgt[row_of],
                              np.where(offset % 2 == 1, g.adjncy[entry] + 1, g.adjwgt[entry]))
            seps = np.full(len(tokens), ord(" "), np.uint8)
            seps[np.cumsum(length) - 1] = ord("\n")
            f.write(_ascii(tokens, seps))
            first = last


def _ascii(values: np.ndarray, seps: np.ndarray) -> bytes:
    """Decimal text of non-negative integers, each followed by its separator byte."""
    values = values.astype(np.int64)
    width = 11
    digits = np.zeros((len(values), width + 1), np.uint8)
    v = values.copy()
    for j in range(width - 1, -1, -1):
        digits[:, j] = 48 + v % 10
        v //= 10
    digits[:, width] = seps
    ndigits = np.floor(np.log10(np.maximum(values, 1))).astype(np.int64) + 1
    keep = np.arange(width + 1)[None, :] >= (width - ndigits)[:, None]
    return digits[keep].tobytes()


def split_graph_file(graph, path: Path):
    """The split graph (cpu backend), written to ``path``."""
    from gpmetis.backend import get_backend
    from gpmetis.edge_partitioning.split_graph import build_split_graph

    loads = graph.adjwgt.astype(np.int32) if graph.has_adjwgt else None
    split = build_split_graph(get_backend("cpu"), graph.xadj, graph.adjncy, loads)
    write_split_graph(path, split)
    return split


def spac_metis(graph, split, path: Path, k: int, prefix: list[str]) -> dict:
    """SPAC + METIS 5.1 on the split graph written at ``path``: replication factor, edge
    balance, METIS's partitioning time and the wall time of METIS's command."""
    from gpmetis.backend import get_backend
    from gpmetis.edge_partitioning.assign import EdgeSlots, edge_metrics

    be = get_backend("cpu")
    loads = graph.adjwgt.astype(np.int32) if graph.has_adjwgt else None
    start = time.perf_counter()
    proc = subprocess.run([*prefix, str(path), str(k)], capture_output=True, text=True,
                          check=True)
    wall = time.perf_counter() - start
    seconds = float(proc.stdout.split("Partitioning:")[1].split()[0])
    split_part = np.loadtxt(f"{path}.part.{k}", dtype=np.int32)
    edges = EdgeSlots.of(be, split.src, graph.adjncy, split.partner, loads)
    part = split_part[edges.slot]
    with_edges = int((np.diff(graph.xadj) > 0).sum())
    m = edge_metrics(be, edges, split.src, part, k, 0, with_edges)
    return {"rf": m.replication_factor, "balance": m.edge_balance, "seconds": seconds,
            "wall": wall}


def greedy(graph, k: int) -> dict:
    """PowerGraph's greedy vertex-cut, edges streamed in file order: a part both endpoints
    have (least loaded); else one of the endpoint with more edges left; else one of either
    endpoint; else the least loaded part. Parts at the ufactor-30 capacity are left out (the
    least loaded part when that leaves none), so its balance matches ours."""
    start = time.perf_counter()
    capacity = max(int(1.03 * graph.nedges / k), -(-graph.nedges // k))
    src = graph.sources()
    upper = src < graph.adjncy
    us, vs = src[upper].tolist(), graph.adjncy[upper].tolist()
    left = np.diff(graph.xadj).tolist()
    parts: list[set[int]] = [set() for _ in range(graph.nvtxs)]
    load = [0] * k
    out = np.empty(len(us), np.int32)
    for e, (u, v) in enumerate(zip(us, vs)):
        a, b = parts[u], parts[v]
        both = a & b
        if both:
            choice = both
        elif a and b:
            choice = a if left[u] >= left[v] else b
        else:
            choice = a or b or range(k)
        choice = [q for q in choice if load[q] < capacity] or range(k)
        p = min(choice, key=lambda q: (load[q], q))
        load[p] += 1
        a.add(p)
        b.add(p)
        left[u] -= 1
        left[v] -= 1
        out[e] = p
    seconds = time.perf_counter() - start
    copies = sum(len(s) for s in parts)
    vertices = sum(1 for s in parts if s)
    return {"rf": copies / vertices, "balance": max(load) * k / len(us), "seconds": seconds}


def main() -> None:
    import gpmetis

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--engine", default="cpu")
    parser.add_argument("--ks", default="8,64")
    parser.add_argument("--fixtures", default="all", help="comma-separated names, 'all' or ''")
    parser.add_argument("--generated", default="rmat:16", help="KIND:SIZE,... from gen_graph.py")
    parser.add_argument("--workdir", default=str(ROOT / ".bench"))
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--no-metis", action="store_true", help="skip SPAC + METIS 5.1")
    parser.add_argument("--metis-max", type=int, default=50_000_000,
                        help="run SPAC + METIS only on graphs of at most this many edges")
    parser.add_argument("--greedy-max", type=int, default=2_000_000,
                        help="run the greedy only on graphs of at most this many edges")
    args = parser.parse_args()
    ks = [int(k) for k in args.ks.split(",")]
    graphs = []
    if args.fixtures:
        names = ([p.stem for p in sorted((ROOT / "fixtures").glob("*.graph"))]
                 if args.fixtures == "all" else args.fixtures.split(","))
        graphs += [(name, ROOT / "fixtures" / f"{name}.graph") for name in names]
    for spec in filter(None, args.generated.split(",")):
        kind, size = spec.split(":")
        graphs.append((f"{kind} {size}", generated_graph(kind, int(size), Path(args.workdir))))
    metis = None if args.no_metis else metis_binary()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, path in graphs:
            graph = gpmetis.read_graph(path)
            split = None
            if metis and graph.nedges <= args.metis_max:
                split_path = Path(tmp) / "split.graph"
                split = split_graph_file(graph, split_path)
            for k in ks:
                if k > graph.nedges:
                    continue
                gpmetis.partition_edges(graph, k, engine=args.engine)  # warm-up
                runs = [gpmetis.partition_edges(graph, k, engine=args.engine)
                        for _ in range(args.repeat)]
                ours = min(runs, key=lambda r: r.seconds)
                row = {"graph": name, "m": graph.nedges, "k": k, "rf": ours.replication_factor,
                       "bal": ours.edge_balance, "s": ours.seconds,
                       "build_s": ours.stats["build_seconds"],
                       "cut": ours.stats["split_graph"]["dominant_edges_cut"]}
                if split is not None:
                    ref = spac_metis(graph, split, split_path, k, metis)
                    row |= {"metis_rf": ref["rf"], "metis_bal": ref["balance"],
                            "metis_s": ref["seconds"], "metis_wall": ref["wall"],
                            "rf_ratio": ours.replication_factor / ref["rf"],
                            "speedup": ref["seconds"] / ours.seconds}
                if graph.nedges <= args.greedy_max:
                    g = greedy(graph, k)
                    row |= {"greedy_rf": g["rf"], "greedy_bal": g["balance"]}
                rows.append(row)
                print(row, file=sys.stderr, flush=True)
    print_table(rows, [("graph", "graph", ""), ("m", "m", "d"), ("k", "k", "d"),
                       ("rf", "ours RF", ".4f"), ("bal", "bal", ".3f"), ("s", "ours s", ".3f"),
                       ("cut", "dom. cut", "d"),
                       ("metis_rf", "METIS RF", ".4f"), ("metis_bal", "bal", ".3f"),
                       ("metis_s", "METIS s", ".2f"), ("metis_wall", "METIS wall s", ".2f"),
                       ("rf_ratio", "RF / METIS", ".3f"), ("speedup", "speed-up", ".1f"),
                       ("greedy_rf", "greedy RF", ".4f"), ("greedy_bal", "bal", ".3f")])
    print()
    for k in ks:
        print(f"geometric mean RF / METIS k={k}: "
              f"{geomean(r.get('rf_ratio') for r in rows if r['k'] == k):.4f}")
    print(f"geometric mean RF / METIS all: {geomean(r.get('rf_ratio') for r in rows):.4f}")
    greedy_ratio = [r["rf"] / r["greedy_rf"] for r in rows if r.get("greedy_rf")]
    print(f"geometric mean RF / greedy: {geomean(greedy_ratio):.4f}")


if __name__ == "__main__":
    main()
