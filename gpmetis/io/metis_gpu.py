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

from pathlib import Path

import numpy as np

from gpmetis.backend import Backend
from gpmetis.graph import Graph

CU_FILE = Path(__file__).with_name("metis_gpu.cu")
FLAG_ORDER = 128  # as in metis_gpu.cu: rows not strictly increasing (sorted again below)
SPAN = 4096  # as in metis_gpu.cu: bytes per block of the compaction kernels
_BLANK = b" \t\r"
_INT32_MAX = np.iinfo(np.int32).max


def read_metis_gpu(be: Backend, data, path: str) -> Graph | None:
    """The graph of the METIS file whose bytes are ``data`` (bytes or an mmap), parsed on the
    GPU of ``be``; None when the file is outside the fast path (see the module docstring)."""
    head = _header(data)
    if head is None:
        return None
    body, n, m, readew = head
    nbytes = len(data) - body
    nnz = 2 * m
    if nbytes == 0 or len(data) > _INT32_MAX or nnz > _INT32_MAX:
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
    nbytes = len(data) - body
    text = be.upload(np.frombuffer(data, np.uint8, nbytes, body), np.uint8)
    flags = xp.zeros(1, dtype=xp.int32)
    nblocks = -(-nbytes // SPAN)
    counts = xp.empty((nblocks, 2), dtype=xp.int32)
    be.launch_blocks(kernel(CU_FILE, "count_marks"), nblocks,
                     (np.int64(nbytes), text, counts, flags))
    offsets = xp.cumsum(counts, axis=0, dtype=xp.int64)
    ntok, nnewlines = (int(x) for x in offsets[-1].get())
    offsets -= counts
    nlines = nnewlines + (data[len(data) - 1] != ord("\n"))
    if ntok != nnz << readew or nlines < n:
        return None
    pos = xp.empty(ntok, dtype=xp.int32)
    newlines = xp.empty(nnewlines, dtype=xp.int32)
    be.launch_blocks(kernel(CU_FILE, "write_marks"), nblocks,
                     (np.int64(nbytes), text, offsets, pos, newlines))
    del counts, offsets
    value = xp.empty(ntok, dtype=xp.int32)
    line = xp.empty(ntok, dtype=xp.int32)
    be.launch(kernel(CU_FILE, "parse_tokens"), ntok,
              (np.int64(ntok), np.int64(nbytes), text, pos, newlines, np.int64(nnewlines),
               np.int32(n), value, line, flags))
    del text, pos, newlines
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
