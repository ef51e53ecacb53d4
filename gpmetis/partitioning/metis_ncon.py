"""METIS's own multi-constraint partitioning, called in the METIS that pymetis's wheel carries.

pymetis's ``part_graph`` fixes ncon to 1, but its extension module exports METIS's C entry
points ``METIS_PartGraphKway`` and ``METIS_PartGraphRecursive``, which take ncon weights per
vertex, a target per part and constraint and an imbalance per constraint. ``ctypes`` calls them
with arrays of the widths that build chose for ``idx_t`` and ``real_t``, probed once per process
(``_Library.load``) by functions that only write memory. The arguments are made ones METIS
accepts (it prints its input errors on stdout): targets above zero, summing to 1 per
constraint, and imbalances of at least MIN_UBFACTOR. The multi-constraint initial partition
calls them for its trials, the metis engine for what pymetis cannot pass (several constraints,
vertex sizes, an imbalance per constraint).
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from functools import cache

import numpy as np

from gpmetis.errors import PartitionError

METIS_NOPTIONS = 40  # the length of METIS's options array
METIS_OK = 1
PROBE_WORD = 0x0102030405060708
MIN_TARGET = 1e-6  # the least target fraction given to METIS
MIN_UBFACTOR = 1.001  # the least imbalance factor given to METIS


@dataclass(frozen=True)
class _Library:
    kway: object
    recursive: object
    index: type  # numpy dtype of idx_t
    real: type  # numpy dtype of real_t
    option_index: object  # pymetis's name -> METIS option index

    @staticmethod
    def load() -> _Library | None:
        """The entry points with their argument widths, or None where pymetis does not export
        them."""
        try:
            import pymetis
            from pymetis import _internal

            lib = ctypes.CDLL(_internal.__file__)
            kway, recursive = lib.METIS_PartGraphKway, lib.METIS_PartGraphRecursive
            set_defaults, rcopy = lib.METIS_SetDefaultOptions, lib.libmetis__rcopy
            option_index = pymetis._options_get_index
        except (ImportError, OSError, AttributeError):
            return None
        # METIS_SetDefaultOptions writes METIS_NOPTIONS idx_t of -1: all 40 int64 words with a
        # 64-bit idx_t, the first 20 with a 32-bit one
        words = np.zeros(METIS_NOPTIONS, dtype=np.int64)
        set_defaults(words.ctypes.data_as(ctypes.c_void_p))
        index = np.int64 if words[-1] == -1 else np.int32
        # rcopy(1, a, b) copies one real_t: 4 or 8 of a's bytes
        source = np.array([PROBE_WORD], dtype=np.uint64)
        target = np.zeros(1, dtype=np.uint64)
        rcopy(ctypes.c_size_t(1), source.ctypes.data_as(ctypes.c_void_p),
              target.ctypes.data_as(ctypes.c_void_p))
        real = np.float64 if target[0] == source[0] else np.float32
        kway.restype = recursive.restype = ctypes.c_int
        return _Library(kway, recursive, index, real, option_index)


@cache
def _load() -> _Library | None:
    return _Library.load()


def available() -> bool:
    """True when this process's pymetis exports METIS's entry points."""
    return _load() is not None


def require() -> _Library:
    """METIS's entry points in this process; PartitionError where pymetis does not export
    them."""
    lib = _load()
    if lib is None:
        raise PartitionError("this pymetis does not export METIS_PartGraphKway and "
                             "METIS_PartGraphRecursive, which multi-constraint graphs and vertex "
                             "sizes need")
    return lib


def part_graph(xadj: np.ndarray, adjncy: np.ndarray, adjwgt: np.ndarray | None,
               weights: np.ndarray, nparts: int, tpwgts: np.ndarray | None,
               ubvec: np.ndarray | None, *, options: dict[str, int], recursive: bool = False,
               vsize: np.ndarray | None = None) -> tuple[np.ndarray, int]:
    """(partition int32, METIS's objective: edge cut or volume) of the graph with (ncon, n)
    ``weights`` into ``nparts`` parts of targets ``tpwgts`` ((nparts, ncon) fractions; None:
    equal), constraint c of every part within ``ubvec[c]`` times its target (None: METIS's
    ufactor) where METIS reaches it: its k-way scheme, or its recursive bisection.
    ``options``: METIS option values by pymetis's names (seed, niter, ufactor, ...); None
    ``adjwgt``/``vsize``: ones. PartitionError where METIS cannot be called or fails."""
    lib = require()
    if tpwgts is not None:
        tpwgts = np.maximum(np.asarray(tpwgts, dtype=np.float64), MIN_TARGET)
        tpwgts = tpwgts / tpwgts.sum(axis=0)
    idx = lib.index
    ncon, n = weights.shape

    def ref(a: np.ndarray | None):
        return None if a is None else a.ctypes.data_as(ctypes.c_void_p)

    def indices(a: np.ndarray | None) -> np.ndarray | None:
        return None if a is None else np.ascontiguousarray(a, dtype=idx)

    arrays = [indices(a) for a in (xadj, adjncy, np.asarray(weights).T, vsize, adjwgt)]
    reals = [None if tpwgts is None else np.ascontiguousarray(tpwgts, dtype=lib.real),
             None if ubvec is None
             else np.maximum(np.asarray(ubvec, dtype=np.float64), MIN_UBFACTOR).astype(lib.real)]
    settings = np.full(METIS_NOPTIONS, -1, dtype=idx)
    for name, value in options.items():
        settings[lib.option_index(name)] = value
    n_, ncon_, nparts_ = (np.array([v], dtype=idx) for v in (n, ncon, nparts))
    objval = np.zeros(1, dtype=idx)
    part = np.zeros(n, dtype=idx)
    function = lib.recursive if recursive else lib.kway
    status = function(ref(n_), ref(ncon_), *(ref(a) for a in arrays), ref(nparts_),
                      *(ref(a) for a in reals), ref(settings), ref(objval), ref(part))
    if status != METIS_OK:
        raise PartitionError(f"METIS failed on this graph and options (status {status})")
    return part.astype(np.int32), int(objval[0])
