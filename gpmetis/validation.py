"""Checks and canonical form shared by the file readers and the Python API.

``validated_csr`` returns CSR arrays that meet every guarantee of ``gpmetis.graph.Graph`` (whose
``validated_graph`` wraps them) or raises ``InputError``. What it does beyond the dtype and
range checks:

- **Self loops and duplicate neighbours** (which METIS accepts silently) are dropped, keeping
  the first occurrence of a duplicate (and its weight; with ``sum_repeats``, the Python
  API's choice, the first occurrence takes the sum of the repeats' weights, so every cut and
  volume is the one METIS computes on the entries as given); a warning naming the file and the
  first offending line is appended to the ``warnings``.
- **Symmetry** is checked exactly: every entry (u, v) needs a reverse entry (v, u) of the same
  weight. A missing or mismatched reverse entry is an error naming the first such vertex, unless
  ``symmetrize`` is set: then missing reverse entries are added at the end of their rows, both
  directions get the larger of the two weights, and a warning says how many were fixed.
- Row order is kept as given (METIS's results depend on it).

The symmetry check never touches the graph at random: vertices are cut into at most 256 blocks
of consecutive ids; a pass over the rows of each block (in parallel threads) splits its entries
into lower (v < u) and upper (v > u) ones and sorts the upper ones by the block of their
target; then for each block j the upper entries pointing into it, radix-sorted by (target,
source), must equal the lower entries of its rows, which sorted rows list in that order. Rows
that are not sorted are first sorted (stably) into a copy.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from gpmetis.backend import sorted_unique
from gpmetis.errors import InputError

_THREADS = min(8, os.cpu_count() or 1)  # the blocks are independent; NumPy releases the GIL
MIN_BLOCK_SHIFT = 14
_INT32_MAX = np.iinfo(np.int32).max


class Where:
    """How messages name vertices: 1-based with file lines for files, 0-based for arrays."""

    def __init__(self, path: str | None, vertex_line) -> None:
        self.path = "<input>" if path is None else str(path)
        if vertex_line is not None and not callable(vertex_line):
            lines = np.asarray(vertex_line)
            vertex_line = lines.__getitem__
        self.vertex_line = vertex_line
        self.base = 0 if vertex_line is None else 1

    def vertex(self, v: int) -> str:
        return f"vertex {int(v) + self.base}"

    def id(self, v: int) -> int:
        return int(v) + self.base

    def line(self, v: int) -> int | None:
        return None if self.vertex_line is None else int(self.vertex_line(int(v)))

    def error(self, v: int | None, message: str) -> InputError:
        line = None if v is None else self.line(v)
        return InputError(self.path, message, line)

    def warning(self, v: int, message: str) -> str:
        line = self.line(v)
        return f"{self.path}:{line}: {message}" if line is not None else f"{self.path}: {message}"


@dataclass
class CheckedCSR:
    """A graph's arrays as ``validated_csr`` guarantees them (``Graph``'s fields but its name)."""

    xadj: np.ndarray
    adjncy: np.ndarray
    vwgt: np.ndarray
    adjwgt: np.ndarray
    vsize: np.ndarray | None
    has_vwgt: bool
    has_adjwgt: bool
    warnings: list[str]


def validated_csr(
    xadj,
    adjncy,
    vwgt=None,
    adjwgt=None,
    *,
    vsize=None,
    path: str | None = None,
    vertex_line: Callable[[int], int] | np.ndarray | None = None,
    symmetrize: bool = False,
    sum_repeats: bool = False,
) -> CheckedCSR:
    """Check CSR arrays and return them in canonical form (see the module docstring).
    ``sum_repeats``: the first of an edge's repeated entries takes the sum of their weights
    (else it keeps its own).

    ``vertex_line`` (a function or an array) maps a 0-based vertex to its 1-based file line for
    messages, which then number vertices from 1 like the file; without it messages name vertices
    from 0 and the file "<input>" (or ``path``). The given arrays may be reused, not copied.
    """
    where = Where(path, vertex_line)
    xadj, adjncy, vwgt_arr, adjwgt_arr, vsize_arr = _checked(xadj, adjncy, vwgt, adjwgt, vsize,
                                                             where)
    n = len(xadj) - 1
    warnings: list[str] = []
    xadj, adjncy, adjwgt_arr = _canonical(xadj, adjncy, adjwgt_arr, where, warnings, symmetrize,
                                          sum_repeats)
    check_weight_totals(weight_totals(xadj, vwgt_arr, adjwgt_arr, vsize_arr), where.path)
    return CheckedCSR(
        xadj=xadj,
        adjncy=adjncy,
        vwgt=vwgt_arr if vwgt_arr is not None else np.ones((n, 1), np.int64),
        adjwgt=adjwgt_arr if adjwgt_arr is not None else np.ones(len(adjncy), np.int64),
        vsize=vsize_arr,
        has_vwgt=vwgt is not None,
        has_adjwgt=adjwgt_arr is not None,
        warnings=warnings,
    )


def entries_as_written(xadj, adjncy, vwgt=None, adjwgt=None, *, vsize=None,
                       path: str | None = None,
                       vertex_line: Callable[[int], int] | np.ndarray | None = None,
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """``validated_csr``'s checks of types, ranges, weights and weight totals, without its
    canonical form: xadj (int64), adjncy (int32) and adjwgt (int64, or None) with the self
    loops, repeated neighbours and one-way entries as written, for METIS's graphchk to list."""
    where = Where(path, vertex_line)
    xadj, adjncy, vwgt, adjwgt, vsize = _checked(xadj, adjncy, vwgt, adjwgt, vsize, where)
    check_weight_totals(weight_totals(xadj, vwgt, adjwgt, vsize), where.path)
    return xadj, adjncy, adjwgt


