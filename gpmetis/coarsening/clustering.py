"""Size-constrained label-propagation clustering (``-ctype=lp``), deterministic.

Every vertex starts as its own cluster (labelled by its id). A round has the context's
``lp_subrounds`` sub-rounds; a seeded hash of the id puts each vertex in one of them, where it
proposes to join the adjacent cluster it has the most edge weight into (ties to the lighter
cluster, then by a seeded hash) among those it fits in; per target cluster, proposals are
approved by rating, then id, while the cluster stays within ``maxvwgt``. Up to ``lp_rounds``
rounds run, while they move at least ``lp_min_round_moves`` of the vertices. Clusters coarsen a
graph several times faster than pairs (a level may shrink it 3-10x).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gpmetis.backend import NULL, Backend, backend_of, loop_blocks
from gpmetis.context import CoarseningContext
from gpmetis.device_graph import DeviceGraph
from gpmetis.edge_hash import mix32

CU_FILE = Path(__file__).with_name("clustering.cu")
ROUND_SEED_STEP = 7919
OVER_THREADS = 1 << 16  # approve_over's grid: a warp per 32 targets, grid-stride
# buckets of more proposals go to approve_over_large, a block of LARGE_BLOCK threads each (a hub's
# cluster drew buckets of thousands on rmat 20's dense levels, whose warps took up to 0.48 ms)
LARGE_BUCKET = 1024
# buckets of up to this many proposals are approved by a warp without a search (as in
# clustering.cu, 32 * SMALL_BUCKET_ROWS): the search's 64 steps would be most of a small level's
# loop
SMALL_BUCKET = 128
LARGE_BLOCK = 1024
# best_cluster_heavy's block, one per hub row: a hub's row and table are walked by its block
# alone (rmat 20's first level: 0.54 ms a sub-round with 256 threads and three passes over the
# table, 0.18 ms with 1024 and one)
HEAVY_BLOCK = 1024
BLOCK = 256  # cluster_loop's blocks: ROW_WARPS warps, as in warp_sums.cuh


def round_seed(seed: int, round_: int) -> int:
    """The seed that picks the sub-rounds of ``round_`` (uint32)."""
    return (seed + ROUND_SEED_STEP * round_) & 0xFFFFFFFF


def active(n: int, rseed: int, sub: int, subrounds: int, first: int = 0,
           xp=np) -> np.ndarray:
    """Whether each vertex first..first+n-1 takes part in sub-round ``sub`` of the round seeded
    ``rseed`` of ``subrounds`` sub-rounds (an ``xp`` array)."""
    v = xp.arange(first, first + n, dtype=xp.uint32)
    return mix32(v ^ np.uint32(rseed)) % np.uint32(subrounds) == sub


def cluster_key(rating: np.ndarray, cw: np.ndarray) -> np.ndarray:
    """``clustering.cu``'s cluster_key (uint64): valid bit, rating, then the lighter cluster."""
    return ((np.uint64(1) << np.uint64(63)) | (rating.astype(np.uint64) << np.uint64(32))
            | (np.uint64(0xFFFFFFFF) - cw.astype(np.uint64)))


def cluster_tie(v: np.ndarray, c: np.ndarray, seed: int) -> np.ndarray:
    """``clustering.cu``'s cluster_tie (uint32), a bijection of c for each v."""
    return mix32(c.astype(np.uint32) ^ mix32(v.astype(np.uint32) ^ np.uint32(seed)))


class Schedule:
    """A level's sub-rounds in order, each a (round seed, sub-round) pair of rounds of
    ``subrounds`` sub-rounds; ``advance`` moves to the next. On the GPU the kernels read the
    current one from ``plan`` (uint32: the step, then the pairs; ``cluster_loop`` reads the
    pairs in turn) and ``advance`` queues the move there."""

    def __init__(self, be: Backend, steps: list[tuple[int, int]], subrounds: int) -> None:
        self.be, self.steps, self.step, self.subrounds = be, steps, 0, subrounds
        flat = np.array([0, *(x for pair in steps for x in pair)], dtype=np.uint32)
        self.plan = be.xp.asarray(flat) if be.gpu else None

    def current(self) -> tuple[int, int]:
        """The current (round seed, sub-round) on the cpu backend (the GPU's is in ``plan``)."""
        return self.steps[self.step]

    def advance(self) -> None:
        """Move to the next sub-round; at most len(steps) - 1 times before the last is used."""
        if self.be.gpu:
            self.be.launch_blocks(self.be.kernel(CU_FILE, "next_step"), 1, (self.plan,), block=1)
        else:
            self.step += 1


