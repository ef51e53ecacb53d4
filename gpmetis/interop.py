"""Graphs from other libraries' objects: scipy.sparse matrices and arrays, networkx graphs.

A square sparse matrix A gives the graph of the pattern of A + A^T without the diagonal, as a
Matrix Market file does: edge weights 1, or with ``weights=True`` |a_ij| rounded half up and at
least 1, the larger one where (i, j) and (j, i) are both stored. A networkx graph gives its
nodes in ``G.nodes`` order (the labels come back with the graph so that results can be keyed by
node), its edges without self loops, weights from an edge attribute when one is named.
Neither library is imported unless such an object is passed.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from gpmetis.errors import InputError
from gpmetis.graph import Graph


def is_scipy_sparse(obj: Any) -> bool:
    """Whether ``obj`` is a scipy.sparse matrix or array (without importing scipy)."""
    sparse = sys.modules.get("scipy.sparse")
    return sparse is not None and sparse.issparse(obj)


def is_networkx(obj: Any) -> bool:
    """Whether ``obj`` is a networkx graph (without importing networkx)."""
    nx = sys.modules.get("networkx")
    return nx is not None and isinstance(obj, nx.Graph)


def from_scipy(matrix: Any, *, weights: bool = False, name: str = "scipy.sparse") -> Graph:
    """The graph of a square scipy.sparse matrix or array (see the module docstring).

    Options: ``weights`` (edge weights from |a_ij| instead of 1), ``name`` (the graph's name in
    messages). InputError for a non-square matrix or non-finite values.
    """
    from gpmetis.io.matrix_market import _graph_of_pattern

    nrows, ncols = matrix.shape
    if nrows != ncols:
        raise InputError(name, f"the matrix is {nrows} x {ncols}; a graph needs a square one")
    coo = matrix.tocoo()
    rows = np.asarray(coo.row, dtype=np.int64)
    cols = np.asarray(coo.col, dtype=np.int64)
    w = None
    if weights:
        value = np.abs(np.asarray(coo.data))
        if not np.isfinite(value).all():
            raise InputError(name, "the matrix holds a value that is not a finite number")
        w = np.maximum(np.floor(value.astype(np.float64) + 0.5), 1)
        if w.max(initial=1) >= 2.0**62:
            raise InputError(name, "an entry value is too large for an edge weight")
        w = w.astype(np.int64)
    return _graph_of_pattern(nrows, rows, cols, w, name)


def from_networkx(
    graph: Any, *, weight: str | None = None, name: str = "networkx"
) -> tuple[Graph, list]:
    """(the graph, its node labels) of a networkx graph; vertex i is ``labels[i]``.

    Options: ``weight`` (the edge attribute holding integer edge weights; edges without it
    weigh 1; None: every edge weighs 1), ``name`` (the graph's name in messages). Directed
    graphs are made undirected (an edge either way is an edge), self loops are dropped. Needs
    scipy.
    """
    import networkx as nx
    import scipy.sparse

    labels = list(graph.nodes)
    if not labels:  # networkx converts no graph without nodes
        return from_scipy(scipy.sparse.coo_array((0, 0)), name=name), labels
    try:
        matrix = nx.to_scipy_sparse_array(graph, nodelist=labels, weight=weight, format="coo")
    except (TypeError, ValueError):  # a weight that is not a number
        raise InputError(name, f"edge attribute '{weight}' must be a positive number") from None
    matrix.sum_duplicates()  # networkx stores a self loop as entries that sum to its weight
    if weight is not None:
        data = np.asarray(matrix.data)[np.asarray(matrix.row) != np.asarray(matrix.col)]
        if not (data > 0).all():
            raise InputError(name, f"edge attribute '{weight}' must be a positive number")
    return from_scipy(matrix, weights=weight is not None, name=name), labels
