"""Reading METIS graph files: fixtures, every fmt code, layout quirks, compression, clean-up."""

from __future__ import annotations

import bz2
import gzip
import lzma
import re

import numpy as np
import pytest
from conftest import FIXTURES

from gpmetis.errors import InputError
from gpmetis.graph import Graph, validated_graph
from gpmetis.io import read_graph, tokens
from gpmetis.io.tokens import tokenize

# n and m from shared/graphs/README.md
README = {
    "1138_bus": (1138, 1458),
    "3elt": (4720, 13722),
    "4elt": (15606, 45878),
    "PGPgiantcompo": (10680, 24316),
    "add20": (2395, 7462),
    "add32": (4960, 9462),
    "airfoil1": (4253, 12289),
    "btree": (1023, 1022),
    "commanche_dual": (7920, 11880),
    "crack": (10240, 30380),
    "cs4": (22499, 43858),
    "data": (2851, 15093),
    "delaunay_n15": (32768, 98274),
    "delaunay_n16": (65536, 196575),
    "fe_4elt2": (11143, 32818),
    "hep-th": (8361, 15751),
    "polblogs": (1490, 16715),
    "power": (4941, 6594),
    "rgg_n_2_15_s0": (32768, 160240),
    "rgg_n_2_16_s0": (65536, 342127),
    "uk": (4824, 6837),
    "whitaker3": (9800, 28989),
    "wing_nodal": (10937, 75488),
}


def reference(text: str):
    """A plain Python reader of the METIS format: (n, m, fmt, ncon, rows), each row a
    (vsize, [vertex weights], [(neighbour 1-based, weight)]) as written."""
    lines = [ln for ln in text.replace("\r", "").split("\n") if not ln.lstrip().startswith("%")]
    while not lines[0].strip():
        lines.pop(0)
    head = [int(x) for x in lines[0].split()]
    n, m = head[0], head[1]
    fmt = head[2] if len(head) > 2 else 0
    ncon = head[3] if len(head) > 3 else 1
    vs, vw, ew = fmt // 100, fmt // 10 % 10, fmt % 10
    rows = []
    for line in lines[1 : n + 1]:
        f = [int(x) for x in line.split()]
        size = f.pop(0) if vs else 1
        weights = [f.pop(0) for _ in range(ncon)] if vw else [1] * ncon
        step = 2 if ew else 1
        nbrs = [(f[i], f[i + 1] if ew else 1) for i in range(0, len(f), step)]
        rows.append((size, weights, nbrs))
    return n, m, fmt, ncon, rows


def expected_csr(rows):
    """CSR of reference rows with self loops and repeated neighbours dropped (first kept)."""
    xadj, adj, wgt = [0], [], []
    for v, (_, _, nbrs) in enumerate(rows):
        seen = set()
        for u, w in nbrs:
            if u - 1 != v and u not in seen:
                seen.add(u)
                adj.append(u - 1)
                wgt.append(w)
        xadj.append(len(adj))
    return np.array(xadj), np.array(adj), np.array(wgt)


