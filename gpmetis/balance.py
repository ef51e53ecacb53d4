"""The balance constraint with METIS's definition: part weight <= ubfactor * tpwgts * total."""

from __future__ import annotations

import numpy as np

EPS = 1e-9


def uniform_tpwgts(nparts: int, ncon: int = 1) -> np.ndarray:
    return np.full((nparts, ncon), 1.0 / nparts)


def max_part_weights(total: np.ndarray, tpwgts: np.ndarray, ubfactors) -> np.ndarray:
    """(nparts, ncon) int64 limits: floor(ub[c] * tpwgts[p, c] * total[c])."""
    ub = np.asarray(ubfactors, dtype=np.float64)[None, :]
    limits = np.floor(ub * tpwgts * np.asarray(total, dtype=np.float64)[None, :] + EPS)
    return limits.astype(np.int64)


def is_balanced(pwgts: np.ndarray, limits: np.ndarray) -> bool:
    return bool((np.asarray(pwgts) <= limits).all())
