"""METIS 5.1 graphchk's check of a graph as written (libmetis's CheckGraph): every self loop,
missing reverse entry, reverse entry of another weight and repeated neighbour, in METIS's
words and order, found by sorting the entries' keys once and printed a block at a time.

METIS's order: entry by entry in CSR order; for entry (i, k), first "contains a self-loop"
(i == k), "Missing edge: (k i)" (row k does not list i) or "do not have the same weight" (the
first i of row k has another weight), then "is repeated c times" when i listed k c times
before it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import reduce

import numpy as np

BLOCK = 1 << 16  # entries whose messages are formatted at a time
LOOP, MISSING, MISMATCH = 1, 2, 3  # GraphCheck.kind (0: no such error)


@dataclass
class GraphCheck:
    """CheckGraph's findings on a graph of ``nvtxs`` vertices and ``nedges`` edges (entries
    / 2): for each entry with an error, in CSR order, its vertex ``src`` and neighbour ``nbr``
    (0-based), ``kind`` of its first error, ``weights`` (its own and its reverse's, for
    MISMATCH) and ``repeats`` (how often its row listed that neighbour before it)."""

    nvtxs: int
    nedges: int
    src: np.ndarray
    nbr: np.ndarray
    kind: np.ndarray
    weights: np.ndarray
    repeats: np.ndarray

    @property
    def nerrors(self) -> int:
        """The count METIS prints: an entry's first error and its repetition count apart."""
        return int(np.count_nonzero(self.kind) + np.count_nonzero(self.repeats))

    def blocks(self) -> Iterator[str]:
        """METIS's messages, one a line, in blocks of at most 2 BLOCK lines (no final line
        break), so that printing them needs no more memory than one block's."""
        for b0 in range(0, len(self.src), BLOCK):
            cut = slice(b0, b0 + BLOCK)
            i, k = (self.src[cut] + 1).astype(str), (self.nbr[cut] + 1).astype(str)
            kind, repeats = self.kind[cut], self.repeats[cut]
            w = self.weights[cut].astype(str)
            text = np.full((len(i), 2), "", dtype=object)
            at = kind == LOOP
            text[at, 0] = _cat("Vertex ", i[at],
                               " contains a self-loop (i.e., diagonal entry in the matrix)!")
            at = kind == MISSING
            text[at, 0] = _cat("Missing edge: (", k[at], " ", i[at], ")!")
            at = kind == MISMATCH
            text[at, 0] = _cat("Edges (u:", i[at], " v:", k[at], " wgt:", w[at, 0], ") and (v:",
                               k[at], " u:", i[at], " wgt:", w[at, 1],
                               ") do not have the same weight!")
            at = repeats > 0
            text[at, 1] = _cat("Edge ", k[at], " from vertex ", i[at], " is repeated ",
                               repeats[at].astype(str), " times")
            lines = text.ravel()
            yield "\n".join(lines[lines != ""].tolist())


def _cat(*parts) -> np.ndarray:
    """Element-wise concatenation of strings and string arrays."""
    return reduce(np.char.add, parts)


def check_graph(xadj: np.ndarray, adjncy: np.ndarray, adjwgt: np.ndarray | None) -> GraphCheck:
    """CheckGraph on CSR arrays as written (xadj int64, adjncy int32 within 0..n-1, adjwgt
    int64 or None for no edge weights)."""
    n, nnz = len(xadj) - 1, len(adjncy)
    src = np.repeat(np.arange(n, dtype=np.int64), np.diff(xadj))
    key = src * n + adjncy
    order = np.argsort(key, kind="stable")  # equal keys keep file order
    skey = key[order]
    del key
    first = np.searchsorted(skey, skey)  # sorted position of the first of each key's run
    repeats = np.empty(nnz, np.int64)
    repeats[order] = np.arange(nnz) - first
    del first
    # the first entry of row k listing i, for each entry (i, k)
    rkey = adjncy.astype(np.int64) * n + src
    at = np.minimum(np.searchsorted(skey, rkey), nnz - 1)
    found = skey[at] == rkey
    del skey, rkey
    loop = adjncy == src
    kind = np.where(loop, LOOP, np.where(found, 0, MISSING)).astype(np.int8)
    rev = order[at]  # that entry, where found
    if adjwgt is not None:
        kind[found & ~loop & (adjwgt != adjwgt[rev])] = MISMATCH
    bad = np.flatnonzero(kind | (repeats > 0))
    weights = np.zeros((len(bad), 2), np.int64)
    if adjwgt is not None:
        weights[:, 0], weights[:, 1] = adjwgt[bad], adjwgt[rev[bad]]
    return GraphCheck(n, nnz // 2, src[bad], adjncy[bad].astype(np.int64), kind[bad], weights,
                      repeats[bad])
