"""Bad inputs: every one is an InputError naming the file and, where there is one, the line."""

from __future__ import annotations

import bz2
import gzip
import lzma
import os

import numpy as np
import pytest
from conftest import FIXTURES

from gpmetis.errors import InputError
from gpmetis.graph import validated_graph
from gpmetis.io import read_graph


def check(path, line, *words, **options):
    with pytest.raises(InputError) as info:
        read_graph(path, **options)
    err = info.value
    assert err.path == str(path) and err.line == line, str(err)
    where = f"{path}:{line}: " if line is not None else f"{path}: "
    assert str(err).startswith(where), str(err)
    for word in words:
        assert word in err.reason, err.reason
    return err


METIS_CASES = {
    # name: (text, line, words in the message)
    "header too short": ("5\n", 1, ["header"]),
    "header too long": ("3 2 0 1 7\n2\n1 3\n2\n", 1, ["header", "5 values"]),
    "header not integer": ("3 x\n", 1, ["integer", "'x'"]),
    "header float": ("3 2.0\n", 1, ["'2.0'"]),
    "header after comments": ("% c\n\n%c\n3 2 q\n", 4, ["'q'"]),
    "negative n": ("-3 2\n", 1, ["vertices", "-3"]),
    "zero n": ("0 0\n", 1, ["positive"]),
    "negative m": ("3 -2\n", 1, ["edges", "-2"]),
    "unknown fmt 2": ("3 2 2\n", 1, ["unknown fmt 2"]),
    "unknown fmt 12": ("3 2 12\n", 1, ["unknown fmt 12"]),
    "ncon without vertex weights": ("3 2 1 2\n", 1, ["ncon", "no vertex weights"]),
    "negative ncon": ("3 2 10 -1\n", 1, ["ncon"]),
    "no header": ("% only a comment\n\n", None, ["no header"]),
    "fewer vertex lines": ("4 2\n2\n1 3\n2\n", 4, ["4 vertices", "only 3"]),
    "fewer lines with comments": ("4 2\n2\n% c\n1 3\n2\n", 5, ["only 3"]),
    "more vertex lines": ("2 1\n2\n1\n\n1\n", 5, ["more vertex lines"]),
    "non-numeric token": ("3 2\n2\n1 x3\n2\n", 3, ["'x3'"]),
    "non-numeric after comment": ("3 2\n2\n% 1 2 3\n1 3\n2 #\n", 5, ["'#'"]),
    "float neighbour": ("2 1\n2.0\n1\n", 2, ["'2.0'"]),
    "too long integer": ("2 1\n2\n1234567890123456789012\n", 3, ["'1234567890123456789012'"]),
    "odd tokens with edge weights": ("2 1 1\n2 5 7\n1 5\n", 2, ["odd number", "pairs"]),
    "odd tokens after vertex weights": ("2 1 11\n1 2 5\n1 1 5 3\n", 3, ["odd number"]),
    "missing vertex weight": ("2 1 10\n\n1 1\n", 2, ["expected 1 vertex"]),
    "missing ncon weights": ("2 1 10 3\n1 2 3 2\n1 1\n", 3, ["expected 3 vertex"]),
    "neighbour zero": ("2 1\n0\n1\n", 2, ["neighbour 0", "[1, 2]"]),
    "neighbour above n": ("3 2\n2\n1 4\n2\n", 3, ["neighbour 4", "[1, 3]"]),
    "negative neighbour": ("2 1\n-2\n1\n", 2, ["neighbour -2"]),
    "negative vertex weight": ("2 1 10\n3 2\n-1 1\n", 3, ["negative vertex weight -1"]),
    "negative second constraint": ("2 1 10 2\n3 -4 2\n1 1 1\n", 2, ["negative"]),
    "negative vertex size": ("2 1 100\n-1 2\n1 1\n", 2, ["negative vertex size"]),
    "zero edge weight": ("2 1 1\n2 0\n1 0\n", 2, ["edge weight 0"]),
    "negative edge weight": ("3 2 1\n2 1\n1 1 3 -2\n2 -2\n", 3, ["edge weight -2"]),
    "edge count": ("3 3\n2\n1 3\n2\n", 1, ["3 edges", "6 adjacency entries", "hold 4"]),
    "edge count counted twice": ("2 2\n2\n1\n", 1, ["2 edges", "hold 2", "once"]),
    "missing reverse edge": ("3 2\n2 3\n1\n2\n", 2, ["vertex 1 lists neighbour 3", "symmetric"]),
    "missing reverse, later line": ("4 2\n2\n1\n4\n2\n", 4, ["vertex 3 lists neighbour 4"]),
    "mismatched weights": ("2 1 1\n2 5\n1 6\n", 2, ["edge 1-2 has weight 5", "2-1", "6"]),
}


