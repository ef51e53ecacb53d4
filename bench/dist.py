"""Several GPUs against one: grid3d S (S^3 vertices) partitioned at each K, by one process
through ``gpmetis.partition`` (the single-GPU engine), or under ``mpiexec -n N`` by N ranks that
each build their block of z-planes and call ``gpmetis.distributed.partition_distributed``
(each rank on the GPU of its local rank). Prints one row per K: ranks, engine seconds (rank
0's driver), wall seconds of the call, edgecut, imbalance, peak GPU memory per rank.

    python bench/dist.py --side 300 --k 64
    mpiexec -n 2 python bench/dist.py --side 300 --k 64

``make bench-dist`` and ``make bench-scaling`` run it over ranks and sizes.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.largest import _neighbours_ok, grid3d_csr  # noqa: E402
from gpmetis.errors import GpmetisError  # noqa: E402

CHUNK = 1 << 24


def grid3d_block(side: int, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
    """(xadj int64 from 0, adjncy int64 global ids) of the grid's vertices lo..hi-1."""
    steps = np.array([-side * side, -side, -1, 1, side, side * side], dtype=np.int64)
    xadj = np.zeros(hi - lo + 1, dtype=np.int64)
    for a in range(lo, hi, CHUNK):
        ok = _neighbours_ok(np.arange(a, min(a + CHUNK, hi), dtype=np.int64), side)
        xadj[a - lo + 1:a - lo + 1 + len(ok)] = ok.sum(axis=1)
    np.cumsum(xadj, out=xadj)
    adjncy = np.empty(int(xadj[-1]), dtype=np.int64)
    for a in range(lo, hi, CHUNK):
        v = np.arange(a, min(a + CHUNK, hi), dtype=np.int64)
        ok = _neighbours_ok(v, side)
        adjncy[xadj[a - lo]:xadj[a - lo + len(v)]] = (v[:, None] + steps)[ok]
    return xadj, adjncy


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--side", type=int, default=300)
    ap.add_argument("--k", default="64")
    ap.add_argument("--engine", default="gpu")
    ap.add_argument("--json")
    args = ap.parse_args()
    from gpmetis.distributed.comm import Comm, launched_ranks

    side, n = args.side, args.side**3
    rows = []
    if launched_ranks() > 1:
        from gpmetis.distributed import partition_distributed

        comm = Comm.world()
        planes = np.linspace(0, side, comm.size + 1).astype(np.int64)
        vtxdist = planes * side * side
        xadj, adjncy = grid3d_block(side, int(vtxdist[comm.rank]), int(vtxdist[comm.rank + 1]))
        ranks = comm.size

        def run(k: int):
            out = partition_distributed(vtxdist, xadj, adjncy, k, comm=comm,
                                        engine=args.engine)
            return out.seconds, out.edgecut, out.imbalance, out.distributed["peak_gpu_bytes"]
    else:
        import gpmetis
        from gpmetis.graph import Graph

        comm, ranks = Comm(), 1
        graph = Graph.from_csr(*grid3d_csr(side), name=f"grid3d {side}")

        def run(k: int):
            out = gpmetis.partition(graph, k, engine=args.engine)
            return out.seconds, out.edgecut, out.imbalance, [out.stats["peak_gpu_bytes"]]

    if comm.root:
        print(f"grid3d {side}: {n} vertices, {3 * side * side * (side - 1)} edges")
        print("| ranks | k | engine s | wall s | edgecut | imbalance | peak GPU GB per rank |")
        print("|---|---|---|---|---|---|---|")
    for k in (int(x) for x in args.k.split(",")):
        start = time.perf_counter()
        try:
            seconds, cut, imbalance, peaks = run(k)
        except GpmetisError as exc:  # e.g. the graph does not fit one GPU
            if comm.root:
                print(f"| {ranks} | {k} | {exc} |", flush=True)
            continue
        wall = time.perf_counter() - start
        if comm.root:
            rows.append({"side": side, "ranks": ranks, "k": k, "seconds": seconds,
                         "wall": wall, "edgecut": cut, "imbalance": imbalance,
                         "peak_gpu_bytes": peaks})
            per = " / ".join(f"{p / 1e9:.1f}" for p in peaks)
            print(f"| {ranks} | {k} | {seconds:.2f} | {wall:.2f} | {cut} | {imbalance:.3f} | "
                  f"{per} |", flush=True)
    if args.json and comm.root:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