def level_schedule(be: Backend, seed: int, context: CoarseningContext) -> Schedule:
    """The context's ``lp_rounds`` rounds of ``lp_subrounds`` sub-rounds, each round with its
    seed."""
    subrounds = context.lp_subrounds
    return Schedule(be, [(round_seed(seed, r), sub) for r in range(context.lp_rounds)
                         for sub in range(subrounds)], subrounds)


def best_cluster(be: Backend, g: DeviceGraph, cluster, cw, maxvwgt: int, seed: int,
                 schedule: Schedule, dest, rating, *, id_base: int = 0, labels=None) -> None:
    """Fill ``dest`` (int32: the cluster each vertex active in the schedule's current sub-round
    proposes to join, -1 for none) and ``rating`` (int32: its edge weight into that cluster,
    where dest >= 0). ``cluster`` (int32, ids below len(cw)) covers every vertex ``g.adjncy``
    names, which may be more than g's rows. The hashes take row v as vertex ``id_base`` + v
    and cluster c as ``labels[c]`` (uint32, low bits of the ids; c itself where None): the
    ids in the whole graph of a rank's rows and clusters."""
    n = g.nvtxs
    if not be.gpu:
        _best_cluster_numpy(g, cluster, cw, maxvwgt, seed, *schedule.current(),
                            schedule.subrounds, dest, rating, id_base, labels)
        return
    max_degree, mid, heavy = g.degree_tiers()
    hoff, tkeys, tvals = _hash_tables(g)
    head = (g.xadj, g.adjncy, g.adjwgt_arg, g.vwgt, cluster, cw, np.int32(maxvwgt),
            np.uint32(seed), schedule.plan, np.int32(schedule.subrounds),
            np.uint32(id_base & 0xFFFFFFFF), NULL if labels is None else labels)
    be.launch(be.kernel(CU_FILE, "best_cluster"), n,
              (np.int32(n), *head, tkeys[:1], tvals[:1], dest, rating, max_degree))
    if mid is not None:
        be.launch_warps(be.kernel(CU_FILE, "best_cluster_warp"), len(mid),
                        (mid, np.int32(len(mid)), *head, dest, rating))
    if heavy is not None:
        be.launch_blocks(be.kernel(CU_FILE, "best_cluster_heavy"), len(heavy),
                         (heavy, *head, hoff, tkeys, tvals, dest, rating), block=HEAVY_BLOCK)


def _hash_tables(g: DeviceGraph):
    """(hoff, tkeys, tvals) for best_cluster_heavy, which alone hashes (the thread kernel sees
    rows of at most WARP_DEGREE, which it rescans): one-slot placeholders without heavy rows."""
    tables = g.heavy_row_tables()
    if tables is not None:
        return tables
    unused = g.scratch("dummy32", 1, g.be.xp.int32)
    return g.scratch("dummy64", 1, g.be.xp.int64), unused, unused


def _best_cluster_numpy(g: DeviceGraph, cluster, cw, maxvwgt: int, seed: int, rseed: int,
                        sub: int, subrounds: int, dest, rating, id_base: int,
                        labels) -> None:
    n = g.nvtxs
    dest[:] = -1
    on = active(n, rseed, sub, subrounds, id_base)[g.src]
    vs, cs, r = cluster_ratings(g.src[on], cluster[g.adjncy[on]],
                                None if g.adjwgt is None else g.adjwgt[on], len(cw))
    ids = (vs + id_base, cs if labels is None else labels[cs])
    bv, bc, br = first_choices(vs, cs, r, cluster[vs], cw[cs], g.vwgt[vs], maxvwgt, seed,
                               ids)
    dest[bv] = bc
    rating[bv] = br


