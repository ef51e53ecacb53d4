"""The Python API in pymetis's shape: ``part_graph``, ``part_mesh``, ``nested_dissection``, and
``partition`` for any graph input, answered by gpmetis's engines.

Graph inputs everywhere: pymetis's adjacency lists or mapping, a ``CSRAdjacency``,
``xadj``/``adjncy`` arrays, a ``gpmetis.Graph``, a scipy.sparse matrix or array (the pattern of
A + A^T without the diagonal; ``mtx_weights=True`` takes |a_ij| as edge weights) or a networkx
graph (``weight=`` names an edge attribute; results come back keyed by node).
"""

from __future__ import annotations

import array
import reprlib
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import Any

import numpy as np

from gpmetis.errors import InputError
from gpmetis.graph import Graph, validated_graph
from gpmetis.interop import from_networkx, from_scipy, is_networkx, is_scipy_sparse
from gpmetis.limits import mesh_node_count
from gpmetis.mesh import Mesh
from gpmetis.mesh.graphs import dual_graph, induce_partition, nodal_graph
from gpmetis.options import Options as RunOptions
from gpmetis.partitioning.driver import Result
from gpmetis.partitioning.driver import partition as _partition
from gpmetis.partitioning.metis_engine import metis_index
from gpmetis.partitioning.problem import load_tpwgts
from gpmetis.pymetis_compat import (
    CSRAdjacency,
    GraphPartition,
    GType,
    MeshPartition,
    check_numbering,
    metis_values,
    run_options,
    zero_copy_dtype,
)
from gpmetis.validation import INT64_MAX

# pymetis's part_graph bisects recursively up to this many parts unless told otherwise.
RECURSIVE_MAX_NPARTS = 8


@dataclass
class NodeResult(Result):
    """A ``Result`` for a networkx graph: ``part[i]`` is the part of ``labels[i]``."""

    labels: list = field(default_factory=list)

    @property
    def node_part(self) -> dict:
        """Each node's part, keyed by node."""
        return dict(zip(self.labels, self.part.tolist()))


def _warn_copy(name: str, value: Any) -> None:
    if value is not None and not (isinstance(value, np.ndarray)
                                  and value.dtype == zero_copy_dtype()):
        warnings.warn(f"For {name}: converted to {zero_copy_dtype()} (pass a NumPy array of "
                      "gpmetis.zero_copy_dtype() to avoid the copy)", BytesWarning, stacklevel=3)


def _rows_to_csr(rows, name: str = "adjacency") -> tuple[np.ndarray, np.ndarray]:
    """CSR of pymetis's adjacency: ``rows[i]`` lists vertex i's neighbours (any iterable of
    integer ids: a list, an array, a set, a mapping's keys, as pymetis takes them). InputError
    naming ``name[i]`` for the first row that holds anything else (a float, a string, a list),
    as float xadj/adjncy are refused rather than truncated."""
    n = len(rows)
    rows = [rows[i] for i in range(n)] if isinstance(rows, (Sequence, Mapping)) else list(rows)
    try:  # one bulk conversion; rows of other shapes or types are looked at one by one
        lengths = np.fromiter(map(len, rows), dtype=np.int64, count=n)
        if all(isinstance(r, np.ndarray) for r in rows):
            flat = np.concatenate(rows) if n else np.zeros(0, np.int64)
        else:
            flat = np.array(list(chain.from_iterable(rows)))
    except (TypeError, ValueError):
        flat = None
    if flat is None or not _holds_ids(flat):
        lengths, flat = _checked_rows(rows, name)
    xadj = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lengths, out=xadj[1:])
    return xadj, flat.astype(np.int64, copy=False)


def _checked_rows(rows: list, name: str) -> tuple[np.ndarray, np.ndarray]:
    """(row lengths, int64 ids) of ``rows`` converted one by one; InputError naming the first
    row that is not a 1-D iterable of integers that int64 holds."""
    arrays = []
    for i, row in enumerate(rows):
        try:
            a = np.asarray(row if isinstance(row, (Sequence, np.ndarray)) else list(row))
        except (TypeError, ValueError):  # not iterable, or a ragged nested list
            a = None
        if a is None or not _holds_ids(a):
            raise InputError("<input>", f"{name}[{i}] must list integer ids (int64), not "
                                        f"{reprlib.repr(row)}")
        arrays.append(a)
    lengths = np.fromiter(map(len, arrays), dtype=np.int64, count=len(arrays))
    flat = np.concatenate(arrays, dtype=np.int64, casting="unsafe") if arrays else []
    return lengths, np.asarray(flat, dtype=np.int64)


