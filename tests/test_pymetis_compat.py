"""``import gpmetis as pymetis``: pymetis's names, result shapes and behaviours, our own tests."""

from __future__ import annotations

import array
import json
import warnings

import numpy as np
import pytest
from conftest import load_fixture

import gpmetis as pymetis
from gpmetis.errors import InputError


def grid(nx: int, ny: int) -> list[np.ndarray]:
    """Adjacency lists of an nx x ny grid graph."""
    ids = np.arange(nx * ny).reshape(ny, nx)
    rows = [[] for _ in range(nx * ny)]
    for a, b in [(ids[:, :-1], ids[:, 1:]), (ids[:-1, :], ids[1:, :])]:
        for u, v in zip(a.ravel(), b.ravel()):
            rows[u].append(v)
            rows[v].append(u)
    return [np.array(r) for r in rows]


def quad_mesh(nx: int, ny: int) -> np.ndarray:
    """(nx*ny, 4) node lists of a grid of quadrilaterals."""
    i, j = np.meshgrid(np.arange(nx), np.arange(ny), indexing="ij")
    node = lambda a, b: a + (nx + 1) * b  # noqa: E731
    return np.stack([node(i, j), node(i + 1, j), node(i + 1, j + 1), node(i, j + 1)],
                    -1).reshape(-1, 4)


def test_options_are_mutable_integer_slots_with_metis_defaults():
    opt = pymetis.Options(seed=5)
    assert opt.seed == 5 and opt.numbering == -1 and opt.pfactor == -1
    opt.nseps, opt.compress, opt.ufactor = 3, 1, 100
    assert (opt.nseps, opt.compress, opt.ufactor) == (3, 1, 100)
    with pytest.raises(AttributeError):
        opt.yoink = 1
    with pytest.raises(AttributeError):
        _ = opt.yoink
    with pytest.raises(TypeError):
        opt.seed = 1.5
    assert opt._get(pymetis.OptionKey.SEED) == 5


def test_part_graph_returns_pymetis_arrays():
    cuts, parts = pymetis.part_graph(2, adjacency=grid(6, 6))
    assert type(parts) is array.array and parts.typecode == "q" and type(cuts) is int
    assert parts.count(0) == parts.count(1) == 18
    assert np.frombuffer(parts, dtype=pymetis.zero_copy_dtype()).tolist() == parts.tolist()
    json.dumps({"cuts": cuts, "parts": parts.tolist()})


def test_one_part_is_a_list_of_zeros_as_pymetis_returns():
    cuts, single = pymetis.part_graph(1, adjacency=grid(3, 2))
    assert cuts == 0 and type(single) is list and single == [0] * 6


def test_repeated_neighbours_count_once_per_entry_as_in_metis():
    # a nodal graph built naively from elements lists shared edges twice: METIS counts both
    rows = [[1], [0, 2, 2], [1, 1, 3], [2]]
    assert pymetis.part_graph(2, rows).edge_cuts == 2
    xadj, adjncy = np.array([0, 1, 4, 7, 8]), np.array([1, 0, 2, 2, 1, 1, 3, 2])
    eweights = np.array([5, 5, 3, 4, 3, 4, 5, 5])
    cuts, parts = pymetis.part_graph(2, xadj=xadj, adjncy=adjncy, eweights=eweights)
    part = np.asarray(parts)
    src = np.repeat(np.arange(4), np.diff(xadj))
    assert cuts == eweights[part[src] != part[adjncy]].sum() // 2 == 7
    assert eweights.tolist() == [5, 5, 3, 4, 3, 4, 5, 5]  # the caller's array is unchanged


def test_validation_sums_repeats_in_sorted_and_unsorted_rows():
    from gpmetis.graph import validated_graph

    # row 1 sorted with a repeat, row 2 unsorted with one, no weights given
    graph = validated_graph([0, 1, 4, 7, 8], [1, 0, 2, 2, 3, 1, 1, 2], sum_repeats=True)
    assert graph.has_adjwgt and graph.xadj.tolist() == [0, 1, 3, 5, 6]
    assert graph.adjncy.tolist() == [1, 0, 2, 3, 1, 2]
    assert graph.adjwgt.tolist() == [1, 1, 2, 1, 2, 1]
    assert "with the weights of all" in graph.warnings[0]
    kept = validated_graph([0, 1, 4, 7, 8], [1, 0, 2, 2, 3, 1, 1, 2])
    assert not kept.has_adjwgt and kept.adjwgt.tolist() == [1] * 6


