"""Hostile and careless input to the readers (issue 36): declared sizes far beyond the file,
huge blank expansions, endless streams, files truncated while mapped, pipes and FIFOs, NUL
bytes, long zero-padded integers, trailing bytes after compressed data, unsuffixed compressed
files. Each ends in a message naming the file (and line) or in the right graph, in bounded
memory. Heavy reads run in a subprocess so that its peak RSS (``resource``) is its own."""

from __future__ import annotations

import bz2
import gc
import gzip
import lzma
import os
import resource
import subprocess
import sys
import threading
import zlib
from pathlib import Path

import numpy as np
import pytest
from conftest import FIXTURES

from gpmetis.errors import InputError
from gpmetis.io import read_graph
from gpmetis.io import source as io_source
from gpmetis.io.peek import peek_size
from gpmetis.io.tokens import CHUNK, tokenize

ROOT = Path(__file__).resolve().parents[1]
GRAPH = FIXTURES / "3elt.graph"
BLANK_MIB = 256  # decompressed size of the blank-expansion tests


def cli(*args, stdin=None, input=None, limit_as: int | None = None, timeout: float = 60):
    """Run the gpmetis program; ``limit_as`` caps its address space (bytes)."""

    def cap():
        if limit_as is not None:
            resource.setrlimit(resource.RLIMIT_AS, (limit_as, limit_as))

    return subprocess.run(
        [sys.executable, "-m", "cli.main", *map(str, args)], stdin=stdin, input=input,
        capture_output=True, cwd=ROOT, timeout=timeout, preexec_fn=cap,
    )


def peak_rss_reading(path: Path) -> int:
    """Peak RSS (bytes) of a fresh interpreter that reads ``path`` with read_graph."""
    script = (
        "import resource, sys\n"
        "from gpmetis.io import read_graph\n"
        "g = read_graph(sys.argv[1])\n"
        "print(g.nvtxs, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n"
    )
    proc = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True,
                          text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr
    nvtxs, kib = proc.stdout.split()
    assert nvtxs == "1"
    return int(kib) * 1024


