"""A graph held in pieces, checked and made canonical where it lies: ``validated_csr``'s checks
(without ``symmetrize``) in its order on each rank's rows, each agreed on by every rank, so a
fault gives one process's message, the warnings are one process's, and each rank keeps the
rows one process keeps. No rank holds more than its piece and the reverse of its cut entries.

The symmetry check: a rank's entries between its own vertices are checked by one process's
scan (``validation.RowScan``, threaded) where its arrays fit in memory, else (rows sorted) by
a binary search of each entry's reverse in its neighbour's row, a chunk at a time in bounded
memory; each cut entry u -> v is sent, reversed, to the rank owning v, which compares them
with its own cut entries as sorted keys u * n + v. The first fault is the least (vertex,
neighbour) over the ranks, as the single-process check reports it.

With ``gpu``, the ranks' GPUs first judge the entries (``validation.cu``): ranges, self loops,
rows rising strictly, edge weights, and each entry's reverse by a binary search in its
neighbour's row (the cut entries' reverses at their owners). Where every rank's piece passes,
the host checks only its vertices; else they run as above and name the first fault.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from gpmetis.backend import Backend
from gpmetis.distributed.comm import Comm
from gpmetis.distributed.dgraph import DistGraph
from gpmetis.errors import InputError
from gpmetis.io.source import available_memory
from gpmetis.validation import (
    RowScan,
    WeightTotals,
    Where,
    asymmetry_message,
    check_weight_totals,
    exact_total,
    in_threads,
    sorted_rows,
)

INT32_MAX = np.iinfo(np.int32).max
# the host's symmetry checks key an entry u -> v as u * n + v in an int64
KEY_VERTICES_MAX = 3_037_000_499  # isqrt(2^63 - 1)
CU_FILE = Path(__file__).with_name("validation.cu")
# the GPUs' verdict holds adjncy as int64, and finds the cut entries a chunk at a time (a mask,
# its scan's int64 and the positions of a chunk's entries)
VERDICT_ENTRY_BYTES = 8
VERDICT_CHUNK = 1 << 26
CHUNK_ENTRY_BYTES = 17
CUT_ENTRY_BYTES = 96  # a cut entry's position, ends, owner, and its rows packed, sent and received
_CHUNK = 1 << 22  # entries whose rows are sorted at a time
SCAN_ENTRY_BYTES = 17  # RowScan's three int32 splits, the local id and the inner mask


@dataclass(frozen=True)
class Shape:
    """What rank 0's run reads of a graph held in pieces, the same as of the whole graph:
    its size, the kinds of its weights, its exact totals, its heaviest vertex and weighted
    degree (first of the heaviest, global id), each constraint's heaviest vertex weight and
    the validation's warnings."""

    nvtxs: int
    nnz: int
    ncon: int
    has_vwgt: bool
    has_adjwgt: bool
    has_vsize: bool
    weight_totals: WeightTotals
    heaviest_vertex: tuple[int, int]
    heaviest_degree: tuple[int, int]
    max_vwgt: tuple[int, ...]
    warnings: tuple[str, ...]


def validate(comm: Comm, piece: DistGraph, *, gpu: bool = False) -> tuple[DistGraph, Shape]:
    """(this rank's canonical piece, the whole graph's ``Shape``) of the pieces ``DistGraph.of``
    checked: InputError on every rank naming the first fault that ``Graph.from_csr`` (or, for
    a piece read from a METIS file, its reader) names in the whole graph. ``gpu``: the
    entries are judged on the ranks' GPUs first. Collective."""
    where, first, n = _where(comm, piece), int(piece.vtxdist[comm.rank]), int(piece.vtxdist[-1])
    degrees = np.diff(piece.xadj)
    comm.agree(_at_first(where, first, degrees < 0, lambda v: f"xadj decreases at "
                                                              f"{where.vertex(v)}"))
    comm.agree(_local_ids_fit(where, piece, comm.rank, first))
    # the entries' sums where the GPUs found them clean (the host then checks the vertices),
    # and the rows they judged, kept on the GPU for the run
    sums, rows_on_gpu = (_clean_on_gpu(comm, piece, first, n) if gpu else None) or (None, None)
    if sums is None and n > KEY_VERTICES_MAX:  # (the same on every rank)
        raise where.error(None, f"{n} vertices: the host's checks of the pieces take at most "
                                f"{KEY_VERTICES_MAX} (they key an entry u -> v as u * n + v in "
                                "an int64); more need the gpu engine and rows in increasing "
                                "order, whose entries the GPUs check")
    if sums is None:
        comm.agree(_out_of_range(where, piece, first, n))
    ncon = _agreed_ncon(comm, where, piece, n)
    if piece.vwgt is not None and not piece.nlocal:
        piece = replace(piece, vwgt=np.zeros((0, ncon), np.int64))
    _check_signs(comm, where, piece, first, edges=sums is None)
    warnings: list[str] = []
    if sums is None:
        piece, warnings, ascending, split = _canonical(comm, where, piece, first)
        comm.agree(_asymmetry(comm, where, piece, n, ascending, split))
    shape = _shape(comm, piece, n, ncon, tuple(warnings), sums or {})
    check_weight_totals(shape.weight_totals, where.path)
    return replace(piece, rows_on_gpu=rows_on_gpu), shape


