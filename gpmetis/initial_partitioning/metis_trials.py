"""Initial partition of the coarsest graph: several METIS (pymetis) trials on the CPU cores.

The trials use seeds ``seed, seed+1, ...`` and the winner is the lowest cut among the trials that
meet the balance limit (else the least imbalanced), ties to the earlier trial, so the result does
not depend on how many cores ran them.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from concurrent.futures import Executor, ProcessPoolExecutor

import numpy as np

PARALLEL_MIN_NNZ = 2_000
_pool: Executor | None = None


def start_workers(ntrials: int) -> None:
    """Fork the worker pool now, before the engine starts CUDA (workers only run pymetis)."""
    global _pool
    workers = min(ntrials, os.cpu_count() or 1)
    if _pool is None and workers > 1:
        context = multiprocessing.get_context("fork")
        _pool = ProcessPoolExecutor(max_workers=workers, mp_context=context)
        _pool.submit(int).result()


def stop_workers() -> None:
    """Kill and reap the worker pool's processes at once (they hold no state worth a clean
    shutdown)."""
    global _pool
    if _pool is not None:
        for process in list(getattr(_pool, "_processes", None) or {}):
            _kill(process)
        _pool = None


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except OSError:
        pass


def _trial(args: tuple) -> np.ndarray:
    import pymetis

    xadj, adjncy, vwgt, adjwgt, nparts, tpwgts, seed, ufactor, niter, iptype = args
    options = pymetis.Options(seed=seed, ufactor=ufactor, niter=niter)
    if iptype is not None:
        options.iptype = iptype
    result = pymetis.part_graph(
        nparts,
        pymetis.CSRAdjacency(xadj, adjncy),
        vweights=vwgt,
        eweights=adjwgt,
        tpwgts=tpwgts,
        options=options,
        recursive=False,
    )
    return np.asarray(result.vertex_part, dtype=np.int32)


def initial_partition(
    xadj: np.ndarray,
    adjncy: np.ndarray,
    vwgt: np.ndarray,
    adjwgt: np.ndarray,
    nparts: int,
    maxpwgt: np.ndarray,
    tpwgts: list[float] | None,
    *,
    seed: int,
    ntrials: int,
    ufactor: int,
    niter: int,
    iptype: int | None = None,
) -> np.ndarray:
    """The best of ``ntrials`` METIS k-way partitions of the (host, row-sorted) coarsest graph."""
    n = len(xadj) - 1
    if nparts == 1 or n == 0:
        return np.zeros(n, dtype=np.int32)
    if nparts >= n:
        return np.arange(n, dtype=np.int32) % nparts
    jobs = [
        (xadj, adjncy, vwgt, adjwgt, nparts, tpwgts, seed + t, ufactor, niter, iptype)
        for t in range(ntrials)
    ]
    if _pool is not None and ntrials > 1 and len(adjncy) >= PARALLEL_MIN_NNZ:
        parts = list(_pool.map(_trial, jobs))
    else:
        parts = [_trial(job) for job in jobs]
    src = np.repeat(np.arange(n), np.diff(xadj))
    scores = []
    for part in parts:
        cut = int(adjwgt[part[src] != part[adjncy]].sum()) // 2
        pw = np.bincount(part, weights=vwgt, minlength=nparts)
        excess = float(np.maximum(pw - maxpwgt, 0).sum())
        scores.append((excess, cut))
    best = min(range(ntrials), key=lambda t: scores[t])
    return parts[best]