def assert_matches_reference(graph: Graph, text: str) -> None:
    n, _, fmt, ncon, rows = reference(text)
    xadj, adj, wgt = expected_csr(rows)
    assert graph.nvtxs == n and graph.ncon == ncon
    np.testing.assert_array_equal(graph.xadj, xadj)
    np.testing.assert_array_equal(graph.adjncy, adj)
    np.testing.assert_array_equal(graph.adjwgt, wgt)
    np.testing.assert_array_equal(graph.vwgt, np.array([r[1] for r in rows]).reshape(n, ncon))
    if fmt >= 100:
        np.testing.assert_array_equal(graph.vsize, [r[0] for r in rows])
    else:
        assert graph.vsize is None
    assert graph.has_vwgt == bool(fmt // 10 % 10) and graph.has_adjwgt == bool(fmt % 10)
    assert_guarantees(graph)


def assert_guarantees(graph: Graph) -> None:
    """The invariants in Graph's docstring, checked the slow way."""
    assert graph.xadj.dtype == np.int64 and graph.adjncy.dtype == np.int32
    assert graph.vwgt.dtype == np.int64 and graph.adjwgt.dtype == np.int64
    for a in (graph.xadj, graph.adjncy, graph.vwgt, graph.adjwgt):
        assert a.flags.c_contiguous
    assert graph.vwgt.ndim == 2 and graph.vwgt.shape[0] == graph.nvtxs
    assert len(graph.adjwgt) == len(graph.adjncy) == graph.xadj[-1]
    assert (graph.adjwgt > 0).all() and (graph.vwgt >= 0).all()
    src = graph.sources().astype(np.int64)
    assert (src != graph.adjncy).all()
    key = src * graph.nvtxs + graph.adjncy
    assert len(np.unique(key)) == len(key)
    weight = dict(zip(key.tolist(), graph.adjwgt.tolist(), strict=True))
    rkey = graph.adjncy.astype(np.int64) * graph.nvtxs + src
    assert [weight.get(k) for k in rkey.tolist()] == graph.adjwgt.tolist()


@pytest.mark.parametrize("name", sorted(README))
def test_fixture_sizes_and_content(name):
    path = FIXTURES / f"{name}.graph"
    graph = read_graph(path)
    assert (graph.nvtxs, graph.nedges) == README[name]
    assert graph.warnings == []
    if graph.nvtxs <= 20000:
        assert_matches_reference(graph, path.read_text())
    else:
        assert_guarantees(graph)


def test_polblogs_isolated_vertices():
    path = FIXTURES / "polblogs.graph"
    graph = read_graph(path)
    lines = path.read_text().split("\n")[1:1491]
    empty = [i for i, line in enumerate(lines) if not line.strip()]
    assert empty  # the fixture has them
    np.testing.assert_array_equal(np.flatnonzero(graph.degrees() == 0), empty)


FMT_NCON = [(f, None) for f in (0, 1, 10, 11, 100, 101, 110, 111)] + [
    (f, c) for f in (10, 11, 110, 111) for c in (1, 3)
]


@pytest.mark.parametrize("fmt,ncon", FMT_NCON)
def test_every_fmt_code(tmp_path, fmt, ncon):
    vs, vw, ew = fmt // 100, fmt // 10 % 10, fmt % 10
    k = ncon or 1
    weights = {(1, 2): 5, (1, 3): 2, (2, 3): 7, (3, 4): 1}

    def ewt(u, v):
        return f"{weights[min(u, v), max(u, v)]} " if ew else ""

    rows = {1: [2, 3], 2: [1, 3], 3: [1, 2, 4], 4: [3]}
    lines = ["% header follows", f"4 4 {fmt}" + (f" {ncon}" if ncon else "")]
    for v, nbrs in rows.items():
        data = ([str(10 + v)] if vs else []) + ([str(v * c) for c in range(k)] if vw else [])
        lines.append(" ".join(data + [f"{u} {ewt(v, u)}" for u in nbrs]))
    text = "\n".join(lines) + "\n"
    path = tmp_path / "g.graph"
    path.write_text(text)
    graph = read_graph(path)
    assert_matches_reference(graph, text)
    if vw:
        assert graph.vwgt[2].tolist() == [3 * c for c in range(k)]
    if vs:
        assert graph.vsize.tolist() == [11, 12, 13, 14]
    if ew:
        assert graph.adjwgt[graph.xadj[2] : graph.xadj[3]].tolist() == [2, 7, 1]


def test_layout_quirks_give_the_same_graph(tmp_path):
    plain = "4 4 1\n2 5 3 2\n1 5 3 7\n1 2 2 7 4 1\n3 1\n"
    quirky = (
        "%leading comment\r\n"
        "\r\n"
        "  4\t4   1  \r\n"
        "% comment between header and vertices\r\n"
        "\t2 5\t3  2   \r\n"
        "   % indented comment\r\n"
        "1 5 3 7\r\n"
        "1 2 2 7 4 1\t\r\n"
        "% comment before the last vertex\r\n"
        "3 1\r\n"
        "\r\n"
        "% trailing comment\r\n"
        "\r\n"
    )
    (tmp_path / "a.graph").write_text(plain)
    (tmp_path / "b.graph").write_bytes(quirky.encode())
    (tmp_path / "c.graph").write_text(plain.rstrip("\n"))  # no newline at the end
    a, b, c = (read_graph(tmp_path / f"{x}.graph") for x in "abc")
    for other in (b, c):
        np.testing.assert_array_equal(a.xadj, other.xadj)
        np.testing.assert_array_equal(a.adjncy, other.adjncy)
        np.testing.assert_array_equal(a.adjwgt, other.adjwgt)
    assert_matches_reference(a, plain)


def test_empty_lines_are_isolated_vertices(tmp_path):
    text = "5 2\n\n3\n2 5\n\n3\n"
    (tmp_path / "g.graph").write_text(text)
    graph = read_graph(tmp_path / "g.graph")
    assert graph.degrees().tolist() == [0, 1, 2, 0, 1]
    assert_matches_reference(graph, text)


def test_signed_and_long_integers(tmp_path):
    text = "2 1 1\n+2 4000000000\n1 4000000000\n"
    (tmp_path / "g.graph").write_text(text)
    graph = read_graph(tmp_path / "g.graph")
    assert graph.adjncy.tolist() == [1, 0]
    assert graph.adjwgt.tolist() == [4000000000, 4000000000]


@pytest.mark.parametrize(
    "ext,compress", [(".gz", gzip.compress), (".bz2", bz2.compress), (".xz", lzma.compress)]
)
def test_compressed_fixture(tmp_path, ext, compress):
    source = FIXTURES / "4elt.graph"
    path = tmp_path / f"4elt.graph{ext}"
    path.write_bytes(compress(source.read_bytes()))
    a, b = read_graph(source), read_graph(path)
    np.testing.assert_array_equal(a.xadj, b.xadj)
    np.testing.assert_array_equal(a.adjncy, b.adjncy)
    np.testing.assert_array_equal(a.adjwgt, b.adjwgt)


def test_self_loops_and_repeats_are_dropped_with_warnings(tmp_path):
    text = "% vertex 1 lists itself and lists 2 twice\n3 4 1\n1 9 2 5 3 4 2 7\n1 5 3 1\n1 4 2 1\n"
    path = tmp_path / "g.graph"
    path.write_text(text)
    graph = read_graph(path)
    assert_matches_reference(graph, text)
    assert graph.adjwgt[:2].tolist() == [5, 4]  # the first (1, 2) entry kept, weight 5
    assert len(graph.warnings) == 2
    loop, repeat = graph.warnings
    assert loop.startswith(f"{path}:3:") and "itself" in loop and "1 self loop" in loop
    assert repeat.startswith(f"{path}:3:") and "neighbour 2 more than once" in repeat


def test_repeats_in_sorted_and_unsorted_rows(tmp_path):
    # row 2 is sorted with a repeat; row 3 unsorted with one
    text = "4 6\n2 3\n1 3 3 4\n4 2 1 2\n3 2\n"
    path = tmp_path / "g.graph"
    path.write_text(text)
    graph = read_graph(path)
    assert_matches_reference(graph, text)
    assert len(graph.warnings) == 1 and graph.warnings[0].startswith(f"{path}:3:")
    assert "dropped 2 repeated entries" in graph.warnings[0]


def test_self_loops_in_sorted_rows(tmp_path):
    text = "4 5\n1 2\n1 2 3\n2 3 4\n3 4\n"
    path = tmp_path / "g.graph"
    path.write_text(text)
    graph = read_graph(path)
    assert_matches_reference(graph, text)
    assert len(graph.warnings) == 1 and graph.warnings[0].startswith(f"{path}:2:")
    assert "dropped 4 self loops" in graph.warnings[0]


@pytest.mark.parametrize(
    "text",
    [
        "5 2\n\n2 3\n2 3\n\n\n",  # sorted rows with self loops, isolated vertices around
        "5 3\n\n3 2 3\n3 2 2\n\n\n",  # unsorted rows, self loops and repeats
    ],
)
def test_dropping_keeps_isolated_vertices(tmp_path, text):
    path = tmp_path / "g.graph"
    path.write_text(text)
    graph = read_graph(path)
    assert_matches_reference(graph, text)
    assert graph.degrees().tolist() == [0, 1, 1, 0, 0]
    assert graph.warnings


def test_symmetrize_adds_reverse_edges_and_takes_larger_weight(tmp_path):
    # 1-2 listed both ways with weights 3 and 8; 1-3 and 3-4 only one way
    text = "4 2 1\n2 3 3 6\n1 8\n4 2\n\n"
    path = tmp_path / "g.graph"
    path.write_text(text)
    graph = read_graph(path, symmetrize=True)
    rows = {
        v: dict(
            zip(
                graph.adjncy[graph.xadj[v] : graph.xadj[v + 1]].tolist(),
                graph.adjwgt[graph.xadj[v] : graph.xadj[v + 1]].tolist(),
                strict=True,
            )
        )
        for v in range(4)
    }
    assert rows == {0: {1: 8, 2: 6}, 1: {0: 8}, 2: {3: 2, 0: 6}, 3: {2: 2}}
    assert graph.adjncy[graph.xadj[2] : graph.xadj[3]].tolist() == [3, 0]  # appended at the end
    assert_guarantees(graph)
    assert len(graph.warnings) == 1
    assert "added 2 missing reverse entries, raised 1 edge weight" in graph.warnings[0]
    assert graph.warnings[0].startswith(f"{path}:2:")


def test_symmetrize_keeps_a_symmetric_graph_unchanged():
    a = read_graph(FIXTURES / "crack.graph")
    b = read_graph(FIXTURES / "crack.graph", symmetrize=True)
    np.testing.assert_array_equal(a.adjncy, b.adjncy)
    assert b.warnings == []


def random_symmetric(n, avg_degree, seed, weighted=False, shuffle_rows=False):
    rng = np.random.default_rng(seed)
    m = n * avg_degree // 2
    u, v = rng.integers(0, n, m), rng.integers(0, n, m)
    u, v = u[u != v], v[u != v]
    key = np.unique(np.concatenate([u * n + v, v * n + u]))
    src, dst = key // n, key % n
    w = (np.minimum(src, dst) * 31 + np.maximum(src, dst) * 17) % 7 + 1
    if shuffle_rows:
        order = np.lexsort((rng.random(len(src)), src))
        src, dst, w = src[order], dst[order], w[order]
    xadj = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=xadj[1:])
    return xadj, dst, (w if weighted else None)


