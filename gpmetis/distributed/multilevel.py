"""The multilevel pipeline over ranks that hold a graph in pieces (one constraint, k-way, cut):
``partitioning.multilevel.multilevel_partition``'s partition, for any number of ranks.

The finer levels are clustered, contracted and refined on the pieces. Once a level has at most
``gather_vertices`` vertices (or the next one would need what is not distributed: matching,
where clusters stop shrinking the graph, or a level past 2^31 in a vertex's sums), it is
gathered at rank 0, which coarsens on from there with the single-process code (the same seeds
and limits), partitions the coarsest level and refines up to the gathered one; its part is
then projected down the distributed levels, each refined on the pieces."""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

import numpy as np

from gpmetis.backend import Backend, get_backend
from gpmetis.balance import Balance
from gpmetis.coarsening.coarsen import coarsen
from gpmetis.device_graph import DeviceGraph
from gpmetis.distributed.clustering import LocalGraph, ask_owners, lp_clustering
from gpmetis.distributed.comm import Comm
from gpmetis.distributed.contraction import coarse_sums_fit, contract
from gpmetis.distributed.dgraph import DistGraph
from gpmetis.distributed.refinement import refine
from gpmetis.initial_partitioning.initial import initial_partition
from gpmetis.initial_partitioning.workers import start_workers
from gpmetis.limits import VERTEX_MAX
from gpmetis.options import Options
from gpmetis.partitioning.multilevel import RunStats, level_stats, refine_patience
from gpmetis.refinement.rebalance import fill_empty_parts
from gpmetis.refinement.refiner import refiner_for

GATHER_VERTICES = 1 << 16  # a level this small goes to rank 0 (the rest is its run's)


@dataclass
class DistLevel:
    """A distributed level: its vertices' ranks (``vtxdist``, host), the local view (None
    where the level is not refined on the pieces), each own vertex's coarse id, and the
    seconds this rank took to cluster and contract it and to refine it, and its refinement's
    iterations."""

    vtxdist: np.ndarray
    local: LocalGraph | None
    cmap: np.ndarray | None = None
    coarsening: float = 0.0
    refinement: float = 0.0
    iterations: int = 0


def multilevel_partition(comm: Comm, piece: DistGraph, balance: Balance, options: Options,
                         tpwgts: np.ndarray, seed: int, engine: str = "cpu",
                         gather_vertices: int | None = None, local: LocalGraph | None = None
                         ) -> tuple[object, RunStats]:
    """(this rank's vertices' parts (int32, on the ``engine``'s backend) in the partition one
    process's ``multilevel_partition`` gives the whole graph, the run's stats as that function
    gives them: each level, finest first, its phases' seconds); collective. The levels on the
    pieces also give their refinement's seconds (``refine_seconds``); the levels of rank 0's
    run, and the initial partition, are in rank 0's stats only. With the gpu engine each rank
    runs on the GPU of its local rank. ``gather_vertices``: the level size gathered at rank 0
    (GATHER_VERTICES where None); ``local``: the piece's local view on that backend, where the
    caller keeps one."""
    if engine == "gpu":
        comm.use_gpus()
    be = get_backend(engine)
    context = options.context
    nparts = balance.nparts
    target = context.coarsening.target(nparts)
    levels, coarsest, maxvwgt = _coarsen_pieces(comm, be, piece, target, seed, options,
                                                gather_vertices or GATHER_VERTICES, local)
    edges = comm.allreduce_sum(np.array(
        [len(coarsest.adjncy) if lv.local is None else len(lv.local.adjncy) for lv in levels],
        np.int64)) // 2
    coarse = coarsest.gather(comm)
    root = comm.on_root(lambda: _root_run(be, coarse, len(levels) - 1, balance, options,
                                          tpwgts, seed, target, maxvwgt,
                                          int(piece.vtxdist[-1])))
    part = be.upload(comm.scatterv(None if root is None else root[0],
                                   np.diff(coarsest.vtxdist), np.int32), np.int32)
    patience = refine_patience(options)
    for depth in range(len(levels) - 2, -1, -1):
        level = levels[depth]
        start = _clock(be)
        part = ask_owners(comm, levels[depth + 1].vtxdist, level.cmap, part)
        # the coarser level is refined: its arrays go before this one's refinement
        levels[depth + 1].local = level.cmap = None
        if depth == 0:
            be.release_free_memory()  # the finest level's arrays from fresh blocks, not fragments
        part, level.iterations = refine(comm, level.local, part, balance,
                                        context=context.refinement, finest=depth == 0,
                                        patience=patience)
        level.refinement = _clock(be) - start
    stats = RunStats(levels=[
        {"level": depth, "nvtxs": int(level.vtxdist[-1]), "nedges": int(nedges),
         "seconds": level.coarsening, "refine_iterations": int(level.iterations),
         "refine_seconds": level.refinement}
        for depth, (level, nedges) in enumerate(zip(levels[:-1], edges[:-1], strict=True))])
    # (the clustering of the gathered level, where one ran, counts in the coarsening)
    stats.coarsening = sum(level.coarsening for level in levels)
    stats.refinement = sum(level.refinement for level in levels)
    if root is not None:
        run = root[1]
        stats.levels += run.levels
        stats.coarsening += run.coarsening
        stats.initial = run.initial
        stats.refinement += run.refinement
    return _fill_empty(comm, be, piece, part, nparts), stats