def cluster_ratings(src, c, w, n: int):
    """(vs, cs, r): each distinct (vertex, adjacent cluster) of the entries from ``src`` to
    neighbours of cluster ``c`` (ids below ``n``) with weights ``w``, and its edge weight r
    (int64), by vertex then cluster."""
    be = backend_of(src)
    pairs, inverse = be.unique_inverse(src.astype(np.int64) * n + c)
    return pairs // n, pairs % n, be.bin_sums(inverse, len(pairs), w)


def first_choices(vs, cs, r, own, cw_cs, vw, maxvwgt: int, seed: int, ids: tuple):
    """(v, cluster, rating) for each vertex of ``cluster_ratings`` whose first-ranked cluster
    is not its ``own`` (per pair): by rating, then the lighter (``cw_cs``), then a seeded
    hash of the pair's ``ids`` (the vertex's and the cluster's in the whole graph), among the
    clusters it fits in (its weight ``vw``)."""
    fits = (cs == own) | (cw_cs.astype(np.int64) + vw <= maxvwgt)
    vs, cs, r, own, cw_cs = vs[fits], cs[fits], r[fits], own[fits], cw_cs[fits]
    tie = cluster_tie(ids[0][fits], ids[1][fits], seed)
    be = backend_of(vs)
    order = be.lexsort((tie, cluster_key(r, cw_cs), vs))
    ends = vs[order]
    last = order[be.xp.concatenate((ends[1:] != ends[:-1], be.xp.ones(1, bool)))] \
        if len(vs) else order
    moves = last[cs[last] != own[last]]
    return vs[moves], cs[moves], r[moves]


@dataclass
class Approval:
    """The approval's work arrays for one level (GPU): inflow (int64), count (int32) and
    reserved (int32[1]) zero between sub-rounds; accepted (uint8) per vertex; for cluster_loop,
    fill (int32, zero) per vertex, else keys (uint64) and weights (int32) per vertex, where the
    buckets' priorities and weights are copied (None: the searches read them through the
    ids)."""

    inflow: object
    count: object
    reserved: object
    accepted: object
    fill: object = None
    keys: object = None
    weights: object = None

    @classmethod
    def allocate(cls, xp, n: int, *, fill: bool = False, copies: tuple | None = None
                 ) -> Approval:
        """Work arrays for n vertices; ``copies``: (keys, weights) to use instead of new ones."""
        # fill shares inflow's allocation: as an allocation of its own, it split the pool's
        # blocks so that road 23's peak grew from 615 to 679 MB (grid3d 100 111 -> 131 MB)
        block = xp.zeros((3 if fill else 2) * n, dtype=xp.int32)
        work = cls(block[:2 * n].view(xp.int64), xp.zeros(n, dtype=xp.int32),
                   xp.zeros(1, dtype=xp.int32), xp.empty(n, dtype=xp.uint8))
        if fill:
            work.fill = block[2 * n:]
        else:
            work.keys, work.weights = copies or (xp.empty(n, dtype=xp.uint64),
                                                 xp.empty(n, dtype=xp.int32))
        return work


def _copies_in_hub_tables(g: DeviceGraph):
    """(keys, weights) for the approval's copies in the bytes of g's hub tables, which are free
    between best_cluster steps; (None, None) when they are too small. (Arrays of their own,
    12 bytes a vertex, raised rmat 20's GPU peak from 397.6 to 410.3 MB.)"""
    tables = g.heavy_row_tables()
    n = g.nvtxs
    if tables is None or len(tables[1]) < 2 * n:
        return None, None
    xp = g.be.xp
    return tables[1][:2 * n].view(xp.uint64), tables[2][:n]


