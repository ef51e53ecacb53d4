"""METIS's mesh files and graph files written as text.

Mesh file (METIS 5.1 ``mpmetis``/``m2gmetis``)::

    % comment lines anywhere
    ne [ncon]
    [w_1 .. w_ncon] n_1 n_2 ...      one line per element: ncon weights, then its 1-based nodes

A '%' after a line's values starts a comment running to the line end, as in METIS 5.1.

Elements may have different numbers of nodes (mixed meshes). The number of nodes is the largest
node id. Lines are tokenized by ``gpmetis.io.tokens`` (vectorised); compressed files are read
as ``read_graph`` reads them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from gpmetis.errors import InputError
from gpmetis.graph import Graph
from gpmetis.io.source import read_bytes
from gpmetis.io.tokens import tokenize
from gpmetis.limits import mesh_node_count


@dataclass
class Mesh:
    """A mesh in METIS's form: element e has the 0-based nodes ``eind[eptr[e]:eptr[e+1]]``;
    ``ewgt`` (ne, ncon) int64 element weights or None; ``nn`` the number of nodes."""

    eptr: np.ndarray
    eind: np.ndarray
    nn: int
    ewgt: np.ndarray | None = None
    name: str = "mesh"

    @property
    def ne(self) -> int:
        return len(self.eptr) - 1


def read_mesh(path: str | os.PathLike) -> Mesh:
    """Read a METIS mesh file (see the module docstring). InputError naming the file and line
    for a missing or bad header, a wrong number of element lines, tokens that are not
    integers, negative weights, elements without nodes and node ids below 1."""
    name = os.fspath(path)
    tok = tokenize(read_bytes(name), name, trailing_comments=True)
    if len(tok.rows) == 0:
        raise InputError(name, "no header line 'ne [ncon]': the file has no data")
    line = int(tok.rows[0]) + 1
    k = int(tok.row_cnt[0])
    if k > 2:
        raise InputError(name, f"the header must be 'ne [ncon]', found {k} values", line)
    tok.require_ints(0, k, "an integer in the header 'ne [ncon]'")
    ne = int(tok.values[0])
    ncon = int(tok.values[1]) if k == 2 else 0
    if ne <= 0:
        raise InputError(name, f"the number of elements must be positive, not {ne}", line)
    if ncon < 0:
        raise InputError(name, f"ncon must not be negative, not {ncon}", line)
    found = len(tok.rows) - 1
    if found != ne:
        at = int(tok.rows[ne + 1]) + 1 if found > ne else None
        raise InputError(name, f"the header says {ne} elements but the file has {found} "
                               f"element lines", at if at is not None else line)
    tok.require_ints(k, len(tok.values))
    cnt = tok.row_cnt[1:].astype(np.int64)
    short = np.flatnonzero(cnt <= ncon)
    if len(short):
        e = int(short[0])
        raise InputError(name, f"element {e + 1} has no nodes after its {ncon} weights",
                         int(tok.rows[e + 1]) + 1)
    start = np.zeros(ne + 1, np.int64)
    np.cumsum(cnt, out=start[1:])
    vals = tok.values[k:].astype(np.int64)
    ewgt = None
    if ncon:
        at = start[:-1, None] + np.arange(ncon)
        ewgt = vals[at]
        bad = np.flatnonzero((ewgt < 0).any(axis=1))
        if len(bad):
            e = int(bad[0])
            raise InputError(name, f"element {e + 1} has a negative weight",
                             int(tok.rows[e + 1]) + 1)
        keep = np.ones(len(vals), bool)
        keep[at] = False
        vals = vals[keep]
        start -= ncon * np.arange(ne + 1)
    low = np.flatnonzero(vals < 1)
    if len(low):
        e = int(np.searchsorted(start, low[0], side="right")) - 1
        raise InputError(name, f"element {e + 1}: node {vals[low[0]]} is out of bounds (node "
                               f"ids start at 1)", int(tok.rows[e + 1]) + 1)
    eind = vals - 1
    nn = mesh_node_count(start, eind, name, base=1, line_of=lambda e: int(tok.rows[e + 1]) + 1)
    return Mesh(start, eind, nn, ewgt, name)


def graph_bytes(graph: Graph) -> bytes:
    """``graph`` in the METIS graph format: header ``n m`` (with fmt ``xyz`` and ncon when it
    has vertex sizes, weights or edge weights), then one line per vertex: its size, its
    weights, then its 1-based neighbours (each followed by the edge's weight when it has edge
    weights), every value preceded by a space, as METIS writes. Built with NumPy, no loop per
    vertex or edge."""
    n = graph.nvtxs
    deg = np.diff(graph.xadj)
    ncon = graph.ncon if graph.has_vwgt else 0
    per_edge = 2 if graph.has_adjwgt else 1
    columns = ([graph.vsize[:, None]] if graph.vsize is not None else []) + (
        [graph.vwgt] if ncon else [])
    fmt = int(f"{1 if graph.vsize is not None else 0}{1 if ncon else 0}"
              f"{1 if graph.has_adjwgt else 0}")
    header = f"{n} {graph.nedges}"
    if fmt:
        header += f" {fmt:d}" + (f" {ncon}" if ncon > 1 else "")
    if per_edge == 2:
        edge_vals = np.stack([graph.adjncy.astype(np.int64) + 1, graph.adjwgt], axis=1).ravel()
    else:
        edge_vals = graph.adjncy.astype(np.int64) + 1
    lead = np.hstack(columns).astype(np.int64) if columns else np.zeros((n, 0), np.int64)
    count = lead.shape[1] + per_edge * deg  # values on each vertex line
    line_end = np.cumsum(count + 1) - 1  # the newline's slot after each line's values
    total = int(count.sum()) + n
    values = np.zeros(total, np.int64)
    is_value = np.ones(total, bool)
    is_value[line_end] = False
    if lead.shape[1]:
        line_start = line_end - count
        lead_at = (line_start[:, None] + np.arange(lead.shape[1])).ravel()
        values[lead_at] = lead.ravel()
        is_edge = is_value.copy()
        is_edge[lead_at] = False
        values[is_edge] = edge_vals
    else:
        values[is_value] = edge_vals
    return (header + "\n").encode() + _spaced_lines(values, is_value)


def _spaced_lines(values: np.ndarray, is_value: np.ndarray) -> bytes:
    """`` %d`` of each value where ``is_value``, ``\\n`` elsewhere (non-negative values)."""
    if len(values) == 0:
        return b""
    width = len(str(int(values.max()))) + 1
    text = np.zeros((len(values), width), np.uint8)
    ndigits = np.ones(len(values), np.int64)
    for j in range(width - 1):  # one column per digit position
        text[:, width - 1 - j] = values // 10**j % 10 + 48
        if j:
            ndigits += values >= 10**j
    cols = np.arange(width)
    text[np.arange(len(values)), width - 1 - ndigits] = ord(" ")
    keep = cols >= (width - 1 - ndigits)[:, None]
    newline = ~is_value
    text[newline, width - 1] = ord("\n")
    keep[newline] = cols == width - 1
    return text[keep].tobytes()