def test_adjacency_rows_may_be_any_iterable():
    rows = [[1, 2], [0, 2], [0, 1, 3], [2, 4, 5], [3, 5], [3, 4]]
    expected = pymetis.part_graph(2, rows)
    assert pymetis.part_graph(2, [set(r) for r in rows]) == expected
    assert pymetis.part_graph(2, [dict.fromkeys(r) for r in rows]) == expected
    as_arrays = [np.array(r, dtype=np.uint64 if i % 2 else np.int32) for i, r in enumerate(rows)]
    assert pymetis.part_graph(2, as_arrays) == expected


@pytest.mark.parametrize("rows, bad", [
    ([[1.5], [0.7]], 0),  # floats are refused, not truncated to ids 1 and 0
    ([[1], [0.0]], 1),
    ([["1"], ["0"]], 0),
    (["1", "0"], 0),
    ([[1], [0, [2]]], 1),
    ([[1], [None]], 1),
    ([[1], [2**70]], 1),
    ([[1], np.array([2**63], dtype=np.uint64)], 1),
    ([np.array([1]), np.array([0.0])], 1),
    ([[1], 0], 1),
])
def test_adjacency_rows_must_hold_integer_ids(rows, bad):
    with pytest.raises(InputError, match=rf"adjacency\[{bad}\] must list integer ids"):
        pymetis.part_graph(2, rows)


def test_mesh_connectivity_must_hold_integer_ids():
    with pytest.raises(InputError, match=r"connectivity\[1\] must list integer ids"):
        pymetis.part_mesh(2, [[0, 1, 2], [1, 2, 3.0]])
    with pytest.raises(InputError, match="connectivity must hold integer node ids"):
        pymetis.part_mesh(2, quad_mesh(2, 2).astype(float))


def test_errors_are_runtime_errors_and_weights_must_be_integers():
    rows = grid(3, 3)
    with pytest.raises(RuntimeError, match="NPARTS"):
        pymetis.part_graph(0, rows)
    with pytest.raises(RuntimeError, match="integers"):
        pymetis.part_graph(2, rows, vweights=[0.5] * 9)
    with pytest.raises(RuntimeError, match="shape"):
        pymetis.part_graph(2, rows, vweights=[1] * 8)


def test_a_64_bit_seed_is_taken_modulo_2_31():
    g = load_fixture("4elt")
    adjacency = pymetis.CSRAdjacency(g.xadj, g.adjncy)
    big = pymetis.part_graph(4, adjacency, options=pymetis.Options(seed=2**31 + 7))
    assert big == pymetis.part_graph(4, adjacency, options=pymetis.Options(seed=7))


def test_objtype_vol_reports_the_volume_as_pymetis():
    g = load_fixture("4elt")
    result = pymetis.part_graph(16, xadj=g.xadj, adjncy=g.adjncy, recursive=False,
                                options=pymetis.Options(objtype=pymetis.ObjType.VOL))
    volume = pymetis.partition(g, 16, engine="metis", objtype="vol").metrics.volume
    assert result.edge_cuts == volume


def test_default_is_recursive_bisection_up_to_8_parts():
    # rb's default ufactor is 1: METIS balances 0.8/0.2 exactly on 100 vertices
    _, parts = pymetis.part_graph(2, adjacency=grid(10, 10), tpwgts=[0.8, 0.2])
    assert [parts.count(0), parts.count(1)] == [80, 20]
    g = load_fixture("4elt")
    adjacency = pymetis.CSRAdjacency(g.xadj, g.adjncy)
    assert pymetis.part_graph(8, adjacency) == pymetis.part_graph(8, adjacency, recursive=True)
    assert pymetis.part_graph(9, adjacency) == pymetis.part_graph(9, adjacency, recursive=False)
    assert pymetis.part_graph(8, adjacency) != pymetis.part_graph(8, adjacency, recursive=False)


def test_a_real_pymetis_options_is_accepted():
    import pymetis as real

    g = load_fixture("4elt")
    adjacency = pymetis.CSRAdjacency(g.xadj, g.adjncy)
    a = pymetis.part_graph(4, adjacency, options=real.Options(seed=7, ufactor=50))
    b = pymetis.part_graph(4, adjacency, options=pymetis.Options(seed=7, ufactor=50))
    assert a == b