@pytest.mark.parametrize("name", sorted(METIS_CASES))
def test_bad_metis_file(tmp_path, name):
    text, line, words = METIS_CASES[name]
    path = tmp_path / "bad.graph"
    path.write_text(text)
    check(path, line, *words)


def test_line_numbers_count_comments_and_crlf(tmp_path):
    path = tmp_path / "bad.graph"
    path.write_bytes(b"% c\r\n3 2\r\n% c\r\n2\r\n1\r\n% c\r\n% c\r\n1 4\r\n")
    check(path, 8, "neighbour 4")


def test_symmetrize_accepts_m_counted_either_way(tmp_path):
    path = tmp_path / "g.graph"
    path.write_text("3 2\n2 3\n\n\n")  # each edge listed once
    assert read_graph(path, symmetrize=True).nedges == 2
    path.write_text("3 3\n2 3\n\n\n")
    check(path, 1, "3 edges", "hold 2", symmetrize=True)


MTX = "%%MatrixMarket matrix coordinate"
MTX_CASES = {
    "not a banner": (
        "%%MatrixMarket tensor coordinate real general\n2 2 1\n1 2 1\n",
        1,
        ["banner"],
    ),
    "array": (
        f"{MTX.replace('coordinate', 'array')} real general\n2 2\n1\n2\n3\n4\n",
        1,
        ["array"],
    ),
    "complex": (f"{MTX} complex general\n2 2 1\n1 2 1 0\n", 1, ["complex"]),
    "unknown field": (f"{MTX} quaternion general\n2 2 1\n1 2\n", 1, ["quaternion"]),
    "unknown symmetry": (f"{MTX} real lopsided\n2 2 1\n1 2 1\n", 1, ["lopsided"]),
    "non-square": (f"{MTX} real general\n%c\n2 3 1\n1 2 1\n", 3, ["2 x 3", "square"]),
    "size line short": (f"{MTX} real general\n2 2\n1 2 1\n", 2, ["size line", "2 values"]),
    "size line text": (f"{MTX} real general\n2 two 1\n1 2 1\n", 2, ["'two'"]),
    "size line negative": (f"{MTX} real general\n2 2 -1\n", 2, ["bad size line"]),
    "too few entries": (f"{MTX} real general\n3 3 3\n1 2 1\n2 3 1\n", 2, ["3 entries", "2"]),
    "too many entries": (f"{MTX} pattern general\n3 3 1\n1 2\n2 3\n", 2, ["1 entries"]),
    "index out of range": (f"{MTX} real general\n3 3 2\n1 2 1\n\n4 1 1\n", 5, ["(4, 1)", "3 x 3"]),
    "index zero": (f"{MTX} pattern symmetric\n3 3 1\n0 1\n", 3, ["(0, 1)"]),
    "wrong token count": (f"{MTX} real general\n3 3 2\n1 2 1\n2 3\n", 4, ["has 3", "has 2"]),
    "pattern with values": (f"{MTX} pattern general\n3 3 1\n1 2 1\n", 3, ["has 2", "has 3"]),
    "non-numeric value": (f"{MTX} real general\n3 3 2\n1 2 1.5\n2 3 abc\n", 4, ["'abc'"]),
    "non-finite value": (f"{MTX} real general\n3 3 2\n1 2 nan\n2 3 1\n", 3, ["'nan'"]),
    "float index": (f"{MTX} real general\n3 3 1\n1.0 2 1\n", 3, ["integer index", "'1.0'"]),
    "float in integer matrix": (
        f"{MTX} integer general\n3 3 1\n1 2 1.5\n",
        3,
        ["integer value", "'1.5'"],
    ),
}


