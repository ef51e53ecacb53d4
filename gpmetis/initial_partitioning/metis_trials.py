"""Initial partition of the coarsest graph: METIS trials on the CPU cores.

When coarsening reached its target, the coarsest graph is what METIS's own k-way scheme would
split by recursive bisection, and so it is (``METIS_PartGraphRecursive``); the k-way
refinement METIS would run next is the GPU's refinement of the coarsest level, which also
restores the balance, so the lowest cut wins. When coarsening stalled, or left a dense graph
(power-law graphs, where METIS's own k-way refinement matters most and bisections save no
time), the graph goes to METIS's whole k-way scheme; the lowest cut among the trials within the
balance limit wins (else the least excess). A dense graph is thinned first (``thinning``): METIS
sees each vertex's heaviest edges, the trials are scored on every edge. The trials use seeds
``seed, seed+1, ...`` and ties go to the earlier trial, so the result does not depend on how
many cores ran them.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from collections.abc import Callable

import numpy as np

from gpmetis.device_graph import DeviceGraph
from gpmetis.errors import PartitionError
from gpmetis.initial_partitioning.thinning import heaviest_edges

PARALLEL_MIN_NNZ = 2_000
CUT_BATCH_ENTRIES = 1 << 22  # trials x adjacency entries scored at once (~13 bytes each)
IPTYPE_GROW, IPTYPE_RANDOM = 0, 1  # METIS's METIS_IPTYPE_* codes for a bisection's start
STALLED = 2  # a coarsest graph above this many times the coarsening target: coarsening stalled
DENSE_DEGREE = 64  # a coarsest graph of a higher average degree is dense
THIN_DEGREE = 16  # METIS sees each vertex of a dense coarsest graph with its heaviest edges


class _Workers:
    """Forked processes that run METIS trials, each fed through its own pipe (a job reaches
    its worker at once, without an executor's queues and management threads)."""

    def __init__(self, count: int) -> None:
        context = multiprocessing.get_context("fork")
        self.processes, self.pipes = [], []
        for _ in range(count):
            ours, theirs = context.Pipe()
            # the child closes its copies of our ends: when we exit, every worker sees EOF
            process = context.Process(target=_serve, args=(theirs, [*self.pipes, ours]),
                                      daemon=True)
            process.start()
            theirs.close()
            self.processes.append(process)
            self.pipes.append(ours)

    def submit(self, jobs: list) -> Callable[[], list]:
        """Send job i to worker i mod count now; the returned function waits for the results
        and gives them in the jobs' order. A trial's error is raised, a dead worker is a
        PartitionError (here or there); after either, the caller must stop the workers, as
        answers may be left unread."""
        count = len(self.pipes)
        batches = [(pipe, jobs[w::count]) for w, pipe in enumerate(self.pipes) if jobs[w::count]]
        for pipe, batch in batches:
            try:
                pipe.send(batch)
            except OSError as exc:
                raise _died() from exc

        def results() -> list:
            answers = [_answer(pipe) for pipe, _ in batches]
            return [answers[i % count][i // count] for i in range(len(jobs))]

        return results

    def kill(self) -> None:
        for process, pipe in zip(self.processes, self.pipes):
            process.kill()
            process.join()
            pipe.close()


def _serve(pipe, parent_ends: list) -> None:
    """A worker's loop: a batch of trials in, their partitions (or the error) out. Ctrl-C is
    the parent's to handle; the worker ends when the parent's pipe end closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for end in parent_ends:
        end.close()
    while True:
        try:
            batch = pipe.recv()
        except EOFError:
            return
        try:
            pipe.send([_trial(job) for job in batch])
        except Exception as exc:  # the caller re-raises it
            pipe.send(exc)


def _answer(pipe) -> list:
    try:
        answer = pipe.recv()
    except (EOFError, OSError) as exc:
        raise _died() from exc
    if isinstance(answer, Exception):
        raise answer
    return answer


def _died() -> PartitionError:
    return PartitionError("a METIS trial worker process ended unexpectedly")


_workers: _Workers | None = None


def start_workers(ntrials: int) -> None:
    """Fork the trial workers now, before the engine starts CUDA (workers only run pymetis)."""
    global _workers
    count = min(ntrials, os.cpu_count() or 1)
    if _workers is None and count > 1:
        _workers = _Workers(count)


def stop_workers() -> None:
    """Kill and reap the workers at once (they hold no state worth a clean shutdown)."""
    global _workers
    if _workers is not None:
        _workers.kill()
        _workers = None


def _dense(nvtxs: int, nnz: int) -> bool:
    return nnz > DENSE_DEGREE * nvtxs


def bisects(nvtxs: int, nnz: int, target: int) -> bool:
    """Whether a coarsest graph of ``nvtxs`` vertices and ``nnz`` adjacency entries, where
    coarsening aimed at ``target`` vertices, is split by recursive bisection (else k-way)."""
    return nvtxs <= STALLED * target and not _dense(nvtxs, nnz)


def _trial(args: tuple) -> np.ndarray:
    import pymetis

    xadj, adjncy, vwgt, adjwgt, nparts, tpwgts, seed, ufactor, niter, iptype, recursive = args
    options = pymetis.Options(seed=seed, ufactor=ufactor, niter=niter, iptype=iptype)
    result = pymetis.part_graph(
        nparts,
        pymetis.CSRAdjacency(xadj, adjncy),
        vweights=vwgt,
        eweights=adjwgt,
        tpwgts=tpwgts,
        options=options,
        recursive=recursive,
    )
    return np.asarray(result.vertex_part, dtype=np.int32)


def initial_partition(
    graph: DeviceGraph,
    nparts: int,
    maxpwgt: np.ndarray,
    tpwgts: list[float] | None,
    *,
    target: int,
    seed: int,
    ntrials: int,
    ufactor: int,
    niter: int,
    random_bisections: bool = False,
    meanwhile: Callable[[], None] | None = None,
) -> np.ndarray:
    """The best of ``ntrials`` METIS partitions (int32, on the host) of the coarsest ``graph``
    into ``nparts`` parts, where coarsening aimed at ``target`` vertices: recursive bisections
    (balanced per bisection, not to ``maxpwgt``; lowest cut) or k-way ones (lowest cut within
    ``maxpwgt``). ``random_bisections``: bisections start from random ones instead of grown
    regions (METIS's ``-iptype=random``). ``meanwhile`` runs in this process while the workers
    compute the trials (first, where they run here)."""
    n = graph.nvtxs
    if nparts == 1 or n == 0:
        return np.zeros(n, dtype=np.int32)
    if nparts >= n:
        return np.arange(n, dtype=np.int32) % nparts
    recursive = bisects(n, graph.nnz, target)
    seen = heaviest_edges(graph.be, graph, THIN_DEGREE, seed) if _dense(n, graph.nnz) else graph
    xadj, adjncy, vwgt, adjwgt = seen.to_host()
    iptype = IPTYPE_RANDOM if random_bisections else IPTYPE_GROW
    jobs = [
        (xadj, adjncy, vwgt, adjwgt, nparts, tpwgts, seed + t, ufactor, niter, iptype, recursive)
        for t in range(ntrials)
    ]
    parallel = _workers is not None and ntrials > 1 and len(adjncy) >= PARALLEL_MIN_NNZ
    try:
        results = _workers.submit(jobs) if parallel else None
        if meanwhile is not None:
            meanwhile()
        parts = results() if results is not None else [_trial(job) for job in jobs]
    except BaseException:
        if parallel:
            stop_workers()  # answers may be left unread, or a worker died: fresh ones next time
        raise
    cuts = _cuts(graph, parts)
    scores = [(0.0 if recursive else _excess(part, vwgt, nparts, maxpwgt), cut)
              for part, cut in zip(parts, cuts)]
    return parts[scores.index(min(scores))]


def _cuts(graph: DeviceGraph, parts: list[np.ndarray]) -> list[int]:
    """Each partition's edge cut over every edge of ``graph`` (twice the cut: both entries),
    in batches of trials of at most CUT_BATCH_ENTRIES adjacency entries: one upload and a
    handful of array operations per batch."""
    be, xp = graph.be, graph.be.xp
    src = be.sources(graph.xadj, graph.nnz)
    per_batch = max(1, CUT_BATCH_ENTRIES // max(graph.nnz, 1))
    cuts = []
    for first in range(0, len(parts), per_batch):
        stacked = be.asarray(np.stack(parts[first:first + per_batch]))
        cut = stacked[:, src] != stacked[:, graph.adjncy]
        sums = xp.where(cut, graph.adjwgt, 0).sum(axis=1, dtype=xp.int64)
        cuts.extend(int(c) for c in be.asnumpy(sums))
    return cuts


def _excess(part: np.ndarray, vwgt: np.ndarray, nparts: int, maxpwgt: np.ndarray) -> float:
    """The part weights' total excess over ``maxpwgt``."""
    return float(np.maximum(np.bincount(part, weights=vwgt, minlength=nparts) - maxpwgt, 0).sum())
