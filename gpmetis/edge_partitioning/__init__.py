"""Edge partitioning by split-and-connect (SPAC): every edge in exactly one part, few vertex
copies. ``partition_edges`` is the entry point; ``command`` is the ``-edgepart`` CLI branch."""

from gpmetis.edge_partitioning.driver import EdgeResult, NodeEdgeResult, partition_edges

__all__ = ["EdgeResult", "NodeEdgeResult", "partition_edges"]