def first_asymmetric_vertex(xadj, adj, w):
    """Brute force: the smallest vertex with an entry whose reverse is missing or differs."""
    n = len(xadj) - 1
    entries = {}
    for v in range(n):
        for e in range(xadj[v], xadj[v + 1]):
            entries[v, int(adj[e])] = 1 if w is None else int(w[e])
    bad = [u for (u, v), wt in entries.items() if entries.get((v, u)) != wt]
    return min(bad) if bad else None


@pytest.mark.parametrize("n", [1, 7, 300, 5000, 70000])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("shuffle_rows", [False, True])
def test_symmetry_check_on_random_graphs(n, weighted, shuffle_rows):
    rng = np.random.default_rng(n)
    xadj, adj, w = random_symmetric(n, 6, n, weighted, shuffle_rows)
    graph = validated_graph(xadj, adj, adjwgt=w)
    assert graph.warnings == []
    np.testing.assert_array_equal(graph.adjncy, adj)
    if len(adj) == 0:
        return
    # break it: drop an entry, or (weighted) change a weight
    e = int(rng.integers(len(adj)))
    if weighted:
        w2 = w.copy()
        w2[e] += 1
        cases = [(xadj, adj, w2)]
    else:
        cases = []
    src = np.repeat(np.arange(n), np.diff(xadj))
    keep = np.arange(len(adj)) != e
    x2 = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(src[keep], minlength=n), out=x2[1:])
    cases.append((x2, adj[keep], None if w is None else w[keep]))
    for xa, ad, wt in cases:
        expected = first_asymmetric_vertex(xa, ad, wt) if n <= 5000 else None
        with pytest.raises(Exception) as info:
            validated_graph(xa, ad, adjwgt=wt)
        assert "must be symmetric" in str(info.value)
        if expected is not None:
            assert re.match(rf"<input>: (vertex |edge ){expected}\b", str(info.value))


