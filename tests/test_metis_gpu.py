"""The GPU METIS reader against the CPU reader: the same graph where it parses a file, and it
declines (returns None) every file the CPU reader rejects or warns about."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import FIXTURES, random_graph, requires_cuda

from gpmetis.errors import InputError
from gpmetis.graph import Graph
from gpmetis.io import metis_gpu
from gpmetis.io.metis_format import read_metis
from gpmetis.io.metis_gpu import _chunks, _header

GRAPH_FIXTURES = sorted(p.name for p in FIXTURES.glob("*.graph"))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (b"3 2\n2\n", (4, 3, 2, 0)),
        (b"% c\n\n  3 2 1\r\n2 5\n", (14, 3, 2, 1)),
        (b"3 2 001\n", (8, 3, 2, 1)),
        (b"3 2 0 0\n2\n", (8, 3, 2, 0)),
    ],
)
def test_header_of_the_fast_path(text, expected):
    assert _header(text) == expected


@pytest.mark.parametrize(
    "text",
    [b"3 2 10\n", b"3 2 11 1\n", b"3 2 1 2\n", b"0 0\n", b"3\n", b"3 2 1 0 5\n", b"3 +2\n",
     b"3 2", b"% only\n", b"3 x\n", b"3 2\x0b\n", b"3 1234567890\n", b"3 2 % c\n"],
)
def test_header_outside_the_fast_path(text):
    assert _header(text) is None


@pytest.mark.parametrize("chunk", [1, 7, 16, 1000])
@pytest.mark.parametrize("start, size", [(4, None), (4, 48), (8, 10), (10, 48), (16, 48)])
def test_chunks_cover_a_range_in_whole_lines(monkeypatch, chunk, start, size):
    # the whole body, and a rank's lines (a range that ends after a newline, within the data)
    data = b"5 4\n2 3\n1\n1 4 5\n3 5 1 1 1 1 1 1 1 1 1 1 1 1 1 1\n3"
    size = len(data) if size is None else size
    monkeypatch.setattr(metis_gpu, "CHUNK_BYTES", chunk)
    ranges = _chunks(data, start, size)
    assert ranges[0][0] == start and ranges[-1][1] == size
    assert all(a[1] == b[0] for a, b in zip(ranges, ranges[1:]))
    for a, b in ranges[:-1]:
        assert data[b - 1] == ord("\n")
        # longer than a chunk only where one line is
        assert b - a <= chunk or b"\n" not in data[a:b - 1]


def _metis_text(graph: Graph, *, weights: bool, shuffle: int | None = None) -> bytes:
    """The METIS file of ``graph`` (rows in a shuffled order when ``shuffle`` is a seed)."""
    lines = [f"{graph.nvtxs} {graph.nedges} {1 if weights else 0}"]
    rng = np.random.default_rng(shuffle)
    for v in range(graph.nvtxs):
        lo, hi = graph.xadj[v], graph.xadj[v + 1]
        order = np.arange(lo, hi)
        if shuffle is not None:
            rng.shuffle(order)
        if weights:
            pairs = np.stack([graph.adjncy[order] + 1, graph.adjwgt[order]], 1).ravel()
            lines.append(" ".join(map(str, pairs)))
        else:
            lines.append(" ".join(map(str, graph.adjncy[order] + 1)))
    return ("\n".join(lines) + "\n").encode()


def _assert_same(graph: Graph, expected: Graph) -> None:
    for name in ("xadj", "adjncy", "vwgt", "adjwgt"):
        a, b = getattr(graph, name), getattr(expected, name)
        assert a.dtype == b.dtype and np.array_equal(a, b), name
    assert (graph.vsize, graph.name, graph.has_vwgt, graph.has_adjwgt, graph.warnings) == (
        expected.vsize, expected.name, expected.has_vwgt, expected.has_adjwgt, expected.warnings)


REJECTED = {  # inputs the CPU reader rejects or warns about
    "self loop": b"3 2\n1 2\n1 3\n2\n",
    "repeated neighbour": b"3 2\n2 2\n1 3\n2\n",
    "asymmetric": b"3 2\n2\n1 3\n\n",
    "weights differ": b"3 2 1\n2 4\n1 4 3 5\n2 6\n",
    "out of range": b"3 2\n2\n1 4\n2\n",
    "zero neighbour": b"3 2\n2\n1 0\n2\n",
    "zero weight": b"3 2 1\n2 0\n1 0 3 1\n2 1\n",
    "odd weighted row": b"3 2 1\n2 1 3\n1 1 3 1\n2 1\n",
    "extra line": b"3 2\n2\n1 3\n2\n1\n",
    "missing line": b"3 2\n2\n1 3\n",
    "letter": b"3 2\n2\n1 x\n2\n",
    "wrong edge count": b"3 3\n2\n1 3\n2\n",
    "repeat in an unsorted row": b"3 3\n3 2 3\n1\n1 1\n",
    "asymmetric at a row's end": b"3 2\n2 3\n1\n2\n",
    "asymmetric, unsorted row": b"3 2\n2\n3 1\n\n",
    "weights differ, unsorted row": b"3 2 1\n2 4\n3 5 1 4\n2 6\n",
}
OTHER_SYNTAX = {  # valid files outside the fast path
    "sign": b"3 2\n+2\n1 3\n2\n",
    "comment in the body": b"3 2\n2\n% c\n1 3\n2\n",
    "comment after a vertex's neighbours": b"3 2\n2 % c\n1 3%\n2\n",
    "comment after the header": b"3 2 % c\n2\n1 3\n2\n",
    "long number": b"3 2\n0000000002\n1 3\n2\n",
    "vertex weights": b"3 2 10\n1 2\n1 1 3\n1 2\n",
}
DECLINED = {**REJECTED, **OTHER_SYNTAX}


@pytest.mark.parametrize("case", sorted(REJECTED))
def test_cpu_reader_rejects_or_warns(case):
    try:
        graph = read_metis(REJECTED[case], "x.graph")
    except InputError:
        return
    assert graph.warnings


@pytest.mark.parametrize("case", sorted(OTHER_SYNTAX))
def test_cpu_reader_reads_the_other_syntax(case):
    graph = read_metis(OTHER_SYNTAX[case], "x.graph")
    assert graph.nvtxs == 3 and graph.nedges == 2 and not graph.warnings


@pytest.mark.gpu
@requires_cuda
class TestOnTheGpu:
    @pytest.mark.parametrize("name", GRAPH_FIXTURES)
    def test_fixture_files(self, gpu_be, name):
        from gpmetis.io.metis_gpu import read_metis_gpu

        data = (FIXTURES / name).read_bytes()
        path = str(FIXTURES / name)
        expected = read_metis(data, path)
        graph = read_metis_gpu(gpu_be, data, path)
        body = data.split(b"\n", 1)[-1]
        if expected.warnings or expected.has_vwgt or expected.vsize is not None or b"%" in body:
            assert graph is None
        else:
            assert graph is not None
            _assert_same(graph, expected)

    @pytest.mark.parametrize("weights", [False, True])
    @pytest.mark.parametrize("shuffle", [None, 7])
    def test_random_graphs_sorted_and_shuffled_rows(self, gpu_be, weights, shuffle):
        from gpmetis.io.metis_gpu import read_metis_gpu

        base = random_graph(5000, 8, 3, weighted=True, isolated=20, hubs=2)
        data = _metis_text(base, weights=weights, shuffle=shuffle)
        graph = read_metis_gpu(gpu_be, data, "r.graph")
        assert graph is not None
        _assert_same(graph, read_metis(data, "r.graph"))

    @pytest.mark.parametrize("weights", [False, True])
    @pytest.mark.parametrize("chunk", [64, 4096, 50_000])
    def test_a_file_parsed_in_chunks(self, gpu_be, monkeypatch, weights, chunk):
        from gpmetis.io.metis_gpu import read_metis_gpu

        monkeypatch.setattr(metis_gpu, "CHUNK_BYTES", chunk)
        base = random_graph(5000, 8, 3, weighted=True, isolated=20, hubs=2)
        data = _metis_text(base, weights=weights, shuffle=7)
        assert len(data) > 3 * chunk  # several chunks, hub lines longer than the small ones
        graph = read_metis_gpu(gpu_be, data, "r.graph")
        assert graph is not None
        _assert_same(graph, read_metis(data, "r.graph"))

    @pytest.mark.parametrize("weights", [False, True])
    def test_upload_takes_over_the_device_arrays(self, gpu_be, weights):
        from gpmetis.device_graph import DeviceGraph
        from gpmetis.io.metis_gpu import read_metis_gpu

        base = random_graph(3000, 6, 5, weighted=True)
        graph = read_metis_gpu(gpu_be, _metis_text(base, weights=weights), "r.graph")
        xadj, adjncy, _ = graph.device
        g = DeviceGraph.upload(gpu_be, graph)
        assert graph.device is None and g.xadj is xadj and g.adjncy is adjncy
        fresh = DeviceGraph.upload(gpu_be, graph)  # from the host arrays this time
        for a, b in [(g.xadj, fresh.xadj), (g.adjncy, fresh.adjncy), (g.adjwgt, fresh.adjwgt),
                     (g.vwgt, fresh.vwgt)]:
            assert a.dtype == b.dtype and bool((a == b).all())

    @pytest.mark.parametrize("case", sorted(DECLINED))
    def test_declines_what_the_cpu_reader_treats(self, gpu_be, case):
        from gpmetis.io.metis_gpu import read_metis_gpu

        assert read_metis_gpu(gpu_be, DECLINED[case], "x.graph") is None
