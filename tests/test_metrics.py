"""Partition metrics: connected components (parts' and the whole graph's) and the report fields
built on them, against a union-find written plainly; the GPU kernels against the NumPy twin."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import graph_from_edges, grid_components, load_fixture, random_graph, requires_cuda

from gpmetis import metrics
from gpmetis.backend import get_backend
from gpmetis.balance import uniform_tpwgts
from gpmetis.graph import Graph
from gpmetis.metrics import compute_metrics, connected_components, cut_edges


def _union_find_labels(graph: Graph, part=None) -> np.ndarray:
    """Smallest vertex id of each vertex's component, by a sequential union-find."""
    parent = list(range(graph.nvtxs))

    def root(v: int) -> int:
        while parent[v] != v:
            v = parent[v]
        return v

    for v in range(graph.nvtxs):
        for u in graph.adjncy[graph.xadj[v]:graph.xadj[v + 1]]:
            if part is not None and part[u] != part[v]:
                continue
            a, b = root(v), root(int(u))
            parent[max(a, b)] = min(a, b)
    return np.array([root(v) for v in range(graph.nvtxs)], dtype=np.int32)


def _cases():
    return [random_graph(3000, 4, seed=9, isolated=200, components=3),
            random_graph(2000, 3, seed=2, components=5), load_fixture("power")]


@pytest.mark.parametrize("case", range(3))
def test_components_equal_union_find(case):
    graph = _cases()[case]
    part = np.random.default_rng(case).integers(0, 7, graph.nvtxs).astype(np.int32)
    cpu = get_backend("cpu")
    whole = connected_components(cpu, graph.xadj, graph.adjncy)
    np.testing.assert_array_equal(whole, _union_find_labels(graph))
    inside = connected_components(cpu, graph.xadj, graph.adjncy, part)
    np.testing.assert_array_equal(inside, _union_find_labels(graph, part))


@pytest.mark.parametrize("case", range(2))  # the disconnected cases
def test_metrics_count_the_whole_graph_components_from_the_parts(case):
    # the whole graph's components come from the parts' components joined by the cut edges
    graph = _cases()[case]
    part = np.random.default_rng(case).integers(0, 7, graph.nvtxs).astype(np.int32)
    m = compute_metrics(graph.xadj, graph.adjncy, graph.vwgt, graph.adjwgt, part, 7,
                        uniform_tpwgts(7, 1))
    labels = _union_find_labels(graph)
    assert m.ncomponents == int((labels == np.arange(graph.nvtxs)).sum()) > 1


def test_metrics_count_components_of_parts():
    # two triangles joined by the edge 2-3; part 0 = {0, 1, 4}: two pieces (0-1 and 4)
    edges = [(0, 1), (1, 2), (0, 2), (2, 3), (3, 4), (4, 5), (3, 5)]
    n = 6
    adj = [[] for _ in range(n)]
    for a, b in edges:
        adj[a].append(b)
        adj[b].append(a)
    xadj = np.cumsum([0] + [len(a) for a in adj]).astype(np.int64)
    adjncy = np.array([u for a in adj for u in a], dtype=np.int32)
    vwgt = np.ones((n, 1), dtype=np.int32)
    adjwgt = np.ones(len(adjncy), dtype=np.int32)
    part = np.array([0, 0, 1, 1, 0, 1], dtype=np.int32)
    m = compute_metrics(xadj, adjncy, vwgt, adjwgt, part, 2, uniform_tpwgts(2, 1))
    assert m.edgecut == 4
    assert (m.part_components, m.noncontiguous, m.max_part_components) == (3, 1, 2)
    assert m.max_components_pid == 0
    assert m.ncomponents == 1


