"""Time the ranks' read of a METIS graph file in byte ranges (``gpmetis.distributed.read``):
the median over ``--repeat`` reads, each from a barrier to the last rank's pieces, printed by
rank 0 with the file's GB/s. Run it under ``mpiexec -n N`` for N ranks; without ``mpiexec`` it
is one rank. ``--engine gpu`` parses each rank's lines on its GPU (the fast path of
``io/metis_gpu``), ``cpu`` on the host.

    mpiexec -n 2 python3 bench/read_dist.py FILE [--repeat 3] [--engine gpu]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gpmetis.distributed.comm import Comm
from gpmetis.distributed.read import read_pieces


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--engine", choices=("cpu", "gpu"), default="cpu")
    args = parser.parse_args()
    comm = Comm.world()
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
