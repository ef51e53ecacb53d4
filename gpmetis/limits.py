"""What each engine can add up without wrapping, checked exactly before it runs.

The graph's own totals fit an int64 (``gpmetis.validation`` refuses the rest); each engine
holds less or more:

- ``gpu``/``cpu``: vertex and edge weights, and each vertex's sums over its edges (gains,
  connectivity, its weighted degree), in int32 at every level: no vertex may weigh more than
  2^31-1, nor its edges together (coarsening keeps both bounds on the levels it makes). Part
  weights, cuts, totals and every other sum over many vertices or edges are int64: fewer than
  2^31 vertices of at most 2^31-1 keep every total below 2^62, which leaves the books room for
  a part's limit plus a fifth of it. Vertex sizes times degrees, the bound of every volume,
  stay within 2^61.
- ``metis``: METIS's idx_t, an int64 in pymetis (``pymetis._internal._idx_type_width()`` is 64):
  its cut, part weights and volume are at most the graph's totals, which fit an int64.
- every engine: NPARTS times the heaviest vertex (a balance bound) within an int64.

And the host memory a run of the cpu or metis engine takes beyond the graph itself, which grows
with its vertices and adjacency entries: a run that would not fit what the process can still
allocate is refused before it starts (a file of a few bytes can declare 10^8 vertices), as is a
mesh whose largest node id makes more nodes than fit.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from gpmetis.errors import InputError, PartitionError
from gpmetis.graph import Graph
from gpmetis.io.source import available_memory
from gpmetis.validation import INT64_MAX, check_weight_totals

VERTEX_MAX = 2**31 - 1  # the gpu and cpu engines' int32 vertex weights and weighted degrees
VOLUME_MAX = 2**61  # a volume gain adds up to three vertex size sums, each at most the volume
# peak host bytes of a run beyond the graph, per vertex and per adjacency entry (the gpu
# engine's run is on the device)
RUN_VERTEX_BYTES = {"cpu": 150, "metis": 120}
RUN_ENTRY_BYTES = {"cpu": 80, "metis": 80}
# peak host bytes per mesh node of building a mesh's graphs, its node partition and their files
# (METIS numbers nodes 1..the largest id in the file, used or not)
MESH_NODE_BYTES = 100


def check_limits(graph: Graph, nparts: int, engine: str) -> None:
    """Raise InputError when the graph's totals pass an int64 (a graph not built by the
    checking readers), PartitionError (naming the limit) when they pass what ``engine`` holds;
    the totals are exact."""
    totals = graph.weight_totals
    check_weight_totals(totals, graph.name)
    if nparts * totals.heaviest > INT64_MAX:
        raise PartitionError(f"{graph.name}: {nparts} parts times the heaviest vertex weight "
                             f"{totals.heaviest} passes 2^63-1 = {INT64_MAX}")
    check_run_memory(graph, engine)
    if engine != "metis":
        check_multilevel_sums(graph, totals.volume, engine)


def check_multilevel_sums(graph: Graph, volume: int, engine: str) -> None:
    """PartitionError naming the vertex that weighs more than the multilevel engines hold in
    int32, or whose edges do together; or the ``volume`` bound (vertex sizes times degrees)
    past VOLUME_MAX."""
    if volume > VOLUME_MAX:
        raise PartitionError(f"{graph.name}: the vertex sizes times the degrees add up to "
                             f"{volume}, beyond 2^61 = {VOLUME_MAX}, the most the {engine} "
                             "engine's volume gains hold; use -engine=metis")
    v, weight = graph.heaviest_vertex
    if graph.has_vwgt and weight > VERTEX_MAX:
        _refuse(graph, engine, f"vertex {v + 1} weighs {weight}")
    v, degree = graph.heaviest_degree
    if degree > VERTEX_MAX:
        _refuse(graph, engine, f"the edges of vertex {v + 1} weigh {degree} together")


def _refuse(graph: Graph, engine: str, what: str) -> None:
    raise PartitionError(f"{graph.name}: {what}, beyond 2^31-1 = {VERTEX_MAX}, the most one "
                         f"vertex holds in the {engine} engine; use -engine=metis")


def check_run_memory(graph: Graph, engine: str) -> None:
    """PartitionError naming the graph when a run of the cpu or metis engine needs more host
    memory than the process can still allocate."""
    if engine not in RUN_VERTEX_BYTES:
        return
    need = (graph.nvtxs * RUN_VERTEX_BYTES[engine]
            + 2 * graph.nedges * RUN_ENTRY_BYTES[engine])
    free = available_memory()
    if need > free:
        raise PartitionError(f"{graph.name}: the {engine} engine needs about "
                             f"{need / 2**30:.1f} GiB of memory for {graph.nvtxs} vertices and "
                             f"{graph.nedges} edges; {free / 2**30:.1f} GiB is available")


def mesh_node_count(eptr: np.ndarray, eind: np.ndarray, name: str, *, base: int = 0,
                    line_of: Callable[[int], int] | None = None) -> int:
    """The number of nodes of the mesh ``(eptr, eind)`` (0-based ``eind``): its largest node id
    + 1, as METIS numbers nodes up to the largest id, used or not. InputError when they need
    more host memory than the process can still allocate, naming ``name`` and the element of
    that id: ``name[e]``, or ``name`` and the element's file line ``line_of(e)``; ``base``: the
    first node id in the input's numbering, for the message."""
    if len(eind) == 0:
        return 0
    top = int(np.argmax(eind))
    nn = int(eind[top]) + 1
    need = nn * MESH_NODE_BYTES
    free = available_memory()
    if need > free:
        e = int(np.searchsorted(eptr, top, side="right")) - 1
        where, line = (name, line_of(e)) if line_of is not None else (f"{name}[{e}]", None)
        raise InputError(where, f"node {nn - 1 + base} makes the mesh {nn} nodes (numbered "
                                f"{base} to the largest id, used or not), which need about "
                                f"{need / 2**30:.1f} GiB of memory; {free / 2**30:.1f} GiB is "
                                "available", line)
    return nn


def multilevel_fits(graph: Graph) -> bool:
    """Whether the gpu and cpu engines hold ``graph``'s sums (for ``-engine=auto``)."""
    try:
        check_multilevel_sums(graph, graph.weight_totals.volume, "gpu")
    except PartitionError:
        return False
    return True
