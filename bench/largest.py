"""The largest graph one GPU partitions: a grid3d of side S (S^3 vertices, 3 S^2 (S-1) edges)
built in memory as CSR arrays, validated by ``Graph.from_csr`` and partitioned by the gpu
engine through the Python API at each K. Prints one row per K: engine time, cut, imbalance,
peak GPU memory (CuPy's pool, the process's high-water mark) against the CSR as the engine
holds it (xadj int64; adjncy, adjwgt, vwgt int32).

    python bench/largest.py --side 900 --k 64,1024 [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

import gpmetis
from gpmetis.errors import PartitionError
from gpmetis.graph import Graph

CHUNK = 1 << 21  # vertices whose rows one thread fills at once


def grid3d_csr(side: int) -> tuple[np.ndarray, np.ndarray]:
    """(xadj int64, adjncy int32) of the side^3 grid (``grid3d_rows`` of all its vertices)."""
    return grid3d_rows(side, 0, side**3, np.int32)


def grid3d_rows(side: int, lo: int, hi: int, dtype) -> tuple[np.ndarray, np.ndarray]:
    """(xadj int64 from 0, adjncy of ``dtype``: global ids) of the side^3 grid's vertices
    lo..hi-1, rows in increasing neighbour order, filled a chunk of vertices at a time on the
    host's threads (no per-edge temporaries of the whole block)."""
    steps = np.array([-side * side, -side, -1, 1, side, side * side], dtype=np.int64)
    starts = range(lo, hi, CHUNK)
    xadj = np.zeros(hi - lo + 1, dtype=np.int64)

    def degrees(a: int) -> None:
        v = np.arange(a, min(a + CHUNK, hi), dtype=np.int64)
        out = xadj[a - lo + 1:a - lo + 1 + len(v)]
        out[:] = 6
        for coordinate in (v % side, v // side % side, v // (side * side)):
            out -= coordinate == 0
            out -= coordinate == side - 1

    def fill(a: int) -> None:
        v = np.arange(a, min(a + CHUNK, hi), dtype=np.int64)
        adjncy[xadj[a - lo]:xadj[a - lo + len(v)]] = (v[:, None] + steps)[_neighbours_ok(v, side)]

    with ThreadPoolExecutor(os.cpu_count()) as pool:
        list(pool.map(degrees, starts))
        np.cumsum(xadj, out=xadj)
        adjncy = np.empty(int(xadj[-1]), dtype=dtype)
        list(pool.map(fill, starts))
    return xadj, adjncy


def _neighbours_ok(v: np.ndarray, side: int) -> np.ndarray:
    """(len(v), 6) bools: which of the steps -z, -y, -x, +x, +y, +z stay in the grid."""
    x, y, z = v % side, v // side % side, v // (side * side)
    return np.stack([z > 0, y > 0, x > 0, x < side - 1, y < side - 1, z < side - 1], axis=1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--side", type=int, default=900)
    ap.add_argument("--k", default="64,1024")
    ap.add_argument("--json")
    args = ap.parse_args()
    start = time.perf_counter()
    xadj, adjncy = grid3d_csr(args.side)
    built = time.perf_counter()
    graph = Graph.from_csr(xadj, adjncy, name=f"grid3d {args.side}")
    del xadj, adjncy
    checked = time.perf_counter()
    n, nnz = graph.nvtxs, len(graph.adjncy)
    csr = 8 * (n + 1) + 4 * nnz * 2 + 4 * n
    print(f"grid3d {args.side}: {n} vertices, {nnz // 2} edges (2m = {nnz}); built in "
          f"{built - start:.1f} s, validated in {checked - built:.1f} s; CSR {csr / 1e9:.1f} GB")
    print("| k | engine s | edgecut | imbalance | peak GPU GB | peak / CSR |")
    print("|---|---|---|---|---|---|")
    rows = []
    for k in (int(x) for x in args.k.split(",")):
        try:
            result = gpmetis.partition(graph, k, engine="gpu")
        except PartitionError as exc:  # the graph does not fit at this k
            print(f"| {k} | {exc} |", flush=True)
            continue
        peak = result.stats["peak_gpu_bytes"]
        rows.append({"side": args.side, "nvtxs": n, "nedges": nnz // 2, "k": k,
                     "seconds": result.seconds, "edgecut": result.edgecut,
                     "imbalance": result.imbalance, "peak_gpu_bytes": peak, "csr_bytes": csr})
        print(f"| {k} | {result.seconds:.2f} | {result.edgecut} | {result.imbalance:.3f} | "
              f"{peak / 1e9:.1f} | {peak / csr:.2f} |", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