def _checked(xadj, adjncy, vwgt, adjwgt, vsize, where: Where):
    """The arrays in validated_csr's types, their shapes, ranges and weights checked."""
    xadj = _as_xadj(xadj, where)
    n = len(xadj) - 1
    adjncy = _as_adjncy(adjncy, xadj, where)
    vwgt = _as_vwgt(vwgt, n, where)
    adjwgt = None if adjwgt is None else _as_adjwgt(adjwgt, xadj, where)
    vsize = None if vsize is None else _as_vsize(vsize, n, where)
    return xadj, adjncy, vwgt, adjwgt, vsize


# ----------------------------------------------------------------------------- weight totals

INT64_MAX = 2**63 - 1
_LIMB_BITS = 16  # exact_total's slow path: 16-bit limbs ...
_LIMB_CHUNK = 1 << 15  # ... summed over this many entries at a time: below 2^16 * 2^31 * 2^15


@dataclass(frozen=True)
class WeightTotals:
    """Exact totals (Python ints) that bound every sum a partition's metrics or an engine forms:
    ``vwgt`` per constraint, ``adjwgt`` over all adjacency entries (each edge counted twice,
    as METIS sums them), ``volume`` = sum of vsize * degree (no partition's communication
    volume exceeds it) and ``heaviest``, the largest vertex weight of any constraint."""

    vwgt: tuple[int, ...]
    adjwgt: int
    volume: int
    heaviest: int


def exact_total(values: np.ndarray, factor: np.ndarray | None = None) -> int:
    """The exact sum of ``values`` (times ``factor``, entry by entry) as a Python int; both
    1-D, non-negative and integer, ``factor`` below 2^31. One int64 pass when the largest
    entries show that nothing can wrap; else 16-bit limbs summed in chunks too short to wrap."""
    if len(values) == 0:
        return 0
    fmax = 1 if factor is None else int(factor.max())
    if int(values.max()) * fmax * len(values) <= INT64_MAX:
        values = values.astype(np.int64, copy=False)
        return int(values.sum() if factor is None else np.dot(values, factor.astype(np.int64)))
    starts = np.arange(0, len(values), _LIMB_CHUNK)
    total = 0
    for shift in range(0, 64, _LIMB_BITS):
        limb = (values.astype(np.uint64) >> np.uint64(shift)).astype(np.int64) & 0xFFFF
        if factor is not None:
            limb *= factor
        total += sum(np.add.reduceat(limb, starts).tolist()) << shift
    return total


