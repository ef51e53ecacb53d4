"""Several GPUs against one: grid3d S (S^3 vertices) partitioned at each K, by one process
through ``gpmetis.partition`` (the single-GPU engine), or under ``mpiexec -n N`` by N ranks that
each build their block of z-planes and call ``gpmetis.distributed.partition_distributed``
(each rank on the GPU of its local rank). Prints one row per K: ranks, engine seconds (rank
0's driver), wall seconds of the call, edgecut, imbalance, peak GPU memory per rank; ``--json``
also keeps each level's vertices, edges and seconds, and the phases' seconds.

``--path N`` takes the path 0 - 1 - ... - N-1 instead: two entries a vertex, the least memory
a graph of past 2^31 vertices can take. Its cut and heaviest part are counted again from the
whole part rank 0 holds, and ``--part-file`` writes that part as gpmetis's part file.

    python bench/dist.py --side 300 --k 64
    mpiexec -n 2 python bench/dist.py --side 300 --k 64
    mpiexec -n 2 python bench/dist.py --path 2200000000 --k 64 --part-file /tmp/path.part

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

from bench.largest import grid3d_csr, grid3d_rows  # noqa: E402
from gpmetis.errors import GpmetisError  # noqa: E402

CHUNK = 1 << 24


def path_block(n: int, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
    """(xadj int64 from 0, adjncy int64 global ids) of the path's vertices lo..hi-1: vertex v
    lists v - 1 and v + 1 where they lie in 0..n-1."""
    xadj = 2 * np.arange(hi - lo + 1, dtype=np.int64)
    both = np.empty(2 * (hi - lo), dtype=np.int64)  # each vertex's v - 1, v + 1
    for a in range(lo, hi, CHUNK):
        v = np.arange(a, min(a + CHUNK, hi), dtype=np.int64)
        both[2 * (a - lo):2 * (a - lo + len(v)):2] = v - 1
        both[2 * (a - lo) + 1:2 * (a - lo + len(v)):2] = v + 1
    head, tail = int(lo == 0 < hi), int(hi == n > lo)  # vertex 0 has no v - 1, n - 1 no v + 1
    xadj[1:] -= head
    xadj[-1] -= tail
    return xadj, both[head:len(both) - tail]


def path_counts(part: np.ndarray, k: int) -> tuple[int, int]:
    """(cut, heaviest part) of the path's ``part``, counted a chunk at a time."""
    cut, weights = 0, np.zeros(k, np.int64)
    for a in range(0, len(part), CHUNK):
        chunk = part[a:a + CHUNK + 1]
        cut += int(np.count_nonzero(chunk[1:] != chunk[:-1]))
        weights += np.bincount(chunk[:CHUNK], minlength=k)
    return cut, int(weights.max())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--side", type=int, default=300)
    ap.add_argument("--k", default="64")
    ap.add_argument("--path", type=int, help="the path of this many vertices, not grid3d")
    ap.add_argument("--part-file", help="(--path) write the part file here")
    ap.add_argument("--engine", default="gpu")
    ap.add_argument("--json")
    args = ap.parse_args()
    from gpmetis.distributed.comm import Comm, launched_ranks

    side = args.side
    n, m = (args.path, args.path - 1) if args.path else (side**3, 3 * side * side * (side - 1))
    name = f"path {n}" if args.path else f"grid3d {side}"
    rows = []
    if launched_ranks() > 1 or args.path:
        from gpmetis.distributed import partition_distributed

        comm = Comm.world()
        if args.path:
            vtxdist = np.linspace(0, n, comm.size + 1).astype(np.int64)
            block = path_block(n, int(vtxdist[comm.rank]), int(vtxdist[comm.rank + 1]))
        else:
            vtxdist = np.linspace(0, side, comm.size + 1).astype(np.int64) * side * side
            block = grid3d_rows(side, int(vtxdist[comm.rank]), int(vtxdist[comm.rank + 1]),
                                    np.int64)
        ranks = comm.size

        def run(k: int):
            out = partition_distributed(vtxdist, *block, k, comm=comm, engine=args.engine,
                                        name=name)
            if args.path and comm.root:
                check_path(out, k, args.part_file)
            return (out.seconds, out.edgecut, out.imbalance, out.distributed["peak_gpu_bytes"],
                    out.result.stats if comm.root else None)
    else:
        import gpmetis
        from gpmetis.graph import Graph

        comm, ranks = Comm(), 1
        graph = Graph.from_csr(*grid3d_csr(side), name=name)

        def run(k: int):
            out = gpmetis.partition(graph, k, engine=args.engine)
            return (out.seconds, out.edgecut, out.imbalance, [out.stats["peak_gpu_bytes"]],
                    out.stats)

    if comm.root:
        print(f"{name}: {n} vertices, {m} edges")
        print("| ranks | k | engine s | wall s | edgecut | imbalance | peak GPU GB per rank |")
        print("|---|---|---|---|---|---|---|")
    for k in (int(x) for x in args.k.split(",")):
        start = time.perf_counter()
        try:
            seconds, cut, imbalance, peaks, stats = run(k)
        except GpmetisError as exc:  # e.g. the graph does not fit one GPU
            if comm.root:
                print(f"| {ranks} | {k} | {exc} |", flush=True)
            continue
        wall = time.perf_counter() - start
        if comm.root:
            rows.append({"side": side, "ranks": ranks, "k": k, "seconds": seconds,
                         "wall": wall, "edgecut": cut, "imbalance": imbalance,
                         "peak_gpu_bytes": peaks, "levels": stats.get("levels", []),
                         **{p: stats.get(p) for p in ("coarsening", "initial", "refinement")}})
            per = " / ".join(f"{p / 1e9:.1f}" for p in peaks)
            print(f"| {ranks} | {k} | {seconds:.2f} | {wall:.2f} | {cut} | {imbalance:.3f} | "
                  f"{per} |", flush=True)
    if args.json and comm.root:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


def check_path(out, k: int, part_file: str | None) -> None:
    """Count the path's cut and heaviest part from the whole part again (SystemExit where they
    differ from the run's), and write it as the part file."""
    part = out.result.part
    cut, heaviest = path_counts(part, k)
    if cut != out.edgecut or abs(heaviest * k / len(part) - out.imbalance) > 1e-9:
        raise SystemExit(f"the part gives cut {cut}, heaviest part {heaviest}; the run said "
                         f"{out.edgecut}, imbalance {out.imbalance}")
    print(f"recounted from the part: cut {cut}, heaviest part {heaviest} (of {len(part)})")
    if part_file:
        from gpmetis.io import write_partition

        start = time.perf_counter()
        write_partition(part_file, part)
        print(f"{part_file}: {Path(part_file).stat().st_size} bytes in "
              f"{time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