def gzip_of_blanks(path: Path, blank: bytes) -> int:
    """Write a gzip file of one vertex ("1 0") with BLANK_MIB MiB of ``blank`` around it;
    returns the decompressed size."""
    block = (blank * (1 << 20))[: 1 << 20]
    enc = zlib.compressobj(1, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    half = BLANK_MIB // 2
    with open(path, "wb") as f:
        for piece in [block] * half + [b"1 0\n"] + [block] * half:
            f.write(enc.compress(piece))
        f.write(enc.flush())
    return BLANK_MIB * (1 << 20) + 4


# --- item 3: sizes far beyond the input


def test_matrix_market_declaring_two_billion_rows_is_refused_before_allocating(tmp_path):
    path = tmp_path / "big.mtx"
    path.write_text("%%MatrixMarket matrix coordinate pattern general\n"
                    "2000000000 2000000000 1\n1 2\n")
    proc = cli(path, 2, "-engine=cpu", limit_as=3 << 30)
    assert proc.returncode == 1, proc.stderr
    err = proc.stderr.decode()
    assert f"{path}:2:" in err and "2000000000 vertices" in err and "GiB" in err, err
    assert "Traceback" not in err
    assert not list(tmp_path.glob("big.mtx.part*"))


def test_declared_sizes_checked_against_available_memory(tmp_path, monkeypatch):
    monkeypatch.setattr(io_source, "available_memory", lambda: 1 << 20)
    mtx = tmp_path / "m.mtx"
    mtx.write_text("%%MatrixMarket matrix coordinate pattern general\n100000 100000 1\n1 2\n")
    with pytest.raises(InputError, match=r"m.mtx:2: .*100000 vertices.*GiB of memory"):
        read_graph(mtx)
    graph = tmp_path / "g.graph"
    graph.write_bytes(b"100000 0\n" + b"\n" * 100000)
    with pytest.raises(InputError, match=r"g.graph:1: a graph of 100000 vertices needs"):
        read_graph(graph)
    monkeypatch.undo()
    assert read_graph(graph).nvtxs == 100000


# --- item 5: blank expansions and endless streams


@pytest.mark.parametrize("blank", [b" ", b"\n", b" \t\r\n"], ids=["spaces", "lines", "mixed"])
def test_gzip_of_blanks_reads_within_1_5x_the_text(tmp_path, blank):
    path = tmp_path / "blank.graph.gz"
    text = gzip_of_blanks(path, blank)
    small = tmp_path / "one.graph"
    small.write_bytes(b"1 0\n\n")
    base = peak_rss_reading(small)
    peak = peak_rss_reading(path)
    assert peak - base <= 1.5 * text, (peak - base) / text


def test_dev_zero_ends_with_a_message():
    proc = cli("/dev/zero", 2, "-engine=cpu", timeout=30)
    assert proc.returncode == 1, proc.stderr
    assert b"/dev/zero:1: a NUL byte" in proc.stderr


def test_endless_blank_stream_ends_with_a_message_within_the_memory_limit():
    yes = subprocess.Popen(["yes", " " * 63], stdout=subprocess.PIPE)
    try:
        proc = cli("/dev/stdin", 2, "-engine=cpu", stdin=yes.stdout, limit_as=1536 << 20,
                   timeout=120)
    finally:
        yes.kill()
        yes.wait()
    assert proc.returncode == 1, proc.stderr
    err = proc.stderr.decode()
    assert err.startswith("gpmetis: error: /dev/stdin: ") and "memory" in err, err
    assert "Traceback" not in err


def test_stream_limit_is_the_available_memory(tmp_path, monkeypatch):
    monkeypatch.setattr(io_source, "available_memory", lambda: 3 << 20)
    path = tmp_path / "big.graph.gz"
    path.write_bytes(gzip.compress(b"1 0\n" + b" " * (4 << 20)))
    with pytest.raises(InputError, match="larger than the 0.0 GiB of memory available"):
        read_graph(path)


def test_available_memory_honours_the_address_space_limit():
    script = ("import resource; from gpmetis.io.source import available_memory\n"
              "resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))\n"
              "print(available_memory())")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         cwd=ROOT, check=True).stdout
    assert 0 < int(out) < 4 << 30


# --- item 6: a file truncated while it is mapped


def test_file_truncated_while_mapped_gives_a_message_not_a_signal(tmp_path):
    path = tmp_path / "g.graph"
    path.write_bytes(GRAPH.read_bytes() * 40)
    script = (
        "import os, sys\n"
        "from gpmetis.io.source import read_bytes\n"
        "from gpmetis.io.tokens import tokenize\n"
        "data = read_bytes(sys.argv[1])\n"
        "os.truncate(sys.argv[1], 100)\n"
        "tokenize(data, sys.argv[1])\n"
    )
    proc = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True,
                          text=True, cwd=ROOT, timeout=60)
    assert proc.returncode == 1, (proc.returncode, proc.stderr)
    assert proc.stderr == f"gpmetis: error: {path}: the file was truncated or replaced while " \
                          "it was being read\n"


def test_sigbus_handler_lives_as_long_as_a_mapped_file():
    gc.collect()
    before = dict(io_source._mapped)  # maps still held by earlier tests' tracebacks
    read_graph(GRAPH)
    assert io_source._mapped == before
    data = io_source.read_bytes(GRAPH)
    assert io_source._bus["installed"] and str(GRAPH) in io_source._mapped.values()
    del data
    assert io_source._mapped == before
    assert io_source._bus["installed"] == bool(before)


# --- item 8: pipes and FIFOs, read exactly once


