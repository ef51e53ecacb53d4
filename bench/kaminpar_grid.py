"""KaMinPar's default on the host's cores, for the cut of a grid3d too large to build as METIS
text: grid3d S is written once as a ParHIP binary file (64-bit offsets, 32-bit neighbour ids),
a block of vertices at a time, then loaded and partitioned by KaMinPar at each K. Prints one
row per K: seconds of the partition call, edgecut, imbalance.

    python bench/kaminpar_grid.py --side 1261 --k 64,1024 --file /tmp/grid1261.parhip
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.largest import grid3d_rows  # noqa: E402

BLOCK = 1 << 25  # vertices whose rows are written at a time
HEADER = 24  # ParHIP: version, vertices, adjacency entries (uint64 each)
UNWEIGHTED_64BIT_OFFSETS = 1 | 2 | 8 | 16 | 32  # version: a set flag means absent or 32-bit


def _pwrite(fd: int, data: np.ndarray, position: int) -> None:
    view = memoryview(np.ascontiguousarray(data)).cast("B")
    while view:
        written = os.pwrite(fd, view[:1 << 30], position)
        view, position = view[written:], position + written


def write_parhip(path: str, side: int) -> None:
    """Grid3d ``side`` in ParHIP's binary format, where each vertex's offset is the byte
    position of its first neighbour in the file. Written under a temporary name, so a killed
    write leaves no file behind."""
    n = side**3
    m = 6 * n - 6 * side * side
    base = HEADER + 8 * (n + 1)
    fd = os.open(path + ".tmp", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        _pwrite(fd, np.array([UNWEIGHTED_64BIT_OFFSETS, n, m], np.uint64), 0)
        done = 0
        for lo in range(0, n, BLOCK):
            hi = min(lo + BLOCK, n)
            xadj, adjncy = grid3d_rows(side, lo, hi, np.int32)
            offsets = (base + 4 * (done + xadj)).astype(np.uint64)
            _pwrite(fd, offsets if hi == n else offsets[:-1], HEADER + 8 * lo)
            _pwrite(fd, adjncy, base + 4 * done)
            done += len(adjncy)
    finally:
        os.close(fd)
    os.replace(path + ".tmp", path)


def grid3d_edgecut(part: np.ndarray, side: int) -> int:
    """The edges of grid3d ``side`` whose ends ``part`` puts in different parts, counted along
    each axis of the part laid out as the grid (no adjacency needed)."""
    grid = part.reshape(side, side, side)
    return sum(int(np.count_nonzero(np.diff(grid, axis=axis))) for axis in range(3))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--side", type=int, default=300)
    ap.add_argument("--k", default="64")
    ap.add_argument("--file", help="the ParHIP file (written where it does not exist)")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--eps", type=float, default=0.03)
    args = ap.parse_args()
    import kaminpar

    path = args.file or f"/tmp/grid3d-{args.side}.parhip"
    if not os.path.exists(path):
        start = time.perf_counter()
        write_parhip(path, args.side)
        print(f"{path}: grid3d {args.side} written in {time.perf_counter() - start:.1f} s",
              flush=True)
    start = time.perf_counter()
    graph = kaminpar.load_graph(path, kaminpar.GraphFileFormat.PARHIP)
    print(f"loaded {graph.n()} vertices, {graph.m() // 2} edges in "
          f"{time.perf_counter() - start:.1f} s", flush=True)
    solver = kaminpar.KaMinPar(args.threads, kaminpar.default_context())
    print("| KaMinPar threads | k | seconds | edgecut | imbalance |\n|---|---|---|---|---|",
          flush=True)
    for k in (int(x) for x in args.k.split(",")):
        start = time.perf_counter()
        part = solver.compute_partition(graph, k, args.eps)
        seconds = time.perf_counter() - start
        part = np.asarray(part, dtype=np.int16 if k <= 1 << 15 else np.int32)
        imbalance = np.bincount(part, minlength=k).max() * k / len(part)
        print(f"| {args.threads} | {k} | {seconds:.2f} | {grid3d_edgecut(part, args.side)} "
              f"| {imbalance:.3f} |", flush=True)
        del part


if __name__ == "__main__":
    main()
