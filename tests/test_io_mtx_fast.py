"""The Matrix Market fast path (``io.mtx_scan``): the graph it gives is the general tokenizer's
and the one scipy's reader implies, for every field and symmetry, across chunk boundaries, and
for the value forms it hands to NumPy; inputs outside it fall back to the general reader."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

from gpmetis.errors import InputError
from gpmetis.io import matrix_market, mtx_scan, read_graph, tokens
from gpmetis.io.source import read_bytes


def general_reader(path, weights):
    data = read_bytes(path)
    field = matrix_market._banner(data, str(path))
    return matrix_market._read_tokens(data, field, str(path), weights)


def fast_entries(path, weights):
    data = read_bytes(path)
    field = matrix_market._banner(data, str(path))
    head = mtx_scan.header(data)
    return None if head is None else mtx_scan.scan_entries(data, head, field, weights)


def scipy_graph(path):
    """(xadj, adjncy, adjwgt) of the pattern of A + A^T without the diagonal, rows sorted, from
    scipy's reader; weights |a_ij| rounded half up, at least 1, the larger of both directions."""
    a = sp.coo_matrix(scipy.io.mmread(path))
    n = a.shape[0]
    off = a.row != a.col
    r, c = a.row[off].astype(np.int64), a.col[off].astype(np.int64)
    w = np.maximum(np.floor(np.abs(a.data[off].astype(np.float64)) + 0.5), 1).astype(np.int64)
    key = np.concatenate([r * n + c, c * n + r])
    w = np.concatenate([w, w])
    order = np.lexsort((w, key))
    key, w = key[order], w[order]
    last = np.flatnonzero(np.append(key[1:] != key[:-1], True))
    key, w = key[last], w[last]
    xadj = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(key // n, minlength=n), out=xadj[1:])
    return xadj, (key % n).astype(np.int32), w


def random_matrix(rng, n, nnz, field, symmetry):
    """A sparse matrix of the kind the file holds, with values of many magnitudes and forms."""
    r = rng.integers(0, n, nnz)
    c = rng.integers(0, n, nnz)
    if symmetry != "general":
        r, c = np.maximum(r, c), np.minimum(r, c)
        if symmetry == "skew-symmetric":
            keep = r != c
            r, c = r[keep], c[keep]
    if field == "integer":
        v = rng.integers(-300, 300, len(r))
    else:
        v = rng.standard_normal(len(r)) * 10.0 ** rng.integers(-6, 8, len(r))
        v[::7] = np.round(v[::7]) + 0.5  # exact ties
    a = sp.coo_matrix((v, (r, c)), shape=(n, n))
    a.sum_duplicates()
    a.data[a.data == 0] = 1
    return a


FIELDS = ["pattern", "integer", "real"]
SYMMETRIES = ["general", "symmetric", "skew-symmetric"]


@pytest.mark.parametrize("field", FIELDS)
@pytest.mark.parametrize("symmetry", SYMMETRIES)
def test_fast_path_matches_scipy_and_the_general_reader(tmp_path, monkeypatch, field, symmetry):
    monkeypatch.setattr(mtx_scan, "CHUNK", 1 << 12)  # many chunks, lines across their ends
    rng = np.random.default_rng(hash((field, symmetry)) % 2**32)
    a = random_matrix(rng, 300, 4000, field, symmetry)
    path = tmp_path / "a.mtx"
    if field == "pattern":
        scipy.io.mmwrite(path, a, field="pattern", symmetry=symmetry)
    else:
        scipy.io.mmwrite(path, a, symmetry=symmetry)
    for weights in (False, True) if field != "pattern" else (False,):
        assert fast_entries(path, weights) is not None  # the fast path was taken
        graph = read_graph(path, mtx_weights=weights)
        general = general_reader(path, weights)
        for name in ("xadj", "adjncy", "adjwgt"):
            np.testing.assert_array_equal(getattr(graph, name), getattr(general, name))
        xadj, adjncy, adjwgt = scipy_graph(path)
        np.testing.assert_array_equal(graph.xadj, xadj)
        np.testing.assert_array_equal(graph.adjncy, adjncy)
        if weights:
            np.testing.assert_array_equal(graph.adjwgt, adjwgt)
        else:
            assert (graph.adjwgt == 1).all()
        assert graph.has_adjwgt == weights


VALUES = ["1", "-2", "+3", "0.5", "2.5", "-7.49", "7.5000001", "2.4999999999999999", "1e3",
          "1E+02", "-3.25e-1", "5.5e0", "1.234567e+05", "99999999.5", "123456789.7", ".5", "5.",
          "1.e2", "-.25E1", "1e-400", "0.00000000000000000000000000012", "4.9999995", "1e-05",
          "12345678901234567", "000000001.5", "6.02214076e15"]


@pytest.mark.parametrize("weights", [False, True])
def test_value_forms_read_as_the_general_reader_reads_them(tmp_path, monkeypatch, weights):
    monkeypatch.setattr(mtx_scan, "CHUNK", 64)
    n = len(VALUES) + 1
    lines = [f"{i + 2} {i + 1} {v}" for i, v in enumerate(VALUES)]
    lines.append("000000000001 0000000000000002 3.5")  # indices of 12 and 16 digits
    path = tmp_path / "v.mtx"
    path.write_text(f"%%MatrixMarket matrix coordinate real general\n{n} {n} {len(lines)}\n"
                    + "\n".join(lines))  # no final newline: the last words come from the tail
    assert fast_entries(path, weights) is not None
    graph = read_graph(path, mtx_weights=weights)
    general = general_reader(path, weights)
    for name in ("xadj", "adjncy", "adjwgt"):
        np.testing.assert_array_equal(getattr(graph, name), getattr(general, name))
    if weights:
        assert graph.adjwgt.max() > 1 and (graph.adjwgt >= 1).all()


@pytest.mark.parametrize("body,why", [
    ("2 1 1\r\n3 2 2\r\n\r\n\t3 1 1  \n", "CRLF, tabs, blank lines"),
    ("2 1 1\n% a comment between entries\n3 2 2\n3 1 1\n", "a comment line"),
    ("2 1 1 4\n3 2 2\n3 1 1\n", "four values on a line"),
    ("2 1 1\n3 2 abc\n3 1 1\n", "a word for a value"),
    ("2 1 1\n3 2 1e999\n3 1 1\n", "an infinite value"),
    ("2 1 1\n3 2 1.5.5\n3 1 1\n", "two dots"),
    ("2 1 1\n4 2 1\n3 1 1\n", "an index out of range"),
    ("2 1 1\n+3 2 1\n3 1 1\n", "a signed index"),
])
def test_other_inputs_read_or_fail_as_with_the_general_reader(tmp_path, body, why):
    path = tmp_path / "o.mtx"
    path.write_text(f"%%MatrixMarket matrix coordinate real general\n3 3 3\n{body}")
    try:
        expected = general_reader(path, True)
    except Exception as e:  # noqa: BLE001 - the same error, message included
        with pytest.raises(type(e), match=str(e).replace("(", r"\(").replace(")", r"\)")):
            read_graph(path, mtx_weights=True)
        return
    graph = read_graph(path, mtx_weights=True)
    for name in ("xadj", "adjncy", "adjwgt"):
        np.testing.assert_array_equal(getattr(graph, name), getattr(expected, name), why)


def test_integer_matrix_values_must_be_integers(tmp_path):
    path = tmp_path / "i.mtx"
    path.write_text("%%MatrixMarket matrix coordinate integer general\n3 3 2\n2 1 7\n3 2 1.5\n")
    assert fast_entries(path, False) is None
    with pytest.raises(InputError, match="i.mtx:4: expected an integer value, found '1.5'"):
        read_graph(path)


def test_positions_past_two_gib_take_int64(tmp_path, monkeypatch):
    """Files of 2 GiB or more index their bytes and lines with int64: the same graphs with the
    switch lowered to a few bytes, through both text readers' tokenizer."""
    metis = tmp_path / "g.graph"
    metis.write_text("% c\n4 4\n2 3\n1 3\n1 2 4\n3\n")
    mtx = tmp_path / "g.mtx"
    mtx.write_text("%%MatrixMarket matrix coordinate pattern symmetric\n4 4 4\n"
                   "2 1\n3 1\n% c\n3 2\n4 3\n")
    before = [read_graph(metis), general_reader(mtx, False)]
    monkeypatch.setattr(tokens, "_INT32_MAX", 8)
    tok = tokens.tokenize(metis.read_bytes(), "g")
    assert tok.rows.dtype == np.int64
    for old, new in zip(before, [read_graph(metis), general_reader(mtx, False)], strict=True):
        assert new.xadj.dtype == np.int64
        for name in ("xadj", "adjncy", "adjwgt"):
            np.testing.assert_array_equal(getattr(new, name), getattr(old, name))
