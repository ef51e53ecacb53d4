"""Input and output files: graphs (METIS format, Matrix Market), partitions, target weights."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from gpmetis.errors import InputError
from gpmetis.graph import Graph
from gpmetis.io.checkgraph import check_graph
from gpmetis.io.metis_format import check_metis, read_metis
from gpmetis.io.partfile import read_tpwgts, write_partition
from gpmetis.io.source import (
    COMPRESSED_SUFFIXES,
    is_matrix_market,
    read_bytes,
    reading_allocations,
)

if TYPE_CHECKING:
    from gpmetis.io.checkgraph import GraphCheck

__all__ = ["check_graph_file", "read_graph", "read_tpwgts", "write_partition"]


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
    with _reading(name):
        # a list, popped in the call: the readers then hold the only reference to the bytes
        # and can free them as soon as the text is tokenized
        data = [read_bytes(name)]
        if _matrix_market(name, data[0]):
            # imported here: a METIS graph's run never loads the Matrix Market scanner
            from gpmetis.io.matrix_market import read_matrix_market

            return read_matrix_market(data.pop(), name, mtx_weights=mtx_weights)
        return read_metis(data.pop(), name, symmetrize=symmetrize)


def check_graph_file(path: str | os.PathLike) -> GraphCheck:
    """METIS 5.1 graphchk's check of a graph file, read as ``read_graph`` reads it: InputError
    where the file cannot be read as a graph; else METIS's CheckGraph findings on a METIS
    graph's entries as written (self loops, repeated neighbours, one-way entries, reverse
    entries of another weight). A Matrix Market graph, symmetric without loops by
    construction, has none."""
    name = os.fspath(path)
    with _reading(name):
        data = read_bytes(name)
        if _matrix_market(name, data):
            from gpmetis.io.matrix_market import read_matrix_market

            graph = read_matrix_market(data, name)
            return check_graph(graph.xadj, graph.adjncy, None)
        return check_metis(data, name)


def _matrix_market(name: str, data) -> bool:
    """Whether the file ``name`` of bytes ``data`` is read as Matrix Market."""
    stem, ext = os.path.splitext(name.lower())
    if ext in COMPRESSED_SUFFIXES:
        ext = os.path.splitext(stem)[1]
    return ext == ".mtx" or is_matrix_market(data)


@contextmanager
def _reading(name: str) -> Iterator[None]:
    """Reading the file ``name``: the reading allocations, and running out of memory an
    InputError."""
    with reading_allocations():
        try:
            yield
        except MemoryError:
            raise InputError(name, "not enough memory to read the file") from None
