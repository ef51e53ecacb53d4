"""A mesh's dual and nodal graphs, and the partition of one side induced by the other.

A mesh is METIS's ``(eptr, eind)``: element e has the nodes ``eind[eptr[e]:eptr[e+1]]``
(0-based, a node listed twice in one element counts once). Everything is built with sorts and
bincounts over the (element, node) incidences, no Python loop per element or node.

- Dual graph (METIS_MeshToDual): one vertex per element; elements e and f are adjacent when
  they share s >= 1 nodes with s >= ncommon, or s >= len(e) - 1, or s >= len(f) - 1. Cost:
  one pair per two elements sharing a node, sum over nodes of degree^2 / 2.
- Nodal graph (METIS_MeshToNodal): one vertex per node; two nodes are adjacent when some element
  holds both. Cost: sum over elements of length^2 / 2 pairs.
"""

from __future__ import annotations

import numpy as np

from gpmetis.backend import sorted_unique
from gpmetis.graph import Graph


def _incidences(eptr: np.ndarray, eind: np.ndarray, nn: int) -> tuple[np.ndarray, np.ndarray]:
    """(element, node) of every distinct incidence, sorted by element then node."""
    ne = len(eptr) - 1
    elem = np.repeat(np.arange(ne, dtype=np.int64), np.diff(eptr))
    key = sorted_unique(elem * nn + eind)
    return key // nn, key % nn


def _pairs_within(group: np.ndarray, member: np.ndarray, ngroups: int):
    """Every (a, b) with a < b members of one group; ``group`` sorted ascending."""
    size = np.bincount(group, minlength=ngroups)
    start = np.zeros(ngroups + 1, np.int64)
    np.cumsum(size, out=start[1:])
    # incidence j pairs with the members of its group that come after it
    pos = np.arange(len(group), dtype=np.int64)
    after = start[group + 1] - pos - 1
    first = np.repeat(member, after)
    base = np.repeat(pos + 1 - np.cumsum(after) + after, after)
    second = member[base + np.arange(len(first), dtype=np.int64)]
    return first, second