def test_symmetry_check_beyond_65536_vertices_per_block():
    # more than 2^24 vertices: blocks of 2^17 vertices take the two-pass radix sort
    n = (1 << 24) + 5
    pairs = [(0, n - 1), (3, 1 << 20), (1 << 20, (1 << 20) + 70000), (n - 3, n - 2)]
    src = [p for a, b in pairs for p in (a, b)]
    dst = [p for a, b in pairs for p in (b, a)]
    order = np.argsort(np.array(src) * n + np.array(dst))
    src, dst = np.array(src)[order], np.array(dst)[order]
    xadj = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=xadj[1:])
    assert validated_graph(xadj, dst).nedges == 4
    dst2 = dst.copy()
    dst2[np.flatnonzero(src == (1 << 20) + 70000)[0]] = 3
    # 2^20 + 70000 now lists 3 instead of 2^20, which still lists it: 2^20 is the first
    with pytest.raises(Exception, match=f"vertex {1 << 20} lists neighbour {(1 << 20) + 70000},"):
        validated_graph(xadj, dst2)


def test_tokenizer_matches_python_split_across_chunks():
    """Several 1 MiB chunks of random lines: integers of every length and sign, comment and
    blank lines, CRLF, tabs, wide indentation, a bad token and (late) an integer beyond int32."""
    rng = np.random.default_rng(5)
    lines = []
    for _ in range(60_000):
        kind = rng.integers(20)
        if kind == 0:
            lines.append("  % comment 1 2 x")
        elif kind == 1:
            lines.append(" \t ")
        else:
            nums = rng.integers(0, 10 ** rng.integers(1, 10, 8))
            signs = rng.choice(["", "", "+", "-"], 8)
            lines.append("\t".join(s + str(x) for s, x in zip(signs, nums, strict=True)))
    lines[50_000] += " 12345678901"  # needs int64, after int32 chunks
    lines[30_000] = "1 2x 3"
    lines[10] = " " * 20 + "7"  # a wide gap: that chunk counts lines from newline positions
    text = "\r\n".join(lines) + "\r\n"
    tok = tokenize(text.encode(), "t")

    counts, values, bad = [], [], []
    for line in text.split("\r\n")[:-1]:
        fields = [] if line.lstrip().startswith("%") else line.split()
        counts.append(len(fields))
        for f in fields:
            bad.append(f == "2x")
            values.append(0 if f == "2x" else int(f))
    dense = np.zeros(tok.nlines, np.int64)
    dense[tok.rows] = tok.row_cnt
    assert tok.nlines == len(counts) and dense.tolist() == counts
    assert (tok.row_cnt > 0).all()
    assert tok.values.dtype == np.int64 and tok.values.tolist() == values
    assert tok.bad.tolist() == [bad.index(True)]
    assert tok.comment_lines.tolist() == [i for i, ln in enumerate(lines) if "%" in ln]
    assert int(tok.line_of(int(tok.bad[0]))) == 30_001
    with pytest.raises(InputError, match="t:30001: expected an integer, found '2x'"):
        tok.require_ints(0, len(values))


