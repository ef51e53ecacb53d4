"""Distributed runs: several ranks (MPI processes, one per GPU) holding a graph in pieces. The
names load on first use: ``gpmetis`` imports ``comm`` at start-up, and a small graph's METIS
run must not load the multilevel engine."""

from __future__ import annotations

import importlib
from typing import Any

_WHERE = {"Comm": "comm", "DistGraph": "dgraph", "DistResult": "partition",
          "partition_distributed": "partition"}
__all__ = list(_WHERE)


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