def _local_ids_fit(where: Where, piece: DistGraph, rank: int, first: int) -> InputError | None:
    """InputError where this rank's vertices and its ghosts (the distinct neighbours other
    ranks own) pass the int32 local ids its run numbers them by; global ids are int64."""
    nlocal, adjncy = piece.nlocal, piece.adjncy
    others = int(piece.vtxdist[-1]) - nlocal  # (never more ghosts than entries or than these)
    if nlocal + min(len(adjncy), others) <= INT32_MAX:
        return None
    ghosts = np.unique(np.concatenate([np.zeros(0, np.int64)] + [
        a[(a < first) | (a >= first + nlocal)] for a in (
            adjncy[start:start + _CHUNK] for start in range(0, len(adjncy), _CHUNK))]))
    if nlocal + len(ghosts) <= INT32_MAX:
        return None
    return where.error(None, f"rank {rank} holds {nlocal} vertices and {len(ghosts)} "
                             f"neighbours of other ranks: at most {INT32_MAX} together, which "
                             "its int32 local ids number; spread the graph over more ranks")


def _clean_on_gpu(comm: Comm, piece: DistGraph, first: int, n: int) -> tuple | None:
    """(this rank's edge weight total and heaviest weighted degree (``_shape``'s entries; none
    for unit weights), its (xadj, adjncy) as int64 on its GPU) where the ranks' GPUs find
    every piece's entries clean (in range, no self loops, rows rising strictly, edge weights in
    [1, 2^31 - 1], each entry's reverse listed with its weight); None where some piece's may
    not be, or some rank's GPU has not the memory its checks take. Collective."""
    from gpmetis.backend import get_backend

    comm.use_gpus()
    be = get_backend("gpu")
    weighted = piece.adjwgt is not None  # (the weights, and each row's sum)
    need = (8 * (piece.nlocal + 1) + 8 * piece.nlocal * weighted
            + len(piece.adjncy) * (VERDICT_ENTRY_BYTES + 8 * weighted)
            + min(len(piece.adjncy), VERDICT_CHUNK) * CHUNK_ENTRY_BYTES)
    if comm.allreduce_max(int(need > _device_room(comm, be))):
        return None
    try:
        return _gpu_verdict(comm, be, piece, first, n)
    finally:
        be.release_free_memory()  # the checks' other arrays: the run allocates afresh