def test_piped_stdin_with_the_default_engine(tmp_path):
    out = tmp_path / "out"
    proc = cli("/dev/stdin", 8, "-o", out, input=GRAPH.read_bytes())
    assert proc.returncode == 0, proc.stderr
    ref = tmp_path / "ref"
    assert cli(GRAPH, 8, "-o", ref).returncode == 0
    assert out.read_bytes() == ref.read_bytes()


def test_fifo_input_does_not_hang(tmp_path):
    fifo = tmp_path / "g.fifo"
    os.mkfifo(fifo)
    writer = threading.Thread(target=fifo.write_bytes, args=(GRAPH.read_bytes(),), daemon=True)
    writer.start()
    out = tmp_path / "out"
    proc = cli(fifo, 4, "-o", out, timeout=60)
    writer.join(timeout=5)
    assert proc.returncode == 0, proc.stderr
    assert len(out.read_bytes().split()) == 4720


def test_peek_leaves_a_fifo_unopened(tmp_path):
    fifo = tmp_path / "g.fifo"
    os.mkfifo(fifo)  # no writer: opening it would block
    result = []
    peeker = threading.Thread(target=lambda: result.append(peek_size(fifo)), daemon=True)
    peeker.start()
    peeker.join(timeout=10)
    assert result == [None]
    assert peek_size(GRAPH) == 4720 + 13722


def test_gzip_stream_on_stdin_is_sniffed(tmp_path):
    out = tmp_path / "out"
    proc = cli("/dev/stdin", 2, "-engine=cpu", "-o", out, input=gzip.compress(GRAPH.read_bytes()))
    assert proc.returncode == 0, proc.stderr
    assert len(out.read_bytes().split()) == 4720


# --- small ones


def test_integers_padded_with_leading_zeros():
    zeros = "0" * 40
    tok = tokenize(f"{zeros}7 -{zeros}12 +{zeros} 0000000000000000000999999999999999999 "
                   f"{zeros}1000000000000000000 1{zeros} -{zeros}x".encode(), "t")
    assert tok.values.tolist() == [7, -12, 0, 999999999999999999, 0, 0, 0]
    assert tok.bad.tolist() == [4, 5, 6]  # 19 significant digits overflow; not a number


def test_zero_padded_graph_reads_as_its_values(tmp_path):
    z = "0" * 30
    path = tmp_path / "g.graph"
    path.write_text(f"{z}3 {z}2 {z}1\n{z}2 {z}5\n1 5 3 7\n2 {z}7\n")
    g = read_graph(path)
    assert g.xadj.tolist() == [0, 1, 3, 4] and g.adjncy.tolist() == [1, 0, 2, 1]
    assert g.adjwgt.tolist() == [5, 5, 7, 7]
    path.write_text(f"3 2\n2\n1 3\n{z}1{z}\n")
    with pytest.raises(InputError, match=f"g.graph:4: '{z}1.*' has more than 18 digits"):
        read_graph(path)
    path.write_text(f"3 2\n2\n1 3\n{z}1{z}x\n")
    with pytest.raises(InputError, match=f"g.graph:4: expected an integer, found '{z}1"):
        read_graph(path)


def test_a_weight_of_19_digits_is_named_as_too_long(tmp_path):
    path = tmp_path / "g.graph"
    path.write_text("2 1 1\n4000000000000000000 2\n1 1\n")
    with pytest.raises(InputError, match="g.graph:2: '4000000000000000000' has more than 18"):
        read_graph(path)


@pytest.mark.parametrize("text,line", [
    (b"3 2\n2\n1 3\x00\n2\n", 3),
    (b"3 2\n% a comment\x00\n2\n1 3\n2\n", 2),
    (b"\x00", 1),
])
def test_nul_bytes_are_an_error_naming_the_line(tmp_path, text, line):
    path = tmp_path / "g.graph"
    path.write_bytes(text)
    with pytest.raises(InputError, match=f"g.graph:{line}: a NUL byte"):
        read_graph(path)
    path = tmp_path / "g.graph.gz"  # streamed: found as it is decompressed
    path.write_bytes(gzip.compress(text))
    with pytest.raises(InputError, match=f"g.graph.gz:{line}: a NUL byte"):
        read_graph(path)


