"""The multilevel pipeline for multi-constraint graphs (same code on both backends).

upload (guide weights + (ncon, n) weights) -> coarsen with the guide as the single weight
(clusters within every constraint's limit) -> each level's weight vectors summed over its cmap
-> trials on the coarsest graph (``initial``) -> project and refine level by level
(``refinement``; -objtype=vol's volume refinement after the finest level's, -minconn's rounds
on the middle and finest levels, as in the single-constraint pipeline) -> fill empty parts ->
part on the backend.
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np

from gpmetis.backend import Backend
from gpmetis.coarsening.coarsen import Level, coarsen, coarsen_to
from gpmetis.device_graph import DeviceGraph
from gpmetis.graph import Graph
from gpmetis.initial_partitioning.metis_trials import IPTYPE_GROW, IPTYPE_RANDOM
from gpmetis.initial_partitioning.workers import start_workers
from gpmetis.multiconstraint.initial import initial_partition
from gpmetis.multiconstraint.refiner import refine
from gpmetis.multiconstraint.weights import (
    Balance,
    coarse_weights,
    guide_weights,
    upload_weights,
)
from gpmetis.options import Options
from gpmetis.partitioning.multilevel import INITIAL_TRIALS, RunStats
from gpmetis.refinement.minconn import REFINE_ROUNDS, minimize_connectivity
from gpmetis.refinement.rebalance import fill_empty_parts
from gpmetis.refinement.volume import refine_volume

CLUSTER_LIMIT = 1.5  # METIS's: a coarse vertex within 1.5 * total / coarsen_to per constraint
# inputs of at most this many vertices get METIS's multi-constraint k-way trials (their coarsest
# graph is too coarse for a repair to keep the cut); larger ones the scalarised trials first,
# which cost a fraction of them
BALANCED_TRIALS_NVTXS = 50_000


def balanced_trials(nvtxs: int, options: Options) -> bool:
    """Whether the coarsest graph of an input of ``nvtxs`` vertices gets METIS's
    multi-constraint k-way trials from the start: small inputs, unless -iptype=random asks for
    bisections from random starts (which METIS's k-way scheme does not take)."""
    return nvtxs <= BALANCED_TRIALS_NVTXS and options.iptype != "random"


@dataclasses.dataclass
class WeightedGraph:
    """A multi-constraint graph on a backend: ``graph`` carries the guide weights that
    coarsening uses; ``weights`` the (ncon, n) int32 constraint weights; ``scale`` the guide's
    cluster limit."""

    graph: DeviceGraph
    weights: object
    totals: np.ndarray
    scale: int


def upload(be: Backend, graph: Graph, nparts: int) -> WeightedGraph:
    """``graph`` (ncon >= 2) on ``be``."""
    weights, totals = upload_weights(be, graph.vwgt)
    target = coarsen_to(graph.nvtxs, nparts)
    guide, scale = guide_weights(be, weights, totals, CLUSTER_LIMIT * totals / target)
    # the graph without its weights (ones, made on the backend), then the guide as its vwgt
    single = dataclasses.replace(graph, vwgt=graph.vwgt[:, :1], has_vwgt=False, warnings=[])
    device = DeviceGraph.upload(be, single)
    device.vwgt = guide
    return WeightedGraph(device, weights, totals, scale)


def multiconstraint_partition(wg: WeightedGraph, nparts: int, options: Options,
                              tpwgts: np.ndarray, seed: int, *, direct: bool = False,
                              vsize=None):
    """(part int32 on the backend, RunStats) for ``wg`` into ``nparts`` parts of targets
    ``tpwgts`` (nparts, ncon), every constraint within ``options.ubfactors``. ``direct``: no
    coarsening; the trials split the input itself (a small input's second candidate, as the
    single-constraint pipeline's ``direct_candidate``), then its refinement. With
    ``options.objtype == "vol"`` the finest level's refinement is followed by volume
    refinement within every constraint's limits (``vsize``: int64 vertex sizes on the
    backend, None: ones), as in the single-constraint pipeline."""
    g, be = wg.graph, wg.graph.be
    stats = RunStats()
    start_workers(INITIAL_TRIALS)
    balance = Balance.of(wg.totals, tpwgts, options.ubfactors(len(wg.totals)),
                         adjacent_only=options.contig)
    t0 = time.perf_counter()
    if direct:
        levels = [Level(g)]
    else:
        levels = coarsen(be, g, nparts, seed, options.effective_ctype(be.name),
                         not options.no2hop, maxvwgt=wg.scale)
    weights = [wg.weights]
    for level, coarser in zip(levels, levels[1:]):
        weights.append(coarse_weights(be, weights[-1], level.cmap, coarser.nvtxs))
    t1 = time.perf_counter()
    stats.coarsening = t1 - t0

    patience = options.niter + 2
    coarsest = levels[-1].graph
    coarsest.reload()
    ubvec = np.asarray(options.ubfactors(len(wg.totals)), dtype=np.float64)
    part = initial_partition(coarsest, weights[-1], nparts, balance, tpwgts, ubvec, seed=seed,
                             ntrials=INITIAL_TRIALS, ufactor=options.trial_ufactor,
                             niter=options.niter, patience=patience,
                             coarsened=len(levels) > 1,
                             balanced_trials=balanced_trials(g.nvtxs, options),
                             iptype=IPTYPE_RANDOM if options.iptype == "random" else IPTYPE_GROW)
    t2 = time.perf_counter()
    stats.initial = t2 - t1

    def after_level(depth: int, level: Level, part):
        if depth == 0 and options.objtype == "vol":
            sizes = vsize if vsize is not None else be.xp.ones(g.nvtxs, dtype=be.xp.int64)
            part, stats.volume_rounds = refine_volume(be, g, part, nparts, balance.limits,
                                                      sizes, weights=wg.weights)
        if options.minconn and depth in (len(levels) // 2, 0):
            part, rounds = minimize_connectivity(be, level.graph, part, nparts, balance.limits,
                                                 REFINE_ROUNDS if depth == 0 else 0,
                                                 weights=weights[depth], balance=balance)
            stats.minconn["elimination"] += rounds[0]
            stats.minconn["refinement"] += rounds[1]
        return part

    part = refine_levels(levels, weights, be.asarray(part, dtype=be.xp.int32), nparts, balance,
                         patience, after_level)
    part = fill_empty_parts(be, g, part, nparts)
    be.synchronize()
    stats.refinement = time.perf_counter() - t2
    stats.levels = [
        {"level": i, "nvtxs": lvl.nvtxs, "nedges": lvl.nedges, "seconds": lvl.seconds,
         "refine_iterations": lvl.iterations}
        for i, lvl in enumerate(levels)
    ]
    return part, stats


def refine_levels(levels: list[Level], weights: list, part, nparts: int, balance: Balance,
                  patience: int, after_level=None):
    """``part`` of the coarsest level projected and refined level by level down to the finest
    (``weights``: each level's (ncon, n)); the coarser levels stop sooner (half the
    ``patience``: a loose step's excess takes several rebalancing steps to remove there, and
    the finest level refines what they leave); ``after_level(depth, level, part)`` -> part
    after each level's refinement. Each coarser level's memory is let go as it is left."""
    be = levels[0].graph.be
    for depth in range(len(levels) - 1, -1, -1):
        level = levels[depth]
        if depth < len(levels) - 1:
            levels[depth + 1].graph = None
            weights[depth + 1] = None
            level.graph.reload()
            part = part[level.cmap]
            level.cmap = None
        part, level.iterations = refine(be, level.graph, weights[depth], part, nparts, balance,
                                        finest=depth == 0,
                                        patience=patience if depth == 0 else -(-patience // 2))
        if after_level is not None:
            part = after_level(depth, level, part)
    return part
