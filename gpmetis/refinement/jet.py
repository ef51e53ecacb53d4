"""Jet-style refinement's steps: label propagation with a negative-gain filter, an afterburner
that re-checks each move against higher-priority moves, and the partition's score; the loop
that runs them with vertex locking and rebalancing is ``jet_refiner``'s."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from gpmetis.backend import NULL, Backend, exact_bin_sums
from gpmetis.balance import Balance
from gpmetis.device_graph import DeviceGraph
from gpmetis.metrics import part_weights

CU_FILE = Path(__file__).with_name("jet.cu")
MAX_SHARED_PARTS = 8192  # the heavy kernels keep one int per part in shared memory
SCORE_SHARED_PARTS = 2048  # as in jet.cu: score sums part weights per block up to this many
BLOCK = 256
DENSE_PAIRS_PER_EDGE = 4  # the NumPy best_moves tabulates (vertex, part) pairs up to this


@dataclass
class MoveRequest:
    """What ``best_moves`` computes: LP moves of unlocked vertices (mode 0, ``locked`` uint8 per
    vertex, filter c = c_num / c_den) or rebalancing moves out of overweight parts (mode 1,
    ``room`` = int64 limit minus weight per part, negative for overweight parts)."""

    mode: int
    locked: object = None
    c_num: int = 0
    c_den: int = 1
    room: object = None
    nparts: int = field(kw_only=True)  # the parts the moves go between

    def active(self, part):
        return self.locked == 0 if self.mode == 0 else self.room[part] < 0


def best_moves(be: Backend, g: DeviceGraph, part, req: MoveRequest):
    """(dest int32, gain) per vertex as ``jet.cu``'s best_moves defines them (gain int32 on the
    GPU, int64 in the twin: |gain| is at most a weighted degree, below 2^31)."""
    if not be.gpu:
        return _best_moves_numpy(g, part, req)
    dest = be.xp.empty(g.nvtxs, dtype=be.xp.int32)
    gain = be.xp.empty(g.nvtxs, dtype=be.xp.int32)
    launch_best_moves(be, g, part, req, dest, gain)
    return dest, gain


def launch_best_moves(be: Backend, g: DeviceGraph, part, req: MoveRequest, dest,
                      gain) -> None:
    """Queue best_moves into ``dest``/``gain``."""
    xp = be.xp
    nparts = req.nparts
    n = g.nvtxs
    locked = req.locked if req.locked is not None else g.scratch("dummy8", 1, xp.uint8)
    room = req.room if req.room is not None else g.scratch("dummy64", 1, xp.int64)
    max_degree, mid, heavy = g.warp_split(nparts <= MAX_SHARED_PARTS)
    tkeys, tvals = g.row_hash_tables(max_degree)
    request = (room, np.int32(req.mode), np.int64(req.c_num), np.int64(req.c_den))
    be.launch_resident(be.kernel(CU_FILE, "best_moves"), n,
                       (np.int32(n), g.xadj, g.adjncy, g.adjwgt, g.vwgt, part, locked,
                        *request, tkeys, tvals, dest, gain, max_degree))
    if mid is not None:
        be.launch_warps(be.kernel(CU_FILE, "best_moves_warp"), len(mid),
                        (mid, np.int32(len(mid)), g.xadj, g.adjncy, g.adjwgt, g.vwgt,
                         part, locked, *request, dest, gain))
    if heavy is not None:
        be.launch_blocks(be.kernel(CU_FILE, "best_moves_heavy"), len(heavy),
                         (heavy, np.int32(nparts), g.xadj, g.adjncy, g.adjwgt, g.vwgt,
                          part, locked, *request, dest, gain),
                         shared_mem=4 * nparts, block=BLOCK)


def _best_moves_numpy(g: DeviceGraph, part, req: MoveRequest):
    n, nparts = g.nvtxs, req.nparts
    dest = np.full(n, -1, dtype=np.int32)
    gain = np.zeros(n, dtype=np.int64)
    active = req.active(part)
    on = active[g.src]
    s, p, w = g.src[on], part[g.adjncy[on]], g.adjwgt[on].astype(np.int64)
    own = p == part[s]
    own_conn = exact_bin_sums(s[own], n, w[own])
    other = ~own
    s, p, w = s[other], p[other], w[other]
    if req.mode == 1:
        fits = g.vwgt[s] <= req.room[p]
        s, p, w = s[fits], p[fits], w[fits]
        gain[active] = -own_conn[active]
    if len(s) and n * nparts <= DENSE_PAIRS_PER_EDGE * len(s):
        # a dense (vertex, part) table where it is small beside the edges (dense coarse
        # graphs): no sort; argmax keeps the first (lowest) of the most connected parts
        pair = s.astype(np.int64) * nparts + p
        seen = np.bincount(pair, minlength=n * nparts) > 0
        table = np.where(seen, exact_bin_sums(pair, n * nparts, w), -1).reshape(n, nparts)
        best = table.argmax(axis=1)
        v = np.flatnonzero(table[np.arange(n), best] >= 0)
        best_p = best[v].astype(np.int32)
        g_v = table[v, best_p] - own_conn[v]
    elif len(s):
        uniq, inverse = np.unique(s.astype(np.int64) * nparts + p, return_inverse=True)
        conn = exact_bin_sums(inverse.reshape(-1), len(uniq), w)
        vs, ps = uniq // nparts, (uniq % nparts).astype(np.int32)
        starts = np.flatnonzero(np.r_[True, vs[1:] != vs[:-1]])
        best_conn = np.maximum.reduceat(conn, starts)
        tied = conn == np.repeat(best_conn, np.diff(np.r_[starts, len(vs)]))
        best_p = np.minimum.reduceat(np.where(tied, ps, np.iinfo(np.int32).max), starts)
        v = vs[starts]
        g_v = best_conn - own_conn[v]
    if len(s):
        if req.mode == 0:
            ok = (g_v >= 0) | (-g_v < (req.c_num * own_conn[v]) // req.c_den)
            v, best_p, g_v = v[ok], best_p[ok], g_v[ok]
        dest[v] = best_p
        gain[v] = g_v
    return dest, gain


def afterburner(be: Backend, g: DeviceGraph, part, dest, gain, req: MoveRequest):
    """(keep, moved): the uint8 mask of the candidate moves (``best_moves`` of ``req``) whose
    gain stays >= 0 after higher-priority moves, and the partition with those moves applied
    (a new array)."""
    if be.gpu:
        keep = be.xp.empty(g.nvtxs, dtype=be.xp.uint8)
        moved = be.xp.empty(g.nvtxs, dtype=be.xp.int32)
        launch_afterburner(be, g, part, dest, gain, req.nparts <= MAX_SHARED_PARTS, keep,
                           moved)
        return keep, moved
    keep = kept_moves(g, part, dest, gain)
    return keep.astype(np.uint8), np.where(keep, dest, part).astype(np.int32)


def kept_moves(g: DeviceGraph, part, dest, gain) -> np.ndarray:
    """The afterburner's twin: whether each candidate move keeps a gain >= 0 after the moves
    of its neighbours that rank higher (greater gain, then smaller id)."""
    xp = g.be.xp
    s, u = g.src, g.adjncy
    cand = dest[s] >= 0
    s, u, w = s[cand], u[cand], g.adjwgt[cand].astype(np.int64)
    first = (dest[u] >= 0) & ((gain[u] > gain[s]) | ((gain[u] == gain[s]) & (u < s)))
    pu = xp.where(first, dest[u], part[u])
    delta = xp.where(pu == dest[s], w, xp.where(pu == part[s], -w, 0))
    g_after = g.be.bin_sums(s, g.nvtxs, delta)
    return (dest >= 0) & (g_after >= 0)


def launch_afterburner(be: Backend, g: DeviceGraph, part, dest, gain, shared: bool, keep,
                       moved) -> None:
    """Queue the afterburner into ``keep``/``moved``; ``shared``: as ``g.warp_split`` takes it
    (the heavy rows' kernels keep one int per part in shared memory)."""
    max_degree, mid, heavy = g.warp_split(shared)
    be.launch_resident(be.kernel(CU_FILE, "afterburner"), g.nvtxs,
                       (np.int32(g.nvtxs), g.xadj, g.adjncy, g.adjwgt, part, dest, gain,
                        keep, moved, max_degree, *g.id_list_args(mid)))
    if heavy is not None:
        be.launch_blocks(be.kernel(CU_FILE, "afterburner_heavy"), len(heavy),
                         (heavy, g.xadj, g.adjncy, g.adjwgt, part, dest, gain, keep, moved),
                         block=BLOCK)


def partition_state(be: Backend, g: DeviceGraph, part, balance: Balance
                    ) -> tuple[int, np.ndarray]:
    """(edgecut, the ``balance.nparts`` part weights as a host int64 array) with one device
    round trip on the GPU."""
    sums = state_sums(be, g, part, balance.nparts)
    return int(sums[0]) // 2, sums[1:]


def state_sums(be: Backend, g: DeviceGraph, part, nparts: int, prev=None) -> np.ndarray:
    """Host int64 [the weight of the row entries whose ends lie in different parts (2 *
    edgecut where g holds every row), each part's weight]: sums that add up over graphs
    holding disjoint sets of rows. With ``prev`` (a partition of the same vertices), their
    change from ``prev`` to ``part`` instead, reading only the moved vertices' rows (an edge
    of a moved vertex counts for both directions where its other end did not move), which
    adds up over graphs holding disjoint sets of rows too."""
    if be.gpu:
        out = be.xp.zeros(nparts + 1, dtype=be.xp.uint64)
        launch_score(be, g, part, out, prev=prev)
        return out.get().view(np.int64)  # a change wraps: as int64 it is signed
    if prev is not None:
        return _state_change(be, g, part, prev, nparts)
    pw = part_weights(be, g.vwgt[:, None], part, nparts)[:, 0]
    cut = int(be.xp.sum(g.adjwgt * (part[g.src] != part[g.adjncy]), dtype=np.int64))
    return np.concatenate(([cut], pw)).astype(np.int64)


def _state_change(be: Backend, g: DeviceGraph, part, prev, nparts: int) -> np.ndarray:
    """``state_sums``' change from ``prev`` to ``part`` (the score kernel's twin)."""
    moved = np.flatnonzero(part != prev)
    row, entry = be.row_entries(g.xadj, moved)
    v, u = moved[row], g.adjncy[entry]
    cut = ((part[u] != part[v]).astype(np.int64) - (prev[u] != prev[v])) * np.where(
        part[u] != prev[u], 1, 2) * g.adjwgt[entry].astype(np.int64)
    pw = (exact_bin_sums(part[moved], nparts, g.vwgt[moved])
          - exact_bin_sums(prev[moved], nparts, g.vwgt[moved]))
    return np.concatenate(([int(cut.sum())], pw)).astype(np.int64)


def launch_score(be: Backend, g: DeviceGraph, part, out, prev=None) -> None:
    """Queue ``score``: adds 2 * edgecut to out[0] and each part's weight to out[1 + p]; with
    ``prev`` (int32 per vertex), adds the change from partition ``prev`` to ``part`` instead,
    reading only the moved vertices (out wraps modulo 2^64, so it then holds part's state)."""
    max_degree, mid, heavy = g.warp_split()
    nparts = len(out) - 1
    prev = prev if prev is not None else NULL
    be.launch_resident(be.kernel(CU_FILE, "score"), g.nvtxs,
                       (np.int32(g.nvtxs), np.int32(nparts), g.xadj, g.adjncy, g.adjwgt,
                        g.vwgt, part, prev, out, max_degree, *g.id_list_args(mid)),
                       shared_mem=score_shared_mem(nparts), block=BLOCK)
    if heavy is not None:
        be.launch_blocks(be.kernel(CU_FILE, "score_heavy"), len(heavy),
                         (heavy, g.xadj, g.adjncy, g.adjwgt, g.vwgt, part, prev, out),
                         block=BLOCK)


def score_shared_mem(nparts: int) -> int:
    """Bytes of dynamic shared memory a block of ``score`` needs (its part weight sums)."""
    return 8 * nparts if nparts <= SCORE_SHARED_PARTS else 0