def approve(be: Backend, dest, rating, vwgt, cw, maxvwgt: int, work: Approval | None = None):
    """accepted (uint8 per vertex): 1 where v's proposal to join dest[v] is approved, else 0.
    Per target, proposals are approved in order (rating descending, then id) while the target's
    weight plus the approved ones' stays within ``maxvwgt``: a target that holds all its
    proposals accepts them all. ``work``: the GPU's work arrays, zero where they must be (made
    here when not given; ``apply_moves`` zeroes them again)."""
    if not be.gpu:
        return _approve_numpy(dest, rating, vwgt, cw, maxvwgt)
    xp = be.xp
    n = len(dest)
    if work is None:
        work = Approval.allocate(xp, n)
    inflow, count, accepted = work.inflow, work.count, work.accepted
    be.launch(be.kernel(CU_FILE, "approve_inflow"), n, (np.int32(n), dest, vwgt, inflow, count))
    be.launch(be.kernel(CU_FILE, "approve_fits"), n,
              (np.int32(n), dest, cw, inflow, count, np.int32(maxvwgt), accepted,
               work.reserved))
    # inflow is done with: its bytes hold each target's fill and the buckets
    fill, bucket = inflow.view(xp.int32).reshape(2, n)
    fill.fill(0)
    copies = (work.keys, work.weights) if work.keys is not None else (NULL, NULL)
    be.launch(be.kernel(CU_FILE, "approve_bucket"), n,
              (np.int32(n), dest, accepted, count, fill, bucket, rating, vwgt, *copies))
    over = (np.int32(n), count, fill, bucket, *copies, rating, vwgt, cw, np.int32(maxvwgt),
            accepted, np.int32(LARGE_BUCKET))
    be.launch(be.kernel(CU_FILE, "approve_over"), min(n, OVER_THREADS), over)
    be.launch_resident(be.kernel(CU_FILE, "approve_over_large"), n, over,
                       shared_mem=4 * LARGE_BLOCK, block=LARGE_BLOCK)
    return accepted


def _approve_numpy(dest, rating, vwgt, cw, maxvwgt: int):
    accepted = np.zeros(len(dest), dtype=np.uint8)
    movers = np.flatnonzero(dest >= 0)  # increasing ids
    target = dest[movers]
    accepted[movers] = approve_proposals(target, rating[movers], vwgt[movers], cw[target],
                                         maxvwgt)
    return accepted


def approve_proposals(target, rating, w, cw_target, maxvwgt: int) -> np.ndarray:
    """Whether each proposal (listed by proposer id, increasing) to join ``target`` with
    ``rating`` and weight ``w`` is approved: per target, by rating descending, then id, while
    its weight ``cw_target`` plus the approved ones' stays within ``maxvwgt``."""
    be = backend_of(target)
    xp = be.xp
    order = be.argsort_stable((target.astype(np.int64) << 32)
                              | (0xFFFFFFFF - rating.astype(np.int64)))
    t = target[order]
    start = xp.concatenate((xp.ones(min(len(t), 1), bool), t[1:] != t[:-1]))
    w = w[order].astype(np.int64)
    total = xp.cumsum(w)
    # each proposal's group's weight before its first proposal
    before = (total - w)[xp.flatnonzero(start)][xp.cumsum(start) - 1]
    accepted = xp.empty(len(t), dtype=bool)
    accepted[order] = cw_target[order].astype(np.int64) + total - before <= maxvwgt
    return accepted


def apply_moves(be: Backend, accepted, dest, vwgt, cluster, cw, moved,
                work: Approval | None) -> None:
    """Move the approved vertices to their targets (``cluster`` and ``cw`` updated in place) and
    add their number to ``moved[0]`` (a one-element uint64 array); on the GPU, the approval's
    ``work`` arrays are left zero for the next one (None on the cpu backend)."""
    if be.gpu:
        n = len(accepted)
        be.launch(be.kernel(CU_FILE, "apply_moves"), n,
                  (np.int32(n), accepted, dest, vwgt, cluster, cw, moved, work.inflow,
                   work.count, work.reserved))
        return
    v = np.flatnonzero(accepted == 1)
    np.subtract.at(cw, cluster[v], vwgt[v])
    np.add.at(cw, dest[v], vwgt[v])
    cluster[v] = dest[v]
    moved[0] += len(v)