@pytest.mark.parametrize("name", sorted(MTX_CASES))
def test_bad_matrix_market_file(tmp_path, name):
    text, line, words = MTX_CASES[name]
    path = tmp_path / "bad.mtx"
    path.write_text(text)
    check(path, line, *words)


def test_bad_value_deep_in_a_large_matrix(tmp_path):
    lines = [f"{i % 500 + 1} {(i * 7) % 500 + 1} {i}.5" for i in range(200_000)]
    lines[150_001] = "3 4 1.5.5"
    path = tmp_path / "big.mtx"
    path.write_text(f"{MTX} real general\n500 500 200000\n" + "\n".join(lines) + "\n")
    check(path, 150_004, "'1.5.5'")


def test_missing_file(tmp_path):
    check(tmp_path / "nope.graph", None, "no such file")


def test_directory(tmp_path):
    check(tmp_path, None, "directory")


def test_empty_file(tmp_path):
    path = tmp_path / "empty.graph"
    path.write_bytes(b"")
    check(path, None, "empty")


def test_blank_file(tmp_path):
    path = tmp_path / "blank.graph"
    path.write_bytes(b"  \n\n\t\n")
    check(path, None, "no header")


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_unreadable_file(tmp_path):
    path = tmp_path / "secret.graph"
    path.write_text("2 1\n2\n1\n")
    path.chmod(0)
    check(path, None, "permission denied")


@pytest.mark.parametrize(
    "ext,compress", [(".gz", gzip.compress), (".bz2", bz2.compress), (".xz", lzma.compress)]
)
def test_truncated_compressed_file(tmp_path, ext, compress):
    data = compress((FIXTURES / "3elt.graph").read_bytes())
    path = tmp_path / f"3elt.graph{ext}"
    path.write_bytes(data[: len(data) // 2])
    check(path, None, "corrupt or truncated")


def test_corrupt_gzip_file(tmp_path):
    path = tmp_path / "x.graph.gz"
    path.write_bytes(b"this is not gzip data at all")
    check(path, None, "corrupt or truncated gzip")


def test_empty_compressed_file(tmp_path):
    path = tmp_path / "x.graph.gz"
    path.write_bytes(gzip.compress(b""))
    check(path, None, "empty")


API_CASES = [
    # (xadj, adjncy, vwgt, adjwgt, words)
    ([0, 1], [0, 0], None, None, ["adjncy has 2 entries"]),
    ([1, 2], [0], None, None, ["xadj[0]"]),
    ([0, 2, 1, 2], [1, 0], None, None, ["xadj decreases at vertex 1"]),
    ([0, 1, 2], [1.0, 0.0], None, None, ["integers"]),
    ([0, 1, 2], [1, 2], None, None, ["vertex 1: neighbour 2 is out of range [0, 1]"]),
    ([0, 1, 2], [1, 0], [1, -1], None, ["vertex 1: negative vertex weight"]),
    ([0, 1, 2], [1, 0], [[1, 2, 3]], None, ["vwgt must have shape"]),
    ([0, 1, 2], [1, 0], None, [3, 0], ["vertex 1: edge weight 0"]),
    ([0, 1, 2], [1, 0], None, [3, 4], ["edge 0-1 has weight 3", "edge 1-0 has weight 4"]),
    ([0, 1, 1], [1], None, None, ["vertex 0 lists neighbour 1, but vertex 1 does not list 0"]),
]


@pytest.mark.parametrize("case", range(len(API_CASES)))
def test_bad_arrays_name_vertices_from_zero(case):
    xadj, adjncy, vwgt, adjwgt, words = API_CASES[case]
    with pytest.raises(InputError) as info:
        validated_graph(np.array(xadj), np.array(adjncy), vwgt, adjwgt)
    assert info.value.path == "<input>" and info.value.line is None
    for word in words:
        assert word in str(info.value), str(info.value)


def test_vertex_lines_from_an_array():
    with pytest.raises(InputError) as info:
        validated_graph(
            np.array([0, 1, 1]), np.array([1]), path="g.txt", vertex_line=np.array([10, 20])
        )
    assert info.value.line == 10
    assert str(info.value).startswith("g.txt:10: vertex 1 lists neighbour 2, but vertex 2")