def _holds_ids(a: np.ndarray) -> bool:
    """Whether ``a`` is an empty row or a 1-D row of integers that int64 holds exactly (not
    bools, floats, strings or Python ints beyond int64, which NumPy stores as objects)."""
    if a.ndim != 1 or a.size == 0:
        return a.ndim == 1
    return a.dtype.kind == "i" or (a.dtype.kind == "u" and a.max() <= INT64_MAX)


def _ids(values) -> array.array:
    """Part ids or an ordering as pymetis returns them: an ``array.array`` of int64 ('q')."""
    out = array.array("q")
    out.frombytes(np.ascontiguousarray(values, dtype=np.int64).tobytes())
    return out


def as_graph(
    adjacency: Any = None,
    xadj: Any = None,
    adjncy: Any = None,
    *,
    vweights: Any = None,
    vsize: Any = None,
    eweights: Any = None,
    mtx_weights: bool = False,
    weight: str | None = None,
    warn_on_copies: bool = False,
    symmetrize: bool = False,
) -> tuple[Graph, list | None]:
    """(a validated ``Graph``, the node labels of a networkx input or None) from any graph input.

    Options: ``adjacency`` (adjacency lists or mapping, ``CSRAdjacency``, ``Graph``,
    scipy.sparse, networkx) or ``xadj`` and ``adjncy``; ``vweights`` (n or (n, ncon) vertex
    weights), ``vsize`` (vertex sizes for the volume objective), ``eweights`` (one per adjacency
    entry); ``mtx_weights`` (scipy: |a_ij| as edge weights); ``weight`` (networkx: the edge
    attribute of the weights); ``warn_on_copies`` (BytesWarning for each array converted);
    ``symmetrize`` (CSR inputs: add missing reverse edges instead of raising InputError).
    TypeError for both or neither of adjacency and xadj/adjncy; InputError for a bad graph.
    """
    labels = None
    if adjacency is not None and (xadj is not None or adjncy is not None):
        raise TypeError("may not pass xadj/adjncy if adjacency is passed")
    if isinstance(adjacency, Graph):
        graph = adjacency
    elif is_scipy_sparse(adjacency):
        graph = from_scipy(adjacency, weights=mtx_weights)
    elif is_networkx(adjacency):
        graph, labels = from_networkx(adjacency, weight=weight)
    else:
        if adjacency is None and (xadj is None or adjncy is None):
            raise TypeError("must pass xadj/adjncy if adjacency is not passed")
        if isinstance(adjacency, CSRAdjacency) or hasattr(adjacency, "adj_starts"):
            xadj, adjncy = adjacency.adj_starts, adjacency.adjacent
        elif adjacency is not None:
            xadj, adjncy = _rows_to_csr(adjacency)
        if warn_on_copies:
            for name, value in (("xadj", xadj), ("adjncy", adjncy), ("vwgt", vweights),
                                ("vsize", vsize), ("adjwgt", eweights)):
                _warn_copy(name, value)
        # a repeated neighbour counts once per entry, as METIS (and so pymetis) counts it
        return validated_graph(np.asarray(xadj), np.asarray(adjncy),
                               _vwgt(vweights, len(xadj) - 1), eweights, vsize=vsize,
                               symmetrize=symmetrize, sum_repeats=True), None
    if vweights is not None or vsize is not None or eweights is not None:
        graph = Graph.from_csr(graph.xadj, graph.adjncy, _vwgt(vweights, graph.nvtxs),
                               graph.adjwgt if eweights is None else eweights,
                               vsize=vsize, name=graph.name)
    return graph, labels


def _vwgt(vweights, n: int):
    """``vweights`` as given (the validation checks its integers and shape), an empty one of
    an empty graph as (0, 1)."""
    if vweights is None:
        return None
    vwgt = np.asarray(vweights)
    return vwgt.reshape(0, 1) if n == 0 and vwgt.size == 0 else vwgt


def _tpwgts(tpwgts, nparts: int) -> tuple[float, ...] | None:
    """pymetis's checks of ``tpwgts``: one per part, none negative; normalised to sum 1."""
    if tpwgts is None or len(tpwgts) == 0:
        return None
    if len(tpwgts) != nparts:
        raise RuntimeError("The length of tpwgts mismatches `nparts`")
    values = np.asarray(tpwgts, dtype=np.float64)
    if (values < 0).any():
        raise ValueError("The values of tpwgts should be non-negative")
    return tuple((values / values.sum()).tolist())


