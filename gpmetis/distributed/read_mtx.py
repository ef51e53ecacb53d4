"""A Matrix Market file read by every rank at once: rank 0 reads the banner and the size line,
each rank the whole entry lines that start in its share of the entries' bytes, numbered by an
exclusive scan of the ranks' line counts. The checks are the general reader's
(``io.matrix_market``), made in its order and each agreed on by every rank, so a fault gives
one reader's message and line. Each entry (i, j) and its mirror go to the ranks owning rows i
and j, which keep the pattern of A + A^T without the diagonal (the largest weight of an edge
stored more than once), as one reader's graph has it."""

from __future__ import annotations

import numpy as np

from gpmetis.distributed.clustering import send_to_owners
from gpmetis.distributed.comm import Comm
from gpmetis.distributed.dgraph import DistGraph
from gpmetis.distributed.read import BLANK, _attempt, _exclusive, own_lines
from gpmetis.errors import InputError
from gpmetis.io.matrix_market import _FIELDS, _banner, _size_line
from gpmetis.io.tokens import tokenize


def read_mtx_pieces(comm: Comm, path: str, *, mtx_weights: bool = False) -> DistGraph:
    """This rank's piece of the Matrix Market file ``path`` (plain, not compressed), the
    vertices split evenly; collective. InputError naming the file and line, on every rank,
    where one reader finds the file malformed."""
    body, h, field, size = comm.bcast(comm.on_root(lambda: _read_header(path)))
    per_line = _FIELDS[field]
    chunk, nlines = own_lines(comm, path, body)
    first_line = h + 1 + int(_exclusive(comm, np.array([nlines], np.int64))[0])

    def step(check):  # a check of one reader's, on every rank's chunk, agreed on
        value, failed = _attempt(check, path, first_line)
        comm.agree(failed)
        return value

    tok = step(lambda: tokenize(chunk, path))
    if isinstance(size, InputError):
        comm.agree(size)
    n, nnz = size
    step(lambda: _check_counts(tok, field, per_line, path))
    found = int(comm.allreduce_sum(np.array([len(tok.rows)], np.int64))[0])
    if found != nnz:
        comm.agree(InputError(path, f"the size line says {nnz} entries but the file has "
                                    f"{found} entry lines", h + 1))
    step(lambda: _check_tokens(tok, field, per_line, path))
    rows, cols = step(lambda: _indices(tok, per_line, n, path))
    value = step(lambda: _values(tok, per_line))
    weights = step(lambda: _weights(value, path)) if mtx_weights and value is not None else None
    return _pieces(comm, path, n, rows, cols, weights)


def _read_header(path: str) -> tuple[int, int, str, tuple[int, int] | InputError]:
    """(the first byte after the size line, its 0-based line, the field, (N, NNZ) or the
    size line's fault, which one reader finds after the tokens' faults)."""
    try:
        with open(path, "rb") as f:
            prefix = bytearray()
            while True:  # the banner, comment and blank lines, then the size line
                line = f.readline()
                prefix += line
                text = line.strip(BLANK)
                if (text and not text.startswith(b"%")) or not line:
                    break
            body = f.tell()
    except OSError as exc:
        raise InputError(path, f"cannot read: {exc.strerror or exc}") from None
    field = _banner(bytes(prefix[:1024]), path)
    h = prefix.count(b"\n") - int(prefix.endswith(b"\n"))
    tok = tokenize(bytes(prefix), path)  # its faults come first, as in one reader's
    try:
        h, n, nnz = _size_line(tok, path)
    except InputError as exc:
        return body, h, field, exc
    return body, h, field, (n, nnz)


def _check_counts(tok, field: str, per_line: int, path: str) -> None:
    """InputError at the first entry line without ``per_line`` values (chunk lines)."""
    wrong = np.flatnonzero(tok.row_cnt != per_line)
    if len(wrong):
        raise InputError(path, f"an entry line of a {field} matrix has {per_line} values, "
                               f"this one has {int(tok.row_cnt[wrong[0]])}",
                         int(tok.rows[wrong[0]]) + 1)


def _check_tokens(tok, field: str, per_line: int, path: str) -> None:
    """InputError at the first token that is not an integer where one must be."""
    column = tok.bad % per_line
    reject = column < 2 if field == "real" else np.ones(len(tok.bad), bool)
    if reject.any():
        k = int(np.argmax(reject))
        what = "an integer index" if column[k] < 2 else "an integer value"
        raise InputError(path, f"expected {what}, found '{tok.text(k)}'",
                         int(tok.line_of(int(tok.bad[k]))))


def _indices(tok, per_line: int, n: int, path: str):
    """(rows, cols): the chunk's entries' indices, 0-based; InputError at the first out of
    range."""
    vals = tok.values[:len(tok.rows) * per_line]
    rows = vals[0::per_line].astype(np.int64) - 1
    cols = vals[1::per_line].astype(np.int64) - 1
    out = np.flatnonzero((rows < 0) | (rows >= n) | (cols < 0) | (cols >= n))
    if len(out):
        e = int(out[0])
        raise InputError(path, f"entry ({rows[e] + 1}, {cols[e] + 1}) is out of range for a "
                               f"{n} x {n} matrix", int(tok.line_of(e * per_line)))
    return rows, cols


def _values(tok, per_line: int):
    """The chunk's entry values (float64; None for a pattern); InputError at the first that
    is not a finite number."""
    if per_line != 3:
        return None
    value = tok.values[2:len(tok.rows) * per_line:per_line].astype(np.float64)
    if len(tok.bad):  # all of them values of a real matrix
        value[tok.bad // per_line] = tok.bad_floats(np.arange(len(tok.bad)), "a finite number")
    return value


def _weights(value, path: str):
    """|a_ij| rounded half up and at least 1, as edge weights (int64)."""
    weights = np.maximum(np.floor(np.abs(value) + 0.5), 1)
    if weights.max(initial=1) >= 2.0**62:
        raise InputError(path, "an entry value is too large for an edge weight")
    return weights.astype(np.int64)


def _pieces(comm: Comm, path: str, n: int, rows, cols, weights) -> DistGraph:
    """Each entry off the diagonal and its mirror at the owner of its row; the owner's rows
    sorted, an edge stored more than once kept once with its largest weight."""
    vtxdist = np.array([n * r // comm.size for r in range(comm.size + 1)], np.int64)
    off = rows != cols
    rows, cols = rows[off], cols[off]
    w = np.ones(len(rows), np.int64) if weights is None else weights[off]
    keys, adjncy, w, _ = send_to_owners(comm, vtxdist, np.concatenate((rows, cols)),
                                        np.concatenate((cols, rows)), np.concatenate((w, w)))
    first = int(vtxdist[comm.rank])
    nlocal = int(vtxdist[comm.rank + 1]) - first
    pair = (keys - first) * n + adjncy
    order = np.lexsort((w, pair))
    pair, w = pair[order], w[order]
    last = np.flatnonzero(np.append(pair[1:] != pair[:-1], True)) if len(pair) else pair
    pair, w = pair[last], w[last]
    xadj = np.zeros(nlocal + 1, np.int64)
    np.cumsum(np.bincount(pair // n, minlength=nlocal), out=xadj[1:])
    return DistGraph(vtxdist, xadj, pair % n, adjwgt=None if weights is None else w,
                     name=path)