def _gpu_verdict(comm: Comm, be: Backend, piece: DistGraph, first: int, n: int) -> tuple | None:
    from gpmetis.backend import NULL
    from gpmetis.distributed.clustering import ToOwners  # (its imports: the engine's modules)

    xp = be.xp
    nlocal = piece.nlocal
    xadj, adjncy = be.array(piece.xadj, np.int64), be.array(piece.adjncy, np.int64)
    adjwgt = None if piece.adjwgt is None else be.array(piece.adjwgt, np.int64)
    weights = NULL if adjwgt is None else adjwgt
    fault = xp.zeros(1, dtype=np.int32)
    be.launch(be.kernel(CU_FILE, "piece_entries"), len(adjncy),
              (np.int64(len(adjncy)), np.int32(nlocal), np.int64(first), np.int64(n), xadj,
               adjncy, weights, fault))
    if comm.allreduce_max(int(fault[0])):  # (an id out of range has no owner to ask)
        return None
    # each cut entry u -> v sent reversed to v's owner, which finds it in row v: with the rows
    # rising strictly, as many found as its own cut entries are all of their reverses
    chunks = [adjncy[a:a + VERDICT_CHUNK] for a in range(0, len(adjncy), VERDICT_CHUNK)]

    def outside(ids):
        return (ids < first) | (ids >= first + nlocal)

    # the cut entries' rows, sent and received, must fit (the weights a column more)
    ncut = sum(int(xp.count_nonzero(outside(ids))) for ids in chunks)
    need = ncut * (CUT_ENTRY_BYTES + 24 * (adjwgt is not None))
    if comm.allreduce_max(int(need > _device_room(comm, be))):
        return None
    cut = xp.concatenate([xp.zeros(0, np.int64)] + [
        xp.flatnonzero(outside(ids)) + i * VERDICT_CHUNK for i, ids in enumerate(chunks)])
    del chunks
    dst = adjncy[cut]
    to = ToOwners(comm, piece.vtxdist, dst)
    # as many reverses must arrive as there are own cut entries, else some lack theirs
    incoming = int(np.sum(comm.alltoallv([np.array([c], np.int64) for c in to.counts])))
    if comm.allreduce_max(int(incoming != len(cut))):
        return None
    src = xp.searchsorted(xadj, cut, side="right") - 1 + first
    got = to.send(dst, src, *(() if adjwgt is None else (adjwgt[cut],)))
    be.launch(be.kernel(CU_FILE, "piece_reverses"), len(got[0]),
              (np.int64(len(got[0])), np.int64(first), xadj, adjncy, weights, got[0], got[1],
               NULL if adjwgt is None else got[2], fault))
    if comm.allreduce_max(int(fault[0])):
        return None
    if adjwgt is None:
        return {}, (xadj, adjncy)
    degree = xp.empty(nlocal, dtype=np.int64)
    be.launch(be.kernel(CU_FILE, "row_weights"), nlocal, (np.int32(nlocal), xadj, adjwgt, degree))
    heaviest = None
    if nlocal:
        top = int(degree.max())
        heaviest = (first + int(xp.flatnonzero(degree == top)[0]), top)
    # (an int64 sum holds 2^32 weights of at most 2^31 - 1; past that, the exact host sum)
    total = (int(adjwgt.sum()) if len(adjwgt) <= 1 << 32 else exact_total(piece.adjwgt))
    return {"adjwgt": total, "heaviest_degree": heaviest}, (xadj, adjncy)


def _device_room(comm: Comm, be: Backend) -> int:
    """The bytes this rank may take on its GPU: its share of what the device has free, where
    ranks share it."""
    return be.free_memory() // comm.gpu_sharers


def _where(comm: Comm, piece: DistGraph) -> Where:
    """How messages name this rank's vertices (global ids): as ``Graph.from_csr`` does, or,
    for a piece read from a METIS file, by its file lines, as its reader does."""
    if piece.lines is None:  # the same on every rank: the pieces come from one reader
        return Where(None, None)
    h, comments = piece.lines
    before = int(np.cumsum(comm.allgather(len(comments)))[comm.rank]) - len(comments)
    # vertex v is on line h + 2 + v + the comment lines before it, as io.vertex_lines counts
    shifted = comments - (before + np.arange(len(comments)))

    def vertex_line(v: int) -> int:
        return h + 2 + v + before + int(np.searchsorted(shifted, h + 1 + v, side="right"))

    return Where(piece.name, vertex_line)


def _at_first(where: Where, first: int, bad: np.ndarray,
              message: Callable[[int], str]) -> InputError | None:
    """The error at the first own vertex marked in ``bad``, or None."""
    hits = np.flatnonzero(bad)
    if not len(hits):
        return None
    v = first + int(hits[0])
    return where.error(v, message(v))


def _row_of(piece: DistGraph, e: int) -> int:
    return int(np.searchsorted(piece.xadj, e, side="right")) - 1