def test_pymetis_errors():
    with pytest.raises(ValueError, match="numbering"):
        pymetis.part_graph(2, grid(3, 3), options=pymetis.Options(numbering=1))
    with pytest.raises(RuntimeError, match="tpwgts"):
        pymetis.part_graph(2, grid(3, 3), tpwgts=[1.0])
    with pytest.raises(RuntimeError, match="Contiguous"):
        pymetis.part_graph(2, grid(3, 3), contiguous=True, options=pymetis.Options(contig=1))
    with pytest.raises(TypeError):
        pymetis.part_graph(2, grid(3, 3), xadj=[0], adjncy=[])


def test_missing_reverse_edges_are_added_unless_asked_not_to():
    adjacency = pymetis.CSRAdjacency([0, 2, 4, 6, 6], np.array([1, 2, 0, 2, 1, 3]))
    cuts, parts = pymetis.part_graph(2, adjacency)
    assert len(parts) == 4 and set(parts) == {0, 1}
    with pytest.raises(InputError, match="symmetric"):
        pymetis.part_graph(2, adjacency, symmetrize=False)


def test_warn_on_copies_names_the_converted_arrays():
    with pytest.warns(BytesWarning, match="xadj"):
        pymetis.part_graph(2, pymetis.CSRAdjacency([0, 1, 2], np.array([1, 0])),
                           warn_on_copies=True)
    tp = pymetis.zero_copy_dtype()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pymetis.part_graph(2, pymetis.CSRAdjacency(np.array([0, 1, 2], tp), np.array([1, 0], tp)),
                           warn_on_copies=True)


def test_vsize_counts_in_the_volume():
    g = load_fixture("4elt")
    vsize = np.full(g.nvtxs, 3)
    plain = pymetis.partition(g, 4, engine="cpu")
    sized = pymetis.partition(pymetis.Graph.from_csr(g.xadj, g.adjncy, vsize=vsize), 4,
                              engine="cpu")
    assert sized.volume == 3 * plain.volume
    cuts, parts = pymetis.part_graph(4, pymetis.CSRAdjacency(g.xadj, g.adjncy), vsize=vsize)
    assert len(parts) == g.nvtxs


def test_nested_dissection_and_verify_nd():
    perm, iperm = pymetis.nested_dissection(grid(8, 8))
    assert type(perm) is array.array and sorted(perm) == list(range(64))
    assert pymetis.verify_nd(perm, iperm) == 0
    assert np.array_equal(np.array(perm)[np.array(iperm)], np.arange(64))
    swapped = list(iperm)
    swapped[0], swapped[1] = swapped[1], swapped[0]
    assert pymetis.verify_nd(perm, swapped) != 0



