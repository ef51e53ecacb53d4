"""The coarsening phase: cluster (or match) and contract level after level until the graph is
small."""

from __future__ import annotations

import time
from dataclasses import dataclass

from gpmetis.backend import Backend
from gpmetis.coarsening.clustering import lp_clustering
from gpmetis.coarsening.contraction import coarse_map, contract, outside_degrees, pair_members
from gpmetis.coarsening.matching import heavy_edge_matching
from gpmetis.context import CoarseningContext
from gpmetis.device_graph import DeviceGraph
from gpmetis.limits import VERTEX_MAX
from gpmetis.metrics import cut_edges


@dataclass
class Level:
    """One level of the hierarchy: its graph and the map of its vertices to the next coarser."""

    graph: DeviceGraph | None
    cmap: object | None = None
    seconds: float = 0.0
    iterations: int = 0
    part: object | None = None  # the coarsest level's labels where coarsening kept within them
    weights: object | None = None  # (ncon, n) constraint weights where the graph has several

    def __post_init__(self) -> None:
        self.nvtxs = self.graph.nvtxs
        self.nedges = self.graph.nnz // 2


def coarsen(
    be: Backend, graph: DeviceGraph, target: int, seed: int, ctype: str, two_hop: bool,
    maxvwgt: int | None = None, within=None, *, context: CoarseningContext,
    closed: bool = False,
) -> list[Level]:
    """The hierarchy, finest first; the last level has no cmap and is the coarsest graph.
    With ``within`` (int32 labels per vertex of ``graph``, e.g. a partition), every coarse
    vertex holds vertices of one label (clusters grow over the edges inside labels only, as a
    V-cycle needs) and the coarsest level holds the projected labels in ``part``; ``closed``
    says that ``graph`` has no edge between labels already (none to cut level by level).

    ``ctype``: "lp" clusters by label propagation, "shem" matches heavy edges, "rm" matches at
    random. Stops when the graph has at most ``context.target_slack`` times ``target``
    vertices (``context.target(nparts)`` for one graph into nparts parts), or a level shrinks
    it by less than ``context.min_shrink``. A coarse vertex never weighs more than
    ``maxvwgt``, by default ``context.vertex_weight_limit`` * total / target (unless it is one
    heavier fine vertex), nor more than 2^31-1, nor do its edges together: coarsening stops
    before a level that would pass that bound (the engines' int32 vertex sums).
    """
    enough = int(context.target_slack * target)
    input_bytes = graph.nbytes  # before the finest level drops any array
    budget = level_budget(be, input_bytes, context)
    if maxvwgt is None:
        maxvwgt = max(int(context.vertex_weight_limit * graph.total_vwgt / target), 1)
    maxvwgt = min(maxvwgt, VERTEX_MAX)
    wide = graph.total_vwgt > VERTEX_MAX or graph.total_adjwgt > VERTEX_MAX
    levels = [Level(graph)]
    part = within
    nlabels = int(within.max()) + 1 if within is not None and graph.nvtxs else 1
    while graph.nvtxs > enough and len(levels) < context.max_levels:
        start = time.perf_counter()
        seen = graph if part is None or closed else within_parts(be, graph, part)
        cmap, nc, members = _coarse_map(be, seen, maxvwgt, seed + len(levels), ctype, two_hop,
                                        context)
        if ctype == "lp" and nc > max(context.cluster_max_ratio * graph.nvtxs, enough):
            # clusters that do not even halve the graph (power-law graphs: leaves whose hubs'
            # clusters are full) gain nothing over pairs and cut worse: heavy-edge and two-hop
            # pairs coarsen the rest of the hierarchy (unless this level ends it)
            ctype = "shem"
            cmap, nc, members = _coarse_map(be, seen, maxvwgt, seed + len(levels), ctype,
                                            two_hop, context)
        if part is not None:
            del seen
            cmap, nc, members = split_by_label(be, cmap, nc, members, part, nlabels)
        if nc > (1.0 - context.min_shrink) * graph.nvtxs or (
                wide and not coarse_sums_fit(be, graph, cmap, nc)):
            break
        # room for the contraction (refinement makes them anew); tables of more than
        # 1/pool_release_share of the input (hubs) go back to the device, or the contraction's
        # arrays, which do not fit in their blocks, would come on top of them in the pool
        if graph.release_row_hash_tables() * context.pool_release_share > input_bytes:
            be.release_free_memory()
        coarse = contract(be, graph, cmap, nc, members)
        be.synchronize()
        levels[-1].cmap = cmap
        levels[-1].seconds = time.perf_counter() - start
        levels.append(Level(coarse))
        graph = coarse
        if part is not None:
            part = project_up(be, part, cmap, nc)
        levels[0].graph.drop_unit_adjwgt()  # not needed again until its refinement rebuilds it
        _offload_to_budget(levels, budget)
    levels[-1].part = part
    return levels