def _out_of_range(where: Where, piece: DistGraph, first: int, n: int) -> InputError | None:
    a = piece.adjncy
    if not len(a) or (a.min() >= 0 and a.max() < n):
        return None
    e = int(np.flatnonzero((a < 0) | (a >= n))[0])
    v = first + _row_of(piece, e)
    return where.error(v, f"{where.vertex(v)}: neighbour {where.id(a[e])} is out of range "
                          f"[{where.id(0)}, {where.id(n - 1)}]")


def _agreed_ncon(comm: Comm, where: Where, piece: DistGraph, n: int) -> int:
    """The constraints the ranks with vertices give (InputError where they differ); where no
    rank has a vertex, the most any rank's vwgt has, at least one."""
    given = comm.allgather(1 if piece.vwgt is None else piece.vwgt.shape[1])
    ncons = {int(c) for c, k in zip(given, np.diff(piece.vtxdist), strict=True) if k}
    if len(ncons) > 1:
        raise where.error(None, f"vwgt must have shape (n, ncon) with n = {n}: the ranks give "
                                f"{sorted(ncons)} constraints")
    return ncons.pop() if ncons else max(int(given.max()), 1)


def _check_signs(comm: Comm, where: Where, piece: DistGraph, first: int, *,
                 edges: bool = True) -> None:
    """Vertex weights, edge weights (unless not ``edges``: the GPUs found them positive) and
    vertex sizes: the first negative (edge weight: not positive) one, in that order, as
    ``validated_csr`` checks them."""
    w = piece.vwgt
    if w is not None:
        comm.agree(_at_first(where, first, (w < 0).any(axis=1), lambda v: (
            f"{where.vertex(v)}: negative vertex weight {w[v - first].min()}")))
    a = piece.adjwgt
    if a is not None and edges:
        error = None
        if len(a) and a.min() <= 0:
            e = int(np.flatnonzero(a <= 0)[0])
            v = first + _row_of(piece, e)
            error = where.error(v, f"{where.vertex(v)}: edge weight {a[e]} is not positive")
        comm.agree(error)
    s = piece.vsize
    if s is not None:
        comm.agree(_at_first(where, first, s < 0, lambda v: (
            f"{where.vertex(v)}: negative vertex size {s[v - first]}")))


def _canonical(comm: Comm, where: Where, piece: DistGraph, first: int
               ) -> tuple[DistGraph, list[str], bool, Split | None]:
    """(the piece without self loops and repeated neighbours (the first of each kept), one
    process's warnings about them, whether its rows are sorted, and the symmetry check's
    ``Split`` of the piece where the scan that found nothing to drop made it)."""
    split = _clean_split(comm, piece, first)
    drop, ascending = (None, False) if split is not None else _drops(piece, first)
    found = _first_drops(where, piece, first, drop)
    found = comm.allgather_objects(found)
    warnings = []
    loops = [f[0] for f in found if f[0] is not None]
    if loops:
        v, line, _ = loops[0]
        k = sum(f[2] for f in loops)
        warnings.append(_warning(where, line, f"{where.vertex(v)} lists itself as a neighbour; "
                                              f"dropped {k} self loop{'s' if k > 1 else ''}"))
    repeats = [f[1] for f in found if f[1] is not None]
    if repeats:
        v, line, u = repeats[0][:3]
        k = sum(f[3] for f in repeats)
        warnings.append(_warning(
            where, line, f"{where.vertex(v)} lists neighbour {where.id(u)} more than once; "
                         f"dropped {k} repeated entr{'ies' if k > 1 else 'y'} (kept the first "
                         "of each)"))
    if drop is None:
        return piece, warnings, ascending, split
    keep = ~drop
    rows = np.searchsorted(piece.xadj, np.flatnonzero(drop), side="right") - 1
    xadj = np.zeros(len(piece.xadj), np.int64)
    np.cumsum(np.diff(piece.xadj) - np.bincount(rows, minlength=piece.nlocal), out=xadj[1:])
    kept = replace(piece, xadj=xadj, adjncy=piece.adjncy[keep],
                   adjwgt=None if piece.adjwgt is None else piece.adjwgt[keep])
    return kept, warnings, ascending, None


