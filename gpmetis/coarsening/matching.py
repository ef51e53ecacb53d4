"""Heavy-edge matching (random matching for ``-ctype=rm``), lock-free and deterministic.

Every free vertex proposes to its best free neighbour (heaviest edge, ties broken by a seeded
symmetric edge hash, then by the smaller id); mutual proposals match. Rounds repeat while they
still match a useful number of vertices. Vertices left free may then pair up two hops apart
(leaves and chain vertices sharing a neighbour). The result satisfies ``match[match[v]] == v``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from gpmetis.backend import Backend
from gpmetis.context import CoarseningContext
from gpmetis.device_graph import DeviceGraph
from gpmetis.edge_hash import edge_hash

CU_FILE = Path(__file__).with_name("matching.cu")


def propose(be: Backend, g: DeviceGraph, match, maxvwgt: int, seed: int, use_weights: bool):
    """Each free vertex's best free neighbour under the weight limit, or -1 (int32)."""
    xp = be.xp
    n = g.nvtxs
    if be.gpu:
        prop = xp.empty(n, dtype=xp.int32)
        max_degree, mid, heavy = g.degree_tiers()
        tail = (g.xadj, g.adjncy, g.adjwgt, g.vwgt, match, np.int32(maxvwgt), np.uint32(seed),
                np.int32(use_weights), prop)
        be.launch(be.kernel(CU_FILE, "propose"), n, (np.int32(n), *tail, max_degree))
        if mid is not None:
            be.launch_warps(be.kernel(CU_FILE, "propose_warp"), len(mid),
                            (mid, np.int32(len(mid)), *tail))
        if heavy is not None:
            be.launch_blocks(be.kernel(CU_FILE, "propose_heavy"), len(heavy), (heavy, *tail))
        return prop
    return _propose_numpy(g, match, maxvwgt, seed, use_weights)


def _propose_numpy(g: DeviceGraph, match, maxvwgt: int, seed: int, use_weights: bool):
    src, adjncy = g.src, g.adjncy
    free = match < 0
    ok = free[src] & free[adjncy] & (g.vwgt[src].astype(np.int64) + g.vwgt[adjncy] <= maxvwgt)
    s, u = src[ok], adjncy[ok]
    prop = np.full(g.nvtxs, -1, dtype=np.int32)
    if len(s) == 0:
        return prop
    weight = g.adjwgt[ok].astype(np.int64) if use_weights else np.zeros(len(s), np.int64)
    key = (weight << 32) | edge_hash(s, u, seed).astype(np.int64)
    starts = np.flatnonzero(np.r_[True, s[1:] != s[:-1]])
    counts = np.diff(np.r_[starts, len(s)])
    best_key = np.maximum.reduceat(key, starts)
    tied = key == np.repeat(best_key, counts)
    best_u = np.minimum.reduceat(np.where(tied, u, np.iinfo(np.int32).max), starts)
    prop[s[starts]] = best_u
    return prop


def accept(be: Backend, prop, match, matched):
    """Match every free v with prop[v] when prop[prop[v]] == v (updates ``match`` in place) and
    add the number of vertices matched to ``matched[0]`` (a one-element int32 array)."""
    xp = be.xp
    n = len(match)
    if be.gpu:
        be.launch(be.kernel(CU_FILE, "accept"), n, (np.int32(n), prop, match, matched))
        return match
    v = np.arange(n, dtype=np.int32)
    mutual = (match < 0) & (prop >= 0) & (prop[xp.maximum(prop, 0)] == v)
    match[mutual] = prop[mutual]
    matched[0] += np.count_nonzero(mutual)
    return match


def two_hop_match(be: Backend, g: DeviceGraph, match, maxvwgt: int):
    """Pair free vertices that share their smallest neighbour (leaves, twins, chain vertices):
    grouped by that anchor and ordered by id, each group's vertices pair up in turn (weights
    permitting); isolated vertices pair with each other."""
    xp = be.xp
    free = xp.flatnonzero(match < 0).astype(xp.int32)
    m = len(free)
    if m < 2:
        return match
    if not be.gpu:
        return _two_hop_numpy(g, match, maxvwgt, free)
    keys = xp.empty(m, dtype=xp.int64)
    be.launch(be.kernel(CU_FILE, "two_hop_keys"), m, (np.int32(m), free, g.xadj, g.adjncy, keys))
    keys = xp.sort(keys)
    be.launch(be.kernel(CU_FILE, "pair_two_hop"), m,
              (np.int32(m), keys, g.vwgt, np.int32(maxvwgt), match))
    return match


def _two_hop_numpy(g: DeviceGraph, match, maxvwgt: int, free: np.ndarray):
    row_min = np.full(g.nvtxs, -1, dtype=np.int32)
    nonempty = np.flatnonzero(g.xadj[1:] > g.xadj[:-1])
    if len(nonempty):
        row_min[nonempty] = np.minimum.reduceat(g.adjncy, g.xadj[nonempty])
    anchor = row_min[free]
    order = np.argsort(anchor, kind="stable")
    free, anchor = free[order], anchor[order]
    same = anchor[1:] == anchor[:-1]
    starts = np.concatenate([[True], ~same])
    group_start = np.flatnonzero(starts)[np.cumsum(starts) - 1]
    rank = np.arange(len(free)) - group_start
    left = np.flatnonzero((rank[:-1] % 2 == 0) & same)
    a, b = free[left], free[left + 1]
    fits = g.vwgt[a].astype(np.int64) + g.vwgt[b] <= maxvwgt
    a, b = a[fits], b[fits]
    match[a] = b
    match[b] = a
    return match


def heavy_edge_matching(
    be: Backend, g: DeviceGraph, maxvwgt: int, seed: int, use_weights: bool, two_hop: bool,
    context: CoarseningContext,
):
    """A complete matching (int32, ``match[match[v]] == v``, unmatched vertices map to self),
    by the rounds and the two-hop threshold of ``context``."""
    xp = be.xp
    n = g.nvtxs
    match = xp.full(n, -1, dtype=xp.int32)
    matched = xp.zeros(1, dtype=xp.int32)
    free_before = free_now = n
    for round_ in range(context.matching_rounds):
        prop = propose(be, g, match, maxvwgt, (seed + round_ * 0x9E3779B1) & 0xFFFFFFFF,
                       use_weights)
        match = accept(be, prop, match, matched)
        free_now = n - int(matched[0])
        if free_before - free_now < context.matching_min_round_gain * n:
            break
        free_before = free_now
    if two_hop and free_now > context.two_hop_threshold * n:
        match = two_hop_match(be, g, match, maxvwgt)
    unmatched = match < 0
    match[unmatched] = xp.arange(n, dtype=xp.int32)[unmatched]
    return match
