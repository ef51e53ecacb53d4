"""Coarse vertex ids of a matching by flag + prefix scan, and contraction of any clustering (pairs
included) into the coarse graph."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from gpmetis.backend import NULL, Backend, exact_bin_sums, loop_blocks
from gpmetis.device_graph import HEAVY_DEGREE, WARP_DEGREE, DeviceGraph, decode_degree_range

CU_FILE = Path(__file__).with_name("contraction.cu")
WARP_CAP = HEAVY_DEGREE  # as in contraction.cu: longer candidate lists get a block and a hash table
# clusterings into at most this many coarse vertices, and those of graphs without rows longer
# than WARP_CAP, are contracted by one cooperative kernel (contract_loop), one read back and the
# rows' kernel: the general path's ~20 CuPy calls and three reads back cost ~0.5 ms of host time
# a level, whatever its size, and it needs a sort to place the members. Hub rows would leave
# lists too long for a warp, and the general kernels would redo the level
SMALL_CONTRACT = 1 << 15
LOOP_BLOCK = 256  # contract_loop's blocks: ROW_WARPS warps, as in warp_sums.cuh


def coarse_map(be: Backend, match):
    """(cmap, nc): ``cmap[v]`` is v's coarse id (int32), one per matched pair or unmatched vertex,
    numbered in the order of their smaller members.

    A vertex represents its pair when ``v <= match[v]``; coarse ids are the inclusive prefix scan
    of that flag minus one, and the partner copies its representative's id.
    """
    xp = be.xp
    n = len(match)
    v = xp.arange(n, dtype=xp.int32)
    scan = xp.cumsum(v <= match, dtype=xp.int32) - 1
    return scan[xp.minimum(v, match)], int(scan[-1]) + 1 if n else 0


def members_of(be: Backend, cmap, nc: int):
    """(members, mstart): the vertices of coarse vertex c are members[mstart[c]:mstart[c+1]] in
    increasing order (both int32)."""
    xp = be.xp
    members = be.argsort_stable(cmap).astype(xp.int32)
    return members, _member_starts(be, cmap, nc)


def pair_members(be: Backend, match, cmap, nc: int):
    """``members_of`` for the coarse map of a complete matching, without a sort: each pair's
    smaller vertex, then its partner."""
    xp = be.xp
    v = xp.arange(len(match), dtype=xp.int32)
    mstart = _member_starts(be, cmap, nc)
    members = xp.empty(len(match), dtype=xp.int32)
    members[mstart[cmap] + (v > match)] = v
    return members, mstart


def _member_starts(be: Backend, cmap, nc: int):
    """mstart (int32, nc + 1): where each coarse vertex's member list starts, by counting."""
    xp = be.xp
    mstart = xp.zeros(nc + 1, dtype=xp.int32)
    mstart[1:] = xp.cumsum(be.counts(cmap, nc))
    return mstart


def contract(be: Backend, g: DeviceGraph, cmap, nc: int, members=None) -> DeviceGraph:
    """The coarse graph of the clusters ``cmap`` (0..nc-1, each non-empty): member weights
    summed, parallel edges merged, self loops dropped. ``members``: (members, mstart) as
    ``members_of(cmap)`` gives them (in any order within a cluster) when the caller has them.
    Both backends give each row the same neighbours and weights; the NumPy twin sorts them, the
    GPU leaves them in the order its members and hash tables give (nothing downstream depends
    on the order)."""
    if be.gpu:
        if members is None and by_loop(g, nc):
            coarse, members = _contract_loop(be, g, cmap, nc)
            if coarse is not None:
                return coarse
        if members is None:
            members = members_of(be, cmap, nc)
        return _contract_cuda(be, g, cmap, nc, members)
    cvwgt = exact_bin_sums(cmap, nc, g.vwgt)
    cxadj, cadjncy, cadjwgt = _contract_numpy(g, cmap, nc)
    return DeviceGraph(be, cxadj, cadjncy, cadjwgt, cvwgt.astype(np.int32))


def by_loop(g: DeviceGraph, nc: int) -> bool:
    """Whether contract_loop takes the clustering of ``g`` into ``nc`` coarse vertices."""
    return nc <= SMALL_CONTRACT or g.max_degree <= WARP_CAP


