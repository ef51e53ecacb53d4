"""A graph's vertex weights as the multilevel pipeline holds them. One constraint: the graph's
own ``vwgt``. Several: (ncon, n) int32 arrays on the backend, summed level by level, beside a
single guide weight (the graph's ``vwgt``) that coarsening bounds so that every cluster stays
within each constraint's cluster limit."""

from __future__ import annotations

import dataclasses

import numpy as np

from gpmetis.backend import Backend
from gpmetis.coarsening.coarsen import Level
from gpmetis.context import CoarseningContext
from gpmetis.device_graph import DeviceGraph
from gpmetis.graph import Graph

INT32_MAX = np.iinfo(np.int32).max
GUIDE_SCALE_MAX = 1 << 20
GUIDE_SCALE_MIN = 64  # below this the guide's rounding would distort the cluster limits


def upload_weights(be: Backend, vwgt: np.ndarray):
    """(the (n, ncon) int64 host weights as an (ncon, n) int32 array on ``be``, each
    constraint's exact total); each weight fits an int32 (``gpmetis.limits`` checked). The
    int64 array crosses as it is, then is narrowed and transposed on the backend, where its
    totals are summed too: on the host, the narrowing and a narrow array's column sums cost
    more than copying the wider array."""
    wide = be.xp.ascontiguousarray(be.upload(vwgt, np.int64).T)
    totals = be.asnumpy(wide.sum(axis=1)).astype(np.int64)
    return wide.astype(be.xp.int32), totals


def guide_weights(be: Backend, weights, totals: np.ndarray,
                  cluster_limits: np.ndarray) -> tuple[object, int]:
    """(guide, scale): guide[v] = ceil(scale * max_c weights[c, v] / cluster_limits[c]) (int32
    on ``be``) from the (ncon, n) ``weights`` on ``be`` and their ``totals``.

    A cluster whose guide weights sum to at most ``scale`` is within every constraint's cluster
    limit, so single-weight coarsening with maxvwgt = scale honours all of them. ``scale`` keeps
    the guide's total below 2^31 where the graph's size allows; each guide weight is at most
    2^31-1."""
    xp = be.xp
    n = weights.shape[1]
    limits = np.maximum(np.asarray(cluster_limits, dtype=np.float64), 1.0)
    per_unit = totals / limits  # guide total per unit of scale, at most
    scale = int(min(GUIDE_SCALE_MAX, (INT32_MAX - n) // max(2 * per_unit.sum(), 1.0)))
    scale = max(scale, GUIDE_SCALE_MIN)
    ratio = xp.zeros(n, dtype=xp.float64)
    for c in range(len(weights)):
        xp.maximum(ratio, weights[c] / float(limits[c]), out=ratio)
    ratio *= scale
    xp.ceil(ratio, out=ratio)
    return xp.minimum(ratio, INT32_MAX, out=ratio).astype(xp.int32), scale


def coarse_weights(be: Backend, weights, cmap, nc: int):
    """The (ncon, nc) int32 weights of the next coarser level: each constraint summed over
    ``cmap``."""
    xp = be.xp
    return xp.stack([be.bin_sums(cmap, nc, w).astype(xp.int32) for w in weights])


@dataclasses.dataclass
class WeightedGraph:
    """A graph on a backend with its constraints: ``weights`` None where it has one (its
    ``vwgt``), else (ncon, n) int32 with ``graph.vwgt`` the guide weight and ``scale`` the
    guide's cluster limit (coarsening's maxvwgt); ``totals`` each constraint's total."""

    graph: DeviceGraph
    weights: object
    totals: np.ndarray
    scale: int | None = None

    @classmethod
    def single(cls, g: DeviceGraph) -> WeightedGraph:
        """``g`` as a graph of one constraint, its ``vwgt``."""
        return cls(g, None, np.array([g.total_vwgt], dtype=np.int64))

    def restricted(self, sub: DeviceGraph, vertices) -> WeightedGraph:
        """The weighted graph of ``sub``, induced by ``vertices`` of this one: its constraint
        weights taken along; totals and the cluster limit stay the whole graph's."""
        weights = None if self.weights is None else self.weights[:, vertices]
        return WeightedGraph(sub, weights, self.totals, self.scale)


def upload(be: Backend, graph: Graph, nparts: int, context: CoarseningContext) -> WeightedGraph:
    """``graph`` on ``be``: as it is with one constraint; with several, its (ncon, n) weights
    and the guide weight for coarsening towards ``nparts`` parts as its vwgt (every cluster
    within the context's ``vertex_weight_limit`` * total / target in each constraint)."""
    if graph.ncon == 1:
        return WeightedGraph.single(DeviceGraph.upload(be, graph))
    weights, totals = upload_weights(be, graph.vwgt)
    target = context.target(nparts)
    guide, scale = guide_weights(be, weights, totals,
                                 np.minimum(context.vertex_weight_limit * totals / target,
                                            INT32_MAX))
    # the graph without its weights (ones, made on the backend), then the guide as its vwgt
    single = Graph(graph.xadj, graph.adjncy, graph.vwgt[:, :1], graph.adjwgt, graph.vsize,
                   graph.name, has_adjwgt=graph.has_adjwgt, device=graph.device)
    device = DeviceGraph.upload(be, single)
    device.vwgt = guide
    return WeightedGraph(device, weights, totals, scale)


def weigh_levels(be: Backend, weights, levels: list[Level]) -> None:
    """Each level's ``weights``: ``weights`` (the finest level's; None with one constraint)
    summed over the levels' cmaps."""
    levels[0].weights = weights
    for level, coarser in zip(levels, levels[1:]):
        coarser.weights = (None if level.weights is None
                           else coarse_weights(be, level.weights, level.cmap, coarser.nvtxs))
