"""A cheap look at a graph file's header before the full read."""

from __future__ import annotations

import os

from gpmetis.io.source import COMPRESSED_SUFFIXES, is_matrix_market, rereadable

PEEK_BYTES = 1 << 16


def peek_size(path: str | os.PathLike) -> int | None:
    """Vertices plus edges as a file's header announces them (METIS: n + m; Matrix Market:
    rows + NNZ, NNZ halved for a general matrix, which stores each edge twice), or None when
    the first 64 KiB do not show them, or when ``path`` is not a regular file: a pipe or FIFO
    is left unopened and unread, for the full read to read once. Never raises: the full read
    reports any problem."""
    name = os.fspath(path)
    if name.lower().endswith(COMPRESSED_SUFFIXES) or not rereadable(name):
        return None
    try:
        with open(name, "rb") as f:
            head = f.read(PEEK_BYTES)
    except OSError:
        return None
    matrix_market = is_matrix_market(head)
    general = matrix_market and b"general" in head.split(b"\n", 1)[0].lower()
    for line in head.split(b"\n")[:-1]:  # complete lines only
        fields = line.split()
        if not fields or fields[0].startswith(b"%"):
            continue
        if not all(f.isdigit() for f in fields):
            return None
        if matrix_market:
            if len(fields) != 3:
                return None
            return int(fields[0]) + int(fields[2]) // (2 if general else 1)
        return int(fields[0]) + int(fields[1]) if len(fields) >= 2 else None
    return None
