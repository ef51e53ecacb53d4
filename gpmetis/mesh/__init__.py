"""Finite element meshes: METIS's mesh files, their dual and nodal graphs, induced partitions."""

from gpmetis.mesh.graphs import dual_graph, induce_partition, nodal_graph
from gpmetis.mesh.io import Mesh, graph_bytes, read_mesh

__all__ = ["Mesh", "dual_graph", "graph_bytes", "induce_partition", "nodal_graph", "read_mesh"]