# --- '%' after a line's values (trailing comments)

TRAILING = ["7", "-12", "+3", "123456789", "%", "% 5 6", "%x", "3%y", "44%", "-%", "x%",
            "%" + "z" * 40, "6%" + "z" * 40]


@pytest.mark.parametrize("chunk", [16, 64, 1 << 20])
def test_trailing_comments_match_a_line_cut_at_its_first_percent(monkeypatch, chunk):
    """With trailing_comments, a '%' on a line whose first token does not start with one ends
    the line (the tokens before it stay, '3%y' reads 3), in lines of every length whatever
    chunks cut them; without, the same '%' tokens are bad tokens."""
    monkeypatch.setattr(tokens, "CHUNK", chunk)
    rng = np.random.default_rng(chunk)
    lines = [" ".join(rng.choice(TRAILING, rng.integers(0, 12))) + " " * rng.integers(0, 3)
             for _ in range(3000)]
    text = "\n".join(lines) + "\n"
    tok = tokenize(text.encode(), "t", trailing_comments=True)
    comment = [bool(ln.split()) and ln.split()[0].startswith("%") for ln in lines]
    fields = [[] if c else ln.split("%")[0].split() for c, ln in zip(comment, lines)]
    assert tok.nlines == len(lines)
    assert tok.comment_lines.tolist() == [i for i, c in enumerate(comment) if c]
    assert tok.rows.tolist() == [i for i, f in enumerate(fields) if f]
    assert tok.row_cnt.tolist() == [len(f) for f in fields if f]
    flat = [f for fs in fields for f in fs]
    bad = [i for i, f in enumerate(flat) if not re.fullmatch(r"[+-]?[0-9]+", f)]
    assert tok.bad.tolist() == bad and bad  # '-%' and 'x%' leave '-' and 'x'
    assert [tok.text(i) for i in range(len(bad))] == [flat[i] for i in bad]
    assert tok.values.tolist() == [0 if i in set(bad) else int(f) for i, f in enumerate(flat)]
    monkeypatch.undo()  # 1 MiB chunks: the 42-byte tokens are no error
    strict = tokenize(text.encode(), "t")
    assert any("%" in strict.text(i) for i in range(len(strict.bad)))


