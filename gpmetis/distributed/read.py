"""A METIS graph file read by every rank at once: rank 0 parses the header, each rank the
whole lines that start in its share of the body's bytes, and the ranks number their vertex
lines by counting the lines and comment lines before them (an exclusive scan). The pieces are
``gpmetis.io``'s rows of the same lines, validated where they lie (``distributed.validation``)."""

from __future__ import annotations

import functools
import mmap
from pathlib import Path

import numpy as np

from gpmetis.distributed.comm import Comm
from gpmetis.distributed.dgraph import DistGraph
from gpmetis.errors import GpmetisError, InputError
from gpmetis.io.metis_format import _edge_count_message, _header, vertex_rows
from gpmetis.io.tokens import tokenize

NEWLINE = 10
CHUNK = 1 << 22  # bytes whose newlines are counted at a time
BLANK = bytes(range(0x21))  # the bytes the tokenizer takes for blanks


def read_pieces(comm: Comm, path: str, engine: str = "cpu") -> DistGraph:
    """This rank's piece of the METIS graph file ``path`` (plain text; collective), parsed on
    the ranks' GPUs where the run is the gpu engine's (``auto``: for a graph of at least
    AUTO_GPU_MIN_SIZE vertices plus edges) and the file is on their reader's fast path.
    InputError naming the file and line, on every rank, where the file is malformed."""
    head = comm.on_root(lambda: _read_header(path))
    h, body, n, m, fmt = comm.bcast(head)
    mm, lo, hi = _own_range(comm, path, body)
    if _on_gpus(comm, engine, n, m, fmt):
        piece = _gpu_piece(comm, path, mm, lo, hi, h, n, m, fmt[2])
        if piece is not None:
            return piece
    chunk, nlines = _lines_of(mm, lo, hi)
    error = None
    try:
        tok = tokenize(chunk, path, trailing_comments=True)
    except InputError as exc:
        tok, error = None, exc
    comments = 0 if tok is None else len(tok.comment_lines)
    before = _exclusive(comm, np.array([nlines, comments], np.int64))
    first_line = h + 1 + int(before[0])  # the chunk's first line, 0-based
    first_vertex = int(before[0] - before[1])
    comm.agree(None if error is None else _moved(error, path, first_line))
    # the checks in the order one process makes them, each agreed on by every rank
    vertex_lines = int(comm.allreduce_sum(np.array([nlines - comments], np.int64))[0])
    if vertex_lines < n:
        comm.agree(InputError(path, f"the header says {n} vertices but the file has only "
                                    f"{vertex_lines} vertex lines", h + 1 + int(
                                        comm.allreduce_sum(np.array([nlines], np.int64))[0])))
    for step in (_extra_lines, _integers):
        comm.agree(_attempt(functools.partial(step, tok, path, n, first_vertex), path,
                            first_line)[1])
    local, error = _attempt(functools.partial(_rows, tok, path, n, fmt, first_vertex), path,
                            first_line)
    comm.agree(error)
    xadj, adjncy, vwgt, adjwgt, vsize = local
    entries = int(comm.allreduce_sum(np.array([len(adjncy)], np.int64))[0])
    if entries != 2 * m:
        comm.agree(InputError(path, _edge_count_message(m, entries), h + 1))
    vtxdist = np.concatenate(([0], np.cumsum(comm.allgather(len(xadj) - 1)))).astype(np.int64)
    return DistGraph(vtxdist, xadj.astype(np.int64), adjncy.astype(np.int64),
                     None if vwgt is None else vwgt.astype(np.int64),
                     None if adjwgt is None else adjwgt.astype(np.int64),
                     None if vsize is None else vsize.astype(np.int64), name=path,
                     lines=(h, first_line + tok.comment_lines.astype(np.int64)))


def own_lines(comm: Comm, path: str, body: int) -> tuple[np.ndarray, int]:
    """(this rank's lines of the file from byte ``body`` on: those that start in its share of
    the bytes, as a uint8 view of the file's mapping, which lives while the view does; their
    count); collective (a rank that cannot read ends every rank)."""
    return _lines_of(*_own_range(comm, path, body))


