"""A cheap look at a graph file's header before the full read."""

from __future__ import annotations

import os

from gpmetis.io.source import COMPRESSED_SUFFIXES, is_matrix_market, rereadable

PEEK_BYTES = 1 << 16


def peek_nedges(path: str | os.PathLike) -> int | None:
    """The edge count a file's header announces (METIS: m; Matrix Market: NNZ), or None when
    the first 64 KiB do not show one, or when ``path`` is not a regular file: a pipe or FIFO
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
    for line in head.split(b"\n")[:-1]:  # complete lines only
        fields = line.split()
        if not fields or fields[0].startswith(b"%"):
            continue
        if not all(f.isdigit() for f in fields):
            return None
        if matrix_market:
            return int(fields[2]) if len(fields) == 3 else None
        return int(fields[1]) if len(fields) >= 2 else None
    return None