def _clock(be: Backend) -> float:
    """Seconds on the host's clock once the backend's queued work has run."""
    be.synchronize()
    return time.perf_counter()


def _coarsen_pieces(comm: Comm, be: Backend, piece: DistGraph, target: int, seed: int,
                    options: Options, gather_vertices: int, local: LocalGraph | None
                    ) -> tuple[list[DistLevel], DistGraph, int]:
    """(the distributed levels, finest first, the last one to gather; its piece; coarsening's
    maxvwgt), as ``coarsening.coarsen`` makes them while they are distributed. The levels'
    local views hold what clustering, contraction and refinement read."""
    context = options.context.coarsening
    totals = comm.allreduce_sum(np.array(
        [piece.nlocal if piece.vwgt is None else int(piece.vwgt[:, 0].sum(dtype=np.int64)),
         len(piece.adjncy) if piece.adjwgt is None else int(piece.adjwgt.sum(dtype=np.int64))],
        np.int64))
    maxvwgt = min(max(int(context.vertex_weight_limit * int(totals[0]) / target), 1), VERTEX_MAX)
    distributable = options.effective_ctype(be.name) == "lp"
    # the local views' weights are int32: where the totals do not fit, each level is checked
    wide = max(totals) > VERTEX_MAX
    levels = [DistLevel(piece.vtxdist, (local or LocalGraph.of(comm, piece, be))
                        if distributable else None)]
    if distributable:  # unit edge weights are read as ones until the refinement makes them
        levels[0].local.drop_unit_adjwgt()
    enough = int(context.target_slack * target)
    while distributable and len(levels) < context.max_levels:
        n = int(levels[-1].vtxdist[-1])
        if n <= max(enough, gather_vertices):
            break
        # each clustering and contraction from fresh blocks: the free blocks of the phase
        # before, split by arrays that live on, would not hold its larger arrays
        start = _clock(be)
        be.release_free_memory()
        cmap, cvtxdist = lp_clustering(comm, levels[-1].local, maxvwgt, seed + len(levels),
                                       context)
        nc = int(cvtxdist[-1])
        if (nc > max(context.cluster_max_ratio * n, enough) or nc > (1.0 - context.min_shrink) * n
                or (wide and not coarse_sums_fit(comm, levels[-1].local, cmap, cvtxdist))):
            levels[-1].coarsening = _clock(be) - start
            break  # matching takes over, or the level ends coarsening: rank 0 redoes it
        levels[-1].cmap = cmap
        be.release_free_memory()
        levels.append(DistLevel(np.asarray(cvtxdist, dtype=np.int64),
                                contract(comm, levels[-1].local, cmap, cvtxdist)))
        levels[-2].coarsening = _clock(be) - start
    return levels, piece if len(levels) == 1 else levels[-1].local.piece(), maxvwgt


def _root_run(be: Backend, graph, depth: int, balance: Balance, options: Options,
              tpwgts: np.ndarray, seed: int, target: int, maxvwgt: int,
              input_nvtxs: int) -> tuple[np.ndarray, RunStats]:
    """Rank 0's part of the run on the gathered level at ``depth``: coarsening on (seeds and
    levels counted from the finest), the initial partition, refinement up to that level; (the
    host array of its parts, its stats, its levels numbered from ``depth``)."""
    context = options.context
    stats = RunStats()
    start = _clock(be)
    g = DeviceGraph.upload(be, graph)
    start_workers(context.initial.trials)
    coarsening = replace(context.coarsening, max_levels=context.coarsening.max_levels - depth)
    levels = coarsen(be, g, target, seed + depth, options.effective_ctype(be.name),
                     not options.no2hop, maxvwgt=maxvwgt, context=coarsening)
    stats.coarsening = _clock(be) - start
    patience = refine_patience(options)
    part = initial_partition(
        levels[-1], balance, tpwgts, options, context.initial, seed=seed,
        ntrials=context.initial.trials, target=target, patience=patience,
        input_nvtxs=input_nvtxs, direct=False, coarsened=depth + len(levels) > 1,
        meanwhile=iter(()))
    part = be.asarray(part, dtype=np.int32)
    stats.initial = _clock(be) - start - stats.coarsening
    for d in range(len(levels) - 1, -1, -1):
        if d < len(levels) - 1:
            part = part[levels[d].cmap]
        level = levels[d].graph
        level.reload()  # the unit edge weights coarsening dropped
        part, iterations = refiner_for(be, level, None, balance, context=context.refinement,
                                       finest=depth + d == 0, patience=patience)(part)
        levels[d].iterations = int(iterations)
    stats.refinement = _clock(be) - start - stats.coarsening - stats.initial
    stats.levels = level_stats(levels, first=depth)
    return be.asnumpy(part), stats


def _fill_empty(comm: Comm, be: Backend, piece: DistGraph, part, nparts: int):
    """``fill_empty_parts`` of the whole partition (at rank 0, where a part is empty: rare)."""
    counts = comm.allreduce_sum(be.asnumpy(be.counts(part, nparts)))
    if int(piece.vtxdist[-1]) < nparts or (counts > 0).all():
        return part
    graph = piece.gather(comm)
    whole = comm.gatherv(part)

    def fill():
        return be.asnumpy(fill_empty_parts(be, DeviceGraph.upload(be, graph),
                                           be.asarray(whole), nparts))

    return be.upload(comm.scatterv(comm.on_root(fill), np.diff(piece.vtxdist), np.int32),
                     np.int32)