def _plain_cut_volume_ndom(graph: Graph, part, vsize) -> tuple[int, int, list[int]]:
    """METIS's edgecut, communication volume and subdomain degrees, by loops over the rows."""
    cut = volume = 0
    neighbours = [set() for _ in range(int(part.max()) + 1)]
    for v in range(graph.nvtxs):
        row = slice(graph.xadj[v], graph.xadj[v + 1])
        others = set()
        for u, w in zip(graph.adjncy[row], graph.adjwgt[row]):
            if part[u] != part[v]:
                cut += int(w)
                others.add(int(part[u]))
        volume += len(others) * int(vsize[v])
        neighbours[part[v]] |= others
    return cut // 2, volume, [len(s) for s in neighbours]


@pytest.mark.parametrize("chunk", [5, 64, 1 << 21])
def test_cut_volume_and_ndom_equal_plain_loops(monkeypatch, chunk):
    # hubs' rows span several chunks of PAIR_CHUNK entries; vertex 0 is isolated
    graph = random_graph(1500, 5, seed=4, weighted=True, hubs=2, isolated=1)
    part = np.random.default_rng(4).integers(0, 9, graph.nvtxs).astype(np.int32)
    vsize = np.random.default_rng(5).integers(1, 4, graph.nvtxs)
    monkeypatch.setattr(metrics, "PAIR_CHUNK", chunk)
    for sizes in (None, vsize):
        m = compute_metrics(graph.xadj, graph.adjncy, graph.vwgt, graph.adjwgt, part, 9,
                            uniform_tpwgts(9, 1), sizes)
        cut, volume, ndom = _plain_cut_volume_ndom(
            graph, part, np.ones(graph.nvtxs, np.int64) if sizes is None else sizes)
        assert (m.edgecut, m.volume) == (cut, volume)
        assert (m.maxndom, m.minndom, m.avgndom) == (max(ndom), min(ndom), np.mean(ndom))


@pytest.mark.gpu
@requires_cuda
@pytest.mark.parametrize("case", range(3))
def test_gpu_metrics_equal_twin(monkeypatch, case):
    graph = _cases()[case]
    cpu, gpu = get_backend("cpu"), get_backend("gpu")
    xp = gpu.xp
    part = np.random.default_rng(case).integers(0, 7, graph.nvtxs).astype(np.int32)
    dxadj, dadjncy = xp.asarray(graph.xadj), xp.asarray(graph.adjncy)
    np.testing.assert_array_equal(gpu.sources(dxadj, len(graph.adjncy)).get(),
                                  cpu.sources(graph.xadj, len(graph.adjncy)))
    np.testing.assert_array_equal(cut_edges(gpu, dxadj, dadjncy, xp.asarray(part)).get(),
                                  cut_edges(cpu, graph.xadj, graph.adjncy, part))
    for p in (None, part):
        np.testing.assert_array_equal(
            connected_components(gpu, dxadj, dadjncy, None if p is None else xp.asarray(p)).get(),
            connected_components(cpu, graph.xadj, graph.adjncy, p))
    tpwgts = uniform_tpwgts(7, 1)
    args = (graph.vwgt, graph.adjwgt, part)
    host = compute_metrics(graph.xadj, graph.adjncy, *args, 7, tpwgts)
    device = compute_metrics(dxadj, dadjncy, *(xp.asarray(a) for a in args), 7, tpwgts, be=gpu)
    assert host == device
    monkeypatch.setattr(metrics, "PAIR_CHUNK", 50)  # many row ranges, rows split by the marks
    chunked = compute_metrics(dxadj, dadjncy, *(xp.asarray(a) for a in args), 7, tpwgts, be=gpu)
    assert chunked == host


@pytest.mark.gpu
@requires_cuda
@pytest.mark.parametrize("hubs, nparts, ghosts", [
    (0, 9, 0), (2, 9, 0), (0, metrics.ROW_SCAN_PARTS + 1, 0), (0, 9, 400)])
