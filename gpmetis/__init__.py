"""gpmetis: METIS-compatible graph partitioning with a GPU multilevel engine.

``read_graph`` loads METIS or Matrix Market files (``from_scipy`` and ``from_networkx`` build
the same ``Graph`` from those libraries' objects), ``partition`` runs an engine, and the pymetis
names (``part_graph``, ``part_mesh``, ``nested_dissection``, ``Options``, ``CSRAdjacency``,
the enums) behave as pymetis's, so ``import gpmetis as pymetis`` works. ``RunOptions`` is the
options object of the ``gpmetis`` command. Names load on first use, so ``import gpmetis`` stays
cheap.
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

_COMPAT = "gpmetis.pymetis_compat"
_EXPORTS = {
    "Graph": ("gpmetis.graph", "Graph"),
    "RunOptions": ("gpmetis.options", "Options"),
    "Result": ("gpmetis.partitioning.driver", "Result"),
    "NodeResult": ("gpmetis.api", "NodeResult"),
    "partition": ("gpmetis.api", "partition"),
    "partition_edges": ("gpmetis.edge_partitioning", "partition_edges"),
    "NodeEdgeResult": ("gpmetis.edge_partitioning", "NodeEdgeResult"),
    "part_graph": ("gpmetis.api", "part_graph"),
    "part_mesh": ("gpmetis.api", "part_mesh"),
    "nested_dissection": ("gpmetis.api", "nested_dissection"),
    "read_graph": ("gpmetis.io", "read_graph"),
    "write_partition": ("gpmetis.io", "write_partition"),
    "from_scipy": ("gpmetis.interop", "from_scipy"),
    "from_networkx": ("gpmetis.interop", "from_networkx"),
    "read_mesh": ("gpmetis.mesh", "read_mesh"),
    **{name: (_COMPAT, name) for name in (
        "Options", "CSRAdjacency", "GraphPartition", "MeshPartition", "verify_nd",
        "zero_copy_dtype", "OPType", "OptionKey", "PType", "GType", "CType", "IPType", "RType",
        "DebugLevel", "ObjType", "Status")},
}

__all__ = [*_EXPORTS, "__version__", "version", "version_tuple"]

# pymetis's names for the version
version = __version__
version_tuple = tuple(int(p) for p in __version__.split("."))


def __getattr__(name: str):
    if name in _EXPORTS:
        module, attr = _EXPORTS[name]
        return getattr(importlib.import_module(module), attr)
    raise AttributeError(f"module 'gpmetis' has no attribute {name!r}")