def _contract_loop(be: Backend, g: DeviceGraph, cmap, nc: int):
    """(coarse graph, None) from contract_loop and contract_rows (the general kernels' rows,
    maybe in another order; the graph knows its degree range and lists), or (None, (members,
    mstart)) where a cluster has more than WARP_CAP distinct coarse neighbours."""
    xp = be.xp
    n = g.nvtxs
    blocks = loop_blocks(n, LOOP_BLOCK, nc)  # a thread per vertex, a warp per coarse vertex
    count, mstart, members = be.carve((nc, nc + 1, n), xp.int32, zeroed=1)
    out, cdeg, tiers, partial = be.carve((5, nc, nc + 1, blocks), xp.int64, zeroed=1)
    # what the coarse graph keeps, apart from the work arrays (views would keep them alive)
    cvwgt, mid = be.carve((nc, nc), xp.int32)
    cxadj = xp.empty(nc + 1, dtype=xp.int64)
    be.launch_cooperative(
        be.kernel(CU_FILE, "contract_loop"), blocks,
        (np.int32(n), np.int32(nc), g.xadj, g.adjncy, g.adjwgt_arg, g.vwgt, cmap,
         np.int64(WARP_DEGREE), count, members, mstart, cvwgt, cdeg, cxadj, tiers, mid,
         partial, out), block=LOOP_BLOCK)
    cnnz, general, longest, shortest, nmid = (int(x) for x in out.get().view(np.uint64))
    if general:
        return None, (members, mstart)
    cadjncy, cadjwgt = be.carve((cnnz, cnnz), xp.int32)
    be.launch_warps(be.kernel(CU_FILE, "contract_rows"), nc,
                    (np.int32(nc), g.xadj, g.adjncy, g.adjwgt_arg, members, mstart, cmap, NULL,
                     cdeg, cxadj, cadjncy, cadjwgt, np.int32(1)))
    coarse = DeviceGraph(be, cxadj, cadjncy, cadjwgt, cvwgt)
    # no row is longer than WARP_CAP = HEAVY_DEGREE: no hubs
    coarse.know_degrees(decode_degree_range(longest, shortest), mid[:nmid] if nmid else None,
                        None)
    return coarse, None


def _contract_cuda(be: Backend, g: DeviceGraph, cmap, nc: int, members) -> DeviceGraph:
    xp = be.xp
    members, mstart = members
    cap = xp.empty(nc, dtype=xp.int64)
    cvwgt = xp.empty(nc, dtype=xp.int32)
    be.launch(be.kernel(CU_FILE, "coarse_vertices"), nc,
              (np.int32(nc), g.xadj, g.vwgt, members, mstart, cap, cvwgt))
    # coarse vertices with more than WARP_CAP candidate entries: a block and a hash table each
    heavy = None
    if nc and int(cap.max()) > WARP_CAP:
        heavy = xp.flatnonzero(cap > WARP_CAP).astype(xp.int32)
        hoff = xp.zeros(len(heavy) + 1, dtype=xp.int64)
        xp.cumsum(cap[heavy], out=hoff[1:])
        tkeys = xp.empty(int(hoff[-1]), dtype=xp.int32)
        tvals = xp.empty_like(tkeys)
    rows = (g.xadj, g.adjncy, g.adjwgt_arg, members, mstart, cmap, cap)
    cdeg = xp.empty(nc, dtype=xp.int64)
    cxadj = xp.zeros(nc + 1, dtype=xp.int64)
    unused64, unused32 = g.scratch("dummy64", 1, xp.int64), g.scratch("dummy32", 1, xp.int32)
    merge = be.kernel(CU_FILE, "contract_rows")  # a warp per coarse vertex
    be.launch_warps(merge, nc, (np.int32(nc), *rows, cdeg, cxadj, unused32, unused32,
                                np.int32(0)))
    if heavy is not None:
        be.launch_blocks(be.kernel(CU_FILE, "contract_count_heavy"), len(heavy),
                         (heavy, *rows, hoff, tkeys, tvals, cdeg))
    xp.cumsum(cdeg, out=cxadj[1:])
    del cdeg
    cnnz = int(cxadj[-1])
    cadjncy = xp.empty(cnnz, dtype=xp.int32)
    cadjwgt = xp.empty(cnnz, dtype=xp.int32)
    be.launch_warps(merge, nc, (np.int32(nc), *rows, unused64, cxadj, cadjncy, cadjwgt,
                                np.int32(1)))
    if heavy is not None:
        be.launch_blocks(be.kernel(CU_FILE, "contract_fill_heavy"), len(heavy),
                         (heavy, cap, hoff, tkeys, tvals, cxadj, cadjncy, cadjwgt))
    return DeviceGraph(be, cxadj, cadjncy, cadjwgt, cvwgt)


def _contract_numpy(g: DeviceGraph, cmap, nc: int):
    cu = cmap[g.src].astype(np.int64)
    cv = cmap[g.adjncy].astype(np.int64)
    keep = cu != cv
    keys = cu[keep] * nc + cv[keep]
    uniq, inverse = np.unique(keys, return_inverse=True)
    cadjwgt = exact_bin_sums(inverse, len(uniq), None if g.adjwgt is None else g.adjwgt[keep])
    cxadj = np.zeros(nc + 1, dtype=np.int64)
    np.cumsum(np.bincount(uniq // nc, minlength=nc), out=cxadj[1:])
    return cxadj, (uniq % nc).astype(np.int32), cadjwgt.astype(np.int32)


def outside_degrees(be: Backend, g: DeviceGraph, cmap):
    """The weight of each vertex's edges to other clusters of ``cmap`` (int64): summed over a
    cluster, the weighted degree of its coarse vertex."""
    adjwgt = None if g.unit_adjwgt else g.adjwgt
    if not be.gpu:
        outside = cmap[g.src] != cmap[g.adjncy]
        return exact_bin_sums(g.src[outside], g.nvtxs,
                              None if adjwgt is None else adjwgt[outside])
    out = be.xp.empty(g.nvtxs, dtype=be.xp.int64)
    be.launch_resident(be.kernel(CU_FILE, "outside_degrees"), g.nvtxs,
                       (np.int32(g.nvtxs), g.xadj, g.adjncy,
                        NULL if adjwgt is None else adjwgt, cmap, out))
    return out