def _row_chunks(piece: DistGraph) -> np.ndarray:
    """Row bounds cutting the piece into chunks of about _CHUNK entries (whole rows)."""
    xadj = piece.xadj
    return np.unique(np.concatenate([np.searchsorted(xadj, np.arange(0, len(piece.adjncy),
                                                                     _CHUNK), side="right") - 1,
                                     [0, piece.nlocal]]))


def _drops(piece: DistGraph, first: int) -> tuple[np.ndarray | None, bool]:
    """(the entries to drop (file order): self loops and each repeated neighbour but the first
    in its row, None where there are none; whether every row lists its neighbours in
    increasing order, as it will without them). A chunk of rows at a time, on threads; a
    chunk whose rows are sorted and loop-free is only read."""
    xadj, a, n = piece.xadj, piece.adjncy, int(piece.vtxdist[-1])
    cuts = _row_chunks(piece)

    def chunk(k: int) -> tuple[np.ndarray | None, bool]:
        r0, r1 = int(cuts[k]), int(cuts[k + 1])
        e0, e1 = int(xadj[r0]), int(xadj[r1])
        rows = np.repeat(np.arange(r1 - r0, dtype=np.int64), np.diff(xadj[r0:r1 + 1]))
        s = a[e0:e1]
        loops = s == rows + (first + r0)
        same_row = rows[1:] == rows[:-1]
        ascending = not ((s[1:] < s[:-1]) & same_row).any()
        if ascending and not loops.any() and not ((s[1:] == s[:-1]) & same_row).any():
            return None, True  # rows strictly increasing: nothing repeats
        key = rows * n + s
        order = np.argsort(key, kind="stable")
        key = key[order]
        repeats = np.zeros(len(s), bool)
        repeats[order[1:]] = key[1:] == key[:-1]
        return np.flatnonzero(loops | repeats) + e0, ascending

    chunks = in_threads(chunk, len(cuts) - 1)
    ascending = all(c[1] for c in chunks)
    found = [c[0] for c in chunks if c[0] is not None and len(c[0])]
    if not found:
        return None, ascending
    drop = np.zeros(len(a), bool)
    drop[np.concatenate(found)] = True
    return drop, ascending


def _first_drops(where: Where, piece: DistGraph, first: int, drop: np.ndarray | None):
    """((first loop's vertex, its line, loops), (first repeat's vertex, its line, neighbour,
    repeats)) of this rank, each None where there is none."""
    if drop is None:
        return None, None
    pos = np.flatnonzero(drop)
    rows = first + np.searchsorted(piece.xadj, pos, side="right") - 1
    loop = piece.adjncy[pos] == rows
    loops = repeats = None
    if loop.any():
        v = int(rows[loop][0])
        loops = (v, where.line(v), int(np.count_nonzero(loop)))
    if not loop.all():
        k = int(np.flatnonzero(~loop)[0])
        v = int(rows[k])
        repeats = (v, where.line(v), int(piece.adjncy[pos[k]]), int(np.count_nonzero(~loop)))
    return loops, repeats


def _warning(where: Where, line: int | None, message: str) -> str:
    return f"{where.path}:{line}: {message}" if line is not None else f"{where.path}: {message}"


def _asymmetry(comm: Comm, where: Where, piece: DistGraph, n: int, ascending: bool,
               split: Split | None) -> InputError | None:
    """The error at the least (vertex, neighbour) where an entry lacks its reverse or the two
    weigh differently, raised by the rank owning that vertex; None elsewhere. ``ascending``:
    this rank's rows are sorted; ``split``: the piece's, where made already."""
    reports = [r for r in comm.allgather_objects(_first_asymmetry(comm, piece, n, ascending,
                                                                  split))
               if r is not None]
    if not reports:
        return None
    bad = min(reports, key=lambda r: r[:2])
    if not piece.vtxdist[comm.rank] <= bad[0] < piece.vtxdist[comm.rank + 1]:
        return None
    return where.error(bad[0], asymmetry_message(*bad)(where))


Report = tuple[int, int, int | None, int | None]  # RowScan.first_asymmetric_entry's


