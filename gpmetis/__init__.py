"""gpmetis: METIS-compatible graph partitioning with a GPU multilevel engine.

``read_graph`` loads METIS or Matrix Market files, ``partition`` runs an engine, and
``part_graph`` mirrors ``pymetis.part_graph`` for drop-in use. Names load on first use, so
``import gpmetis`` stays cheap.
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

_EXPORTS = {
    "Graph": "gpmetis.graph",
    "Options": "gpmetis.options",
    "Result": "gpmetis.partitioning.driver",
    "partition": "gpmetis.partitioning.driver",
    "partition_edges": "gpmetis.edge_partitioning",
    "part_graph": "gpmetis.api",
    "read_graph": "gpmetis.io",
    "write_partition": "gpmetis.io",
}

__all__ = [*_EXPORTS, "__version__"]


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'gpmetis' has no attribute {name!r}")