def weight_totals(xadj: np.ndarray, vwgt: np.ndarray | None, adjwgt: np.ndarray | None,
                  vsize: np.ndarray | None) -> WeightTotals:
    """The graph's ``WeightTotals``; None weights are all ones."""
    n, nnz = len(xadj) - 1, int(xadj[-1])
    if vwgt is None:
        vtotals, heaviest = (n,), int(n > 0)
    else:
        vtotals = tuple(exact_total(vwgt[:, c]) for c in range(vwgt.shape[1]))
        heaviest = int(vwgt.max()) if vwgt.size else 0
    etotal = nnz if adjwgt is None else exact_total(adjwgt)
    volume = nnz if vsize is None else exact_total(vsize, np.diff(xadj))
    return WeightTotals(vtotals, etotal, volume, heaviest)


def check_weight_totals(totals: WeightTotals, path: str) -> None:
    """InputError naming ``path`` when a total passes 2^63-1, the most an int64 (METIS's idx_t
    in pymetis, every sum of gpmetis's metrics) holds."""
    for c, total in enumerate(totals.vwgt):
        if total > INT64_MAX:
            which = f" of constraint {c}" if len(totals.vwgt) > 1 else ""
            raise InputError(path, f"the vertex weights{which} add up to {total}, beyond "
                                   f"2^63-1 = {INT64_MAX}")
    if totals.adjwgt > INT64_MAX:
        raise InputError(path, f"the edge weights add up to {totals.adjwgt} (each edge counted "
                               f"in both directions), beyond 2^63-1 = {INT64_MAX}")
    if totals.volume > INT64_MAX:
        raise InputError(path, f"the vertex sizes times the degrees add up to {totals.volume} "
                               f"(the largest communication volume), beyond 2^63-1 = "
                               f"{INT64_MAX}")


# ----------------------------------------------------------------------------- dtypes, ranges


def _integers(a, what: str, where: Where) -> np.ndarray:
    arr = np.asarray(a)
    if arr.size == 0:
        return arr.astype(np.int64).reshape(arr.shape)
    if not np.issubdtype(arr.dtype, np.integer):
        raise where.error(None, f"{what} must hold integers, not {arr.dtype}")
    return arr


def _owner(xadj: np.ndarray, e: int) -> int:
    """The vertex whose row holds adjacency entry e."""
    return int(np.searchsorted(xadj, e, side="right")) - 1


def _as_xadj(xadj, where: Where) -> np.ndarray:
    x = _integers(xadj, "xadj", where)
    if x.ndim != 1 or len(x) == 0:
        raise where.error(None, "xadj must be a 1-D array of n + 1 offsets")
    x = np.ascontiguousarray(x, dtype=np.int64)
    if x[0] != 0:
        raise where.error(None, f"xadj[0] must be 0, not {x[0]}")
    dec = np.flatnonzero(x[1:] < x[:-1])
    if len(dec):
        raise where.error(int(dec[0]), f"xadj decreases at {where.vertex(dec[0])}")
    return x


def _as_adjncy(adjncy, xadj: np.ndarray, where: Where) -> np.ndarray:
    a = _integers(adjncy, "adjncy", where)
    n = len(xadj) - 1
    if a.ndim != 1 or len(a) != xadj[-1]:
        raise where.error(None, f"adjncy has {a.size} entries but xadj[-1] is {xadj[-1]}")
    if n > _INT32_MAX:
        raise where.error(None, f"{n} vertices: at most {_INT32_MAX} are supported")
    if len(a) and (a.min() < 0 or a.max() >= n):
        e = int(np.flatnonzero((a < 0) | (a >= n))[0])
        v = _owner(xadj, e)
        lo, hi = where.id(0), where.id(n - 1)
        raise where.error(
            v, f"{where.vertex(v)}: neighbour {where.id(a[e])} is out of range [{lo}, {hi}]"
        )
    return np.ascontiguousarray(a, dtype=np.int32)


