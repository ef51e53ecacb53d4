"""Reading a METIS graph file on the GPU: its bytes are uploaded once and parsed by the kernels
of ``metis_gpu.cu``, which also run ``validate``'s checks (neighbour range, self loops,
repeated neighbours, exact symmetry by sorting the reverse keys).

The fast path covers what large graph files are: fmt 0 or 1 (no vertex sizes or weights), no
comment lines after the header, nothing but digits and blanks after it. On anything else,
including every input ``read_metis`` rejects or warns about, ``read_metis_gpu`` returns None
and the caller reads the file with ``read_metis``, so messages and warnings stay the CPU
reader's. A graph it returns is the one ``read_metis`` returns (the tests compare the two).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gpmetis.backend import Backend
from gpmetis.graph import Graph

CU_FILE = Path(__file__).with_name("metis_gpu.cu")
FLAG_ORDER = 128  # as in metis_gpu.cu: rows not strictly increasing (sorted again below)
SPAN = 4096  # as in metis_gpu.cu: bytes per block of the compaction kernels
# bytes parsed at once: the kernels' byte positions are int32, and larger files go through in
# chunks of whole lines
CHUNK_BYTES = 1 << 30
_BLANK = b" \t\r"
_INT32_MAX = np.iinfo(np.int32).max


def read_metis_gpu(be: Backend, data, path: str) -> Graph | None:
    """The graph of the METIS file whose bytes are ``data`` (bytes or an mmap), parsed on the
    GPU of ``be``; None when the file is outside the fast path (see the module docstring)."""
    head = _header(data)
    if head is None:
        return None
    body, n, m, readew = head
    nnz = 2 * m
    # (a token takes a digit and a separator: a header announcing more is refused before
    # anything is allocated for its tokens)
    if len(data) == body or nnz > _INT32_MAX or nnz << readew > (len(data) - body + 1) // 2:
        return None
    try:
        return _parse(be, data, path, body, n, nnz, readew)
    except MemoryError:  # cupy's OutOfMemoryError is one: the CPU reader needs no GPU memory
        return None
    finally:  # the parse's temporaries go back to the device
        be.release_free_memory()


def _parse(be: Backend, data, path: str, body: int, n: int, nnz: int, readew: int):
    xp = be.xp
    kernel = be.kernel
    ntok_expected = nnz << readew
    value = xp.empty(ntok_expected, dtype=xp.int32)
    line = xp.empty(ntok_expected, dtype=xp.int32)
    flags = xp.zeros(1, dtype=xp.int32)
    ntok = nnewlines = 0
    for start, end in _chunks(data, body, len(data)):
        # a chunk ends after a newline, so its tokens and lines are whole; the line numbers
        # are the file's (those of the chunks before added)
        marks = range_marks(be, data, start, end, flags)
        if marks is None or ntok + marks.ntok > ntok_expected:
            return None
        marks.parse(n - nnewlines, value[ntok:ntok + marks.ntok], line[ntok:ntok + marks.ntok],
                    flags)
        if nnewlines:
            line[ntok:ntok + marks.ntok] += nnewlines
        ntok += marks.ntok
        nnewlines += marks.nnewlines
        del marks
    nlines = nnewlines + (data[len(data) - 1] != ord("\n"))
    if ntok != ntok_expected or nlines < n:
        return None
    tok_xadj = xp.searchsorted(line, xp.arange(n + 1, dtype=xp.int32))
    xadj = xp.empty(n + 1, dtype=xp.int64)
    be.launch(kernel(CU_FILE, "row_offsets"), n + 1,
              (np.int32(n), tok_xadj, np.int32(readew), xadj, flags))
    del tok_xadj
    adjncy = xp.empty(nnz, dtype=xp.int32)
    adjwgt = xp.empty(nnz if readew else 1, dtype=xp.int64)
    be.launch(kernel(CU_FILE, "entries"), nnz,
              (np.int64(nnz), value, line, np.int32(1 + readew), np.int32(n), adjncy, adjwgt,
               flags))
    del value, line
    found = int(flags.get()[0])
    if found & ~FLAG_ORDER:
        return None
    if found & FLAG_ORDER:
        _check_unsorted(be, n, nnz, xadj, adjncy, adjwgt, readew, flags)
    else:
        be.launch(kernel(CU_FILE, "find_reverse"), nnz,
                  (np.int64(nnz), np.int32(n), xadj, adjncy, adjwgt, np.int32(readew), flags))
    if int(flags.get()[0]) & ~FLAG_ORDER:
        return None
    # the host copies in pinned memory: later uploads of this graph go straight across
    return Graph(
        xadj=be.asnumpy(xadj),
        adjncy=be.asnumpy(adjncy),
        vwgt=np.ones((n, 1), np.int64),
        adjwgt=be.asnumpy(adjwgt) if readew else np.ones(nnz, np.int64),
        name=path,
        has_vwgt=False,
        has_adjwgt=bool(readew),
        device=(xadj, adjncy, adjwgt if readew else None),
    )


@dataclass
class RangeMarks:
    """A byte range of the file on the GPU with where its tokens start and its newlines are
    (``count_marks`` and ``write_marks``); ``parse`` reads the tokens."""

    be: Backend
    text: object  # the range's bytes (uint8)
    pos: object  # each token's first byte (int32)
    newlines: object  # each newline's byte (int32)

    @property
    def ntok(self) -> int:
        return len(self.pos)

    @property
    def nnewlines(self) -> int:
        return len(self.newlines)

    def parse(self, nvtxs: int, value, line, flags) -> None:
        """Each token's value (int32, up to 9 digits) into ``value`` and its 0-based line in
        the range into ``line``; longer numbers, and tokens on a line at or past ``nvtxs``,
        set bits of ``flags``."""
        if self.ntok:
            self.be.launch(self.be.kernel(CU_FILE, "parse_tokens"), self.ntok,
                           (np.int64(self.ntok), np.int64(len(self.text)), self.text, self.pos,
                            self.newlines, np.int64(self.nnewlines), np.int32(nvtxs), value,
                            line, flags))


def range_marks(be: Backend, data, start: int, end: int, flags) -> RangeMarks | None:
    """The marks of ``data[start:end]`` (a buffer's bytes) uploaded to ``be``'s GPU; None
    where the range is too long for the kernels' int32 positions. Bytes outside the fast
    path's alphabet set a bit of ``flags``."""
    xp, nbytes = be.xp, end - start
    if nbytes > _INT32_MAX:  # one line longer than the kernels' positions reach
        return None
    text = be.upload(np.frombuffer(data, np.uint8, nbytes, start), np.uint8)
    nblocks = -(-nbytes // SPAN)
    counts = xp.empty((nblocks, 2), dtype=xp.int32)
    be.launch_blocks(be.kernel(CU_FILE, "count_marks"), nblocks,
                     (np.int64(nbytes), text, counts, flags))
    offsets = xp.cumsum(counts, axis=0, dtype=xp.int64)
    ntok, nnewlines = (int(x) for x in offsets[-1].get())
    offsets -= counts
    pos = xp.empty(ntok, dtype=xp.int32)
    newlines = xp.empty(nnewlines, dtype=xp.int32)
    be.launch_blocks(be.kernel(CU_FILE, "write_marks"), nblocks,
                     (np.int64(nbytes), text, offsets, pos, newlines))
    return RangeMarks(be, text, pos, newlines)


def range_rows(be: Backend, data, start: int, end: int, readew: int):
    """The rows of the whole lines ``data[start:end]`` of a METIS body without vertex data,
    read on ``be``'s GPU a chunk at a time: (each line's neighbour count, the neighbours'
    0-based ids, their weights or None without ``readew``), int64 host arrays; None where a
    byte, a number or a line's count of values is outside the fast path (see the module
    docstring). Lines past the graph's vertices are the caller's to check."""
    xp = be.xp
    flags = xp.zeros(1, dtype=xp.int32)
    counts, adjncy, adjwgt = [], [], []
    for a, b in _chunks(data, start, end):
        marks = range_marks(be, data, a, b, flags)
        if marks is None:
            return None
        value = xp.empty(marks.ntok, dtype=xp.int32)
        line = xp.empty(marks.ntok, dtype=xp.int32)
        marks.parse(_INT32_MAX, value, line, flags)
        nlines = marks.nnewlines + (data[b - 1] != ord("\n"))
        del marks
        if int(flags.get()[0]):  # (a chunk off the fast path ends the read: no more chunks)
            return None
        cnt = xp.bincount(line, minlength=nlines)
        del line
        if readew:
            if bool((cnt & 1).any()):
                return None
            cnt >>= 1
        counts.append(be.asnumpy(cnt))
        ids = value[::1 + readew].astype(xp.int64)
        ids -= 1
        adjncy.append(be.asnumpy(ids))
        if readew:
            adjwgt.append(be.asnumpy(value[1::2].astype(xp.int64)))
        del value, ids
    return (_joined(counts), _joined(adjncy), _joined(adjwgt) if readew else None)


def _joined(arrays: list[np.ndarray]) -> np.ndarray:
    """The arrays end to end (the one array itself, without a copy, where there is one)."""
    if len(arrays) == 1:
        return arrays[0]
    return np.concatenate(arrays) if arrays else np.zeros(0, np.int64)


def _chunks(data, start: int, size: int) -> list[tuple[int, int]]:
    """(start, end) byte ranges covering ``data[start:size]``, each at most CHUNK_BYTES long
    and, but for the last, ending just after a newline (a line longer than CHUNK_BYTES: one
    range up to its end)."""
    ranges = []
    while start < size:
        end = size if size - start <= CHUNK_BYTES else data.rfind(b"\n", start,
                                                                     start + CHUNK_BYTES) + 1
        if end <= start:  # no newline in the window: the line's own end (or the range's)
            end = data.find(b"\n", start + CHUNK_BYTES, size)
            end = size if end < 0 else end + 1
        ranges.append((start, end))
        start = end
    return ranges


def _check_unsorted(be: Backend, n: int, nnz: int, xadj, adjncy, adjwgt, readew: int,
                    flags) -> None:
    """Symmetry and repeats of a graph whose rows are not sorted: both key orders, sorted."""
    xp = be.xp
    key = xp.empty(nnz, dtype=xp.int64)
    rkey = xp.empty(nnz, dtype=xp.int64)
    be.launch(be.kernel(CU_FILE, "entry_keys"), nnz,
              (np.int64(nnz), np.int32(n), xadj, adjncy, key, rkey))
    korder = rorder = flags  # placeholders where not needed
    if readew:
        korder, rorder = xp.argsort(key), xp.argsort(rkey)
        key, rkey = key[korder], rkey[rorder]
    else:
        key.sort()
        rkey.sort()
    be.launch(be.kernel(CU_FILE, "compare_reverse"), nnz,
              (np.int64(nnz), key, korder, rkey, rorder, adjwgt, np.int32(readew), flags))


def _header(data) -> tuple[int, int, int, int] | None:
    """(offset of the body, n, m, readew) when the header is a fast-path one: 2 to 4 plain
    integers, fmt 0 or 1, no ncon; leading blank and comment lines are skipped."""
    pos = 0
    while pos < len(data):
        end = data.find(b"\n", pos)
        if end < 0:
            return None  # a header and no vertex lines
        line = bytes(data[pos:end])
        pos = end + 1
        fields = line.split()
        if not fields or fields[0].startswith(b"%"):
            continue
        if any(c not in b"0123456789" and c not in _BLANK for c in line):
            return None
        if not 2 <= len(fields) <= 4 or any(len(f) > 9 for f in fields):
            return None
        n, m, fmt, ncon = [int(f) for f in fields] + [0] * (4 - len(fields))
        if n <= 0 or fmt not in (0, 1) or ncon != 0:
            return None
        return pos, n, m, fmt
    return None
