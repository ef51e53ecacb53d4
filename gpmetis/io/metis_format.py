"""The METIS graph format (METIS 5.1 manual, section 4.1.1), read in full and vectorised.

::

    % comment lines (first non-blank character '%') may appear anywhere
    n m [fmt [ncon]]
    [size] [w_1 ... w_ncon] v_1 [ew_1] v_2 [ew_2] ...      one line per vertex, n lines

A '%' after a line's values starts a comment running to the line end (``2 % x`` is the line
``2``), as METIS 5.1's reader stops a line at the first text that is not an integer.

``fmt`` is read as three digits ``abc`` (missing leading digits are 0): a = vertex sizes,
b = vertex weights (``ncon`` of them, default 1), c = edge weights; so fmt is one of 0, 1, 10,
11, 100, 101, 110, 111. Neighbours are 1-based; an empty line is a vertex without neighbours
(a line of weights only when fmt has vertex data). White space is any run of bytes <= 0x20
(spaces, tabs, CRLF line ends); lines after the n vertex lines must be blank.

Differences from METIS 5.1, which exits (sometimes with status 0) on most bad inputs:

- every error is an ``InputError`` naming the file and line;
- self loops and repeated neighbours, which METIS keeps silently, are dropped (the first
  occurrence of a repeated neighbour, and its weight, is kept) with a warning in
  ``graph.warnings``; the ``2m`` check counts the entries as written, as METIS does;
- the graph must be symmetric (same weight both ways) unless ``symmetrize`` is set, which adds
  missing reverse entries and takes the larger of two weights; then the header's m may count
  the edges either as written or after symmetrization;
- blank lines before the header are skipped; an unknown fmt is an error, not ignored.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from gpmetis.errors import InputError
from gpmetis.graph import Graph, validated_graph
from gpmetis.io.checkgraph import check_graph
from gpmetis.io.source import require_memory
from gpmetis.io.tokens import Tokens, tokenize
from gpmetis.validation import entries_as_written

if TYPE_CHECKING:
    from gpmetis.io.checkgraph import GraphCheck

FMT_CODES = (0, 1, 10, 11, 100, 101, 110, 111)
VERTEX_BYTES = 24  # per vertex: xadj, unit vertex weights, one array of validation's


class _Entries(NamedTuple):
    """A METIS graph file's vertex lines as written: CSR arrays (0-based neighbours), the
    header's edge count m, the header's 0-based line and the vertex -> file line map."""

    xadj: np.ndarray
    adjncy: np.ndarray
    vwgt: np.ndarray | None
    adjwgt: np.ndarray | None
    vsize: np.ndarray | None
    m: int
    header: int
    vertex_line: Callable[[int], int]


def read_metis(data: bytes, path: str, *, symmetrize: bool = False) -> Graph:
    """Parse a METIS graph file's bytes (see the module docstring)."""
    held = [data]
    del data  # _entries holds the file alone: it goes as soon as it is tokenized
    e = _entries(held, path, symmetrize)
    nentries = len(e.adjncy)
    graph = validated_graph(
        e.xadj,
        e.adjncy,
        e.vwgt,
        e.adjwgt,
        vsize=e.vsize,
        name=path,
        path=path,
        vertex_line=e.vertex_line,
        symmetrize=symmetrize,
    )
    if nentries != 2 * e.m and len(graph.adjncy) != 2 * e.m:
        raise InputError(path, _edge_count_message(e.m, nentries), e.header + 1)
    return graph


def check_metis(data: bytes, path: str) -> GraphCheck:
    """METIS 5.1 graphchk's check of a METIS graph file's bytes: InputError where its reader
    stops (format, ranges, weights, the edge count), else the findings of METIS's CheckGraph
    on the entries as written."""
    e = _entries([data], path, symmetrize=False)
    xadj, adjncy, adjwgt = entries_as_written(e.xadj, e.adjncy, e.vwgt, e.adjwgt, vsize=e.vsize,
                                              path=path, vertex_line=e.vertex_line)
    return check_graph(xadj, adjncy, adjwgt)


def _entries(held: list, path: str, symmetrize: bool) -> _Entries:
    """The vertex lines of the file whose bytes ``held`` holds (and gives up); InputError on a
    format error and, unless ``symmetrize``, on an entry count other than the header's 2m."""
    tok = tokenize(held.pop(), path, trailing_comments=True)
    h, n, m, readvs, readvw, readew, ncon = _header(tok, path)
    xadj, vertex_line = _vertex_lines(tok, h, n, path)
    t0 = int(tok.row_cnt[0])  # the header is the first line with tokens
    tok.require_ints(t0, t0 + int(xadj[-1]))
    vals = tok.values[t0 : t0 + int(xadj[-1])]
    del tok  # the tokens held the file's bytes: both go now
    xadj, adjncy, vwgt, adjwgt, vsize = vertex_rows(xadj, vals, (readvs, readvw, readew, ncon),
                                                    path, vertex_line)
    if len(adjncy) != 2 * m and not symmetrize:
        raise InputError(path, _edge_count_message(m, len(adjncy)), h + 1)
    return _Entries(xadj, adjncy, vwgt, adjwgt, vsize, m, h, vertex_line)