CODECS = [(".gz", gzip.compress), (".bz2", bz2.compress), (".xz", lzma.compress)]


@pytest.mark.parametrize("ext,compress", CODECS)
def test_trailing_bytes_after_compressed_data(tmp_path, ext, compress):
    path = tmp_path / f"g.graph{ext}"
    path.write_bytes(compress(GRAPH.read_bytes()) + b"appended junk")
    with pytest.raises(InputError, match=rf"g.graph{ext}: trailing bytes after the end of the"):
        read_graph(path)


@pytest.mark.parametrize("ext,compress", CODECS)
def test_concatenated_streams_and_unsuffixed_files(tmp_path, ext, compress):
    text = GRAPH.read_bytes()
    path = tmp_path / f"g.graph{ext}"
    path.write_bytes(compress(text[:5000]) + compress(text[5000:]))
    assert read_graph(path).nedges == 13722
    path = tmp_path / "plain_name"  # recognised by the magic bytes
    path.write_bytes(compress(text))
    assert read_graph(path).nedges == 13722
    mtx = tmp_path / "matrix"
    mtx.write_bytes(compress((FIXTURES / "karate.mtx").read_bytes()))
    assert read_graph(mtx).nvtxs == 34


def test_xz_stream_padding_is_accepted(tmp_path):
    path = tmp_path / "g.graph.xz"
    path.write_bytes(lzma.compress(GRAPH.read_bytes()) + b"\0" * 8)
    assert read_graph(path).nedges == 13722


@pytest.mark.skipif(not os.path.exists("/proc/sys/vm/drop_caches"), reason="no such file")
def test_unreadable_proc_file_is_an_input_error():
    with pytest.raises(InputError, match="/proc/sys/vm/drop_caches: permission denied"):
        read_graph("/proc/sys/vm/drop_caches")


# --- long lines (chunks cut at blanks)


def test_lines_longer_than_a_chunk_match_python_split():
    rng = np.random.default_rng(3)
    lines = []
    for k in range(12):
        nums = rng.integers(0, 10**9, 200_000 if k % 3 == 0 else 5)
        sep = "  " if k % 2 else "\t"
        line = sep.join(map(str, nums))
        lines.append(("% " + line) if k == 6 else line)
    lines.insert(4, " " * (3 * CHUNK) + "5" + " " * (2 * CHUNK))
    lines.insert(8, "%" + "x" * (3 * CHUNK))  # one comment token longer than a chunk
    text = "\n".join(lines) + "\n"
    tok = tokenize(text.encode(), "t")
    expect = [[] if ln.lstrip().startswith("%") else [int(x) for x in ln.split()]
              for ln in lines]
    assert tok.nlines == len(lines)
    assert tok.rows.tolist() == [i for i, e in enumerate(expect) if e]
    assert tok.row_cnt.tolist() == [len(e) for e in expect if e]
    assert tok.values.tolist() == [x for e in expect for x in e]
    assert tok.comment_lines.tolist() == [i for i, ln in enumerate(lines) if ln[0] == "%"]


def test_a_vertex_line_longer_than_a_chunk(tmp_path):
    n = 400_000  # a star: vertex 1's line is about 2.7 MB
    path = tmp_path / "star.graph"
    leaves = " ".join(map(str, range(2, n + 1)))
    path.write_text(f"{n} {n - 1}\n{leaves}\n" + "1\n" * (n - 1))
    g = read_graph(path)
    assert g.nedges == n - 1 and np.diff(g.xadj)[0] == n - 1


def test_a_token_longer_than_a_chunk_is_an_error_naming_its_line():
    with pytest.raises(InputError, match=f"t:3: a token longer than {CHUNK} bytes"):
        tokenize(b"1 2\n\n 3" + b"4" * (2 * CHUNK) + b"\n", "t")
