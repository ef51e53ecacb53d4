"""Input and output files: graphs (METIS format, Matrix Market), partitions, target weights."""

from __future__ import annotations

import os

from gpmetis.errors import InputError
from gpmetis.graph import Graph
from gpmetis.io.metis_format import read_metis
from gpmetis.io.partfile import read_tpwgts, write_partition
from gpmetis.io.source import (
    COMPRESSED_SUFFIXES,
    is_matrix_market,
    read_bytes,
    reading_allocations,
)

__all__ = ["read_graph", "read_tpwgts", "write_partition"]


def read_graph(
    path: str | os.PathLike, *, symmetrize: bool = False, mtx_weights: bool = False
) -> Graph:
    """Read a graph file: Matrix Market when the name ends in ``.mtx`` (optionally followed by
    ``.gz``, ``.bz2`` or ``.xz``) or the (decompressed) text starts with ``%%MatrixMarket``,
    the METIS graph format otherwise; gzip, bzip2 and xz data are recognised by their magic
    bytes. A pipe, FIFO or device is read exactly once. ``symmetrize`` (METIS format) adds
    missing reverse edges instead of failing; ``mtx_weights`` takes edge weights from the
    matrix values. InputError (naming the file and line) on any problem, running out of memory
    while reading included; dropped self loops and repeated neighbours are reported in
    ``graph.warnings``."""
    name = os.fspath(path)
    stem, ext = os.path.splitext(name.lower())
    if ext in COMPRESSED_SUFFIXES:
        ext = os.path.splitext(stem)[1]
    with reading_allocations():
        try:
            # a list, popped in the call: the readers then hold the only reference to the
            # bytes and can free them as soon as the text is tokenized
            data = [read_bytes(name)]
            if ext == ".mtx" or is_matrix_market(data[0]):
                # imported here: a METIS graph's run never loads the Matrix Market scanner
                from gpmetis.io.matrix_market import read_matrix_market

                return read_matrix_market(data.pop(), name, mtx_weights=mtx_weights)
            return read_metis(data.pop(), name, symmetrize=symmetrize)
        except MemoryError:
            raise InputError(name, "not enough memory to read the file") from None
