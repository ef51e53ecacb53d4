"""The graph in METIS's CSR form, as every phase of the pipeline sees it."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from gpmetis.validation import WeightTotals, validated_csr, weight_totals


@dataclass
class Graph:
    """An undirected graph in CSR form with 0-based ids.

    Guarantees (checked by ``validated_graph``, which the readers and ``Graph.from_csr`` use):
    ``xadj`` is int64 of length n + 1, ``adjncy`` int32 with every edge stored in both
    directions, no self loops, no duplicate neighbours, ``adjwgt`` (same length as adjncy, > 0,
    symmetric) and ``vwgt`` (shape (n, ncon), >= 0) are int64; ``has_vwgt``/``has_adjwgt``
    False means those weights are all ones. ``vsize`` (communication size of each vertex) is
    int64 or None. ``device``, set by the GPU reader, holds the same xadj, adjncy and (with
    has_adjwgt) adjwgt as CuPy arrays; the gpu engine's upload takes them over instead of
    copying the host arrays back.
    """

    xadj: np.ndarray
    adjncy: np.ndarray
    vwgt: np.ndarray
    adjwgt: np.ndarray
    vsize: np.ndarray | None = None
    name: str = "graph"
    has_vwgt: bool = False
    has_adjwgt: bool = False
    warnings: list[str] = field(default_factory=list)
    device: tuple | None = field(default=None, compare=False, repr=False)

    @property
    def nvtxs(self) -> int:
        return len(self.xadj) - 1

    @property
    def nedges(self) -> int:
        """Number of undirected edges (METIS's m)."""
        return len(self.adjncy) // 2

    @property
    def ncon(self) -> int:
        return self.vwgt.shape[1]

    def degrees(self) -> np.ndarray:
        return np.diff(self.xadj)

    @cached_property
    def heaviest_degree(self) -> tuple[int, int]:
        """(v, its weighted degree) for the vertex whose edges weigh the most together (exact:
        the graph's total edge weight fits an int64); computed once (``-engine=auto``'s choice
        and the engines' limits both ask)."""
        if self.nvtxs == 0:
            return 0, 0
        if not self.has_adjwgt:
            degrees = np.diff(self.xadj)
        else:
            ends = np.concatenate(([0], np.cumsum(self.adjwgt, dtype=np.int64)))
            degrees = np.diff(ends[self.xadj])
        v = int(np.argmax(degrees))
        return v, int(degrees[v])

    @cached_property
    def heaviest_vertex(self) -> tuple[int, int]:
        """(v, its weight) for the first vertex that weighs the most in any constraint; (0, 0)
        for a graph without vertices."""
        if self.nvtxs == 0:
            return 0, 0
        heaviest = self.vwgt.max(axis=1)
        v = int(np.argmax(heaviest))
        return v, int(heaviest[v])

    @cached_property
    def max_vwgt(self) -> tuple[int, ...]:
        """Each constraint's heaviest vertex weight (zeros for a graph without vertices)."""
        if self.nvtxs == 0:
            return (0,) * self.ncon
        return tuple(int(w) for w in self.vwgt.max(axis=0))

    @cached_property
    def weight_totals(self) -> WeightTotals:
        """The exact totals that bound every sum of a run (``validation.weight_totals``)."""
        return weight_totals(self.xadj, self.vwgt if self.has_vwgt else None,
                             self.adjwgt if self.has_adjwgt else None, self.vsize)

    def sources(self) -> np.ndarray:
        """The source vertex of each adjacency entry (int32), aligned with ``adjncy``."""
        return np.repeat(np.arange(self.nvtxs, dtype=np.int32), self.degrees())

    @classmethod
    def from_csr(
        cls,
        xadj,
        adjncy,
        vwgt=None,
        adjwgt=None,
        *,
        name: str = "graph",
        vsize=None,
    ) -> Graph:
        """Build a graph from CSR arrays given by a program; validated like the readers."""
        return validated_graph(xadj, adjncy, vwgt, adjwgt, vsize=vsize, name=name)


def validated_graph(xadj, adjncy, vwgt=None, adjwgt=None, *, name: str = "graph",
                    **checks: Any) -> Graph:
    """The ``Graph`` of CSR arrays checked and made canonical by ``validated_csr`` (``checks``:
    its keyword arguments); raises InputError naming the first fault."""
    return Graph(**vars(validated_csr(xadj, adjncy, vwgt, adjwgt, **checks)), name=name)