@dataclass
class Split:
    """A rank's entries as the symmetry check takes them: its cut entries (positions in
    adjncy, naming other ranks' vertices) and their rows, and one process's scan of the rest
    (local ids; None where not made)."""

    cut: np.ndarray
    rows: np.ndarray
    scan: RowScan | None = None

    @classmethod
    def of(cls, piece: DistGraph, first: int) -> Split:
        a = piece.adjncy
        cut = np.flatnonzero((a < first) | (a >= first + piece.nlocal))
        return cls(cut, np.searchsorted(piece.xadj, cut, side="right") - 1)

    def scan_fits(self, comm: Comm, piece: DistGraph) -> bool:
        return _scan_fits(comm, len(piece.adjncy) - len(self.cut), piece.adjwgt is not None)


def _clean_split(comm: Comm, piece: DistGraph, first: int) -> Split | None:
    """The piece's ``Split`` with its scan, where that scan (and the cut entries' order) shows
    every row free of self loops and repeats; None where it may hold some (``_drops``
    finds them) or the scan does not fit in memory."""
    split = Split.of(piece, first)
    if not split.scan_fits(comm, piece):
        return None
    split.scan = _inner_scan(piece, split.cut, split.rows, first)
    a, rows = piece.adjncy[split.cut], split.rows
    if (split.scan.unsorted or split.scan.nloops
            or ((a[1:] <= a[:-1]) & (rows[1:] == rows[:-1])).any()):
        return None
    return split


def _first_asymmetry(comm: Comm, piece: DistGraph, n: int, ascending: bool,
                     split: Split | None) -> Report | None:
    """This rank's least report (global ids): among the entries between its own vertices (by
    one process's scan where its arrays fit in memory or the rows are not sorted, else by
    binary searches) and among its cut entries and those naming its vertices. Collective."""
    first = int(piece.vtxdist[comm.rank])
    if split is None:
        split = Split.of(piece, first)
        if not ascending or split.scan_fits(comm, piece):
            split.scan = _inner_scan(piece, split.cut, split.rows, first)
    inner = (_searched_asymmetry(piece, first, n) if split.scan is None
             else _scan_report(split, first))
    found = [r for r in (inner, _cut_asymmetry(comm, piece, split.cut, first + split.rows, n))
             if r is not None]
    return min(found, key=lambda r: r[:2]) if found else None


def _scan_fits(comm: Comm, inner: int, weighted: bool) -> bool:
    """Whether ``RowScan``'s arrays for ``inner`` entries (its splits and the entries' local
    ids; their weights twice) fit in this rank's part of the memory left (every rank counted
    on this host)."""
    return inner * (SCAN_ENTRY_BYTES + 24 * weighted) * comm.size <= available_memory()


