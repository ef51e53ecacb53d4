"""The balance constraint with METIS's definition: part weight <= ubfactor * tpwgts * total."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from gpmetis.backend import FLOAT_EXACT

EPS = 1e-9
INT64_MAX = int(np.iinfo(np.int64).max)
# no limit passes this or the total, whichever is larger (a part never weighs more than the
# total): the engines' books add a limit, a fifth of it and the total in int64
LIMIT_CAP = 2**62
MANTISSA_BITS = 53  # a positive float64 x is m / 2^s with integers m < 2^53 and s


def uniform_tpwgts(nparts: int, ncon: int = 1) -> np.ndarray:
    return np.full((nparts, ncon), 1.0 / nparts)


def max_part_weights(total: np.ndarray, tpwgts: np.ndarray, ubfactors) -> np.ndarray:
    """(nparts, ncon) int64 limits: floor(ub[c] * tpwgts[p, c] * total[c]), but never below
    ceil(tpwgts[p, c] * total[c]): with integer weights that much may be unavoidable (e.g. 1490
    unit vertices in 64 parts need a part of 24 > 1.03 * 23.28); at most the larger of
    LIMIT_CAP and the total. A total
    below 2^53 is computed in float64 (EPS absorbs its rounding), a larger one exactly from the
    float64 values of ub and tpwgts."""
    total = np.asarray(total, dtype=np.int64)
    tpwgts = np.asarray(tpwgts, dtype=np.float64)
    ub = np.asarray(ubfactors, dtype=np.float64)
    target = tpwgts * total.astype(np.float64)[None, :]
    limits = np.maximum(np.floor(ub[None, :] * target + EPS), np.ceil(target - EPS))
    over = limits >= 2.0**63  # the least float64 past INT64_MAX
    limits = np.where(over, 0, limits).astype(np.int64)
    limits[over] = INT64_MAX
    for c in np.flatnonzero(total >= FLOAT_EXACT):
        limits[:, c] = _exact_limits(int(total[c]), tpwgts[:, c], float(ub[c]))
    return np.minimum(limits, np.maximum(total, LIMIT_CAP)[None, :])


def _exact_limits(total: int, tpwgts: np.ndarray, ub: float) -> np.ndarray:
    """max(floor(ub * t * total), ceil(t * total)), at most INT64_MAX, for each t of
    ``tpwgts`` (positive), ub and t taken exactly (in Python integers: the products pass
    2^64); once per distinct t."""
    values, inverse = np.unique(tpwgts, return_inverse=True)
    frac, exp = np.frexp(values)
    mant = np.ldexp(frac, MANTISSA_BITS).astype(np.int64).astype(object)  # t = mant / scale
    scale = np.left_shift(1, (MANTISSA_BITS - exp).astype(object))
    ub_num, ub_den = ub.as_integer_ratio()
    bound = (ub_num * total * mant) // (ub_den * scale)
    need = -((-total * mant) // scale)
    limits = np.minimum(np.maximum(bound, need), INT64_MAX).astype(np.int64)
    return limits[inverse.reshape(-1)]


@dataclass(frozen=True)
class Balance:
    """What the refinement of one level keeps: per-constraint part weight limits (ncon, nparts)
    and totals (ncon,), int64 on the host. ``adjacent_only``: the multi-constraint rebalancing
    moves vertices only to adjacent parts (under -contig and inside a depth of recursive
    bisection); ``group_size``: Jet's rebalancing keeps vertices in their group of that many
    parts (0: no groups).

    ``excess`` measures how far part weights are over their limits in a single number: each
    constraint's excess over its total, summed (METIS normalises constraints the same way)."""

    limits: np.ndarray
    totals: np.ndarray
    adjacent_only: bool = False
    group_size: int = 0
    _on_device: dict = field(default_factory=dict, init=False, compare=False, repr=False)

    @classmethod
    def of(cls, totals: np.ndarray, tpwgts: np.ndarray, ubvec,
           adjacent_only: bool = False) -> Balance:
        """``tpwgts`` (nparts, ncon) fractions, ``ubvec`` one imbalance factor per constraint."""
        totals = np.asarray(totals, dtype=np.int64)
        return cls(max_part_weights(totals, tpwgts, ubvec).T.copy(), totals, adjacent_only)

    @property
    def nparts(self) -> int:
        return self.limits.shape[1]

    def limits_on(self, be):
        """The first constraint's limits (nparts,) on ``be``'s array module, copied once and
        shared by every level's refiner."""
        if be.name not in self._on_device:
            self._on_device[be.name] = be.asarray(self.limits[0])
        return self._on_device[be.name]

    @property
    def ncon(self) -> int:
        return len(self.totals)

    def excess(self, pwgts: np.ndarray) -> float:
        """Summed in one fixed order, as the device loop sums it (refinement_device.cu): per
        constraint the integer excess of its parts over its total, then the constraints."""
        over = np.maximum(np.asarray(pwgts) - self.limits, 0)
        total = 0.0
        for c in range(self.ncon):
            total += int(over[c].sum()) / max(int(self.totals[c]), 1)
        return total

    def slack_share(self) -> float:
        """The smallest allowed imbalance of any constraint, as a share of its total (e.g.
        0.03 for ubvec 1.03): the excess scale of one whole part's slack, times nparts."""
        targets = np.maximum(self.limits.sum(axis=1, dtype=np.float64), 1)
        return float(min(1.0, (targets / np.maximum(self.totals, 1)).min() - 1.0))
