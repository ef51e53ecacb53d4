"""The background GPU warm-up: when it starts, and that what it runs is a valid partitioning."""

from __future__ import annotations

import gzip

import numpy as np
import pytest
from conftest import FIXTURES

from gpmetis import read_graph
from gpmetis.backend import get_backend
from gpmetis.errors import InputError
from gpmetis.io.peek import peek_size
from gpmetis.options import Options
from gpmetis.partitioning import warmup


def test_peek_reads_the_metis_header_after_comments(tmp_path):
    f = tmp_path / "g.graph"
    f.write_text("% comment\n\n%another\n3 2\n2\n1 3\n2\n")
    assert peek_size(f) == 3 + 2


def test_peek_reads_the_matrix_market_size_line():
    assert peek_size(FIXTURES / "karate.mtx") == 34 + 78  # symmetric: one entry an edge
    assert peek_size(FIXTURES / "west0067.mtx") == 67 + 294 // 2  # general: two an edge


@pytest.mark.parametrize("content", [b"3 x\n", b"% only a comment\n", b"5 7", b""])
def test_peek_gives_none_without_a_clear_header(tmp_path, content):
    f = tmp_path / "g.graph"
    f.write_bytes(content)
    assert peek_size(f) is None


def test_peek_gives_none_for_compressed_and_missing_files(tmp_path):
    f = tmp_path / "g.graph.gz"
    f.write_bytes(gzip.compress(b"3 2\n2\n1 3\n2\n"))
    assert peek_size(f) is None
    assert peek_size(tmp_path / "missing.graph") is None


def test_no_warmup_for_small_graphs_or_cpu_engines(tmp_path, monkeypatch):
    monkeypatch.setattr(warmup, "_started", False)
    monkeypatch.setattr(warmup, "_thread", None)
    big = tmp_path / "big.graph"
    big.write_text("10 5000000\n")
    assert warmup.start(FIXTURES / "4elt.graph", Options(engine="auto")) is None
    assert warmup.start(big, Options(engine="metis")) is None
    assert warmup.start(big, Options(engine="cpu")) is None
    assert warmup._thread is None


def _same_graph(graph, expected) -> None:
    for name in ("xadj", "adjncy", "vwgt", "adjwgt"):
        a, b = getattr(graph, name), getattr(expected, name)
        assert a.dtype == b.dtype and np.array_equal(a, b), name


@pytest.mark.parametrize("name", ["4elt.graph", "bcsstk13.mtx"])
def test_warmup_reads_a_plain_file_once(monkeypatch, name):
    # a plain METIS or Matrix Market file: mapped by a thread, parsed on the GPU where CUDA is
    # usable (else by the CPU reader); no warm-up thread
    monkeypatch.setattr(warmup, "_started", False)
    monkeypatch.setattr(warmup, "_thread", None)
    path = FIXTURES / name
    pending = warmup.start(path, Options(engine="gpu"))
    assert isinstance(pending, warmup.GpuRead)
    assert warmup.start(path, Options(engine="gpu")) is None  # once per process
    _same_graph(pending.result(), read_graph(path))
    warmup.wait()
    assert warmup._thread is None


def test_warmup_reads_compressed_files_in_a_child_and_wait_joins_it(tmp_path, monkeypatch):
    monkeypatch.setattr(warmup, "_started", False)
    monkeypatch.setattr(warmup, "_thread", None)
    path = tmp_path / "karate.mtx.gz"
    path.write_bytes(gzip.compress((FIXTURES / "karate.mtx").read_bytes()))
    pending = warmup.start(path, Options(engine="gpu"))
    assert not isinstance(pending, warmup.GpuRead)
    _same_graph(pending.result(), read_graph(path))
    warmup.wait()
    assert not warmup._thread.is_alive()


@pytest.mark.parametrize(("name", "text"), [
    ("bad.graph", "3 2\n2\n1 3\n2 9\n"),
    ("bad.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 2\n2 1 1\n3 9 1\n"),
    ("banner.mtx", "3 2\n2\n1 3\n2\n"),
])
def test_gpu_read_reports_input_errors_like_read_graph(tmp_path, monkeypatch, name, text):
    monkeypatch.setattr(warmup, "_started", False)
    bad = tmp_path / name
    bad.write_text(text)
    pending = warmup.start(bad, Options(engine="gpu"))
    with pytest.raises(InputError) as caught:
        pending.result()
    with pytest.raises(InputError) as expected:
        read_graph(bad)
    assert str(caught.value) == str(expected.value)


def test_the_warmup_phases_partition_their_grid():
    metrics = warmup.run_phases_on_grid(get_backend("cpu"))
    weights = [w[0] for w in metrics.pwgts]
    assert len(weights) == warmup.WARM_PARTS and min(weights) > 0
    assert max(weights) <= 1.03 * sum(weights) / warmup.WARM_PARTS
    assert 0 < metrics.edgecut < 2 * warmup.WARM_GRID * (warmup.WARM_GRID - 1)


@pytest.mark.parametrize("library", ["libcuda.so.1", "libnothing-such.so"])
def test_the_cuda_context_thread_ends_without_raising(monkeypatch, library):
    # best effort: no driver library (CI), or one that loads, leaves no exception behind
    raised = []
    monkeypatch.setattr("threading.excepthook", lambda args: raised.append(args.exc_value))
    real = warmup.ctypes.CDLL
    monkeypatch.setattr(warmup.ctypes, "CDLL", lambda name: real(library))
    thread = warmup.start_cuda_context()
    thread.join(timeout=60)
    assert not thread.is_alive() and raised == []