def _searched_asymmetry(piece: DistGraph, first: int, n: int) -> Report | None:
    """The least report among the entries between the rank's own vertices, whose rows are
    sorted: each entry u -> v finds u in row v by a binary search, and its weight there. A
    chunk of entries at a time, on threads: nothing is held beyond a chunk's arrays."""
    xadj, a, w, nlocal = piece.xadj, piece.adjncy, piece.adjwgt, piece.nlocal
    cuts = _row_chunks(piece)
    last = max(len(a) - 1, 0)

    def chunk(k: int) -> Report | None:
        r0, r1 = int(cuts[k]), int(cuts[k + 1])
        e0, e1 = int(xadj[r0]), int(xadj[r1])
        u = np.repeat(np.arange(first + r0, first + r1, dtype=np.int64),
                      np.diff(xadj[r0:r1 + 1]))
        v = a[e0:e1]
        at = np.flatnonzero((v >= first) & (v < first + nlocal)) + e0  # inner entries
        u, v = u[at - e0], a[at]
        lo, end = xadj[v - first], xadj[v - first + 1]
        hi = end.copy()
        while (lo < hi).any():
            mid = np.minimum((lo + hi) // 2, last)
            less = a[mid] < u
            lo, hi = np.where(less & (lo < hi), mid + 1, lo), np.where(less, hi, mid)
        lo = np.minimum(lo, last)
        found = (lo < end) & (a[lo] == u)
        reports = []
        if not found.all():  # u lists v, v does not list u: the first in row order
            i = int(np.flatnonzero(~found)[0])
            reports.append((int(u[i]), int(v[i]), None, None))
        if w is not None:
            differ = np.flatnonzero(found & (w[lo] != w[at]))
            if len(differ):
                low, high = np.minimum(u[differ], v[differ]), np.maximum(u[differ], v[differ])
                i = int(np.argmin(low * n + high))
                wu, wv = int(w[at[differ[i]]]), int(w[lo[differ[i]]])
                reports.append((int(low[i]), int(high[i]),
                                *((wu, wv) if u[differ[i]] < v[differ[i]] else (wv, wu))))
        return min(reports, key=lambda r: r[:2]) if reports else None

    found = [r for r in in_threads(chunk, len(cuts) - 1) if r is not None]
    return min(found, key=lambda r: r[:2]) if found else None


def _inner_scan(piece: DistGraph, cut: np.ndarray, rows: np.ndarray, first: int) -> RowScan:
    """One process's ``RowScan`` of the entries between the rank's own vertices (all but the
    ``cut`` entries, of ``rows``), as local ids."""
    xadj = np.zeros(len(piece.xadj), np.int64)
    np.cumsum(np.diff(piece.xadj) - np.bincount(rows, minlength=piece.nlocal), out=xadj[1:])
    a, w = piece.adjncy, piece.adjwgt
    keep = None
    if len(cut):
        keep = np.ones(len(a), bool)
        keep[cut] = False
        w = None if w is None else w[keep]
    # the inner entries' local ids, a chunk at a time on threads: no int64 copy of them
    adj = np.empty(len(a) - len(cut), np.int32)
    starts = np.arange(0, len(a), _CHUNK)
    at = starts if keep is None else np.concatenate(
        ([0], np.cumsum(np.add.reduceat(keep, starts, dtype=np.int64)) if len(a) else []))

    def chunk(k: int) -> None:
        e0 = int(starts[k])
        inner = a[e0:e0 + _CHUNK] if keep is None else a[e0:e0 + _CHUNK][keep[e0:e0 + _CHUNK]]
        np.subtract(inner, first, out=adj[int(at[k]):int(at[k]) + len(inner)],
                    casting="unsafe")

    in_threads(chunk, len(starts))
    return RowScan(xadj, adj, w)


def _scan_report(split: Split, first: int) -> Report | None:
    """The least report of the entries ``split``'s scan holds (a sorted copy's where its rows
    are not sorted), in global ids; the scan's arrays go with it."""
    scan, split.scan = split.scan, None
    if scan.unsorted:
        xadj, adj, w = scan.xadj, scan.adj, scan.w
        del scan
        adj, w = sorted_rows(xadj, adj, w)[:2]
        scan = RowScan(xadj, adj, w)
    bad = scan.first_asymmetric_entry()
    return None if bad is None else (bad[0] + first, bad[1] + first, *bad[2:])


def _cut_asymmetry(comm: Comm, piece: DistGraph, cut: np.ndarray, src: np.ndarray,
                   n: int) -> Report | None:
    """The least report among the rank's ``cut`` entries (from the vertices ``src``) and the
    reverses of the cut entries that name its vertices, which their ranks send
    (collective)."""
    w = piece.adjwgt
    dst = piece.adjncy[cut]
    owner = np.searchsorted(piece.vtxdist, dst, side="right") - 1
    by_owner = np.argsort(owner, kind="stable")
    splits = np.cumsum(np.bincount(owner, minlength=comm.size))[:-1]
    rev = np.concatenate(comm.alltoallv(np.split((dst * n + src)[by_owner], splits)))
    own = src * n + dst
    own_w = rev_w = None
    if w is not None:
        own_w = w[cut]
        rev_w = np.concatenate(comm.alltoallv(np.split(own_w[by_owner], splits)))
    order, rev_order = np.argsort(own), np.argsort(rev)
    own, rev = own[order], rev[rev_order]
    if w is not None:
        own_w, rev_w = own_w[order], rev_w[rev_order]
    if np.array_equal(own, rev) and (w is None or np.array_equal(own_w, rev_w)):
        return None
    keys = []  # (the report's key u * n + v, w(u, v), w(v, u))
    at = np.minimum(np.searchsorted(rev, own), max(len(rev) - 1, 0))
    found = (rev[at] == own) if len(rev) else np.zeros(len(own), bool)
    if not found.all():  # v lists u, u does not list v
        keys.append((int(own[~found][0]), None, None))
    back = np.minimum(np.searchsorted(own, rev), max(len(own) - 1, 0))
    listed = (own[back] == rev) if len(own) else np.zeros(len(rev), bool)
    if not listed.all():  # u lists v (reverse (v, u)), v does not list u: report (u, v)
        k = rev[~listed]
        keys.append((int(((k % n) * n + k // n).min()), None, None))
    if w is not None and found.any():
        both = np.flatnonzero(found)
        differ = both[own_w[both] != rev_w[at[both]]]
        if len(differ):
            k = own[differ]
            v, u = k // n, k % n
            low = np.minimum(v, u) * n + np.maximum(v, u)
            i = int(np.argmin(low))
            wv, wu = int(own_w[differ[i]]), int(rev_w[at[differ[i]]])
            keys.append((int(low[i]), *((wv, wu) if v[i] < u[i] else (wu, wv))))
    key, w1, w2 = min(keys, key=lambda k: k[0])
    return key // n, key % n, w1, w2


def _shape(comm: Comm, piece: DistGraph, n: int, ncon: int, warnings: tuple[str, ...],
           sums: dict) -> Shape:
    """The whole graph's ``Shape`` from the canonical pieces; ``sums``: this rank's edge
    weight total and heaviest weighted degree where the GPU summed them."""
    first = int(piece.vtxdist[comm.rank])
    vwgt, adjwgt, vsize = piece.vwgt, piece.adjwgt, piece.vsize
    degrees = np.diff(piece.xadj)
    mine = {
        "vwgt": ((piece.nlocal,) if vwgt is None
                 else tuple(exact_total(vwgt[:, c]) for c in range(vwgt.shape[1]))),
        "volume": len(piece.adjncy) if vsize is None else exact_total(vsize, degrees),
        "heaviest_vertex": _heaviest(first, None if vwgt is None else vwgt.max(axis=1),
                                     piece.nlocal),
        "max_vwgt": ((1,) * ncon if vwgt is None else tuple(int(x) for x in vwgt.max(axis=0)))
        if piece.nlocal else (0,) * ncon,
    }
    if adjwgt is None:
        mine |= {"adjwgt": len(piece.adjncy),
                 "heaviest_degree": _heaviest(first, degrees, piece.nlocal)}
    else:
        mine |= sums or {
            "adjwgt": exact_total(adjwgt),
            "heaviest_degree": _heaviest(first, np.diff(np.concatenate((
                [0], np.cumsum(adjwgt, dtype=np.int64)))[piece.xadj]), piece.nlocal)}
    ranks = comm.allgather_objects(mine)
    vtotals = tuple(sum(r["vwgt"][c] for r in ranks if len(r["vwgt"]) > c)
                    for c in range(ncon))
    heaviest_vertex = _first_max(r["heaviest_vertex"] for r in ranks)
    totals = WeightTotals(vtotals, sum(r["adjwgt"] for r in ranks),
                          sum(r["volume"] for r in ranks), heaviest_vertex[1])
    nnz = int(comm.allreduce_sum(np.array([len(piece.adjncy)], np.int64))[0])
    max_vwgt = tuple(max(r["max_vwgt"][c] for r in ranks) for c in range(ncon))
    return Shape(n, nnz, ncon, vwgt is not None, adjwgt is not None, vsize is not None, totals,
                 heaviest_vertex, _first_max(r["heaviest_degree"] for r in ranks), max_vwgt,
                 warnings)


def _heaviest(first: int, values: np.ndarray | None, nlocal: int) -> tuple[int, int] | None:
    """(global id, value) of this rank's first largest value (ones where None); None where the
    rank has no vertex."""
    if nlocal == 0:
        return None
    if values is None:
        return first, 1
    v = int(np.argmax(values))
    return first + v, int(values[v])


def _first_max(found) -> tuple[int, int]:
    """The first (lowest rank's) of the ranks' largest values; (0, 0) where no rank has one."""
    best = None
    for f in found:
        if f is not None and (best is None or f[1] > best[1]):
            best = f
    return best or (0, 0)