def test_nested_dissection_of_an_empty_graph_is_empty():
    # METIS_NodeND raises SIGFPE on a graph without vertices: the process would die
    import subprocess
    import sys
    from pathlib import Path

    code = ("import gpmetis; "
            "print(gpmetis.nested_dissection([]), gpmetis.nested_dissection([], vweights=[]))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=Path(__file__).resolve().parents[1])
    assert proc.returncode == 0, proc.stderr[-500:]
    assert proc.stdout.split() == ["(array('q'),", "array('q'))"] * 2


def test_nested_dissection_symmetrises_as_part_graph_does():
    perm, iperm = pymetis.nested_dissection([[1], [], [1]])
    assert sorted(perm) == [0, 1, 2] and pymetis.verify_nd(perm, iperm) == 0

@pytest.mark.parametrize("gtype", [pymetis.GType.NODAL, pymetis.GType.DUAL])
def test_part_mesh_balances_both_sides(gtype):
    conn = quad_mesh(30, 20)
    cuts, epart, npart = pymetis.part_mesh(4, conn, None, None, gtype)
    assert len(epart) == 600 and len(npart) == 31 * 21
    assert cuts > 0
    for part, n in ((epart, 600), (npart, 651)):
        counts = np.bincount(part, minlength=4)
        assert np.allclose(counts, n / 4, rtol=0.1), counts


def test_part_mesh_targets_and_ragged_elements():
    conn = quad_mesh(30, 20).tolist()
    conn.append([0, 1])  # a line element beside the quads
    _, epart, npart = pymetis.part_mesh(4, conn, tpwgts=[0.1, 0.2, 0.3, 0.4],
                                        gtype=pymetis.GType.DUAL)
    assert np.allclose(np.bincount(epart), np.array([0.1, 0.2, 0.3, 0.4]) * 601, rtol=0.1)
    assert np.allclose(np.bincount(npart), np.array([0.1, 0.2, 0.3, 0.4]) * 651, rtol=0.1)


def test_part_mesh_ncommon_and_trivial():
    conn = quad_mesh(2, 2)
    _, epart, _ = pymetis.part_mesh(2, conn, gtype=pymetis.GType.DUAL, ncommon=2)
    assert sorted(epart) == [0, 0, 1, 1]


@pytest.mark.parametrize("n_parts", [1, 0])
def test_part_mesh_below_two_parts_is_lists_of_zeros_as_pymetis_returns(n_parts):
    result = pymetis.part_mesh(n_parts, quad_mesh(3, 2).tolist())
    assert isinstance(result, pymetis.MeshPartition) and result.edge_cuts == 0
    assert type(result.element_part) is list and result.element_part == [0] * 6
    assert type(result.vertex_part) is list and result.vertex_part == [0] * 12


@pytest.mark.parametrize("gtype", [pymetis.GType.NODAL, pymetis.GType.DUAL])
def test_part_mesh_result_is_the_named_tuple(gtype):
    result = pymetis.part_mesh(2, quad_mesh(3, 2), gtype=gtype)
    assert isinstance(result, pymetis.MeshPartition) and result._fields == (
        "edge_cuts", "element_part", "vertex_part")
    assert type(result.element_part) is array.array and len(result.element_part) == 6
    assert type(result.vertex_part) is array.array and len(result.vertex_part) == 12
    assert sorted(set(result.element_part)) == [0, 1] == sorted(set(result.vertex_part))



@pytest.mark.parametrize("n_parts", [1, 2])
def test_part_mesh_refuses_node_ids_beyond_memory_as_mpmetis(n_parts, monkeypatch):
    # nodes are numbered up to the largest id: one id of 2^40 makes 2^40 + 1 nodes (8 TiB)
    with pytest.raises(InputError, match=r"connectivity\[1\]: node 1099511627776 makes the "
                                         r"mesh 1099511627777 nodes.*GiB is available"):
        pymetis.part_mesh(n_parts, [[0, 1, 2], [1, 2, 2**40]])
    from gpmetis import limits

    monkeypatch.setattr(limits, "available_memory", lambda: 5 * 10**6)
    with pytest.raises(InputError, match=r"connectivity\[2\]: node 99999 makes"):
        pymetis.part_mesh(n_parts, np.array([[0, 1], [1, 2], [2, 99999], [0, 2]]))
    assert len(pymetis.part_mesh(n_parts, [[0, 1], [1, 2], [2, 9999]]).vertex_part) == 10000

def test_dual_and_nodal_graphs_match_metis():
    from gpmetis.mesh import dual_graph, nodal_graph

    conn = quad_mesh(2, 2)
    eptr, eind = np.arange(5) * 4, conn.ravel()
    rows = lambda g: [sorted(g.adjncy[g.xadj[i]:g.xadj[i + 1]].tolist())  # noqa: E731
                      for i in range(g.nvtxs)]
    # METIS 5.1 m2gmetis on this mesh: every pair of quads shares the centre node (ncommon 1);
    # with ncommon 2 only quads sharing a side are adjacent
    assert rows(dual_graph(eptr, eind, 9, 1)) == [[1, 2, 3], [0, 2, 3], [0, 1, 3], [0, 1, 2]]
    assert rows(dual_graph(eptr, eind, 9, 2)) == [[1, 2], [0, 3], [0, 3], [1, 2]]
    assert rows(nodal_graph(eptr, eind, 9))[4] == [0, 1, 2, 3, 5, 6, 7, 8]
    assert rows(nodal_graph(eptr, eind, 9))[0] == [1, 3, 4]


def test_scipy_inputs_take_the_symmetric_pattern():
    sp = pytest.importorskip("scipy.sparse")
    g = load_fixture("4elt")
    n = g.nvtxs
    upper = sp.triu(sp.csr_array((np.ones(len(g.adjncy)), g.adjncy, g.xadj), shape=(n, n)))
    a = upper + sp.identity(n, format="csr")  # one triangle and a diagonal
    graph = pymetis.from_scipy(a)
    order = np.lexsort((g.adjncy, g.sources()))  # the fixture's rows, sorted
    assert np.array_equal(graph.xadj, g.xadj) and np.array_equal(graph.adjncy, g.adjncy[order])
    cuts, parts = pymetis.part_graph(16, a, recursive=False)
    assert cuts == pymetis.partition(graph, 16).edgecut and len(parts) == n
    weighted = pymetis.from_scipy(sp.coo_matrix(([2.6, -4.0], ([0, 1], [1, 2])), shape=(3, 3)),
                                  weights=True)
    assert weighted.adjwgt.tolist() == [3, 3, 4, 4]
    with pytest.raises(InputError, match="square"):
        pymetis.from_scipy(sp.csr_array((2, 3)))


def test_networkx_results_are_keyed_by_node():
    nx = pytest.importorskip("networkx")
    graph = nx.relabel_nodes(nx.grid_2d_graph(6, 6), lambda ij: f"v{ij[0]}_{ij[1]}")
    cuts, parts = pymetis.part_graph(2, graph)
    assert set(parts) == set(graph.nodes) and sorted(set(parts.values())) == [0, 1]
    assert cuts == sum(parts[u] != parts[v] for u, v in graph.edges)
    result = pymetis.partition(graph, 3, engine="cpu")
    assert set(result.node_part) == set(graph.nodes)
    perm, iperm = pymetis.nested_dissection(graph)
    assert sorted(perm) == sorted(graph.nodes) and iperm[perm[0]] == 0


def test_networkx_self_loops_odd_weights_and_no_nodes():
    nx = pytest.importorskip("networkx")
    graph = nx.Graph()
    graph.add_edge("a", "a", w=2.0)  # networkx stores it as entries that sum to 2
    graph.add_edge("b", "c", w=3.0)
    graph.add_edge("a", "b", w=0.4)  # below one: weighs 1, as a rounded |a_ij|
    g, labels = pymetis.from_networkx(graph, weight="w")
    assert labels == ["a", "b", "c"] and g.adjwgt.tolist() == [1, 1, 3, 3]
    self_loops_only = nx.Graph()
    self_loops_only.add_edge(0, 0, w=5)
    self_loops_only.add_node(1)
    assert len(pymetis.from_networkx(self_loops_only, weight="w")[0].adjncy) == 0
    for bad in ("x", 0, -1.5, float("nan")):
        graph["b"]["c"]["w"] = bad
        with pytest.raises(InputError, match="edge attribute 'w' must be a positive number"):
            pymetis.partition(graph, 2, weight="w")
    empty, labels = pymetis.from_networkx(nx.Graph())
    assert empty.nvtxs == 0 and labels == []
    assert pymetis.partition(nx.Graph(), 2).node_part == {}



@pytest.mark.parametrize("labels", ["range", "shuffled", "gaps", "str", "tuple", "mixed"])
@pytest.mark.parametrize("kind", ["Graph", "DiGraph", "MultiGraph"])
def test_networkx_graphs_read_as_networkx_converts_them(labels, kind):
    """The graph of a networkx graph is the one networkx's own scipy conversion gives, for
    every kind of node label, directed or not, with self loops and edges without the weight."""
    nx = pytest.importorskip("networkx")
    rng = np.random.default_rng(len(labels) + len(kind))
    n = 300
    names = {"range": list(range(n)), "shuffled": rng.permutation(n).tolist(),
             "gaps": (rng.permutation(n) * 7 - 900).tolist(),
             "str": [f"v{i}" for i in rng.permutation(n)],
             "tuple": [(int(i) % 17, int(i) // 17) for i in rng.permutation(n)],
             "mixed": [i if i % 2 else f"v{i}" for i in range(n)]}[labels]
    graph = getattr(nx, kind)()
    graph.add_nodes_from(names)
    for u, v in rng.integers(0, n, size=(900, 2)):
        attrs = {} if rng.random() < 0.2 else {"w": float(rng.integers(1, 9)) / 2}
        graph.add_edge(names[u], names[v], **attrs)
    for weight in (None, "w"):
        got, got_labels = pymetis.from_networkx(graph, weight=weight)
        matrix = nx.to_scipy_sparse_array(graph, nodelist=names, weight=weight, format="coo")
        matrix.sum_duplicates()
        want = pymetis.from_scipy(matrix, weights=weight is not None)
        assert got_labels == names
        assert np.array_equal(got.xadj, want.xadj) and np.array_equal(got.adjncy, want.adjncy)
        assert np.array_equal(got.adjwgt, want.adjwgt)


def test_partition_takes_metis_style_options():
    g = load_fixture("4elt")
    a = pymetis.partition(g, 4, pymetis.Options(seed=3, ufactor=50), engine="cpu")
    b = pymetis.partition(g, 4, engine="cpu", seed=3, ufactor=50)
    assert np.array_equal(a.part, b.part)
