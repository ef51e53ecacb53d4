"""The balance constraint with METIS's definition: part weight <= ubfactor * tpwgts * total."""

from __future__ import annotations

import numpy as np

EPS = 1e-9


def uniform_tpwgts(nparts: int, ncon: int = 1) -> np.ndarray:
    return np.full((nparts, ncon), 1.0 / nparts)


def max_part_weights(total: np.ndarray, tpwgts: np.ndarray, ubfactors) -> np.ndarray:
    """(nparts, ncon) int64 limits: floor(ub[c] * tpwgts[p, c] * total[c]), but never below
    ceil(tpwgts[p, c] * total[c]): with integer weights that much may be unavoidable (e.g. 1490
    unit vertices in 64 parts need a part of 24 > 1.03 * 23.28)."""
    ub = np.asarray(ubfactors, dtype=np.float64)[None, :]
    target = tpwgts * np.asarray(total, dtype=np.float64)[None, :]
    limits = np.maximum(np.floor(ub * target + EPS), np.ceil(target - EPS))
    return limits.astype(np.int64)


def column_sums(vwgt: np.ndarray) -> np.ndarray:
    """The int64 total of each column of the (n, ncon) ``vwgt``: a pass per column, several
    times faster than NumPy's reduction over the long axis of a narrow array."""
    return np.array([int(vwgt[:, c].sum(dtype=np.int64)) for c in range(vwgt.shape[1])],
                    dtype=np.int64)
