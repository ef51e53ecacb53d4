"""The GPU Matrix Market reader against the CPU reader: the same graph where it reads a file, and
it declines (returns None) every file the CPU reader rejects.

Without a GPU, ``mtx_gpu.cu``'s entry parser runs on the CPU through ``mtx_entry_host.cu``
(compiled by nvcc): the graph of the entries it reads is ``read_graph``'s, and it declines what
the GPU reader must decline. With a GPU, ``read_matrix_market_gpu`` is compared whole."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import scipy.io
from conftest import FIXTURES, requires_cuda
from test_io_mtx_fast import SYMMETRIES, VALUES, random_matrix

from gpmetis.errors import InputError
from gpmetis.io import matrix_market, mtx_scan, read_graph

HARNESS = Path(__file__).with_name("mtx_entry_host.cu")
MTX_FIXTURES = sorted(p.name for p in FIXTURES.glob("*.mtx"))
BANNER = "%%MatrixMarket matrix coordinate {} {}\n"

ACCEPTED = {  # files the GPU reader reads: (field, symmetry, size line and entry lines)
    "crlf, tabs, blank lines": ("real", "general", "3 3 3\r\n2 1 1\r\n3 2 2\r\n\r\n\t3 1 1  \n"),
    "no final newline": ("real", "general", "3 3 2\n2 1 4.5\n3 1 1"),
    "leading zeros": ("integer", "general", "3 3 2\n0002 001 -7\n3 000000000000000002 +4\n"),
    "duplicates, both triangles": ("real", "general",
                                   "4 4 6\n2 1 3.2\n1 2 7.6\n2 1 1.1\n4 4 9\n3 4 0.2\n4 3 2e1\n"),
    "hermitian": ("real", "hermitian", "3 3 3\n1 1 5\n2 1 -2.5\n3 2 8.49999\n"),
    "values for the host": ("real", "general",
                            "3 3 4\n2 1 .5\n3 1 5.\n3 2 2.5e0\n1 3 123456789.7\n"),
    "large values, near ties": ("real", "general",
                                "5 5 8\n2 1 123456789012.5\n3 1 1234567890123.49999\n"
                                "3 2 123456789.49999\n4 1 99999999999.7\n4 2 2.5e10\n"
                                "4 3 4503599627370497.5\n5 1 -7.3e12\n5 2 98765432101.50001\n"),
    "exact halves": ("real", "symmetric",
                     "5 5 7\n2 1 0.5\n3 1 -2.5\n3 2 2.50000000000000000000\n4 1 2.5000000000001\n"
                     "4 2 1234567890.5\n5 1 25e-1\n5 3 4.49999999999999999999\n"),
    "diagonal only": ("pattern", "symmetric", "3 3 2\n1 1\n3 3\n"),
    "comments before the size line": ("pattern", "general", "% a\n\n%b\n3 3 1\n2 1\n"),
}
DECLINED = {  # files the GPU reader leaves to the CPU reader
    "comment line": ("real", "general", "3 3 2\n2 1 1\n% c\n3 2 2\n"),
    "four values": ("real", "general", "3 3 2\n2 1 1 4\n3 2 2\n"),
    "two values in a real matrix": ("real", "general", "3 3 2\n2 1\n3 2 2\n"),
    "entries on one line": ("pattern", "general", "3 3 2\n2 1 3 2\n"),
    "a word": ("real", "general", "3 3 2\n2 1 abc\n3 2 2\n"),
    "infinite": ("real", "general", "3 3 2\n2 1 1e999\n3 2 2\n"),
    "two dots": ("real", "general", "3 3 2\n2 1 1.5.5\n3 2 2\n"),
    "out of range": ("real", "general", "3 3 2\n4 1 1\n3 2 2\n"),
    "index zero": ("pattern", "general", "3 3 2\n0 1\n3 2\n"),
    "signed index": ("real", "general", "3 3 2\n+2 1 1\n3 2 2\n"),
    "integer matrix, a real value": ("integer", "general", "3 3 2\n2 1 1.5\n3 2 2\n"),
    "integer matrix, an exponent": ("integer", "general", "3 3 2\n2 1 1e3\n3 2 2\n"),
    "NUL byte": ("pattern", "general", "3 3 2\n2 1\n3\x002\n"),
    "too few entries": ("pattern", "general", "3 3 3\n2 1\n3 2\n"),
    "too many entries": ("pattern", "general", "3 3 1\n2 1\n3 2\n"),
    "not square": ("pattern", "general", "3 4 1\n2 1\n"),
    "complex": ("complex", "general", "3 3 1\n2 1 1 0\n"),
    "weight too large": ("real", "general", "3 3 1\n2 1 1e70\n"),
}


def _write(tmp_path: Path, case: tuple[str, str, str]) -> Path:
    field, symmetry, body = case
    path = tmp_path / "m.mtx"
    path.write_bytes((BANNER.format(field, symmetry) + body).encode())
    return path


def _random_file(tmp_path: Path, field: str, symmetry: str, n: int = 300,
                 nnz: int = 4000) -> Path:
    rng = np.random.default_rng(abs(hash((field, symmetry))) % 2**32)
    a = random_matrix(rng, n, nnz, field, symmetry)
    path = tmp_path / "r.mtx"
    if field == "pattern":
        scipy.io.mmwrite(path, a, field="pattern", symmetry=symmetry)
    else:
        scipy.io.mmwrite(path, a, symmetry=symmetry)
    return path


def _values_file(tmp_path: Path) -> Path:
    n = len(VALUES) + 1
    lines = [f"{i + 2} {i + 1} {v}" for i, v in enumerate(VALUES)]
    path = tmp_path / "v.mtx"
    path.write_text(BANNER.format("real", "general") + f"{n} {n} {len(lines)}\n"
                    + "\n".join(lines))
    return path


def _assert_same(graph, expected) -> None:
    for name in ("xadj", "adjncy", "vwgt", "adjwgt"):
        a, b = getattr(graph, name), getattr(expected, name)
        assert a.dtype == b.dtype and np.array_equal(a, b), name
    assert (graph.name, graph.has_vwgt, graph.has_adjwgt, graph.warnings, graph.vsize) == (
        expected.name, expected.has_vwgt, expected.has_adjwgt, expected.warnings, expected.vsize)


def _expected(path: Path, weights: bool):
    """read_graph's graph, or None where it raises InputError."""
    try:
        return read_graph(path, mtx_weights=weights)
    except InputError:
        return None