def _csr_graph(n: int, a: np.ndarray, b: np.ndarray, name: str) -> Graph:
    """The unweighted graph with the undirected edges {a_i, b_i} (distinct, no self loops)."""
    key = np.concatenate([a * n + b, b * n + a])
    key.sort()
    xadj = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(key // n, minlength=n), out=xadj[1:])
    return Graph(xadj=xadj, adjncy=(key % n).astype(np.int32), vwgt=np.ones((n, 1), np.int64),
                 adjwgt=np.ones(len(key), np.int64), name=name)


def dual_graph(eptr, eind, nn: int, ncommon: int = 1, *, name: str = "dual graph") -> Graph:
    """The mesh's dual graph (see the module docstring); ``ncommon`` below 1 counts as 1."""
    eptr = np.asarray(eptr, dtype=np.int64)
    eind = np.asarray(eind, dtype=np.int64)
    ne = len(eptr) - 1
    elem, node = _incidences(eptr, eind, nn)
    order = np.argsort(node, kind="stable")  # by node, elements ascending within a node
    e1, e2 = _pairs_within(node[order], elem[order], nn)
    key, shared = _counted(e1 * ne + e2)
    a, b = key // ne, key % ne
    length = np.bincount(elem, minlength=ne)
    keep = (shared >= max(ncommon, 1)) | (shared >= length[a] - 1) | (shared >= length[b] - 1)
    return _csr_graph(ne, a[keep], b[keep], name)


def nodal_graph(eptr, eind, nn: int, *, name: str = "nodal graph") -> Graph:
    """The mesh's nodal graph (see the module docstring)."""
    eptr = np.asarray(eptr, dtype=np.int64)
    eind = np.asarray(eind, dtype=np.int64)
    elem, node = _incidences(eptr, eind, nn)
    n1, n2 = _pairs_within(elem, node, len(eptr) - 1)
    key = sorted_unique(n1 * nn + n2)
    return _csr_graph(nn, key // nn, key % nn, name)


# Rounds of moving rows out of parts above their target; each round settles every part's
# excess at once, and meshes need one or two.
_BALANCE_ROUNDS = 8


def induce_partition(rowptr, rowind, colpart: np.ndarray, nparts: int,
                     tpwgts: np.ndarray | None = None) -> np.ndarray:
    """Parts of the rows (int32, all in [0, nparts)) from the parts of their columns, as
    METIS's InduceRowPartFromColumnPart does: a row whose columns share one part takes it;
    a mixed row takes its most frequent part (the lowest id on a tie), and rows move from
    parts above their target (1 + nrows * tpwgts[p], METIS's) to the least loaded part among
    their columns' while one is below its own. Rows without columns go to the least loaded
    parts."""
    rowptr = np.asarray(rowptr, dtype=np.int64)
    nrows = len(rowptr) - 1
    row = np.repeat(np.arange(nrows, dtype=np.int64), np.diff(rowptr))
    key, count = _counted(row * nparts + colpart[np.asarray(rowind)])
    krow, kpart = key // nparts, key % nparts
    ndistinct = np.bincount(krow, minlength=nrows)
    # the most frequent part of each row: sort by (row, -count, part), take each row's first
    best = np.lexsort((kpart, -count, krow))
    first = np.ones(len(best), bool)
    first[1:] = krow[best[1:]] != krow[best[:-1]]
    part = np.full(nrows, -1, np.int64)
    part[krow[best[first]]] = kpart[best[first]]
    if tpwgts is None:
        target = np.full(nparts, 1 + nrows // nparts, np.int64)
    else:
        target = (1 + nrows * np.asarray(tpwgts, dtype=np.float64)).astype(np.int64)
    mixed = ndistinct > 1
    for _ in range(_BALANCE_ROUNDS):
        load = np.bincount(part[part >= 0], minlength=nparts)
        excess = load - target
        if not (excess > 0).any():
            break
        # candidates: each mixed row's parts below target, the most room first
        cand = mixed[krow] & (excess[kpart] < 0)
        if not cand.any():
            break
        ck, cp = krow[cand], kpart[cand]
        o = np.lexsort((excess[cp], ck))
        ck, cp = ck[o], cp[o]
        head = np.ones(len(ck), bool)
        head[1:] = ck[1:] != ck[:-1]
        movers, dest = ck[head], cp[head]
        src = part[movers]
        over = excess[src] > 0
        movers, dest, src = movers[over], dest[over], src[over]
        # at most `excess` rows leave each part, and at most `room` arrive in each
        rank_out = _rank_within(src)
        ok = rank_out < excess[src]
        movers, dest = movers[ok], dest[ok]
        ok = _rank_within(dest) < -excess[dest]
        part[movers[ok]] = dest[ok]
    empty = np.flatnonzero(part < 0)
    if len(empty):
        load = np.bincount(part[part >= 0], minlength=nparts)
        part[empty] = np.argsort(load, kind="stable")[np.arange(len(empty)) % nparts]
    return part.astype(np.int32)


def _counted(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(sorted distinct keys, how often each occurs), by sorting (NumPy's hash-based
    ``unique`` is several times slower on these arrays)."""
    keys = np.sort(keys)
    start = np.flatnonzero(np.concatenate([[True], keys[1:] != keys[:-1]])) if len(keys) \
        else np.zeros(0, np.int64)
    return keys[start], np.diff(np.append(start, len(keys)))


def _rank_within(group: np.ndarray) -> np.ndarray:
    """For each entry, how many earlier entries have the same group value."""
    order = np.argsort(group, kind="stable")
    g = group[order]
    start = np.flatnonzero(np.concatenate([[True], g[1:] != g[:-1]])) if len(g) else g
    first = np.repeat(start, np.diff(np.append(start, len(g))))
    rank = np.empty(len(group), np.int64)
    rank[order] = np.arange(len(group)) - first
    return rank