def _cluster_loop(be: Backend, g: DeviceGraph, cluster, cw, maxvwgt: int, seed: int,
                  schedule: Schedule, dest, rating, moved, context: CoarseningContext) -> None:
    """lp_clustering's rounds on the GPU, for levels without rows for blocks: one cooperative
    kernel (``cluster_loop``) runs the schedule's sub-rounds, each as best_cluster, approve and
    apply_moves would. (Levels with hub rows launch a kernel per step: their blocks' work hides
    the launches, and a block per hub, as many as the GPU holds, beats the loop's resident grid,
    twice as slow on rmat 20's dense levels.)"""
    n = g.nvtxs
    max_degree, mid, _ = g.degree_tiers()
    mid_args = g.id_list_args(mid)  # mid, nmid
    work = Approval.allocate(be.xp, n, fill=True)
    be.launch_cooperative(
        be.kernel(CU_FILE, "cluster_loop"), loop_blocks(n, BLOCK, int(mid_args[1])),
        (np.int32(n), g.xadj, g.adjncy, g.adjwgt_arg, g.vwgt, cluster, cw, np.int32(maxvwgt),
         np.uint32(seed), schedule.plan, np.int32(context.lp_rounds),
         np.int32(schedule.subrounds), np.float64(context.lp_min_round_moves * n), max_degree,
         *mid_args, dest, rating,
         work.inflow, work.count, work.reserved, work.accepted, moved, work.fill),
        block=BLOCK)


def group_islands(be: Backend, g: DeviceGraph, cluster, maxvwgt: int) -> None:
    """Put the isolated vertices (no neighbour to cluster with) in clusters of their own, in id
    order, as many to a cluster as fit in ``maxvwgt`` at the heaviest one's weight."""
    if g.degree_range[0] > 0:
        return
    xp = be.xp
    islands = xp.flatnonzero(g.xadj[1:] == g.xadj[:-1]).astype(xp.int32)
    if len(islands) < 2:
        return
    per = max(1, maxvwgt // max(int(g.vwgt[islands].max()), 1))  # weightless islands: maxvwgt
    cluster[islands] = islands[xp.arange(len(islands), dtype=xp.int32) // per * per]


def lp_clustering(be: Backend, g: DeviceGraph, maxvwgt: int, seed: int,
                  context: CoarseningContext):
    """(cmap, nc): each vertex's cluster (int32, 0..nc-1 in the order of the clusters' labels),
    by the rounds of ``context``. A cluster weighs at most ``maxvwgt`` unless it is a single
    heavier vertex."""
    xp = be.xp
    n = g.nvtxs
    seed &= 0xFFFFFFFF
    cluster = xp.arange(n, dtype=xp.int32)
    cw = g.vwgt.copy()
    dest = xp.empty(n, dtype=xp.int32)
    rating = xp.empty(n, dtype=xp.int32)
    moved = xp.zeros(1, dtype=xp.uint64)
    schedule = level_schedule(be, seed, context)
    if be.gpu and g.degree_tiers()[2] is None:
        _cluster_loop(be, g, cluster, cw, maxvwgt, seed, schedule, dest, rating, moved, context)
    else:
        work = Approval.allocate(xp, n, copies=_copies_in_hub_tables(g)) if be.gpu else None
        total = 0
        for _ in range(context.lp_rounds):
            for _ in range(schedule.subrounds):
                best_cluster(be, g, cluster, cw, maxvwgt, seed, schedule, dest, rating)
                accepted = approve(be, dest, rating, g.vwgt, cw, maxvwgt, work)
                apply_moves(be, accepted, dest, g.vwgt, cluster, cw, moved, work)
                schedule.advance()
            now = int(moved[0])
            if now - total < context.lp_min_round_moves * n:
                break
            total = now
    group_islands(be, g, cluster, maxvwgt)
    return _number_clusters(be, cluster)


def _number_clusters(be: Backend, cluster):
    """(cmap, nc): the labels in ``cluster`` renumbered 0..nc-1 in label order (on the GPU in
    place, by one cooperative kernel and one read back: CuPy's fancy indexing cost ~80 us of
    host time a level, its cumsum and two kernels ~50-100 us)."""
    xp = be.xp
    n = len(cluster)
    if not be.gpu:
        used = np.zeros(n, dtype=np.int32)
        used[cluster] = 1
        number = np.cumsum(used, dtype=np.int32)
        return number[cluster] - 1, int(number[-1]) if n else 0
    if not n:
        return cluster, 0
    blocks = loop_blocks(n, BLOCK)
    used, partial = xp.zeros(n + 1, dtype=xp.int32), xp.empty(blocks, dtype=xp.int64)
    be.launch_cooperative(be.kernel(CU_FILE, "number_labels"), blocks,
                          (np.int32(n), cluster, used, partial), block=BLOCK)
    return cluster, int(used[n])
