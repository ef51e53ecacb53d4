"""The multilevel pipeline of the ``gpu`` and ``cpu`` engines (same code, two backends), for
any number of constraints (``WeightedGraph``; each phase picks its implementation by the
level's weights).

upload -> coarsen (matching, scan, contraction) -> coarsest graph (thinned where dense) to the
host -> METIS trials (recursive bisection, or k-way where coarsening stalled or left a dense
graph; METIS's multi-constraint scheme for several constraints), scored on the backend ->
project and refine level by level (Jet + rebalancing, or the multi-constraint refinement; with
-objtype=vol the finest level's volume refinement, with -minconn lower subdomain degrees on the
middle and finest levels) -> fill empty parts -> part on the backend. ``multilevel_bisections``
runs the same pipeline over a disjoint union of pieces, bisecting every piece at once (a depth
of ``-ptype=rb``); ``multilevel_copies`` over a disjoint union of copies of the graph, each copy
split into k parts (``-preset=strong``'s runs at once).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from gpmetis.backend import Backend
from gpmetis.balance import Balance, max_part_weights
from gpmetis.coarsening.coarsen import Level, coarsen
from gpmetis.coarsening.weights import WeightedGraph, weigh_levels
from gpmetis.context import CoarseningContext
from gpmetis.device_graph import DeviceGraph
from gpmetis.initial_partitioning.initial import initial_bisections, initial_partition
from gpmetis.initial_partitioning.metis_trials import initial_copies
from gpmetis.initial_partitioning.workers import start_workers
from gpmetis.metrics import cut_edges, part_weights
from gpmetis.options import Options
from gpmetis.refinement.jet_refiner import score_state
from gpmetis.refinement.minconn import minimize_connectivity
from gpmetis.refinement.rebalance import fill_empty_parts
from gpmetis.refinement.refiner import refiner_for
from gpmetis.refinement.volume import refine_volume


@dataclass
class RunStats:
    """Per-phase and per-level timings of one multilevel run."""

    levels: list[dict] = field(default_factory=list)
    coarsening: float = 0.0
    initial: float = 0.0
    refinement: float = 0.0
    volume_rounds: int = 0  # of the finest level's volume refinement (-objtype=vol)
    minconn: dict = field(default_factory=lambda: {"elimination": 0, "refinement": 0})


def multilevel_partition(wg: WeightedGraph, balance: Balance, options: Options,
                         tpwgts: np.ndarray, seed: int, vsize=None, *, direct: bool = False):
    """(part, stats): a partition of ``wg`` (int32 on its backend) into ``balance.nparts``
    parts of targets ``tpwgts`` (nparts, ncon), within ``balance``'s limits where refinement
    reaches them, and the run's statistics. With ``options.objtype == "vol"`` the finest
    level's refinement is followed by volume refinement (``vsize``: the input's vertex sizes,
    int64 on the backend, None: ones); with ``options.minconn``, the middle and finest levels'
    subdomain degrees are lowered. ``direct``: no coarsening; the trials split the input itself
    (a small input: ``modes.direct``), then its refinement."""
    g = wg.graph
    be = g.be
    nparts = balance.nparts
    context = options.context
    memory = context.memory
    stats = RunStats()
    start_workers(context.initial.trials)
    t0 = time.perf_counter()
    keep_below = memory.release_above * g.nbytes  # before the finest level drops any array
    target = context.coarsening.target(nparts)
    if direct:
        levels = [Level(g)]
    else:
        levels = coarsen(be, g, target, seed, options.effective_ctype(be.name),
                         not options.no2hop, maxvwgt=wg.scale, context=context.coarsening)
    weigh_levels(be, wg.weights, levels)
    be.release_free_memory(keep_below)
    t1 = time.perf_counter()
    stats.coarsening = t1 - t0

    refiners: dict = {}
    level_refiner = _level_refiners(levels, balance, options)
    part0 = initial_partition(
        levels[-1], balance, tpwgts, options, context.initial, seed=seed,
        ntrials=context.initial.trials, target=target, patience=refine_patience(options),
        input_nvtxs=g.nvtxs, direct=direct, coarsened=len(levels) > 1,
        meanwhile=_prepare_small_levels(levels, refiners, level_refiner,
                                        memory.release_fraction))
    t2 = time.perf_counter()
    stats.initial = t2 - t1

    def after_level(depth: int, level: Level, part):
        if depth == 0 and options.objtype == "vol":
            # the finest level only: on the coarser levels too (vertex sizes summed, as METIS
            # does) the finer levels' cut refinement undid it
            sizes = vsize if vsize is not None else be.xp.ones(g.nvtxs, dtype=be.xp.int64)
            part, stats.volume_rounds = refine_volume(be, g, part, balance, sizes,
                                                      context=context.refinement,
                                                      weights=level.weights)
        if options.minconn and depth in (len(levels) // 2, 0):
            # on the middle level, as METIS from its middle level, coarse groups move cheaply
            # and the finer levels' refinement recovers the cut; the finest level removes
            # what that refinement brought back (the levels between would only repeat it)
            cut_rounds = context.refinement.minconn_refine_rounds if depth == 0 else 0
            part, rounds = minimize_connectivity(be, level.graph, part, balance, cut_rounds,
                                                 context=context.refinement,
                                                 weights=level.weights)
            stats.minconn["elimination"] += rounds[0]
            stats.minconn["refinement"] += rounds[1]
        return part

    part = _uncoarsen(g, levels, be.xp.asarray(part0, dtype=be.xp.int32), refiners,
                      level_refiner, keep_below, memory.release_fraction, after_level,
                      fill_empty=nparts)
    stats.refinement = time.perf_counter() - t2
    stats.levels = level_stats(levels)
    return part, stats


def multilevel_bisections(wg: WeightedGraph, labels, targets: np.ndarray, options: Options,
                          seed: int):
    """(part, stats): every piece of the disjoint union ``wg`` bisected at once, one multilevel
    run for all: ``labels`` (int32 on its backend) gives each vertex's piece, and no edge joins
    two pieces; piece i's halves are parts 2i and 2i+1, of target fractions ``targets[i]``
    ((2, ncon)) of the piece's weight, each within its limit by ``options.ubfactors`` (a
    bisection's own balance). Coarse vertices stay inside pieces, each piece's coarsest graph
    gets its own trials (all pieces' in one submission), and the refinement keeps every vertex
    in its piece's two parts. A piece of at least two vertices gets both halves."""
    g = wg.graph
    be = g.be
    stats = RunStats()
    npieces = len(targets)
    nparts = 2 * npieces
    context = options.context
    start_workers(context.initial.trials)
    t0 = time.perf_counter()
    weights = g.vwgt[None, :] if wg.weights is None else wg.weights
    piece_weights = np.stack([be.asnumpy(be.bin_sums(labels, npieces, w)) for w in weights],
                             axis=1)
    ubvec = options.ubfactors(len(weights))
    limits = np.concatenate([max_part_weights(piece_weights[i], targets[i], ubvec)
                             for i in range(npieces)]).T.copy()  # (ncon, 2 * npieces)
    balance = Balance(limits, wg.totals, adjacent_only=True, group_size=2)
    sizes = be.asnumpy(be.counts(labels, npieces))
    target = int(sum(min(int(size), piece_coarsen_to(int(size), npieces, context.coarsening))
                     for size in sizes))
    levels, coarse_labels, keep_below = _coarsen_within(g, labels, seed, options, target,
                                                        wg.scale)
    weigh_levels(be, wg.weights, levels)
    t1 = time.perf_counter()
    stats.coarsening = t1 - t0

    refiners: dict = {}
    level_refiner = _level_refiners(levels, balance, options)
    side = initial_bisections(
        levels[-1], coarse_labels, targets, balance, options, context.initial, seed=seed,
        target=target, ntrials=max(context.initial.piece_trials,
                                   context.initial.trials // npieces),
        meanwhile=_prepare_small_levels(levels, refiners, level_refiner,
                                        context.memory.release_fraction))
    t2 = time.perf_counter()
    stats.initial = t2 - t1
    part0 = be.xp.asarray(2 * coarse_labels + side, dtype=be.xp.int32)
    part = _uncoarsen(g, levels, part0, refiners, level_refiner, keep_below,
                      context.memory.release_fraction)
    part = fill_empty_halves(be, g, part, nparts)
    stats.refinement = time.perf_counter() - t2
    stats.levels = level_stats(levels)
    return part, stats


def refine_patience(options: Options) -> int:
    """The iterations without a gain before a level stops refining: -niter plus the context's
    ``patience_beyond_niter``."""
    return options.niter + options.context.refinement.patience_beyond_niter


def _level_refiners(levels: list[Level], balance: Balance, options: Options):
    """depth -> the refiner of that level of ``levels`` against ``balance``, as patient as
    ``refine_patience``."""
    patience = refine_patience(options)

    def refiner_of(depth: int):
        level = levels[depth]
        return refiner_for(level.graph.be, level.graph, level.weights, balance,
                           context=options.context.refinement, finest=depth == 0,
                           patience=patience)

    return refiner_of


def piece_coarsen_to(nvtxs: int, npieces: int, context: CoarseningContext) -> int:
    """How small a piece of ``nvtxs`` vertices gets before its METIS trials when a depth of
    recursive bisection has ``npieces`` pieces: as small as its own bisection's run would take
    it, shared out among the pieces beyond the context's ``full_size_pieces`` (at least
    ``piece_min_vertices`` each)."""
    full = context.target(2)
    return max(context.piece_min_vertices,
               full * min(npieces, context.full_size_pieces) // npieces)


def multilevel_copies(g: DeviceGraph, balance: Balance, options: Options, tpwgts: np.ndarray,
                      seeds: list[int]):
    """(parts, stats): ``len(seeds)`` multilevel runs of ``g`` at once, as one run over the
    disjoint union of that many copies of ``g`` (``disjoint_copies``), and the copies'
    partitions of ``g`` (int32 on g's backend, no empty part where g has enough vertices), best
    first (least excess over the limits, then lowest cut, then the earlier copy). Coarse
    vertices stay inside copies, each copy's coarsest graph gets its own METIS trials (seeds
    ``seeds[c]``, ...; all copies' of a round in one submission), and Jet refines the union in
    ncopies * nparts parts with rebalancing kept inside each copy's nparts parts; copy c's
    parts are c * nparts .. (c + 1) * nparts - 1, each with the limit of ``g``'s run. Each
    copy's clustering differs (the coarsening's hashes mix the vertex ids), so the copies are
    as different as runs with different seeds."""
    be = g.be
    xp = be.xp
    stats = RunStats()
    ncopies = len(seeds)
    context = options.context
    start_workers(context.initial.trials)
    t0 = time.perf_counter()
    nparts = balance.nparts
    union, labels = disjoint_copies(g, ncopies)
    target = ncopies * context.coarsening.target(nparts)
    levels, coarse_labels, keep_below = _coarsen_within(union, labels, seeds[0], options,
                                                        target)
    t1 = time.perf_counter()
    stats.coarsening = t1 - t0

    refiners: dict = {}
    copies = Balance(np.tile(balance.limits, ncopies), balance.totals, group_size=nparts)
    level_refiner = _level_refiners(levels, copies, options)
    part0 = initial_copies(
        levels[-1].graph, coarse_labels, balance.limits[0], tpwgts.reshape(-1),
        target=target,
        seeds=seeds, ntrials=context.initial.copy_trials, ufactor=options.trial_ufactor,
        niter=options.niter, context=context.initial,
        random_bisections=options.iptype == "random",
        meanwhile=_prepare_small_levels(levels, refiners, level_refiner,
                                        context.memory.release_fraction))
    t2 = time.perf_counter()
    stats.initial = t2 - t1
    part = _uncoarsen(union, levels, xp.asarray(part0, dtype=xp.int32), refiners,
                      level_refiner, keep_below, context.memory.release_fraction)
    union.reload()  # the edge weights, where unit ones were dropped
    excess, cuts = copy_scores(be, union, part, ncopies, balance.limits[0])
    order = sorted(range(ncopies), key=lambda c: (excess[c], cuts[c], c))
    n = g.nvtxs
    parts = [fill_empty_parts(be, g, part[c * n:(c + 1) * n] - np.int32(c * nparts), nparts)
             for c in order]
    stats.refinement = time.perf_counter() - t2
    stats.levels = level_stats(levels)
    return parts, stats


def disjoint_copies(g: DeviceGraph, ncopies: int):
    """(union, labels): the disjoint union of ``ncopies`` copies of ``g``, copy c's vertices
    numbered c * n .. (c + 1) * n - 1 with its rows in ``g``'s order, and each vertex's copy
    (int32 on g's backend)."""
    be, xp = g.be, g.be.xp
    n, nnz = g.nvtxs, g.nnz
    copies = xp.arange(ncopies, dtype=xp.int64)
    xadj = xp.empty(ncopies * n + 1, dtype=xp.int64)
    xadj[:-1] = (g.xadj[None, :-1] + copies[:, None] * nnz).reshape(-1)
    xadj[-1] = ncopies * nnz
    adjncy = (g.adjncy[None, :] + (copies[:, None] * n).astype(xp.int32)).reshape(-1)
    adjwgt = g.adjwgt if g.adjwgt is not None else xp.ones(nnz, dtype=xp.int32)
    union = DeviceGraph(be, xadj, adjncy, xp.tile(adjwgt, ncopies), xp.tile(g.vwgt, ncopies),
                        unit_adjwgt=g.unit_adjwgt)
    labels = xp.repeat(xp.arange(ncopies, dtype=xp.int32), n)
    return union, labels


def copy_scores(be: Backend, union: DeviceGraph, part, ncopies: int,
                maxpwgt: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(excess, cut): host int64 arrays of each copy's total weight above ``maxpwgt`` (one
    copy's limits) and edge cut, for ``part`` of ``disjoint_copies``' union (copy c in parts
    c * nparts .., nparts = ``len(maxpwgt)``), from one pass over the edges (each copy's edges
    are a contiguous range)."""
    xp, nparts = be.xp, len(maxpwgt)
    pw = be.asnumpy(part_weights(be, union.vwgt[:, None], part, ncopies * nparts)[:, 0])
    excess = np.maximum(pw.reshape(ncopies, nparts) - maxpwgt, 0).sum(axis=1)
    cut = cut_edges(be, union.xadj, union.adjncy, part)
    sums = xp.concatenate((xp.zeros(1, dtype=xp.int64),
                           xp.cumsum(xp.where(cut, union.adjwgt, 0), dtype=xp.int64)))
    ends = sums[union.xadj[::union.nvtxs // ncopies]]
    return excess.astype(np.int64), be.asnumpy(ends[1:] - ends[:-1]) // 2


def _coarsen_within(g: DeviceGraph, labels, seed: int, options: Options, target: int,
                    maxvwgt: int | None = None):
    """(levels, the coarsest level's piece ids on the host, the pool size its refinement keeps
    below): the disjoint union ``g`` coarsened towards ``target`` vertices in all, every coarse
    vertex inside one piece of ``labels``."""
    be = g.be
    keep_below = options.context.memory.release_above * g.nbytes
    levels = coarsen(be, g, target, seed, options.effective_ctype(be.name), not options.no2hop,
                     maxvwgt=maxvwgt, within=labels, context=options.context.coarsening,
                     closed=True)
    be.release_free_memory(keep_below)
    coarse_labels = be.asnumpy(levels[-1].part)
    levels[-1].part = None
    return levels, coarse_labels, keep_below


def fill_empty_halves(be: Backend, g: DeviceGraph, part, nparts: int):
    """``part`` (pairs of parts 2i, 2i+1) where every pair of at least two vertices with an
    empty part has it filled from its partner: the partner's lightest vertex (the lowest id of
    equals) moves, as ``fill_empty_parts`` fills a bisection. A new array where any moves."""
    xp = be.xp
    counts = be.counts(part, nparts)
    empty = (counts == 0) & (counts[xp.arange(nparts) ^ 1] >= 2)
    if not bool(empty.any()):  # one reduction read back, the common case
        return part
    donors = xp.flatnonzero(empty[part ^ 1])
    order = be.argsort_stable(part[donors].astype(xp.int64) * (1 << 32) + g.vwgt[donors])
    grouped = part[donors[order]]
    first = xp.concatenate([xp.ones(1, dtype=bool), grouped[1:] != grouped[:-1]])
    movers = donors[order[xp.flatnonzero(first)]]
    part = part.copy()
    part[movers] ^= 1
    return part


def _prepare_small_levels(levels: list, refiners: dict, level_refiner, release_fraction: int):
    """While METIS runs, a level a step: the small levels' refiners into ``refiners`` (latency,
    not work, is what their buffers cost); the large ones (at least 1/``release_fraction`` of
    the finest level's vertices or edges: the dense coarse levels of power-law graphs too) are
    made when reached, in freed memory."""
    for depth, level in enumerate(levels):
        small = (level.nvtxs * release_fraction < levels[0].nvtxs
                 and level.nedges * release_fraction < levels[0].nedges)
        if small and not level.graph.offloaded:
            refiners[depth] = level_refiner(depth)
            yield


def vcycle(g: DeviceGraph, balance: Balance, options: Options, seed: int, part, *others):
    """(part, stats): ``part`` (int32 on g's backend) improved by a V-cycle: coarsen anew
    within its parts (each coarse vertex in one part, so the coarsest graph inherits the
    partition and its cut), then project and refine level by level. With ``others``, more
    partitions, coarse vertices lie within a part of each (their overlay), and refinement
    starts from the best of them all on the coarsest graph: where they differ, whole regions
    can move (a combine of the parents). Jet's best-state rule keeps each level's partition at
    least as good as the one it starts from."""
    be = g.be
    nparts = balance.nparts
    stats = RunStats()
    t0 = time.perf_counter()
    memory = options.context.memory
    keep_below = memory.release_above * g.nbytes
    within = part
    nlabels = nparts
    for other in others:  # the overlay's (within, other) pairs, numbered densely (int32 ids)
        used, within = be.xp.unique(within.astype(np.int64) * nparts + other,
                                    return_inverse=True)
        within, nlabels = within.reshape(-1).astype(np.int32), len(used)
    coarsening = options.context.coarsening
    levels = coarsen(be, g, coarsening.target(nparts), seed, options.effective_ctype(be.name),
                     not options.no2hop, within=within, context=coarsening)
    t1 = time.perf_counter()
    stats.coarsening = t1 - t0
    level_refiner = _level_refiners(levels, balance, options)
    coarsest = levels[-1].part
    levels[-1].part = None
    if others:
        top = levels[-1].graph
        # each parent's part of each overlay label (every vertex of a label has the same), read
        # at the coarsest level's labels: the parents on the coarsest graph, exactly
        parents = []
        for parent in (part, *others):
            table = be.xp.empty(nlabels, dtype=be.xp.int32)
            table[within] = parent
            parents.append(table[coarsest])
        scores = [score_state(be, top, p, balance) for p in parents]
        coarsest = parents[scores.index(min(scores))]
    part = _uncoarsen(g, levels, coarsest, {}, level_refiner, keep_below,
                      memory.release_fraction, fill_empty=nparts)
    stats.refinement = time.perf_counter() - t1
    stats.levels = level_stats(levels)
    return part, stats


def _uncoarsen(g: DeviceGraph, levels: list, part, refiners: dict, level_refiner,
               keep_below: int, release_fraction: int, after_level=None, fill_empty: int = 0):
    """Refine ``part`` of the coarsest level, then project and refine level by level down to
    ``g``; ``after_level`` ((depth, level, part) -> part) after each level's refinement, then
    the empty parts of ``fill_empty`` parts filled (0: none). ``refiners``: the levels'
    refiners made already; a level of at least 1/``release_fraction`` of ``g``'s vertices
    starts from the pool released down to ``keep_below`` bytes."""
    be = g.be
    iterations = {}  # the levels' counts, read once all are done: no level waits for the last
    for depth in range(len(levels) - 1, -1, -1):
        level = levels[depth]
        if depth < len(levels) - 1:
            # the coarser level and its refiner are done with: their memory serves this level
            levels[depth + 1].graph = levels[depth + 1].weights = None
            run = None
            level.graph.reload()
            part = part[level.cmap]
            level.cmap = None
            if level.nvtxs * release_fraction >= g.nvtxs:
                be.release_free_memory(keep_below)  # the larger arrays would not fit in fragments
        run = refiners.pop(depth, None)
        if run is None:
            run = level_refiner(depth)
        part, iterations[depth] = run(part)
        if after_level is not None:
            part = after_level(depth, level, part)
    if fill_empty:
        part = fill_empty_parts(be, g, part, fill_empty)
    g.release_scratch()  # the finest level's work arrays: the metrics need the room
    be.synchronize()
    for depth, count in iterations.items():
        levels[depth].iterations = int(count)
    return part


def level_stats(levels: list, first: int = 0) -> list[dict]:
    """The report's entry of each level (``coarsen``'s), numbered from ``first``."""
    return [
        {"level": first + i, "nvtxs": lvl.nvtxs, "nedges": lvl.nedges, "seconds": lvl.seconds,
         "refine_iterations": lvl.iterations}
        for i, lvl in enumerate(levels)
    ]

