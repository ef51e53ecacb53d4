"""Matrix Market coordinate files as graphs.

::

    %%MatrixMarket matrix coordinate FIELD SYMMETRY
    % comment lines
    M N NNZ
    i j [a_ij]          NNZ entry lines, 1-based indices

FIELD is pattern, integer or real, SYMMETRY general, symmetric, skew-symmetric or hermitian;
the banner is case-insensitive (``double`` is taken for ``real``). The graph of a square matrix
A is the pattern of A + A^T without the diagonal, whatever the symmetry of the file: an entry
(i, j) is the edge i-j. Edge weights are 1, or with ``mtx_weights`` |a_ij| rounded half up and at
least 1, the largest one when an edge is stored more than once (both triangles, repeated
entries). Blank lines are skipped. Dense (``array``) and complex matrices, non-square matrices,
entry counts other than NNZ, indices out of range and values that are not finite numbers are
errors naming the line.
"""

from __future__ import annotations

import numpy as np

from gpmetis.backend import sorted_unique
from gpmetis.errors import InputError
from gpmetis.graph import Graph
from gpmetis.io import mtx_scan
from gpmetis.io.source import require_memory
from gpmetis.io.tokens import Tokens, tokenize

_FIELDS = {"pattern": 2, "integer": 3, "real": 3, "double": 3}
_SYMMETRIES = ("general", "symmetric", "skew-symmetric", "hermitian")
_INT32_MAX = np.iinfo(np.int32).max
VERTEX_BYTES = 24  # per vertex: xadj, its degree count, unit vertex weights


def read_matrix_market(data: bytes, path: str, *, mtx_weights: bool = False) -> Graph:
    """Parse a Matrix Market file's bytes into a graph (see the module docstring): through
    ``mtx_scan``'s fast path where it applies, else the general tokenizer."""
    field = _banner(data, path)
    head = mtx_scan.header(data)
    if head is not None and head.nrows == head.ncols and 0 < head.nrows <= _INT32_MAX:
        _require_memory(head.nrows, path, head.line)
        found = mtx_scan.scan_entries(data, head, field, mtx_weights)
        if found is not None and len(found.rows) == head.nnz:
            rows, cols = found.rows, found.cols
            if len(rows) == 0 or (min(rows.min(), cols.min()) >= 1
                                  and max(rows.max(), cols.max()) <= head.nrows):
                del data
                rows -= 1
                cols -= 1
                return _graph_of_pattern(head.nrows, rows, cols, found.weights, path)
        del found
    return _read_tokens(data, field, path, mtx_weights)


