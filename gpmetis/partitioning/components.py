"""Whole-component placement for disconnected graphs (k-way, one constraint).

Multilevel partitioning balances parts as it cuts: a graph of many components whose largest
nearly fills a part comes out with that component cut although it fits whole in the imbalance
the user allowed. Components that cost nothing to place are packed instead: heaviest first,
each into the part where its weight's midpoint falls on the line of the parts' target weights
laid end to end (one sort and one scan, however many components); a V-cycle from that start
(coarsening within its parts, so components stay whole until refinement and rebalancing move
pieces of them) repairs the balance where the packing overfills a part. The caller keeps it only
where it beats the multilevel partition.
"""

from __future__ import annotations

import numpy as np

from gpmetis.context import PackingContext
from gpmetis.device_graph import DeviceGraph


def packs(heaviest: int, maxpwgt: np.ndarray, context: PackingContext) -> bool:
    """Whether a graph of several components, the heaviest weighing ``heaviest``, is packed:
    none may exceed the context's ``place_max`` times the largest part limit of ``maxpwgt``."""
    return heaviest <= context.place_max * float(np.max(maxpwgt))


def packed_start(g: DeviceGraph, maxpwgt: np.ndarray, tpwgts: np.ndarray, labels,
                 context: PackingContext):
    """A partition (int32 on g's backend) that places every component of ``g`` whole, or None
    where ``g`` is connected or its largest component exceeds the context's ``place_max``
    times the largest of ``maxpwgt`` (the part weight limits); ``tpwgts``: the parts' target
    fractions; ``labels``: ``connected_components`` of ``g`` (each component's smallest
    vertex)."""
    be = g.be
    xp = be.xp
    n, nparts = g.nvtxs, len(maxpwgt)
    if n < 2:
        return None
    roots = xp.flatnonzero(labels == xp.arange(n, dtype=labels.dtype))
    if len(roots) < 2:
        return None
    weights = be.bin_sums(labels, n, g.vwgt)[roots]
    if not packs(int(weights.max()), maxpwgt, context):
        return None
    order = be.argsort_stable(-weights)  # heaviest first, equal weights by smallest vertex
    w = weights[order]
    midpoints = 2 * xp.cumsum(w) - w  # twice each component's midpoint on the line
    ends = np.cumsum(np.asarray(tpwgts, dtype=np.float64).reshape(-1)) * 2 * g.total_vwgt
    part_of = xp.searchsorted(be.asarray(ends), midpoints.astype(xp.float64), side="right")
    root_part = xp.zeros(n, dtype=xp.int32)
    root_part[roots[order]] = xp.minimum(part_of, nparts - 1).astype(xp.int32)
    return root_part[labels]
