"""Reading a Matrix Market file on the GPU: its bytes are uploaded once, the kernels of
``mtx_gpu.cu`` find the entry lines and parse them, and the graph (the pattern of A + A^T
without the diagonal) is built with one sort of 64-bit keys.

The fast path covers what large matrix files are: a coordinate banner the CPU reader accepts,
a size line of three plain integers for a square matrix, then NNZ entry lines of 2 (pattern)
or 3 tokens, blank lines between them allowed; indices of at most 18 digits; values of the form
``[+-]D+[.D+][(e|E)[+-]D+]`` (``[+-]D+`` of at most 16 digits in an integer matrix). A value
whose weight the digits cannot decide exactly (|a_ij| of 10^8 or more, a fraction within 1e-6
of one half, another form of a real number) is converted on the host by NumPy, as the CPU reader
converts it. Anything else, every input the CPU reader rejects included, gives None, and the
caller reads the file with ``read_matrix_market``, so messages stay the CPU reader's. A graph
it returns is the one ``read_matrix_market`` returns (the tests compare the two).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from gpmetis.backend import NULL, Backend
from gpmetis.errors import InputError
from gpmetis.graph import Graph
from gpmetis.io import mtx_scan
from gpmetis.io.matrix_market import _banner, _require_memory

CU_FILE = Path(__file__).with_name("mtx_gpu.cu")
SPAN = 4096  # as in mtx_gpu.cu: bytes per block of the compaction kernels
NO_EDGE = np.iinfo(np.int64).max  # as in mtx_gpu.cu: the packed key of a diagonal entry
SLOW_SHARE = 16  # values for the host to convert: at most one in this many, else the CPU reads
SLOW_MIN = 4096
_INT32_MAX = np.iinfo(np.int32).max


def read_matrix_market_gpu(be: Backend, data, path: str, *,
                           mtx_weights: bool = False) -> Graph | None:
    """The graph of the Matrix Market file whose bytes are ``data`` (bytes or an mmap), parsed
    on the GPU of ``be``; None when the file is outside the fast path (module docstring)."""
    try:
        field = _banner(data, path)
    except InputError:
        return None
    head = mtx_scan.header(data)
    if head is None or head.nrows != head.ncols or not 0 < head.nrows <= _INT32_MAX:
        return None
    nbytes = len(data) - head.body
    if head.nnz == 0 or nbytes <= 0 or len(data) > _INT32_MAX or 2 * head.nnz > _INT32_MAX:
        return None
    try:
        _require_memory(head.nrows, path, head.line)
    except InputError:
        return None
    weights = mtx_weights and field != "pattern"
    try:
        entries = _entries(be, data, head, field, weights)
        return None if entries is None else _graph(be, head.nrows, *entries, path)
    except MemoryError:  # cupy's OutOfMemoryError is one: the CPU reader needs no GPU memory
        return None
    finally:  # the parse's temporaries go back to the device
        be.release_free_memory()


def _entries(be: Backend, data, head: mtx_scan.Header, field: str, weights: bool):
    """(row, col, weight or None) of the entry lines on the device, 0-based, or None."""
    xp = be.xp
    kernel = be.kernel
    n, nnz, body = head.nrows, head.nnz, head.body
    nbytes = len(data) - body
    per_line = 2 if field == "pattern" else 3
    text = be.upload(np.frombuffer(data, np.uint8, nbytes, body), np.uint8)
    state = xp.zeros(2, dtype=xp.int32)  # the FLAG_* bits, the values listed for the host
    nblocks = -(-nbytes // SPAN)
    counts = xp.empty(nblocks, dtype=xp.int32)
    be.launch_blocks(kernel(CU_FILE, "count_starts"), nblocks,
                     (np.int64(nbytes), text, counts, state))
    offsets = xp.cumsum(counts, dtype=xp.int64)
    ntok = int(offsets[-1].get())
    if ntok != nnz * per_line or int(state[0].get()):
        return None
    offsets -= counts
    pos = xp.empty(ntok, dtype=xp.int32)
    be.launch_blocks(kernel(CU_FILE, "write_starts"), nblocks,
                     (np.int64(nbytes), text, offsets, pos))
    del counts, offsets
    row = xp.empty(nnz, dtype=xp.int32)
    col = xp.empty(nnz, dtype=xp.int32)
    weight = xp.empty(nnz, dtype=xp.int64) if weights else None
    slow_cap = max(SLOW_MIN, nnz // SLOW_SHARE)
    slow = xp.empty(3 * slow_cap, dtype=xp.int64)
    be.launch(kernel(CU_FILE, "parse_entries"), nnz,
              (np.int64(nnz), np.int64(nbytes), text, pos, np.int32(per_line),
               np.int32(field == "integer"), np.int32(weights), np.int32(n), row, col,
               NULL if weight is None else weight, slow, np.int32(slow_cap), state))
    del text, pos
    flags, nslow = (int(x) for x in state.get())
    if flags:
        return None
    if nslow:
        listed = slow[: 3 * nslow].get().reshape(nslow, 3)
        exact = mtx_scan._exact(np.frombuffer(data, np.uint8), listed[:, 1] + body,
                                listed[:, 2], weights)
        if exact is None:  # not a finite number, or a weight of 2^62 or more
            return None
        if weights:
            weight[xp.asarray(listed[:, 0])] = xp.asarray(exact)
    return row, col, weight


def _graph(be: Backend, n: int, row, col, weight, path: str) -> Graph | None:
    """The graph of the pattern of A + A^T without the diagonal, rows sorted, with the largest
    weight of each edge (``read_matrix_market``'s); None where the keys do not fit 63 bits."""
    xp = be.xp
    nnz = len(row)
    weights = weight is not None
    id_bits = max(n - 1, 1).bit_length()
    w_bits = int(weight.max().get()).bit_length() if weights else 0
    levels = None
    if 2 * id_bits + w_bits > 63:
        # too wide to pack: ranks among the distinct weights stand for them (the largest
        # weight of a run is its largest rank)
        levels = xp.unique(weight)
        weight = xp.searchsorted(levels, weight)
        w_bits = max(len(levels) - 1, 1).bit_length()
        if 2 * id_bits + w_bits > 63:
            return None
    packed = xp.empty(2 * nnz, dtype=xp.int64)
    be.launch(be.kernel(CU_FILE, "pack_entries"), 2 * nnz,
              (np.int64(nnz), row, col, NULL if weight is None else weight, np.int32(id_bits),
               np.int32(w_bits), packed))
    del row, col, weight
    packed.sort()
    # the last of each (row, column) run holds its largest weight; diagonal entries go
    pair = packed >> w_bits
    keep = packed != NO_EDGE
    keep[:-1] &= pair[1:] != pair[:-1]
    del pair
    packed = packed[keep]
    del keep
    shift = id_bits + w_bits
    xadj = xp.empty(n + 1, dtype=xp.int64)
    xadj[:n] = xp.searchsorted(packed, xp.arange(n, dtype=xp.int64) << shift)
    xadj[n] = len(packed)
    adjncy = ((packed >> w_bits) & ((1 << id_bits) - 1)).astype(xp.int32)
    adjwgt = packed & ((1 << w_bits) - 1) if weights else None
    if levels is not None:
        adjwgt = levels[adjwgt]
    del levels
    del packed
    # the host copies in pinned memory: later uploads of this graph go straight across
    return Graph(
        xadj=be.asnumpy(xadj),
        adjncy=be.asnumpy(adjncy),
        vwgt=np.ones((n, 1), np.int64),
        adjwgt=be.asnumpy(adjwgt) if weights else np.ones(len(adjncy), np.int64),
        name=path,
        has_adjwgt=weights,
        device=(xadj, adjncy, adjwgt),
    )
