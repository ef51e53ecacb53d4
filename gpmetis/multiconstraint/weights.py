"""The weights of a multi-constraint graph as the pipeline holds them, and their limits."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpmetis.backend import Backend
from gpmetis.balance import max_part_weights
from gpmetis.errors import PartitionError

INT32_MAX = np.iinfo(np.int32).max
GUIDE_SCALE_MAX = 1 << 20
SCALAR_RANGE = 1 << 16  # a scalarised weight of a vertex holding a whole constraint
GUIDE_SCALE_MIN = 64  # below this the guide's rounding would distort the cluster limits


@dataclass(frozen=True)
class Balance:
    """Per-constraint part weight limits (ncon, nparts) and totals (ncon,), int64 on the host;
    ``adjacent_only``: the refinement's rebalancing moves vertices only to adjacent parts
    (under -contig: a move to a distant part splits that part).

    ``excess`` measures how far part weights are over their limits in a single number: each
    constraint's excess over its total, summed (METIS normalises constraints the same way)."""

    limits: np.ndarray
    totals: np.ndarray
    adjacent_only: bool = False

    @classmethod
    def of(cls, totals: np.ndarray, tpwgts: np.ndarray, ubvec,
           adjacent_only: bool = False) -> Balance:
        """``tpwgts`` (nparts, ncon) fractions, ``ubvec`` one imbalance factor per constraint."""
        totals = np.asarray(totals, dtype=np.int64)
        return cls(max_part_weights(totals, tpwgts, ubvec).T.copy(), totals, adjacent_only)

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
        targets = np.maximum(self.limits.sum(axis=1), 1)
        return float(min(1.0, (targets / np.maximum(self.totals, 1)).min() - 1.0))


def scalarised(weights: np.ndarray, totals: np.ndarray, use_max: bool) -> np.ndarray:
    """One int64 weight per vertex from (ncon, n) weights, for METIS, which balances one: the
    sum (or the largest) of each constraint's share of its total, scaled so that no vertex of
    weight gets zero."""
    shares = weights / np.maximum(totals, 1)[:, None]
    combined = shares.max(axis=0) if use_max else shares.sum(axis=0)
    scale = SCALAR_RANGE * weights.shape[1] / max(float(combined.sum()), 1e-300)
    return np.where(combined > 0, np.maximum(np.rint(combined * scale), 1), 0).astype(np.int64)


def upload_weights(be: Backend, vwgt: np.ndarray):
    """(the (n, ncon) int64 host weights as an (ncon, n) int32 array on ``be``, each
    constraint's total); each total must stay below 2^31, as the single-constraint engines
    require. The int64 array crosses as it is, then is narrowed and transposed on the backend,
    where its totals are summed too: on the host, the narrowing and a narrow array's column
    sums cost more than copying the wider array."""
    wide = be.xp.ascontiguousarray(be.upload(vwgt, np.int64).T)
    totals = be.asnumpy(wide.sum(axis=1)).astype(np.int64)
    if (totals > INT32_MAX).any():
        raise PartitionError("a constraint's total vertex weight exceeds 2^31-1, beyond the gpu "
                             "and cpu engines")
    return wide.astype(be.xp.int32), totals


def guide_weights(be: Backend, weights, totals: np.ndarray,
                  cluster_limits: np.ndarray) -> tuple[object, int]:
    """(guide, scale): guide[v] = ceil(scale * max_c weights[c, v] / cluster_limits[c]) (int32
    on ``be``) from the (ncon, n) ``weights`` on ``be`` and their ``totals``.

    A cluster whose guide weights sum to at most ``scale`` is within every constraint's cluster
    limit, so single-weight coarsening with maxvwgt = scale honours all of them. ``scale`` keeps
    the guide's total below 2^31."""
    xp = be.xp
    n = weights.shape[1]
    limits = np.maximum(np.asarray(cluster_limits, dtype=np.float64), 1.0)
    per_unit = totals / limits  # guide total per unit of scale, at most
    scale = int(min(GUIDE_SCALE_MAX, (INT32_MAX - n) // max(2 * per_unit.sum(), 1.0)))
    if scale < GUIDE_SCALE_MIN:
        raise PartitionError("the graph is too large for the multi-constraint coarsening's "
                             "32-bit cluster weights")
    ratio = xp.zeros(n, dtype=xp.float64)
    for c in range(len(weights)):
        xp.maximum(ratio, weights[c] / float(limits[c]), out=ratio)
    ratio *= scale
    return xp.ceil(ratio, out=ratio).astype(xp.int32), scale


def coarse_weights(be: Backend, weights, cmap, nc: int):
    """The (ncon, nc) int32 weights of the next coarser level: each constraint summed over
    ``cmap``."""
    xp = be.xp
    return xp.stack([be.bin_sums(cmap, nc, w).astype(xp.int32) for w in weights])


def part_weights(be: Backend, weights, part, nparts: int):
    """(ncon, nparts) int64 part weights on ``be``."""
    return be.xp.stack([be.bin_sums(part, nparts, w) for w in weights])