def part_graph(
    nparts: int,
    adjacency: Any = None,
    xadj: Any = None,
    adjncy: Any = None,
    *,
    vweights: Any = None,
    vsize: Any = None,
    eweights: Any = None,
    tpwgts: Sequence[float] | None = None,
    recursive: bool | None = None,
    contiguous: bool | None = None,
    options: Any = None,
    warn_on_copies: bool = False,
    mtx_weights: bool = False,
    weight: str | None = None,
    symmetrize: bool = True,
) -> GraphPartition:
    """Partition a graph into ``nparts`` parts, as ``pymetis.part_graph`` does.

    Returns ``GraphPartition(edge_cuts, vertex_part)``: edge_cuts is METIS's objective (the
    communication volume under objtype vol), vertex_part an ``array.array`` of int64 as
    pymetis's, a list of zeros for nparts=1 as pymetis's (a dict keyed by node for a networkx
    graph).

    Options: the graph (see ``as_graph``: ``adjacency`` or ``xadj``/``adjncy``, ``vweights``,
    ``vsize``, ``eweights``, ``mtx_weights``, ``weight``, ``warn_on_copies``; ``symmetrize``,
    True by default as METIS and pymetis take a CSR that lacks reverse edges: they are added,
    False makes them an InputError); ``tpwgts``
    (target fraction per part, normalised to sum 1); ``recursive`` (True: recursive
    bisection, False: k-way; None: pymetis's rule, recursive bisection for nparts <= 8, unless
    ``options`` names a ptype, chooses the gpu or cpu engine, or the graph has several
    constraints: then k-way); ``contiguous``
    (pymetis's deprecated spelling of ``options.contig``); ``options``: a ``gpmetis.Options``
    or ``pymetis.Options`` (METIS's codes), a ``gpmetis.options.Options``, or a mapping of its
    names (``ufactor``, ``seed``, ``engine``, ...). Raises as pymetis does for a bad
    ``numbering``, tpwgts length or sign, a contig set twice; OptionError/InputError otherwise.
    """
    check_numbering(options)
    graph, labels = as_graph(adjacency, xadj, adjncy, vweights=vweights, vsize=vsize,
                             eweights=eweights, mtx_weights=mtx_weights, weight=weight,
                             warn_on_copies=warn_on_copies, symmetrize=symmetrize)
    run, names_ptype = run_options(options)
    changes: dict[str, Any] = {}
    if contiguous:
        if run.contig:
            raise RuntimeError("Contiguous setting should be specified either through "
                               "`options` OR through the `contiguous` flag.")
        changes["contig"] = True
    if recursive is None and not names_ptype:
        # pymetis's rule; multi-constraint graphs (beyond pymetis) run k-way, which the gpu
        # and cpu engines also offer for them (their -ptype=rb is METIS's only)
        recursive = (nparts <= RECURSIVE_MAX_NPARTS and run.engine in ("auto", "metis")
                     and graph.ncon == 1)
    if recursive is not None:
        changes["ptype"] = "rb" if recursive else "kway"
    weights = _tpwgts(tpwgts, nparts)
    if weights is not None:
        changes["tpwgts"] = weights
    if nparts == 1:  # a list, as pymetis answers without calling METIS
        return GraphPartition(0, dict.fromkeys(labels, 0) if labels is not None
                              else [0] * graph.nvtxs)
    run = run.with_(**changes)
    result = _partition(graph, nparts, run)
    # METIS's objective value, as pymetis reports it: the volume under objtype vol
    objective = result.volume if run.objtype == "vol" else result.edgecut
    if labels is not None:
        return GraphPartition(objective, dict(zip(labels, result.part.tolist())))
    return GraphPartition(objective, _ids(result.part))


def partition_inputs(graph: Any, options: Any, *, mtx_weights: bool = False,
                     weight: str | None = None) -> tuple[Graph, list | None, RunOptions]:
    """(the validated ``Graph``, a networkx input's node labels or None, the run's options) of
    ``partition``'s and ``partition_edges``' inputs: any graph input of ``as_graph``, options
    as ``run_options`` takes them."""
    g, labels = as_graph(graph, mtx_weights=mtx_weights, weight=weight)
    run, _ = run_options(options)
    return g, labels, run