@pytest.mark.parametrize("chunk", [16, 64, 1 << 20])
def test_a_uint8_view_tokenizes_as_its_bytes(monkeypatch, chunk):
    """A rank's lines as a view of part of a mapped file (its newlines found by NumPy, not by
    bytes.find) give the tokens its bytes give, whatever chunks cut them."""
    monkeypatch.setattr(tokens, "CHUNK", chunk)
    rng = np.random.default_rng(chunk + 1)
    lines = [" ".join(rng.choice(TRAILING, rng.integers(0, 12))) + " " * rng.integers(0, 3)
             for _ in range(3000)]
    text = ("\n".join(lines) + "\n").encode()
    view = np.frombuffer(b"1 2\n" + text + b"3 4", np.uint8)[4:4 + len(text)]
    def tokens_of(data, trailing: bool):  # (or the message: a 42-byte token in 16-byte chunks)
        try:
            return tokenize(data, "t", trailing_comments=trailing)
        except InputError as exc:
            return str(exc)

    for trailing in (False, True):
        want, got = (tokens_of(d, trailing) for d in (text, view))
        if isinstance(want, str):
            assert got == want
            continue
        assert got.nlines == want.nlines
        for field in ("values", "rows", "row_cnt", "comment_lines", "bad", "bad_start",
                      "bad_end"):
            assert np.array_equal(getattr(got, field), getattr(want, field)), field


def test_a_percent_after_a_vertex_lines_values_starts_a_comment(tmp_path):
    """METIS 5.1 reads a vertex line up to its first text that is not an integer."""
    plain = "4 4 1\n2 5 3 2\n1 5 3 7\n1 2 2 7 4 1\n3 1\n"
    commented = ("4 4 1 % four vertices\n2 5 3 2 % x\n1 5 3 7%7\n1 2 2 7 4 1 %% 9 9\n"
                 "3 1%\n")
    (tmp_path / "a.graph").write_text(plain)
    (tmp_path / "b.graph").write_text(commented)
    a, b = read_graph(tmp_path / "a.graph"), read_graph(tmp_path / "b.graph")
    for x, y in ((a.xadj, b.xadj), (a.adjncy, b.adjncy), (a.adjwgt, b.adjwgt)):
        np.testing.assert_array_equal(x, y)
    assert not b.warnings
