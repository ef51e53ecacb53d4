"""Graphs from other libraries' objects: scipy.sparse matrices and arrays, networkx graphs.

A square sparse matrix A gives the graph of the pattern of A + A^T without the diagonal, as a
Matrix Market file does: edge weights 1, or with ``weights=True`` |a_ij| rounded half up and at
least 1, the larger one where (i, j) and (j, i) are both stored. A networkx graph gives its
nodes in ``G.nodes`` order (the labels come back with the graph so that results can be keyed by
node), its edges without self loops, weights from an edge attribute when one is named.
Neither library is imported unless such an object is passed.
"""

from __future__ import annotations

import itertools
import operator
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
    n = len(labels)
    if graph.is_multigraph():  # (its parallel edges' weights add up, as networkx adds them)
        try:
            matrix = nx.to_scipy_sparse_array(graph, nodelist=labels, weight=weight,
                                              format="coo")
        except (TypeError, ValueError):  # a weight that is not a number
            raise _not_positive(name, weight) from None
        matrix.sum_duplicates()  # (a self loop's entries, and the parallel edges')
        rows, cols, values = matrix.row, matrix.col, matrix.data
    else:
        rows, cols, values = _adjacency_entries(graph, labels, weight, name)
    if weight is not None:
        values = np.asarray(values)
        if values.dtype.kind not in "biuf" or not (values[rows != cols] > 0).all():
            raise _not_positive(name, weight)
    matrix = scipy.sparse.coo_array(
        (np.ones(len(rows)) if values is None else values.astype(np.float64), (rows, cols)),
        shape=(n, n))
    return from_scipy(matrix, weights=weight is not None, name=name), labels


def _not_positive(name: str, weight: str | None) -> InputError:
    return InputError(name, f"edge attribute '{weight}' must be a positive number")


def _adjacency_entries(graph: Any, labels: list, weight: str | None, name: str
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """(rows, cols, values or None) of each stored neighbour of a simple networkx graph, in
    ``labels`` order: networkx keeps them in Python dicts, read here by C-level iterators."""
    adjacency = dict(graph.adjacency())
    neighbours = list(map(adjacency.__getitem__, labels))
    degree = np.fromiter(map(len, neighbours), np.int64, len(labels))
    rows = np.repeat(np.arange(len(labels), dtype=np.int64), degree)
    cols = _positions(labels, itertools.chain.from_iterable(neighbours), len(rows))
    if weight is None:
        return rows, cols, None
    attributes = itertools.chain.from_iterable(map(dict.values, neighbours))
    try:
        values = np.array(list(map(operator.methodcaller("get", weight, 1), attributes)))
    except (TypeError, ValueError):  # (values numpy cannot hold in one array)
        raise _not_positive(name, weight) from None
    return rows, cols, values


def _positions(labels: list, nodes: Any, count: int) -> np.ndarray:
    """The positions in ``labels`` of the ``count`` nodes ``nodes`` yields (every one a
    label): integer labels by a sorted search, others by a dict."""
    keys = _integer_keys(labels)
    if keys is None:
        index = dict(zip(labels, range(len(labels))))
        return np.fromiter(map(index.__getitem__, nodes), np.int64, count)
    found = np.fromiter(nodes, np.int64, count)
    if np.array_equal(keys, np.arange(len(keys))):
        return found
    order = np.argsort(keys, kind="stable")
    return order[np.searchsorted(keys[order], found)]


def _integer_keys(labels: list) -> np.ndarray | None:
    """The labels as int64 where every one is an integer (not a bool) that fits, else None."""
    types = set(map(type, labels))
    if not all(issubclass(t, (int, np.integer)) and t is not bool for t in types):
        return None
    try:
        return np.fromiter(labels, np.int64, len(labels))
    except OverflowError:
        return None
