"""Shared test helpers: fixture graphs, random graphs, the GPU skip rule, and the shards of
``make gpu-test GPU_SHARDS=N``."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from gpmetis.balance import Balance
from gpmetis.graph import Graph

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"

# METIS 5.1.0's gpmetis edge cuts at k = 2, 8, 64 (shared/graphs/README.md).
METIS_CUTS = {name: tuple(c) for name, c in
              json.loads((FIXTURES / "metis_cuts.json").read_text())["cuts"].items()}
SMALL_GRAPHS = ["1138_bus", "3elt", "add20", "btree", "power", "uk", "polblogs", "data"]


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    """``GPMETIS_TEST_SHARD=i/n`` keeps every n-th selected test from the i-th (0-based): n
    processes, one per GPU, run the selection once between them."""
    shard = os.environ.get("GPMETIS_TEST_SHARD")
    if not shard:
        return
    i, n = (int(x) for x in shard.split("/"))
    config.hook.pytest_deselected(items=[t for j, t in enumerate(items) if j % n != i])
    items[:] = [t for j, t in enumerate(items) if j % n == i]


def load_fixture(name: str) -> Graph:
    from gpmetis.io import read_graph

    return read_graph(FIXTURES / f"{name}.graph")


def random_graph(
    n: int,
    avg_degree: float,
    seed: int,
    *,
    weighted: bool = False,
    isolated: int = 0,
    components: int = 1,
    hubs: int = 0,
) -> Graph:
    """A random graph: ``components`` random pieces plus ``isolated`` lone vertices; ``hubs``
    vertices get about n/4 neighbours each (high-degree paths of the GPU kernels)."""
    rng = np.random.default_rng(seed)
    core = n - isolated
    m = int(core * avg_degree / 2)
    piece = rng.integers(0, components, size=m)
    size = max(core // components, 1)
    u = rng.integers(0, size, size=m) + piece * size
    v = rng.integers(0, size, size=m) + piece * size
    u, v = np.minimum(u, core - 1), np.minimum(v, core - 1)
    # a path through each piece keeps it connected
    chain = np.arange(core - 1)
    linked = (chain // size) == ((chain + 1) // size)
    u = np.concatenate([u, chain[linked]])
    v = np.concatenate([v, chain[linked] + 1])
    if hubs:
        spokes = rng.integers(0, core, size=(hubs, core // 4))
        u = np.concatenate([u, np.repeat(np.arange(hubs), core // 4)])
        v = np.concatenate([v, spokes.ravel()])
    keep = u != v
    a = np.concatenate([u[keep], v[keep]])
    b = np.concatenate([v[keep], u[keep]])
    key = np.unique(a.astype(np.int64) * n + b)
    a, b = key // n, key % n
    xadj = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(a, minlength=n), out=xadj[1:])
    adjwgt = None
    vwgt = None
    if weighted:
        lo, hi = np.minimum(a, b), np.maximum(a, b)
        adjwgt = (lo * 7 + hi * 13) % 9 + 1
        vwgt = rng.integers(1, 5, size=(n, 1))
    return Graph.from_csr(xadj, b, vwgt, adjwgt, name=f"random-{n}-{seed}")


def check_partition(graph: Graph, part: np.ndarray, nparts: int, ufactor: int = 30) -> None:
    """Valid ids, the balance limit of METIS's definition, and no empty part when n >= k."""
    assert part.shape == (graph.nvtxs,)
    assert part.min(initial=0) >= 0 and part.max(initial=0) < nparts
    pw = np.bincount(part, weights=graph.vwgt[:, 0], minlength=nparts)
    average = graph.vwgt[:, 0].sum() / nparts
    limit = np.floor((1 + ufactor / 1000) * average + 1e-9)
    # integer weights can make the limit unreachable: a part of ceil(average) is then allowed
    unavoidable = max(np.ceil(average - 1e-9), graph.vwgt[:, 0].max(initial=0))
    assert pw.max() <= max(limit, unavoidable), (pw.max(), limit)
    if graph.nvtxs >= nparts:
        assert (np.bincount(part, minlength=nparts) > 0).all(), "empty part"


def cuda_usable() -> bool:
    from gpmetis.backend import cuda_available

    return cuda_available()


requires_cuda = pytest.mark.skipif(
    not cuda_usable(), reason="needs a CUDA GPU with CuPy (run `make gpu-test` on the device)"
)


@pytest.fixture(scope="session")
def gpu_be():
    """The gpu backend (for tests marked ``requires_cuda``)."""
    from gpmetis.backend import get_backend

    return get_backend("gpu")


def graph_from_edges(edges: list[tuple[int, int]], n: int) -> Graph:
    """The graph of n vertices and the undirected ``edges`` (each pair once)."""
    e = np.array(edges, dtype=np.int64).reshape(-1, 2)
    src = np.concatenate([e[:, 0], e[:, 1]])
    dst = np.concatenate([e[:, 1], e[:, 0]])
    order = np.lexsort((dst, src))
    xadj = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=xadj[1:])
    return Graph.from_csr(xadj, dst[order])


def _grid(rows: int, cols: int, first: int) -> list[tuple[int, int]]:
    """The edges of a rows x cols grid whose vertices are numbered from ``first``."""
    ids = np.arange(rows * cols).reshape(rows, cols) + first
    return ([(int(a), int(b)) for a, b in zip(ids[:, :-1].ravel(), ids[:, 1:].ravel())]
            + [(int(a), int(b)) for a, b in zip(ids[:-1].ravel(), ids[1:].ravel())])


def grid_components(big: tuple[int, int], small: tuple[int, int], count: int) -> Graph:
    """A grid ``big`` (rows, cols) and ``count`` grids ``small``, all apart."""
    edges = _grid(*big, 0)
    first = big[0] * big[1]
    for _ in range(count):
        edges += _grid(*small, first)
        first += small[0] * small[1]
    return graph_from_edges(edges, first)


def limits_balance(limits, group_size: int = 0) -> Balance:
    """A refinement's ``Balance`` from host part weight limits, (nparts,) for one constraint or
    (ncon, nparts); each constraint's total taken as its limits' sum."""
    limits = np.asarray(limits, dtype=np.int64)
    limits = limits.reshape(1, -1) if limits.ndim == 1 else limits
    return Balance(limits, limits.sum(axis=1), group_size=group_size)