def _read_tokens(data, field: str, path: str, mtx_weights: bool) -> Graph:
    """The general reader: every token of the file, every error named by its line."""
    per_line = _FIELDS[field]
    tok = tokenize(data, path)
    del data
    h, nrows, nnz = _size_line(tok, path)
    t0 = int(tok.row_cnt[0])  # the size line is the first line with tokens
    cnt = tok.row_cnt[1:]
    wrong = np.flatnonzero(cnt != per_line)
    if len(wrong):
        k = int(cnt[wrong[0]])
        raise InputError(
            path,
            f"an entry line of a {field} matrix has {per_line} values, this one has {k}",
            int(tok.rows[1 + wrong[0]]) + 1,
        )
    found = len(cnt)
    if found != nnz:
        raise InputError(
            path, f"the size line says {nnz} entries but the file has {found} entry lines", h + 1
        )

    # tokens that are not integers: only the values of a real matrix may be such
    bad = np.flatnonzero(tok.bad >= t0)  # indices into tok.bad
    column = (tok.bad[bad] - t0) % per_line
    reject = column < 2 if field == "real" else np.ones(len(bad), bool)
    if reject.any():
        k = int(bad[np.argmax(reject)])
        what = "an integer index" if (tok.bad[k] - t0) % per_line < 2 else "an integer value"
        line = int(tok.line_of(int(tok.bad[k])))
        raise InputError(path, f"expected {what}, found '{tok.text(k)}'", line)
    vals = tok.values[t0 : t0 + nnz * per_line]
    rows = vals[0::per_line].astype(np.int64) - 1
    cols = vals[1::per_line].astype(np.int64) - 1
    out = np.flatnonzero((rows < 0) | (rows >= nrows) | (cols < 0) | (cols >= nrows))
    if len(out):
        e = int(out[0])
        raise InputError(
            path,
            f"entry ({rows[e] + 1}, {cols[e] + 1}) is out of range for a {nrows} x {nrows} matrix",
            int(tok.line_of(t0 + e * per_line)),
        )
    weights = None
    if per_line == 3:
        value = vals[2::per_line].astype(np.float64)
        if len(bad):  # all of them values of a real matrix
            value[(tok.bad[bad] - t0) // per_line] = tok.bad_floats(bad, "a finite number")
        if mtx_weights:
            weights = np.maximum(np.floor(np.abs(value) + 0.5), 1)
            if weights.max(initial=1) >= 2.0**62:
                raise InputError(path, "an entry value is too large for an edge weight")
            weights = weights.astype(np.int64)
    del tok, vals
    return _graph_of_pattern(nrows, rows, cols, weights, path)


def _banner(data: bytes, path: str) -> str:
    """The field of a coordinate matrix, from the banner line; errors for anything else."""
    words = data[:1024].split(b"\n", 1)[0].decode("ascii", "replace").lower().split()
    usage = "%%MatrixMarket matrix coordinate (pattern|integer|real) (general|symmetric|...)"
    if len(words) != 5 or words[0] != "%%matrixmarket" or words[1] != "matrix":
        raise InputError(path, f"expected the banner '{usage}'", 1)
    fmt, field, symmetry = words[2:]
    if fmt == "array":
        raise InputError(path, "dense 'array' matrices are not supported: use 'coordinate'", 1)
    if fmt != "coordinate":
        raise InputError(path, f"unknown format '{fmt}': expected 'coordinate'", 1)
    if field == "complex":
        raise InputError(path, "complex matrices are not supported", 1)
    if field not in _FIELDS:
        raise InputError(path, f"unknown field '{field}': expected pattern, integer or real", 1)
    if symmetry not in _SYMMETRIES:
        raise InputError(path, f"unknown symmetry '{symmetry}'", 1)
    return "real" if field == "double" else field


def _size_line(tok: Tokens, path: str) -> tuple[int, int, int]:
    """(line index, N, NNZ) of the size line 'M N NNZ' of a square matrix."""
    if len(tok.rows) == 0:
        raise InputError(path, "no size line 'M N NNZ'")
    h, t0, k = int(tok.rows[0]), 0, int(tok.row_cnt[0])
    if k != 3:
        raise InputError(path, f"the size line must be 'M N NNZ', found {k} values", h + 1)
    tok.require_ints(t0, t0 + 3, "an integer in the size line 'M N NNZ'")
    nrows, ncols, nnz = (int(x) for x in tok.values[t0 : t0 + 3])
    if min(nrows, ncols, nnz) < 0 or nrows == 0:
        raise InputError(path, f"bad size line '{nrows} {ncols} {nnz}'", h + 1)
    if nrows != ncols:
        raise InputError(
            path, f"the matrix is {nrows} x {ncols}: a graph needs a square matrix", h + 1
        )
    if nrows > _INT32_MAX:
        raise InputError(path, f"{nrows} vertices: at most {_INT32_MAX} are supported", h + 1)
    _require_memory(nrows, path, h + 1)
    return h, nrows, nnz


def _require_memory(nrows: int, path: str, line: int) -> None:
    require_memory((nrows + 1) * VERTEX_BYTES, path, line,
                   f"the size line's {nrows} x {nrows} matrix, a graph of {nrows} vertices,")


def _graph_of_pattern(n: int, rows, cols, weights, path: str) -> Graph:
    """The graph of the pattern of A + A^T without the diagonal, rows sorted. The keys are
    row << 32 | column, so that a row and its neighbours are the halves of a sorted key."""
    off = rows != cols
    rows, cols = rows[off], cols[off]
    key = np.empty(2 * len(rows), np.int64)
    np.left_shift(rows, 32, out=key[: len(rows)])
    key[: len(rows)] |= cols
    np.left_shift(cols, 32, out=key[len(rows) :])
    key[len(rows) :] |= rows
    del rows, cols
    if weights is None:
        key = sorted_unique(key)
        adjwgt = np.ones(len(key), np.int64)
    else:
        w = np.concatenate([weights[off], weights[off]])
        key, adjwgt = _largest_per_key(key, w, n)
    xadj = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(key >> 32, minlength=n), out=xadj[1:])
    return Graph(
        xadj=xadj,
        adjncy=(key & 0xFFFFFFFF).astype(np.int32),
        vwgt=np.ones((n, 1), np.int64),
        adjwgt=adjwgt,
        name=path,
        has_adjwgt=weights is not None,
    )


def _largest_per_key(key: np.ndarray, w: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The distinct keys, sorted, and the largest weight of each. Where the (row, column) pairs
    and the weights fit in 63 bits together, one sort of packed values (the weight in the low
    bits, the largest last in its key's run) stands for the argsort."""
    if not len(key):
        return key, w
    id_bits = max(n - 1, 1).bit_length()
    w_bits = int(w.max(initial=1)).bit_length()
    if 2 * id_bits + w_bits <= 63:
        packed = ((key >> 32) << (id_bits + w_bits)) | ((key & 0xFFFFFFFF) << w_bits) | w
        packed.sort()
        pair = packed >> w_bits
        last = np.flatnonzero(np.append(pair[1:] != pair[:-1], True))
        pair = pair[last]
        return ((pair >> id_bits) << 32) | (pair & ((1 << id_bits) - 1)), \
            packed[last] & ((1 << w_bits) - 1)
    order = np.argsort(key)
    key, w = key[order], w[order]
    first = np.flatnonzero(np.concatenate([[True], key[1:] != key[:-1]]))
    return key[first], np.maximum.reduceat(w, first) if len(w) else w