def partition(graph: Any, nparts: int, options: Any = None, *, mtx_weights: bool = False,
              weight: str | None = None, **kwargs: Any) -> Result:
    """Partition ``graph`` (a ``Graph``, scipy.sparse matrix or array, networkx graph, or
    ``CSRAdjacency``) into ``nparts`` parts with gpmetis's engines.

    Options: ``options`` (a ``gpmetis.options.Options``, a mapping of its names, or a
    METIS-style ``gpmetis.Options``/``pymetis.Options``); ``kwargs``: METIS option names and
    gpmetis's own (ptype, objtype, ctype, iptype, rtype, ufactor, niter, ncuts, seed, no2hop,
    minconn, contig, tpwgts, ubvec, dbglvl, engine, preset); ``mtx_weights`` (scipy: |a_ij| as edge
    weights); ``weight`` (networkx: the edge attribute of the weights). Returns a ``Result``
    (part, edgecut, volume, imbalance, metrics, engine, seconds, stats); for a networkx graph
    a ``NodeResult`` whose ``node_part`` is keyed by node.
    """
    g, labels, run = partition_inputs(graph, options, mtx_weights=mtx_weights, weight=weight)
    result = _partition(g, nparts, run, **kwargs)
    if labels is None:
        return result
    return NodeResult(**{f: getattr(result, f) for f in Result.__dataclass_fields__},
                      labels=labels)


def _mesh_arrays(connectivity) -> tuple[np.ndarray, np.ndarray]:
    """(eptr, eind) of a mesh given as a 2-D array, a sequence of node lists, or a ``Mesh``."""
    if hasattr(connectivity, "eptr") and hasattr(connectivity, "eind"):
        return np.asarray(connectivity.eptr, np.int64), np.asarray(connectivity.eind, np.int64)
    if isinstance(connectivity, np.ndarray) and connectivity.ndim == 2:
        ne, per = connectivity.shape
        if ne * per and not _holds_ids(connectivity.ravel()):
            raise InputError("<input>", "connectivity must hold integer node ids (int64), not "
                                        f"{connectivity.dtype}")
        return np.arange(ne + 1, dtype=np.int64) * per, connectivity.astype(np.int64).ravel()
    return _rows_to_csr(connectivity, "connectivity")


def part_mesh(
    n_parts: int,
    connectivity: Any,
    options: Any = None,
    tpwgts: Sequence[float] | None = None,
    gtype: int | None = None,
    ncommon: int = 1,
    *,
    vweights: Any = None,
) -> MeshPartition:
    """Partition a mesh's elements and nodes into ``n_parts`` parts, as ``pymetis.part_mesh``
    (METIS_PartMeshNodal/Dual) does, with gpmetis's engines.

    ``connectivity``: one sequence of 0-based node ids per element (elements may differ in
    size), a 2-D array (ne, nodes per element), or a ``gpmetis.mesh.Mesh``. Returns
    ``MeshPartition(edge_cuts, element_part, vertex_part)`` (``array.array``s of int64 as
    pymetis's, lists of zeros for n_parts < 2 as pymetis's; the cut is that of the graph
    partitioned; nodes that no element holds go to the lightest parts).

    Options: ``options`` (as for ``part_graph``; ptype defaults to k-way as in METIS);
    ``tpwgts`` (target fraction per part); ``gtype`` (``GType.NODAL``, the default: partition
    the nodal graph, then give each element a part; ``GType.DUAL``: partition the dual graph,
    then give each node a part); ``ncommon`` (dual graph: nodes two elements share to be
    adjacent); ``vweights`` (weights of the partitioned graph's vertices: elements for dual,
    nodes for nodal).
    """
    check_numbering(options)
    eptr, eind = _mesh_arrays(connectivity)
    ne = len(eptr) - 1
    if len(eind) and eind.min() < 0:
        raise ValueError("node ids must be 0-based, non-negative integers")
    nn = mesh_node_count(eptr, eind, "connectivity")
    weights = _tpwgts(tpwgts, n_parts)
    if n_parts < 2:  # lists, as pymetis answers without calling METIS
        return MeshPartition(0, [0] * ne, [0] * nn)
    gtype = GType.NODAL if gtype is None else GType(int(gtype))
    run, _ = run_options(options)
    if weights is not None:
        run = run.with_(tpwgts=weights)
    result, epart, npart = part_mesh_graph(
        Mesh(eptr, eind, nn), n_parts, run, gtype="dual" if gtype == GType.DUAL else "nodal",
        ncommon=ncommon, vweights=vweights)
    return MeshPartition(result.edgecut, _ids(epart), _ids(npart))