def _as_vwgt(vwgt, n: int, where: Where) -> np.ndarray | None:
    if vwgt is None:
        return None
    w = _integers(vwgt, "vwgt", where)
    if w.ndim == 1 and n and len(w) % n == 0 and len(w):
        w = w.reshape(n, len(w) // n)
    if w.ndim != 2 or w.shape[0] != n or w.shape[1] < 1:
        raise where.error(None, f"vwgt must have shape (n, ncon) with n = {n}, not {w.shape}")
    neg = np.flatnonzero((w < 0).any(axis=1))
    if len(neg):
        v = int(neg[0])
        raise where.error(v, f"{where.vertex(v)}: negative vertex weight {w[v].min()}")
    return np.ascontiguousarray(w, dtype=np.int64)


def _as_vsize(vsize, n: int, where: Where) -> np.ndarray:
    s = _integers(vsize, "vsize", where)
    if s.shape != (n,):
        raise where.error(None, f"vsize must have {n} entries, not shape {s.shape}")
    neg = np.flatnonzero(s < 0)
    if len(neg):
        v = int(neg[0])
        raise where.error(v, f"{where.vertex(v)}: negative vertex size {s[v]}")
    return np.ascontiguousarray(s, dtype=np.int64)


def _as_adjwgt(adjwgt, xadj: np.ndarray, where: Where) -> np.ndarray:
    w = _integers(adjwgt, "adjwgt", where)
    if w.shape != (xadj[-1],):
        raise where.error(None, f"adjwgt must have {xadj[-1]} entries, not shape {w.shape}")
    if len(w) and w.min() <= 0:
        e = int(np.flatnonzero(w <= 0)[0])
        v = _owner(xadj, e)
        raise where.error(v, f"{where.vertex(v)}: edge weight {w[e]} is not positive")
    return np.ascontiguousarray(w, dtype=np.int64)


# ----------------------------------------------------------------------------- canonical form


def _canonical(xadj, adjncy, adjwgt, where: Where, warnings: list[str], symmetrize: bool,
               sum_repeats: bool = False):
    """Drop self loops and duplicates (``sum_repeats``: their weights added to the first),
    then check (or restore) symmetry."""
    scan = RowScan(xadj, adjncy, adjwgt)
    if scan.unsorted:  # check a sorted copy
        del scan
        sorted_adj, sorted_w, drop, drop_sorted, adjwgt = sorted_rows(xadj, adjncy, adjwgt,
                                                                       sum_repeats)
        if drop is not None:
            _warn(xadj, adjncy, drop, where, warnings, sum_repeats)
            _, sorted_adj, sorted_w = _compact(xadj, sorted_adj, sorted_w, drop_sorted)
            xadj, adjncy, adjwgt = _compact(xadj, adjncy, adjwgt, drop)
        scan = RowScan(xadj, sorted_adj, sorted_w)
        del sorted_adj, sorted_w
    elif scan.nloops:
        drop = adjncy == _sources(xadj, 0, len(xadj) - 1)
        _warn(xadj, adjncy, drop, where, warnings)
        xadj, adjncy, adjwgt = _compact(xadj, adjncy, adjwgt, drop)
    bad = scan.first_asymmetric_entry()
    del scan
    if bad is not None:
        if not symmetrize:
            raise where.error(bad[0], asymmetry_message(*bad)(where))
        xadj, adjncy, adjwgt = _symmetrized(xadj, adjncy, adjwgt, where, warnings)
    return xadj, adjncy, adjwgt


def _sources(xadj: np.ndarray, r0: int, r1: int) -> np.ndarray:
    """Row id (int32) of every entry of rows r0..r1-1."""
    return np.repeat(np.arange(r0, r1, dtype=np.int32), np.diff(xadj[r0 : r1 + 1]))


def sorted_rows(xadj, adjncy, adjwgt, sum_repeats: bool = False):
    """Copies of adjncy (and adjwgt) with every row sorted, stably, the entries to drop: self
    loops and repeated neighbours but the first of each, as masks in file order and in sorted
    order (both None when there are none), and adjwgt (with ``sum_repeats`` and repeats: a
    copy, or ones where it was None, in which the first of each repeated neighbour holds the
    weights of all, in both orders). Sorts about 2^20 entries at a time.
    """
    n, nnz = len(xadj) - 1, len(adjncy)
    sorted_adj = np.empty(nnz, np.int32)
    sorted_w = None if adjwgt is None else np.empty(nnz, np.int64)
    cuts = np.searchsorted(xadj, np.arange(0, nnz, 1 << 20), side="right") - 1
    cuts = sorted_unique(np.concatenate([cuts, [0, n]]))

    def piece(k: int):
        r0, r1 = int(cuts[k]), int(cuts[k + 1])
        e0, e1 = int(xadj[r0]), int(xadj[r1])
        src = _sources(xadj, r0, r1)
        a = adjncy[e0:e1]
        order = np.argsort((src - r0).astype(np.int64) * n + a, kind="stable")
        s = a[order]
        sorted_adj[e0:e1] = s
        if adjwgt is not None:
            sorted_w[e0:e1] = adjwgt[e0:e1][order]
        loops = s == src
        repeats = np.zeros(len(s), bool)
        repeats[1:] = (s[1:] == s[:-1]) & (src[1:] == src[:-1])
        repeats &= ~loops  # a repeated self loop counts as a self loop
        drop = np.flatnonzero(loops | repeats)
        if not sum_repeats:
            return order[drop] + e0, drop + e0
        # per repeat, the first entry of its run (sorted position; runs are consecutive)
        first = np.maximum.accumulate(np.where(repeats, 0, np.arange(len(s))))
        rep = np.flatnonzero(repeats)
        return (order[drop] + e0, drop + e0, rep + e0, first[rep] + e0, order[rep] + e0,
                order[first[rep]] + e0)

    drops = [d for d in in_threads(piece, len(cuts) - 1) if len(d[0])]
    if not drops:
        return sorted_adj, sorted_w, None, None, adjwgt
    masks = []
    for k in range(2):
        mask = np.zeros(nnz, bool)
        mask[np.concatenate([d[k] for d in drops])] = True
        masks.append(mask)
    if sum_repeats and any(len(d[2]) for d in drops):
        rep_sorted, first_sorted, rep_file, first_file = (
            np.concatenate([d[k] for d in drops]) for k in range(2, 6))
        if adjwgt is None:
            adjwgt, sorted_w = np.ones(nnz, np.int64), np.ones(nnz, np.int64)
        else:
            adjwgt = adjwgt.astype(np.int64)  # a copy: the caller's array is not changed
        np.add.at(adjwgt, first_file, adjwgt[rep_file])
        np.add.at(sorted_w, first_sorted, sorted_w[rep_sorted])
    return sorted_adj, sorted_w, masks[0], masks[1], adjwgt


def _warn(xadj, adjncy, drop: np.ndarray, where: Where, warnings: list[str],
          summed: bool = False) -> None:
    """Warnings for the self loops and repeated neighbours marked in ``drop`` (file order;
    ``summed``: the repeats' weights went to the first of each)."""
    pos = np.flatnonzero(drop)
    rows = np.searchsorted(xadj, pos, side="right") - 1
    loop = adjncy[pos] == rows
    if loop.any():
        v, k = int(rows[loop][0]), int(np.count_nonzero(loop))
        warnings.append(
            where.warning(
                v,
                f"{where.vertex(v)} lists itself as a neighbour; dropped {k} self "
                f"loop{'s' if k > 1 else ''}",
            )
        )
    if not loop.all():
        e, k = int(pos[~loop][0]), int(np.count_nonzero(~loop))
        v = int(rows[~loop][0])
        warnings.append(
            where.warning(
                v,
                f"{where.vertex(v)} lists neighbour {where.id(adjncy[e])} more than once; "
                f"dropped {k} repeated entr{'ies' if k > 1 else 'y'} (kept the first of each"
                f"{', with the weights of all' if summed else ''})",
            )
        )


def _compact(xadj, adjncy, adjwgt, drop: np.ndarray):
    """The CSR arrays without the entries marked in ``drop``."""
    rows = np.searchsorted(xadj, np.flatnonzero(drop), side="right") - 1
    new_xadj = np.zeros(len(xadj), np.int64)
    np.cumsum(np.diff(xadj) - np.bincount(rows, minlength=len(xadj) - 1), out=new_xadj[1:])
    keep = ~drop
    return new_xadj, adjncy[keep], None if adjwgt is None else adjwgt[keep]


class RowScan:
    """One pass over the rows: whether they are sorted (it stops at the first that is not),
    self loops, and the lower/upper split of the entries that ``first_asymmetry`` compares
    block by block (see the module docstring)."""

    def __init__(self, xadj: np.ndarray, adj: np.ndarray, w: np.ndarray | None) -> None:
        n, nnz = len(xadj) - 1, len(adj)
        self.xadj, self.adj, self.w = xadj, adj, w
        # at most 256 blocks, of at least 2^MIN_BLOCK_SHIFT rows: a small graph is one block,
        # checked without the threads' start-up and per-block calls
        self.shift = max(MIN_BLOCK_SHIFT, (n - 1).bit_length() - 8)
        nb = ((n - 1) >> self.shift) + 1 if n else 0
        self.row0 = np.minimum(np.arange(nb + 1, dtype=np.int64) << self.shift, n)
        self.e0 = xadj[self.row0]
        # the entries of row block i are written from e0[i] on: the upper ones grouped by the
        # block of their target, the lower ones as their targets only (rows are implied)
        self.up_src = np.empty(nnz, np.int32)
        self.up_dst = np.empty(nnz, np.int32)
        self.low_dst = np.empty(nnz, np.int32)
        self.up_w = np.empty(nnz, np.int64) if w is not None else None
        self.low_w = np.empty(nnz, np.int64) if w is not None else None
        self.count = np.zeros((nb, nb), np.int64)  # [i, j]: upper entries of block i into j
        self.nlow = np.zeros(nb, np.int64)
        self.unsorted = False
        self.nloops = sum(in_threads(self._split, nb))
        self.start = np.zeros((nb, nb), np.int64)  # [i, j]: where block (i, j) starts
        np.cumsum(self.count[:, :-1], axis=1, out=self.start[:, 1:])
        self.start += self.e0[:-1, None]

    def _split(self, i: int) -> int:
        """Split the rows of block i; returns the number of self loops there."""
        r0, r1 = int(self.row0[i]), int(self.row0[i + 1])
        e0, e1 = int(self.e0[i]), int(self.e0[i + 1])
        if self.unsorted:
            return 0
        a = self.adj[e0:e1]
        src = _sources(self.xadj, r0, r1)
        if ((a[1:] <= a[:-1]) & (src[1:] == src[:-1])).any():
            self.unsorted = True  # the caller sorts a copy and starts again: stop the others
            return 0
        up = a > src
        lo = a < src
        nup, nlo = np.count_nonzero(up), np.count_nonzero(lo)
        dst = a[up]
        block = (dst >> self.shift).astype(np.uint8)
        order = np.argsort(block, kind="stable")
        self.up_src[e0 : e0 + nup] = src[up][order]
        self.up_dst[e0 : e0 + nup] = dst[order]
        self.low_dst[e0 : e0 + nlo] = a[lo]
        if self.w is not None:
            w = self.w[e0:e1]
            self.up_w[e0 : e0 + nup] = w[up][order]
            self.low_w[e0 : e0 + nlo] = w[lo]
        self.count[i] = np.bincount(block, minlength=len(self.nlow))
        self.nlow[i] = nlo
        return (e1 - e0) - nup - nlo

    def first_asymmetric_entry(self) -> tuple[int, int, int | None, int | None] | None:
        """None when the graph is symmetric, else the least (u, v) of the entries u -> v
        without v -> u, and of the edges u < v whose two entries weigh differently: (u, v,
        None, None) or (u, v, w(u, v), w(v, u)), as ``asymmetry_message`` takes them."""
        nb = len(self.nlow)
        same = in_threads(self._same, nb)
        bad = [self._differences(j) for j in range(nb) if not same[j]]
        return min(bad, key=lambda b: b[:2]) if bad else None

    def _lower(self, j: int):
        """Targets (and weights) of the lower entries of block j's rows, in row order."""
        e0, e1 = int(self.e0[j]), int(self.e0[j]) + int(self.nlow[j])
        return self.low_dst[e0:e1], None if self.low_w is None else self.low_w[e0:e1]

    def _upper_into(self, j: int) -> np.ndarray:
        """Positions of the upper entries into block j, in order of target, then source."""
        lens = self.count[:, j]
        offs = np.zeros(len(lens), np.int64)
        np.cumsum(lens[:-1], out=offs[1:])
        idx = np.repeat(self.start[:, j] - offs, lens) + np.arange(int(lens.sum()))
        dst = self.up_dst[idx] - int(self.row0[j])
        if self.shift <= 16:
            order = np.argsort(dst.astype(np.uint16), kind="stable")
        else:  # two stable radix passes
            order = np.argsort((dst & 0xFFFF).astype(np.uint16), kind="stable")
            order = order[np.argsort((dst[order] >> 16).astype(np.uint16), kind="stable")]
        return idx[order]

    def _same(self, j: int) -> bool:
        if int(self.count[:, j].sum()) != int(self.nlow[j]):
            return False
        idx = self._upper_into(j)
        low_dst, low_w = self._lower(j)
        if not np.array_equal(self.up_src[idx], low_dst):
            return False
        return low_w is None or np.array_equal(self.up_w[idx], low_w)

    def _differences(self, j: int):
        """The least asymmetric entry (``first_asymmetric_entry``'s tuple) among the lower
        entries of block j and the upper entries into it, by exact key comparison."""
        r0, r1 = int(self.row0[j]), int(self.row0[j + 1])
        a = self.adj[self.xadj[r0] : self.xadj[r1]]
        rows = _sources(self.xadj, r0, r1)
        low_dst, low_w = self._lower(j)
        low_key = rows[a < rows].astype(np.int64) << 32 | low_dst
        idx = self._upper_into(j)
        dst, src = self.up_dst[idx], self.up_src[idx]
        w = None if self.up_w is None else self.up_w[idx]
        up_key = dst.astype(np.int64) << 32 | src
        found = []
        # an upper entry u -> v without v -> u: vertex u; a lower entry v -> u without u -> v: v
        miss = np.flatnonzero(~np.isin(up_key, low_key))
        if len(miss):
            k = miss[np.argmin(src[miss])]
            found.append((int(src[k]), int(dst[k]), None, None))
        miss = np.flatnonzero(~np.isin(low_key, up_key))
        if len(miss):
            v, u = int(low_key[miss[0]] >> 32), int(low_key[miss[0]] & 0xFFFFFFFF)
            found.append((v, u, None, None))
        if w is not None:
            _, iu, il = np.intersect1d(up_key, low_key, assume_unique=True, return_indices=True)
            diff = np.flatnonzero(w[iu] != low_w[il])
            if len(diff):
                k = diff[np.argmin(src[iu[diff]])]
                u, v = int(src[iu[k]]), int(dst[iu[k]])
                found.append((u, v, int(w[iu[k]]), int(low_w[il[k]])))
        return min(found, key=lambda f: f[:2])


def in_threads(function: Callable[[int], Any], count: int) -> list:
    """``function`` of 0..count-1, on the threads when there are more than two (fewer run
    sooner here than the threads' import and start-up)."""
    if count <= 2:
        return [function(i) for i in range(count)]
    from concurrent.futures import ThreadPoolExecutor  # imported by large graphs only

    with ThreadPoolExecutor(_THREADS) as pool:
        return list(pool.map(function, range(count)))


def asymmetry_message(u: int, v: int, wu: int | None, wv: int | None
                      ) -> Callable[[Where], str]:
    """The message of ``RowScan.first_asymmetric_entry``'s (u, v, wu, wv)."""
    if wu is None:
        return lambda where: (
            f"{where.vertex(u)} lists neighbour {where.id(v)}, but {where.vertex(v)} does not "
            f"list {where.id(u)} (the graph must be symmetric)")
    return lambda where: (
        f"edge {where.id(u)}-{where.id(v)} has weight {wu} but edge {where.id(v)}-{where.id(u)} "
        f"has weight {wv} (the graph must be symmetric)")


def _symmetrized(xadj, adjncy, adjwgt, where: Where, warnings: list[str]):
    """Add the missing reverse entries at the end of their rows (ordered by neighbour) and give
    both directions of an edge the larger weight. Exact and sort-based; asymmetric input only."""
    n, nnz = len(xadj) - 1, len(adjncy)
    src = _sources(xadj, 0, n).astype(np.int64)
    key = src * n + adjncy
    order = np.argsort(key)
    rkey = adjncy.astype(np.int64) * n + src  # the key of each entry's reverse
    rorder = np.argsort(rkey)
    pos = np.minimum(np.searchsorted(key[order], rkey[rorder]), nnz - 1)
    found = np.empty(nnz, bool)
    found[rorder] = key[order[pos]] == rkey[rorder]
    offend = ~found
    nraised = 0
    if adjwgt is not None:
        rev_w = np.empty(nnz, np.int64)
        rev_w[rorder] = adjwgt[order[pos]]
        raise_ = found & (rev_w > adjwgt)
        offend |= found & (rev_w != adjwgt)
        nraised = int(np.count_nonzero(raise_))
        adjwgt = np.where(raise_, rev_w, adjwgt)
    miss = np.flatnonzero(~found)
    add_row, add_nbr = adjncy[miss].astype(np.int64), src[miss]
    by_row = np.argsort(add_row * n + add_nbr)
    add_row, add_nbr, miss = add_row[by_row], add_nbr[by_row], miss[by_row]

    deg = np.diff(xadj)
    extra = np.bincount(add_row, minlength=n)
    new_xadj = np.zeros(n + 1, np.int64)
    np.cumsum(deg + extra, out=new_xadj[1:])
    first_extra = np.cumsum(extra) - extra
    old_pos = new_xadj[src] + (np.arange(nnz) - xadj[src])
    add_pos = new_xadj[add_row] + deg[add_row] + (np.arange(len(miss)) - first_extra[add_row])
    new_adj = np.empty(new_xadj[-1], np.int32)
    new_adj[old_pos] = adjncy
    new_adj[add_pos] = add_nbr
    new_w = None
    if adjwgt is not None:
        new_w = np.empty(len(new_adj), np.int64)
        new_w[old_pos] = adjwgt
        new_w[add_pos] = adjwgt[miss]
    v = int(src[np.flatnonzero(offend)[0]])
    warnings.append(
        where.warning(
            v,
            f"symmetrized the graph: added {len(miss)} missing reverse "
            f"entr{'y' if len(miss) == 1 else 'ies'}, raised {nraised} edge "
            f"weight{'' if nraised == 1 else 's'} to match the reverse edge "
            f"(first at {where.vertex(v)})",
        )
    )
    return new_xadj, new_adj, new_w