# --- the entry parser on the CPU -------------------------------------------------------------

@pytest.fixture(scope="module")
def harness(tmp_path_factory) -> Path:
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc (CUDA toolkit) is not installed")
    out = tmp_path_factory.mktemp("harness") / "mtx_entry_host"
    proc = subprocess.run(["nvcc", "-arch=sm_90", "-std=c++17", "-o", str(out), str(HARNESS)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return out


def host_read(harness: Path, path: Path, weights: bool):
    """The graph of the entries as the kernels read them (the host finishing the values they
    list, as ``read_matrix_market_gpu`` does), or None where the GPU reader declines."""
    data = path.read_bytes()
    try:
        field = matrix_market._banner(data, str(path))
    except InputError:
        return None
    head = mtx_scan.header(data)
    if head is None or head.nrows != head.ncols or head.nnz == 0:
        return None
    per_line = 2 if field == "pattern" else 3
    weights = weights and field != "pattern"
    args = [head.body, head.nnz, per_line, int(field == "integer"), int(weights), head.nrows]
    out = subprocess.run([str(harness), str(path), *map(str, args)], capture_output=True,
                         text=True, check=True).stdout.splitlines()
    outside, ntok = map(int, out[0].split())
    if outside or ntok != head.nnz * per_line:
        return None
    table = np.array([line.split() for line in out[1:]], np.int64).reshape(-1, 6)
    status, row, col, w, at, length = table.T
    if (status > 0).any():
        return None
    slow = status == -1
    if slow.any():
        exact = mtx_scan._exact(np.frombuffer(data, np.uint8), at[slow] + head.body,
                                length[slow], weights)
        if exact is None:
            return None
        w[slow] = exact
    return matrix_market._graph_of_pattern(head.nrows, row, col, w if weights else None,
                                           str(path))


@pytest.mark.parametrize("field", ["pattern", "integer", "real"])
@pytest.mark.parametrize("symmetry", SYMMETRIES)
@pytest.mark.parametrize("weights", [False, True])
def test_host_parser_reads_random_matrices(harness, tmp_path, field, symmetry, weights):
    path = _random_file(tmp_path, field, symmetry)
    graph = host_read(harness, path, weights)
    assert graph is not None
    _assert_same(graph, read_graph(path, mtx_weights=weights))


@pytest.mark.parametrize("weights", [False, True])
def test_host_parser_reads_every_value_form(harness, tmp_path, weights):
    path = _values_file(tmp_path)
    graph = host_read(harness, path, weights)
    assert graph is not None
    _assert_same(graph, read_graph(path, mtx_weights=weights))


@pytest.mark.parametrize("case", sorted(ACCEPTED))
@pytest.mark.parametrize("weights", [False, True])
def test_host_parser_reads_the_accepted_files(harness, tmp_path, case, weights):
    path = _write(tmp_path, ACCEPTED[case])
    graph = host_read(harness, path, weights)
    assert graph is not None
    _assert_same(graph, read_graph(path, mtx_weights=weights))


@pytest.mark.parametrize("case", sorted(DECLINED))
def test_host_parser_declines_what_the_cpu_reader_treats(harness, tmp_path, case):
    path = _write(tmp_path, DECLINED[case])
    assert host_read(harness, path, True) is None


@pytest.mark.parametrize("case", sorted(DECLINED))
def test_the_declined_files_are_errors_or_other_syntax(tmp_path, case):
    # every declined file is one the CPU reader rejects, or reads through its general tokenizer
    path = _write(tmp_path, DECLINED[case])
    data = path.read_bytes()
    if _expected(path, True) is not None:
        field = matrix_market._banner(data, str(path))
        head = mtx_scan.header(data)
        assert head is None or mtx_scan.scan_entries(data, head, field, True) is None


# --- the whole reader on the GPU -------------------------------------------------------------

@pytest.mark.gpu
@requires_cuda
class TestOnTheGpu:
    @staticmethod
    def read(gpu_be, path: Path, weights: bool):
        from gpmetis.io.mtx_gpu import read_matrix_market_gpu

        return read_matrix_market_gpu(gpu_be, path.read_bytes(), str(path), mtx_weights=weights)

    @pytest.mark.parametrize("field", ["pattern", "integer", "real"])
    @pytest.mark.parametrize("symmetry", SYMMETRIES)
    @pytest.mark.parametrize("weights", [False, True])
    def test_random_matrices(self, gpu_be, tmp_path, field, symmetry, weights):
        path = _random_file(tmp_path, field, symmetry)
        graph = self.read(gpu_be, path, weights)
        assert graph is not None
        _assert_same(graph, read_graph(path, mtx_weights=weights))

    @pytest.mark.parametrize("weights", [False, True])
    def test_a_file_of_many_blocks_staged_across(self, gpu_be, tmp_path, weights):
        path = _random_file(tmp_path, "real", "general", n=50_000, nnz=400_000)
        assert path.stat().st_size > 4 << 20  # uploaded through the staging buffers
        graph = self.read(gpu_be, path, weights)
        assert graph is not None
        _assert_same(graph, read_graph(path, mtx_weights=weights))

    @pytest.mark.parametrize("weights", [False, True])
    def test_every_value_form(self, gpu_be, tmp_path, weights):
        path = _values_file(tmp_path)
        graph = self.read(gpu_be, path, weights)
        assert graph is not None
        _assert_same(graph, read_graph(path, mtx_weights=weights))

    @pytest.mark.parametrize("case", sorted(ACCEPTED))
    @pytest.mark.parametrize("weights", [False, True])
    def test_accepted_files(self, gpu_be, tmp_path, case, weights):
        path = _write(tmp_path, ACCEPTED[case])
        graph = self.read(gpu_be, path, weights)
        assert graph is not None
        _assert_same(graph, read_graph(path, mtx_weights=weights))

    @pytest.mark.parametrize("name", MTX_FIXTURES)
    @pytest.mark.parametrize("weights", [False, True])
    def test_fixture_files(self, gpu_be, name, weights):
        graph = self.read(gpu_be, FIXTURES / name, weights)
        assert graph is not None
        _assert_same(graph, read_graph(FIXTURES / name, mtx_weights=weights))

    @pytest.mark.parametrize("case", sorted(DECLINED))
    def test_declines_what_the_cpu_reader_treats(self, gpu_be, tmp_path, case):
        assert self.read(gpu_be, _write(tmp_path, DECLINED[case]), True) is None

    def test_upload_takes_over_the_device_arrays(self, gpu_be, tmp_path):
        from gpmetis.device_graph import DeviceGraph

        # (integer values: the weights' total stays within the engines' int32)
        graph = self.read(gpu_be, _random_file(tmp_path, "integer", "symmetric"), True)
        xadj, adjncy, _ = graph.device
        g = DeviceGraph.upload(gpu_be, graph)
        assert graph.device is None and g.xadj is xadj and g.adjncy is adjncy
        fresh = DeviceGraph.upload(gpu_be, graph)  # from the host arrays this time
        for a, b in [(g.xadj, fresh.xadj), (g.adjncy, fresh.adjncy), (g.adjwgt, fresh.adjwgt)]:
            assert a.dtype == b.dtype and bool((a == b).all())

    def test_the_command_read_parses_on_the_gpu(self, tmp_path):
        # warmup.GpuRead, as the gpmetis command reads: by the name, or by the banner
        from gpmetis.partitioning.warmup import GpuRead

        path = _random_file(tmp_path, "integer", "symmetric")
        renamed = tmp_path / "matrix.graph"
        renamed.write_bytes(path.read_bytes())
        for p in (path, renamed):
            graph = GpuRead(str(p), False).result()
            assert graph.device is not None  # read by read_matrix_market_gpu
            _assert_same(graph, read_graph(p))
