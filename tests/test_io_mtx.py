"""Reading Matrix Market files: the graph of A + A^T without the diagonal."""

from __future__ import annotations

import gzip

import numpy as np
import pytest
from conftest import FIXTURES

from gpmetis.io import read_graph


def sorted_rows(graph):
    """(xadj, adjncy, adjwgt) with every row sorted, for comparing graphs built differently."""
    src = graph.sources().astype(np.int64)
    order = np.argsort(src * graph.nvtxs + graph.adjncy)
    return graph.xadj, graph.adjncy[order], graph.adjwgt[order]


def assert_same_graph(a, b):
    for x, y in zip(sorted_rows(a), sorted_rows(b), strict=True):
        np.testing.assert_array_equal(x, y)


def entries(graph):
    """Every stored entry (i, j, w) of the graph, 1-based, as a Python list."""
    src = graph.sources()
    return list(
        zip((src + 1).tolist(), (graph.adjncy + 1).tolist(), graph.adjwgt.tolist(), strict=True)
    )


def mtx(field, symmetry, lines, n, banner_case=str.lower):
    banner = banner_case(f"%%MatrixMarket matrix coordinate {field} {symmetry}")
    body = "\n".join(lines)
    return f"{banner}\n% a comment\n%\n{n} {n} {len(lines)}\n{body}\n"


def value(field, w):
    """The text of a stored value whose |rounded| value is |w|."""
    shrink = -0.4 if w > 0 else 0.4
    return {"pattern": "", "integer": f" {w}", "real": f" {w + shrink:.6e}"}[field]


@pytest.fixture(scope="module")
def add20_weighted(tmp_path_factory):
    """add20 with rows sorted and made-up symmetric weights, as a METIS file (fmt 1)."""
    metis = read_graph(FIXTURES / "add20.graph")
    src, dst = metis.sources(), metis.adjncy
    w = np.minimum(src, dst) % 5 + np.maximum(src, dst) % 3 + 1
    lines = [f"{metis.nvtxs} {metis.nedges} 1"]
    for v in range(metis.nvtxs):
        a, b = metis.xadj[v], metis.xadj[v + 1]
        row = sorted(zip(dst[a:b].tolist(), w[a:b].tolist(), strict=True))
        lines.append(" ".join(f"{u + 1} {x}" for u, x in row))
    path = tmp_path_factory.mktemp("add20") / "add20w.graph"
    path.write_text("\n".join(lines) + "\n")
    return read_graph(path)


@pytest.mark.parametrize("field", ["pattern", "integer", "real"])
@pytest.mark.parametrize("symmetry", ["general", "symmetric", "skew-symmetric", "hermitian"])
def test_same_csr_as_the_metis_file(tmp_path, add20_weighted, field, symmetry):
    metis = add20_weighted
    stored = [(i, j, x) for i, j, x in entries(metis) if symmetry == "general" or i > j]
    np.random.default_rng(0).shuffle(stored)  # entry order must not matter
    if symmetry == "skew-symmetric":  # a_ji = -a_ij: the sign of the stored one varies
        body = [f"{i} {j}{value(field, x if (i + j) % 2 else -x)}" for i, j, x in stored]
    else:
        body = [f"{i} {j}{value(field, x)}" for i, j, x in stored]
    path = tmp_path / "a.mtx"
    path.write_text(mtx(field, symmetry, body, metis.nvtxs, str.upper if field == "real" else str))
    graph = read_graph(path)
    np.testing.assert_array_equal(graph.xadj, metis.xadj)
    np.testing.assert_array_equal(graph.adjncy, metis.adjncy)
    assert (graph.adjwgt == 1).all() and not graph.has_adjwgt
    assert graph.adjncy.dtype == np.int32 and graph.adjwgt.dtype == np.int64
    if field != "pattern":
        with_weights = read_graph(path, mtx_weights=True)
        np.testing.assert_array_equal(with_weights.adjncy, metis.adjncy)
        np.testing.assert_array_equal(with_weights.adjwgt, metis.adjwgt)
        assert with_weights.has_adjwgt


def test_west0067_is_the_symmetrized_pattern_without_diagonal():
    path = FIXTURES / "west0067.mtx"
    lines = [ln for ln in path.read_text().splitlines() if ln and not ln.startswith("%")]
    n = int(lines[0].split()[0])
    pairs = set()
    for line in lines[1:]:
        i, j = (int(x) - 1 for x in line.split()[:2])
        if i != j:
            pairs |= {(i, j), (j, i)}
    graph = read_graph(path)
    assert graph.nvtxs == n == 67
    got = {(s, d) for s, d, _ in entries(graph)}
    assert got == {(i + 1, j + 1) for i, j in pairs}
    assert len(got) == len(graph.adjncy)  # no repeats


@pytest.mark.parametrize("mtx_weights", [False, True])
def test_a_diagonal_matrix_gives_a_graph_without_edges(tmp_path, mtx_weights):
    path = tmp_path / "d.mtx"
    path.write_text(mtx("real", "general", ["1 1 2.5", "3 3 -1"], 3))
    graph = read_graph(path, mtx_weights=mtx_weights)
    assert graph.nvtxs == 3 and graph.xadj.tolist() == [0, 0, 0, 0] and graph.nedges == 0


def test_mtx_weights_round_half_up_at_least_one_larger_direction(tmp_path):
    body = ["1 2 0.2", "2 1 -2.5", "2 3 7.49", "3 3 100", "1 3 0"]
    path = tmp_path / "w.mtx"
    path.write_text(mtx("real", "general", body, 3))
    graph = read_graph(path, mtx_weights=True)
    assert sorted(entries(graph)) == [
        (1, 2, 3),
        (1, 3, 1),
        (2, 1, 3),
        (2, 3, 7),
        (3, 1, 1),
        (3, 2, 7),
    ]


@pytest.mark.parametrize(
    "name,n,nnz_offdiag", [("karate.mtx", 34, 156), ("bcsstk13.mtx", 2003, None)]
)
def test_fixture_matrices(name, n, nnz_offdiag):
    path = FIXTURES / name
    graph = read_graph(path)
    assert graph.nvtxs == n
    lines = [ln for ln in path.read_text().splitlines() if ln and not ln.startswith("%")]
    pairs = {(int(a), int(b)) for a, b, *_ in (ln.split() for ln in lines[1:])}
    expected = {(i, j) for i, j in pairs if i != j} | {(j, i) for i, j in pairs if i != j}
    assert {(s, d) for s, d, _ in entries(graph)} == expected
    if nnz_offdiag is not None:
        assert len(graph.adjncy) == nnz_offdiag


def test_content_detection_and_compression(tmp_path):
    text = (FIXTURES / "karate.mtx").read_bytes()
    (tmp_path / "karate.graph").write_bytes(text)  # detected by its banner
    (tmp_path / "karate.mtx.gz").write_bytes(gzip.compress(text))  # by its name
    a = read_graph(FIXTURES / "karate.mtx")
    for name in ("karate.graph", "karate.mtx.gz"):
        assert_same_graph(a, read_graph(tmp_path / name))


def test_blank_lines_and_crlf(tmp_path):
    text = "%%MatrixMarket matrix coordinate pattern symmetric\r\n\r\n3 3 2\r\n\r\n2 1\r\n3 2\r\n"
    (tmp_path / "a.mtx").write_bytes(text.encode())
    graph = read_graph(tmp_path / "a.mtx")
    assert sorted((s, d) for s, d, _ in entries(graph)) == [(1, 2), (2, 1), (2, 3), (3, 2)]
