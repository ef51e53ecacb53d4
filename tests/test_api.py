"""The Python API: ``part_graph`` (pymetis's shape), ``read_graph`` and ``partition``."""

from __future__ import annotations

import numpy as np
import pymetis
import pytest
from conftest import FIXTURES, check_partition, load_fixture

import gpmetis
from gpmetis.errors import InputError, OptionError


def test_part_graph_with_adjacency_lists():
    ring = [[(i - 1) % 12, (i + 1) % 12] for i in range(12)]
    cuts, parts = gpmetis.part_graph(3, adjacency=ring)
    assert cuts == 3
    assert sorted(np.bincount(parts).tolist()) == [4, 4, 4]


def test_part_graph_matches_pymetis_shape_and_quality():
    graph = load_fixture("3elt")
    ours = gpmetis.part_graph(8, xadj=graph.xadj, adjncy=graph.adjncy, recursive=False)
    ref = pymetis.part_graph(8, pymetis.CSRAdjacency(graph.xadj, graph.adjncy), recursive=False)
    assert ours.edge_cuts <= 1.03 * ref.edge_cuts
    assert len(ours.vertex_part) == graph.nvtxs
    check_partition(graph, np.asarray(ours.vertex_part), 8)


def test_part_graph_with_weights_and_engine_option():
    graph = load_fixture("uk")
    vweights = (np.arange(graph.nvtxs) % 3 + 1).tolist()
    eweights = np.ones(len(graph.adjncy), dtype=np.int64)
    cuts, parts = gpmetis.part_graph(
        4, xadj=graph.xadj, adjncy=graph.adjncy, vweights=vweights, eweights=eweights,
        options={"engine": "cpu", "seed": 3},  # gpu/cpu engines: k-way by default
    )
    pw = np.bincount(parts, weights=vweights, minlength=4)
    assert pw.max() <= 1.03 * sum(vweights) / 4
    assert cuts > 0


def test_part_graph_rejects_asymmetric_input():
    with pytest.raises(InputError, match="vertex"):
        gpmetis.part_graph(2, xadj=[0, 1, 1], adjncy=[1], symmetrize=False)


def test_partition_result_fields():
    graph = gpmetis.read_graph(FIXTURES / "crack.graph")
    result = gpmetis.partition(graph, 16, engine="cpu", ufactor=50)
    assert result.engine == "cpu"
    assert result.imbalance <= 1.05 + 1e-9
    assert result.edgecut == result.metrics.edgecut > 0
    assert result.stats["levels"][0]["nvtxs"] == graph.nvtxs


def test_unknown_option_is_named():
    graph = load_fixture("uk")
    with pytest.raises(OptionError, match="ufactor"):
        gpmetis.partition(graph, 2, ufactor=0)
    with pytest.raises(OptionError, match="nosuch"):
        gpmetis.RunOptions.from_kwargs(nosuch=1)


@pytest.mark.parametrize("engine", ["cpu", "metis"])
@pytest.mark.parametrize("tpwgts", [[0, 0, 0.5, 0.5], [float("inf"), 1, 1, 1]])
def test_a_part_of_zero_or_no_finite_target_weight_is_an_option_error(engine, tpwgts):
    # METIS itself stops on a zero ("Incorrect tpwgts"), which pymetis raised as an unknown
    # error; an infinite one scales the others to zero
    with pytest.raises(OptionError, match="tpwgts.*positive"):
        gpmetis.partition(load_fixture("4elt"), 4, engine=engine, tpwgts=tpwgts)


def test_import_does_not_load_cuda():
    import subprocess
    import sys

    code = (
        "import sys, gpmetis\n"
        "g = gpmetis.read_graph(sys.argv[1])\n"
        "gpmetis.partition(g, 4)\n"
        "print('cupy' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code, str(FIXTURES / "uk.graph")],
                         capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_auto_counts_vertices_and_edges(monkeypatch):
    """``auto`` runs the gpu engine from AUTO_GPU_MIN_SIZE vertices plus edges (where CUDA is
    usable), so a sparse graph with few edges per vertex gets there too."""
    from gpmetis.options import Options
    from gpmetis.partitioning import driver

    graph = load_fixture("4elt")
    monkeypatch.setattr(driver, "cuda_available", lambda: True)
    monkeypatch.setattr(driver, "AUTO_GPU_MIN_SIZE", graph.nvtxs + graph.nedges)
    assert driver.choose_engine(graph, Options()) == "gpu"
    monkeypatch.setattr(driver, "AUTO_GPU_MIN_SIZE", graph.nvtxs + graph.nedges + 1)
    assert driver.choose_engine(graph, Options()) == "metis"


def test_the_metis_engine_hands_pymetis_arrays_of_its_index_width(monkeypatch):
    """pymetis converts arrays of another width than its idx_t element by element, so every
    array the metis engine and the orderings pass has that width (and the same values)."""
    import pymetis

    seen = []
    real_part, real_nd = pymetis.part_graph, pymetis.nested_dissection

    def part_graph(nparts, adjacency, *, vweights=None, eweights=None, **kwargs):
        seen.extend(a for a in (adjacency.adj_starts, adjacency.adjacent, vweights, eweights)
                    if a is not None)
        return real_part(nparts, adjacency, vweights=vweights, eweights=eweights, **kwargs)

    def nested_dissection(adjacency, *, vweights=None, **kwargs):
        seen.extend(a for a in (adjacency.adj_starts, adjacency.adjacent, vweights)
                    if a is not None)
        return real_nd(adjacency, vweights=vweights, **kwargs)

    monkeypatch.setattr(pymetis, "part_graph", part_graph)
    monkeypatch.setattr(pymetis, "nested_dissection", nested_dissection)
    graph = load_fixture("4elt")
    weighted = gpmetis.Graph.from_csr(graph.xadj, graph.adjncy,
                                      vwgt=np.arange(graph.nvtxs) % 3 + 1,
                                      adjwgt=np.ones(len(graph.adjncy), np.int32) * 2)
    result = gpmetis.partition(weighted, 8, engine="metis")
    gpmetis.nested_dissection(xadj=graph.xadj, adjncy=graph.adjncy,
                              vweights=np.arange(graph.nvtxs) % 3 + 1)
    assert len(seen) == 4 + 3  # the partition's four arrays, the ordering's three
    width = pymetis.zero_copy_dtype()
    assert all(a.dtype == width and a.flags.c_contiguous for a in seen)
    from gpmetis.partitioning import metis_engine

    monkeypatch.setattr(metis_engine, "metis_index", lambda a: a)  # as the graph holds them
    assert np.array_equal(gpmetis.partition(weighted, 8, engine="metis").part, result.part)