def coarse_sums_fit(be: Backend, g: DeviceGraph, cmap, nc: int) -> bool:
    """Whether every vertex of ``g`` contracted by ``cmap`` weighs at most 2^31-1, and its edges
    together."""
    for weights in (g.vwgt, outside_degrees(be, g, cmap)):
        if nc and int(be.bin_sums(cmap, nc, weights).max()) > VERTEX_MAX:
            return False
    return True


def within_parts(be: Backend, g: DeviceGraph, labels) -> DeviceGraph:
    """``g`` without the edges whose ends have different ``labels``."""
    xp = be.xp
    keep = ~cut_edges(be, g.xadj, g.adjncy, labels)
    kept = xp.concatenate((xp.zeros(1, dtype=xp.int64), xp.cumsum(keep, dtype=xp.int64)))
    adjwgt = g.adjwgt if g.adjwgt is not None else xp.ones(g.nnz, dtype=xp.int32)
    return DeviceGraph(be, kept[g.xadj], g.adjncy[keep], adjwgt[keep], g.vwgt,
                       unit_adjwgt=g.unit_adjwgt)


def split_by_label(be: Backend, cmap, nc: int, members, labels, nlabels: int):
    """(cmap, nc, members) with every coarse vertex that holds vertices of several labels (the
    pairs and groups of vertices without edges inside their label) split by label, renumbered
    in (coarse vertex, label) order; ``members`` stays valid only where nothing was split."""
    xp = be.xp
    key = cmap.astype(xp.int64) * nlabels + labels
    used, inverse = xp.unique(key, return_inverse=True)
    if len(used) == nc:
        return cmap, nc, members
    return inverse.reshape(-1).astype(xp.int32), len(used), None


def project_up(be: Backend, labels, cmap, nc: int):
    """The coarse vertices' labels (int32) where each coarse vertex has members of one label."""
    coarse = be.xp.empty(nc, dtype=be.xp.int32)
    coarse[cmap] = labels
    return coarse


def _coarse_map(be: Backend, graph: DeviceGraph, maxvwgt: int, seed: int, ctype: str,
                two_hop: bool, context: CoarseningContext):
    """(cmap, nc, members): the next level's vertex of each of ``graph``'s vertices, by
    ``ctype``, and for pairs their member lists (None: contract finds them)."""
    if ctype == "lp":
        return (*lp_clustering(be, graph, maxvwgt, seed, context), None)
    match = heavy_edge_matching(be, graph, maxvwgt, seed, ctype == "shem", two_hop, context)
    cmap, nc = coarse_map(be, match)
    return cmap, nc, pair_members(be, match, cmap, nc) if be.gpu else None


def level_budget(be: Backend, input_bytes: int, context: CoarseningContext) -> float:
    """The bytes of intermediate levels that may stay on the GPU: what the device has free now
    (the finest graph is on it) less the context's ``free_memory_headroom`` times the finest
    graph's bytes, and at least ``level_memory_budget`` times them."""
    floor = context.level_memory_budget * input_bytes
    free = be.free_memory()
    return floor if free is None else max(floor, free - context.free_memory_headroom * input_bytes)


def _offload_to_budget(levels: list[Level], budget: float) -> None:
    """Offload the oldest intermediate levels (neither the finest nor the coarsest) until the
    ones left on the GPU fit in ``budget`` bytes."""
    resident = [lvl.graph for lvl in levels[1:-1] if not lvl.graph.offloaded]
    total = sum(g.nbytes for g in resident)
    for g in resident:
        if total <= budget:
            break
        total -= g.nbytes
        g.offload()