def vertex_rows(xadj: np.ndarray, vals: np.ndarray, fmt: tuple[int, int, int, int], path: str,
                vertex_line: Callable[[int], int], first: int = 0):
    """(xadj, adjncy 0-based, vwgt, adjwgt, vsize) of the vertex lines of vertices first, ...
    whose values ``vals`` are cut by ``xadj``, under the header's ``fmt`` (readvs, readvw,
    readew, ncon); InputError at the ``vertex_line`` (of the line's index among them) of a line
    whose values do not fit the format. Consumes ``vals``."""
    readvs, readvw, readew, ncon = fmt
    n = len(xadj) - 1
    nvd = readvs + readvw * ncon  # vertex data values at the start of each line
    cnt = np.diff(xadj) if nvd or readew else None
    short = np.flatnonzero(cnt < nvd) if nvd else []
    if len(short):
        v = int(short[0])
        raise InputError(
            path, f"vertex {first + v + 1}: expected {nvd} vertex size/weight values",
            vertex_line(v)
        )
    if readew:
        odd = np.flatnonzero((cnt - nvd) & 1)
        if len(odd):
            v = int(odd[0])
            raise InputError(
                path,
                f"vertex {first + v + 1}: odd number of values after the vertex data; "
                "with edge weights (fmt ending in 1) neighbours and weights come in pairs",
                vertex_line(v),
            )

    vsize = vwgt = adjwgt = None
    if nvd:
        at = xadj[:-1, None] + np.arange(nvd)  # where the vertex data of each line is
        if readvs:
            vsize = vals[at[:, 0]]
        if readvw:
            vwgt = vals[at[:, readvs:]]
        rest = np.ones(len(vals), bool)
        rest[at] = False
        vals = vals[rest]
        del at, rest
        xadj -= nvd * np.arange(n + 1)
    if readew:
        adjncy, adjwgt = vals[0::2] - 1, vals[1::2]
        xadj //= 2
    else:
        adjncy = vals  # a view of the tokens: made 0-based in place
        adjncy -= 1
    return xadj, adjncy, vwgt, adjwgt, vsize


def _header(tok: Tokens, path: str):
    """(header line index, n, m, readvs, readvw, readew, ncon) from the first non-blank line."""
    if len(tok.rows) == 0:
        raise InputError(path, "no header line 'n m [fmt [ncon]]': the file has no data")
    h, t0, k = int(tok.rows[0]), 0, int(tok.row_cnt[0])
    line = h + 1
    if not 2 <= k <= 4:
        raise InputError(path, f"the header must be 'n m [fmt [ncon]]', found {k} values", line)
    tok.require_ints(t0, t0 + k, "an integer in the header 'n m [fmt [ncon]]'")
    fields = [int(x) for x in tok.values[t0 : t0 + k]] + [0, 0]
    n, m, fmt, ncon = fields[:4]
    if n <= 0:
        raise InputError(path, f"the number of vertices must be positive, not {n}", line)
    if m < 0:
        raise InputError(path, f"the number of edges must not be negative, not {m}", line)
    if fmt not in FMT_CODES:
        codes = ", ".join(map(str, FMT_CODES))
        raise InputError(path, f"unknown fmt {fmt}: expected one of {codes}", line)
    readvs, readvw, readew = fmt // 100, fmt // 10 % 10, fmt % 10
    if ncon < 0:
        raise InputError(path, f"ncon must not be negative, not {ncon}", line)
    if ncon > 0 and not readvw:
        raise InputError(
            path, f"ncon = {ncon} but fmt {fmt} has no vertex weights (use fmt 10 or 11)", line
        )
    return h, n, m, readvs, readvw, readew, max(ncon, 1)


def _vertex_lines(tok: Tokens, h: int, n: int, path: str):
    """The xadj of the n vertex lines after header line h (offsets of their tokens, from 0) and
    a function from vertex to 1-based line; checks that there are n of them, nothing but blank
    lines after them, and memory for the arrays of n vertices."""
    comments = tok.comment_lines[tok.comment_lines > h]
    available = tok.nlines - h - 1 - len(comments)
    if available < n:
        raise InputError(
            path,
            f"the header says {n} vertices but the file has only {available} vertex lines",
            tok.nlines,
        )
    require_memory((n + 1) * VERTEX_BYTES, path, h + 1, f"a graph of {n} vertices")
    rows, cnt = tok.rows[1:], tok.row_cnt[1:]
    vertex = rows - np.int64(h + 1)  # vertex of each line with tokens
    if len(comments):
        vertex -= np.searchsorted(comments, rows)
    extra = int(np.searchsorted(vertex, n))
    if extra < len(vertex):
        raise InputError(
            path,
            f"more vertex lines than the {n} vertices in the header (a line after vertex {n} "
            "is not blank)",
            int(rows[extra]) + 1,
        )
    xadj = np.zeros(n + 1, np.int64)
    xadj[vertex + 1] = cnt
    np.cumsum(xadj, out=xadj)
    return xadj, vertex_lines(h, comments)


def vertex_lines(h: int, comments: np.ndarray) -> Callable[[int], int]:
    """Vertex -> its 1-based file line, with the header on 0-based line ``h`` and the sorted
    0-based ``comments`` lines after it."""
    if len(comments) == 0:
        def vertex_line(v: int) -> int:
            return h + 2 + v
    else:
        # vertex v is on line h + 1 + v + j (0-based), j the comment lines before it: those
        # with comments[i] - i <= h + 1 + v
        shifted = comments - np.arange(len(comments))

        def vertex_line(v: int) -> int:
            return h + 2 + v + int(np.searchsorted(shifted, h + 1 + v, side="right"))

    return vertex_line


def _edge_count_message(m: int, found: int) -> str:
    message = (
        f"the header says {m} edges, so {2 * m} adjacency entries (each edge is listed by both "
        f"of its ends), but the vertex lines hold {found}"
    )
    if found == m:
        message += "; m counts each edge once"
    return message