def test_gpu_boundary_counts_by_rows_or_by_sort_equal_loops(hubs, nparts, ghosts):
    """The row scan (short rows, few parts) and the sort (a hub's row, many parts) both give
    the plain loops' cut, volume (with and without vertex sizes) and subdomain degrees; with
    ``ghosts``, the last vertices' rows are left out (a rank's rows, its ghosts' parts read)
    and both give the same counts."""
    gpu = get_backend("gpu")
    xp = gpu.xp
    graph = random_graph(3000, 6, seed=11, weighted=True, hubs=hubs, isolated=3)
    part = np.random.default_rng(hubs).integers(0, nparts, graph.nvtxs).astype(np.int32)
    vsize = np.random.default_rng(7).integers(1, 4, graph.nvtxs)
    device = (xp.asarray(graph.xadj, dtype=xp.int64), xp.asarray(graph.adjncy, dtype=xp.int32),
              xp.asarray(graph.adjwgt, dtype=xp.int32), xp.asarray(part))
    by_rows = hubs == 0 and nparts <= metrics.ROW_SCAN_PARTS
    for sizes in (None, vsize):
        sizes = None if sizes is None else xp.asarray(sizes)
        if ghosts:
            rows = graph.nvtxs - ghosts
            args = (device[0][:rows + 1], *device[1:], nparts,
                    None if sizes is None else sizes[:rows])
            counted = metrics._boundary_by_rows(gpu, *args)
            sorted_ = metrics.boundary_pairs(gpu, *args)
            assert counted[:2] == sorted_[:2] and xp.array_equal(counted[2], sorted_[2])
            continue
        counted = metrics._boundary_by_rows(gpu, *device, nparts, sizes)
        assert (counted is not None) == by_rows
        m = compute_metrics(device[0], device[1], xp.asarray(graph.vwgt), device[2], device[3],
                            nparts, uniform_tpwgts(nparts, 1), sizes, gpu)
        cut, volume, ndom = _plain_cut_volume_ndom(
            graph, part, np.ones(graph.nvtxs, np.int64) if sizes is None else vsize)
        ndom += [0] * (nparts - len(ndom))
        assert (m.edgecut, m.volume) == (cut, volume)
        assert (m.maxndom, m.minndom, m.avgndom) == (max(ndom), min(ndom), np.mean(ndom))
        if counted is not None:
            degrees = metrics.subdomain_degrees(gpu, counted[2], nparts).tolist()
            assert (counted[0] // 2, counted[1], degrees) == (cut, volume, ndom)


def _shuffled_path(n: int, seed: int) -> Graph:
    """A path through all n vertices in random id order: deep union-find trees."""
    order = np.random.default_rng(seed).permutation(n)
    return graph_from_edges(np.stack([order[:-1], order[1:]], axis=1), n)


@pytest.mark.gpu
@requires_cuda
@pytest.mark.parametrize("case", ["path", "grids", "random"])
def test_gpu_components_of_large_graphs_equal_twin(case):
    # one union-find pass where many threads link the same trees at once: the labels are each
    # component's smallest vertex whatever the threads' order, as the host's
    graph = {"path": lambda: _shuffled_path(300_000, 1),
             "grids": lambda: grid_components((400, 500), (7, 9), 300),
             "random": lambda: random_graph(200_000, 3, seed=4, isolated=5000,
                                            components=400)}[case]()
    cpu, gpu = get_backend("cpu"), get_backend("gpu")
    xp = gpu.xp
    dxadj, dadjncy = xp.asarray(graph.xadj), xp.asarray(graph.adjncy)
    rng = np.random.default_rng(3)
    parts = [None, rng.integers(0, 5, graph.nvtxs).astype(np.int32),
             (np.arange(graph.nvtxs) * 16 // graph.nvtxs).astype(np.int32)]
    for p in parts:
        expected = connected_components(cpu, graph.xadj, graph.adjncy, p)
        for _ in range(3):
            got = connected_components(gpu, dxadj, dadjncy, None if p is None else xp.asarray(p))
            np.testing.assert_array_equal(got.get(), expected)
