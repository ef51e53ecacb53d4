"""Time the ranks' read of a METIS graph file in byte ranges (``gpmetis.distributed.read``):
the median over ``--repeat`` reads, each from a barrier to the last rank's pieces, printed by
rank 0 with the file's GB/s. Run it under ``mpiexec -n N`` for N ranks; without ``mpiexec`` it
is one rank. ``--engine gpu`` parses each rank's lines on its GPU (the fast path of
``io/metis_gpu``), ``cpu`` on the host. ``--grid S`` first writes grid3d S (S^3 vertices,
unweighted) as FILE where FILE does not exist (side 460: 5.18 GB).

    mpiexec -n 2 python3 bench/read_dist.py FILE [--repeat 3] [--engine gpu] [--grid 460]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.largest import grid3d_rows  # noqa: E402
from gpmetis.distributed.comm import Comm  # noqa: E402
from gpmetis.distributed.read import read_pieces  # noqa: E402
from gpmetis.io.partfile import partition_bytes  # noqa: E402

BLOCK = 1 << 23  # vertices whose lines are formatted at a time
WRITERS = 6  # blocks formatted at once


def _grid3d_lines(side: int, lo: int, hi: int) -> bytearray:
    """The METIS lines of grid3d ``side``'s vertices lo..hi-1: their neighbours (1-based)
    formatted one per line, then every line break that does not end a vertex's row made a
    blank."""
    xadj, adjncy = grid3d_rows(side, lo, hi, np.int64)
    adjncy += 1
    text = partition_bytes(adjncy)
    chars = np.frombuffer(text, np.uint8)
    breaks = np.flatnonzero(chars == ord("\n"))
    inside = np.ones(len(adjncy), dtype=bool)
    inside[xadj[1:] - 1] = False  # (every grid vertex has a neighbour)
    chars[breaks[inside]] = ord(" ")
    return text


def write_grid3d(path: str, side: int) -> None:
    """Write grid3d ``side`` as an unweighted METIS graph file, WRITERS blocks of vertices
    formatted at once on threads and written in order, under a temporary name (a killed
    write leaves no file behind)."""
    n = side**3
    blocks = [(lo, min(lo + BLOCK, n)) for lo in range(0, n, BLOCK)]
    with open(path + ".tmp", "wb") as f, ThreadPoolExecutor(WRITERS) as pool:
        f.write(f"{n} {3 * side * side * (side - 1)}\n".encode())
        pending = deque()
        for lo, hi in blocks:
            pending.append(pool.submit(_grid3d_lines, side, lo, hi))
            if len(pending) == WRITERS:
                f.write(pending.popleft().result())
        while pending:
            f.write(pending.popleft().result())
    os.replace(path + ".tmp", path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--engine", choices=("cpu", "gpu"), default="cpu")
    parser.add_argument("--grid", type=int, help="write grid3d of this side as FILE first "
                                                 "where FILE does not exist")
    args = parser.parse_args()
    comm = Comm.world()
    if args.grid and comm.root and not os.path.exists(args.file):
        start = time.perf_counter()
        write_grid3d(args.file, args.grid)
        print(f"{args.file}: grid3d {args.grid} written in {time.perf_counter() - start:.1f} s",
              flush=True)
    comm.allreduce_sum(np.zeros(1, np.int64))  # (the others wait for the file)
    times = []
    for _ in range(args.repeat):
        comm.allreduce_sum(np.zeros(1, np.int64))  # a barrier
        start = time.perf_counter()
        piece = read_pieces(comm, args.file, args.engine)
        comm.allreduce_sum(np.zeros(1, np.int64))
        times.append(time.perf_counter() - start)
        del piece
    if comm.root:
        size = os.path.getsize(args.file)
        best = statistics.median(times)
        print(f"{args.file}: {size / 1e9:.2f} GB read by {comm.size} rank(s) "
              f"({args.engine}) in {best:.2f} s "
              f"(median of {args.repeat}: {', '.join(f'{t:.2f}' for t in times)}), "
              f"{size / 1e9 / best:.2f} GB/s", flush=True)


if __name__ == "__main__":
    main()