def part_mesh_graph(mesh: Any, nparts: int, options: Any, *, gtype: str = "dual",
                    ncommon: int = 1, vweights: Any = None) -> tuple[Result, np.ndarray,
                                                                       np.ndarray]:
    """(the graph's ``Result``, element parts, node parts) of a ``gpmetis.mesh.Mesh``.

    Options: ``options`` (a ``gpmetis.options.Options``; tpwgts apply to both sides);
    ``gtype`` ("dual": partition the dual graph, whose vertices weigh the mesh's element
    weights, then give each node a part; "nodal": partition the nodal graph, then give each
    element a part); ``ncommon`` (dual graph: nodes two elements share to be adjacent);
    ``vweights`` (weights of the partitioned graph's vertices, instead of the element weights).
    """
    eptr, eind, nn, ne = mesh.eptr, mesh.eind, mesh.nn, mesh.ne
    if gtype == "dual":
        graph = dual_graph(eptr, eind, nn, ncommon, name=mesh.name)
        if vweights is None and mesh.ewgt is not None:
            vweights = mesh.ewgt
    else:
        graph = nodal_graph(eptr, eind, nn, name=mesh.name)
    if vweights is not None:
        graph = Graph.from_csr(graph.xadj, graph.adjncy, _vwgt(vweights, graph.nvtxs),
                               name=mesh.name)
    result = _partition(graph, nparts, options)
    fractions = None
    if options.tpwgts is not None:
        fractions = load_tpwgts(options, nparts, graph.ncon)[:, 0]
    if gtype == "dual":
        epart = result.part
        order = np.argsort(eind, kind="stable")
        nptr = np.zeros(nn + 1, np.int64)
        np.cumsum(np.bincount(eind, minlength=nn), out=nptr[1:])
        elem = np.repeat(np.arange(ne), np.diff(eptr))
        npart = induce_partition(nptr, elem[order], epart, nparts, fractions)
    else:
        npart = result.part
        epart = induce_partition(eptr, eind, npart, nparts, fractions)
    return result, epart, npart


def nested_dissection(
    adjacency: Any = None,
    xadj: Any = None,
    adjncy: Any = None,
    vweights: Any = None,
    options: Any = None,
    *,
    mtx_weights: bool = False,
) -> tuple[Any, Any]:
    """A fill-reducing ordering by multilevel nested dissection (METIS_NodeND, run by METIS
    through pymetis), as ``pymetis.nested_dissection``: returns ``(perm, iperm)``,
    ``array.array``s of int64 as pymetis's, with
    ``perm[iperm[i]] == i``; vertex ``perm[k]`` is eliminated k-th. For a networkx graph:
    (nodes in elimination order, a dict of each node's position).

    Options: the graph (see ``as_graph``), ``vweights``, ``options`` (a ``gpmetis.Options`` or
    ``pymetis.Options``: ctype, iptype, rtype, ufactor, pfactor, nseps, niter, seed, no2hop,
    compress, ccorder, dbglvl), ``mtx_weights`` (accepted for scipy inputs; orderings ignore
    edge weights).
    """
    import pymetis

    check_numbering(options)
    graph, labels = as_graph(adjacency, xadj, adjncy, vweights=vweights,
                             mtx_weights=mtx_weights, symmetrize=True)
    opts = pymetis.Options()
    if options is not None:
        for name, value in metis_values(options).items():
            setattr(opts, name, value)
    vwgt = graph.vwgt[:, 0] if graph.has_vwgt else None
    if graph.nvtxs == 0:  # METIS_NodeND divides by zero on it (SIGFPE): nothing to order
        perm, iperm = [], []
    else:
        perm, iperm = pymetis.nested_dissection(
            pymetis.CSRAdjacency(metis_index(graph.xadj), metis_index(graph.adjncy)),
            vweights=metis_index(vwgt), options=opts)
    if labels is not None:
        return (np.asarray(labels, dtype=object)[np.asarray(perm, dtype=np.int64)].tolist(),
                dict(zip(labels, iperm)))
    return _ids(perm), _ids(iperm)