def _own_range(comm: Comm, path: str, body: int) -> tuple[object, int, int]:
    """(the file's mapping, the first and the end byte of this rank's lines: those that start
    in its share of the bytes from ``body`` on); collective (a rank that cannot read ends
    every rank)."""
    error, mm, lo, hi = None, b"", 0, 0
    try:
        with open(path, "rb") as f:
            mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        lo, hi = (_line_start(mm, body, r, comm.size) for r in (comm.rank, comm.rank + 1))
    except OSError as exc:
        error = InputError(path, f"cannot read: {exc.strerror or exc}")
    comm.agree(error)
    return mm, lo, hi


def _lines_of(mm, lo: int, hi: int) -> tuple[np.ndarray, int]:
    """(the bytes lo..hi-1 of the mapping ``mm`` as a uint8 view, their lines: the newlines
    and a last line without one)."""
    chunk = np.frombuffer(mm, np.uint8, hi - lo, lo)  # (no copy: the page cache's pages)
    # (counted a block at a time: a mask of the whole chunk would be a copy's worth of memory)
    newlines = sum(int(np.count_nonzero(chunk[a:a + CHUNK] == NEWLINE))
                   for a in range(0, len(chunk), CHUNK))
    return chunk, newlines + int(len(chunk) > 0 and chunk[-1] != NEWLINE)


def _on_gpus(comm: Comm, engine: str, n: int, m: int, fmt) -> bool:
    """Whether the ranks parse their lines on their GPUs: a run of the gpu engine (``auto``:
    of a graph its driver gives to a GPU) on ranks that all have one, of a file without
    vertex data (the GPU reader's fast path). Collective."""
    from gpmetis.options import AUTO_GPU_MIN_SIZE

    readvs, readvw, _, ncon = fmt
    wanted = engine == "gpu" or (engine == "auto" and n + m >= AUTO_GPU_MIN_SIZE)
    if not wanted or readvs or readvw or ncon != 1:
        return False  # (the same on every rank: the header is rank 0's)
    from gpmetis.backend import cuda_available

    usable = comm.allreduce_sum(np.array([int(cuda_available())], np.int64))
    return int(usable[0]) == comm.size


def _gpu_piece(comm: Comm, path: str, mm, lo: int, hi: int, h: int, n: int, m: int,
               readew: int) -> DistGraph | None:
    """This rank's piece, its lines parsed on its GPU (``io.metis_gpu.range_rows``); None on
    every rank where a rank's lines are off that reader's fast path or the lines and entries
    do not add up to the header's: the host's reader then reads the file and names what is
    wrong. Collective."""
    from gpmetis.backend import get_backend
    from gpmetis.io.metis_gpu import range_rows

    comm.use_gpus()
    be = get_backend("gpu")
    try:
        rows = range_rows(be, mm, lo, hi, readew)
    except MemoryError:  # cupy's OutOfMemoryError is one: the host's reader needs no GPU
        rows = None
    finally:
        be.release_free_memory()
    if int(comm.allreduce_sum(np.array([int(rows is None)], np.int64))[0]):
        return None
    cnt, adjncy, adjwgt = rows
    first_vertex = int(_exclusive(comm, np.array([len(cnt)], np.int64))[0])
    nvertex = max(min(len(cnt), n - first_vertex), 0)
    # a value on a line past the n-th, too few lines, or entries other than 2m: the host's
    totals = comm.allreduce_sum(np.array([int(cnt[nvertex:].any()), len(cnt), len(adjncy)],
                                         np.int64))
    if totals[0] or totals[1] < n or totals[2] != 2 * m:
        return None
    xadj = np.zeros(nvertex + 1, np.int64)
    np.cumsum(cnt[:nvertex], out=xadj[1:])
    vtxdist = np.concatenate(([0], np.cumsum(comm.allgather(nvertex)))).astype(np.int64)
    return DistGraph(vtxdist, xadj, adjncy, None, adjwgt, None, name=path,
                     lines=(h, np.zeros(0, np.int64)))


def _attempt(step, path: str, first_line: int) -> tuple[object, GpmetisError | None]:
    """(what ``step()`` returns, None) or (None, the InputError it raises, its line moved to
    the file's)."""
    try:
        return step(), None
    except InputError as exc:
        return None, _moved(exc, path, first_line)


