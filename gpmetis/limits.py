"""What each engine can add up without wrapping, checked exactly before it runs.

The graph's own totals fit an int64 (``gpmetis.io.validate`` refuses the rest); each engine
holds less or more:

- ``gpu``/``cpu``: vertex and edge weights, per-vertex sums and degrees in int32, part weights in
  int64. Every such sum is at most the graph's total vertex weight or total edge weight (each
  edge counted twice), so both totals must stay within 2^31-1.
- ``metis``: METIS's idx_t, an int64 in pymetis (``pymetis._internal._idx_type_width()`` is 64):
  its cut, part weights and volume are at most the graph's totals, which fit an int64.
- every engine: NPARTS times the heaviest vertex (a balance bound) within an int64.
"""

from __future__ import annotations

from gpmetis.errors import PartitionError
from gpmetis.graph import Graph
from gpmetis.io.validate import INT64_MAX, check_weight_totals, weight_totals

MULTILEVEL_MAX = 2**31 - 1  # the gpu and cpu engines' int32 sums
ENGINE_MAX = {"gpu": MULTILEVEL_MAX, "cpu": MULTILEVEL_MAX, "metis": INT64_MAX}


def check_limits(graph: Graph, nparts: int, engine: str) -> None:
    """Raise InputError when the graph's totals pass an int64 (a graph not built by the
    checking readers), PartitionError (naming the limit) when they pass what ``engine`` holds;
    the totals are exact."""
    totals = weight_totals(graph.xadj, graph.vwgt if graph.has_vwgt else None,
                           graph.adjwgt if graph.has_adjwgt else None, graph.vsize)
    check_weight_totals(totals, graph.name)
    if nparts * totals.heaviest > INT64_MAX:
        raise PartitionError(f"{nparts} parts times the heaviest vertex weight "
                             f"{totals.heaviest} passes 2^63-1 = {INT64_MAX}")
    limit = ENGINE_MAX[engine]
    if limit == INT64_MAX:
        return
    for what, total in (("total vertex weight", max(totals.vwgt)),
                        ("total edge weight (each edge counted in both directions)",
                         totals.adjwgt)):
        if total > limit:
            raise PartitionError(f"the {what} is {total}, beyond 2^31-1 = {limit}, the most "
                                 f"the {engine} engine holds; use -engine=metis")


def multilevel_fits(graph: Graph) -> bool:
    """Whether the gpu and cpu engines hold ``graph``'s totals (for ``-engine=auto``)."""
    totals = weight_totals(graph.xadj, graph.vwgt if graph.has_vwgt else None,
                           graph.adjwgt if graph.has_adjwgt else None, None)
    return max(totals.vwgt) <= MULTILEVEL_MAX and totals.adjwgt <= MULTILEVEL_MAX
