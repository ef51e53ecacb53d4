"""Reading in a forked child gives exactly what read_graph gives, errors included."""

from __future__ import annotations

import os

import numpy as np
import pytest
from conftest import FIXTURES

from gpmetis import read_graph
from gpmetis.errors import InputError
from gpmetis.io import forked
from gpmetis.io.forked import PendingGraph


def _same(a, b):
    for name in ("xadj", "adjncy", "vwgt", "adjwgt"):
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype and np.array_equal(x, y), name
    assert (a.vsize is None) == (b.vsize is None)
    if a.vsize is not None:
        assert np.array_equal(a.vsize, b.vsize)
    assert (a.name, a.has_vwgt, a.has_adjwgt, a.warnings) == (
        b.name, b.has_vwgt, b.has_adjwgt, b.warnings)


@pytest.mark.parametrize("name", ["4elt.graph", "karate.mtx", "bcsstk13.mtx", "uk.graph"])
def test_child_read_equals_read_graph(name):
    path = str(FIXTURES / name)
    _same(PendingGraph(path, False).result(), read_graph(path))


def test_weights_sizes_and_warnings_come_back(tmp_path):
    f = tmp_path / "w.graph"
    # fmt 111: vsize, vwgt, edge weights; vertices 1 and 3 have self loops (a warning)
    f.write_text("3 3 111\n1 5 1 9 2 7\n2 6 1 7 3 4\n3 1 2 4 3 9\n")
    expected = read_graph(f)
    assert expected.warnings and expected.vsize is not None
    _same(PendingGraph(str(f), False).result(), expected)


def test_reader_errors_come_back_unchanged(tmp_path):
    f = tmp_path / "bad.graph"
    f.write_text("3 2\n2\n1 x\n2\n")
    with pytest.raises(InputError) as direct:
        read_graph(f)
    with pytest.raises(InputError) as child:
        PendingGraph(str(f), False).result()
    assert str(child.value) == str(direct.value)
    assert child.value.line == direct.value.line == 3


def test_a_child_that_dies_means_reading_here(monkeypatch):
    parent = os.getpid()
    real = forked._read

    def dies_in_child(path, symmetrize):
        if os.getpid() != parent:
            raise MemoryError("no memory in the child")
        return real(path, symmetrize)

    monkeypatch.setattr(forked, "_read", dies_in_child)
    path = str(FIXTURES / "4elt.graph")
    _same(PendingGraph(path, False).result(), read_graph(path))