def _read_header(path: str):
    """(header line, first byte of the body, n, m, (readvs, readvw, readew, ncon))."""
    try:
        with open(path, "rb") as f:
            prefix = bytearray()
            while True:  # up to the first line with values: the header
                line = f.readline()
                prefix += line
                text = line.split(b"%", 1)[0].strip(BLANK)
                if text or not line:
                    break
            body = f.tell()
    except OSError as exc:
        raise InputError(path, f"cannot read: {exc.strerror or exc}") from None
    tok = tokenize(bytes(prefix), path, trailing_comments=True)
    h, n, m, readvs, readvw, readew, ncon = _header(tok, path)
    return h, body, n, m, (readvs, readvw, readew, ncon)


def _line_start(mm: mmap.mmap, body: int, r: int, size: int) -> int:
    """Where rank r's lines start: the first line that starts in its share of the body."""
    if r == 0:
        return body
    if r == size:
        return len(mm)
    at = body + (len(mm) - body) * r // size
    found = mm.find(b"\n", at - 1)
    return len(mm) if found < 0 else found + 1


def _exclusive(comm: Comm, counts: np.ndarray) -> np.ndarray:
    """The sums of ``counts`` over the ranks before this one."""
    every = np.stack([comm.allgather(int(c)) for c in counts], axis=1)
    return every[:comm.rank].sum(axis=0)


def _moved(error: GpmetisError, path: str, first_line: int) -> GpmetisError:
    """``error`` with its chunk line moved to the file's line (the chunk's first is
    ``first_line``, 0-based)."""
    if isinstance(error, InputError) and error.line is not None:
        return InputError(path, error.reason, error.line + first_line)
    return error


def _vertex_of_rows(tok, rows: np.ndarray | None = None) -> np.ndarray:
    """Each line with values (of ``rows``, where given): its index among the chunk's vertex
    lines (the lines themselves where the chunk has no comment line)."""
    rows = tok.rows if rows is None else rows
    if len(tok.comment_lines) == 0:
        return rows
    return rows.astype(np.int64) - np.searchsorted(tok.comment_lines, rows)


def _extra_lines(tok, path: str, n: int, first_vertex: int) -> None:
    """InputError at the first line with values after the n-th vertex line."""
    if not len(tok.rows) or first_vertex + int(_vertex_of_rows(tok, tok.rows[-1:])[0]) < n:
        return  # (the rows' vertex indices rise: the last one is below n)
    extra = np.flatnonzero(first_vertex + _vertex_of_rows(tok) >= n)
    if len(extra):
        raise InputError(path, f"more vertex lines than the {n} vertices in the header (a line "
                               f"after vertex {n} is not blank)", int(tok.rows[extra[0]]) + 1)


def _integers(tok, path: str, n: int, first_vertex: int) -> None:
    """InputError at the first value that is not an integer."""
    tok.require_ints(0, len(tok.values))


def _rows(tok, path: str, n: int, fmt, first_vertex: int):
    """The rows of this chunk's vertex lines (of vertices below ``n``), the first being vertex
    ``first_vertex``; lines of the chunk."""
    comments = tok.comment_lines
    nvertex = max(min(tok.nlines - len(comments), n - first_vertex), 0)
    xadj = np.zeros(nvertex + 1, np.int64)
    xadj[_vertex_of_rows(tok) + 1] = tok.row_cnt
    np.cumsum(xadj, out=xadj)
    shifted = comments - np.arange(len(comments))

    def vertex_line(v: int) -> int:  # 1-based chunk line of the chunk's v-th vertex line
        return 1 + v + int(np.searchsorted(shifted, v, side="right"))

    return vertex_rows(xadj, tok.values[:int(xadj[-1])], fmt, path, vertex_line, first_vertex)


def plain_format(path: str) -> str | None:
    """``mtx`` or ``metis``: the format ``read_graph`` reads ``path`` in (Matrix Market by its
    ``.mtx`` name or its banner), where the ranks can read it in byte ranges (a regular,
    nonempty file, neither compressed nor named so); None where they cannot."""
    from gpmetis.io.source import COMPRESSED_SUFFIXES, is_matrix_market

    try:
        with open(path, "rb") as f:
            head = f.read(64)
    except OSError:
        return None
    compressed = head[:2] == b"\x1f\x8b" or head[:3] == b"BZh" or head[:6] == b"\xfd7zXZ\x00"
    suffix = Path(path).suffix.lower()
    if not Path(path).is_file() or not head or compressed or suffix in COMPRESSED_SUFFIXES:
        return None
    return "mtx" if suffix == ".mtx" or is_matrix_market(head) else "metis"
