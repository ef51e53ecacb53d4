"""Weight sums past float64's 2^53: the cpu backend's bin sums and the part weight limits are
exact integers for every int64 total."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from gpmetis.backend import ADD_AT_BINS, FLOAT_EXACT, exact_bin_sums, get_backend
from gpmetis.balance import LIMIT_CAP, max_part_weights, uniform_tpwgts
from gpmetis.options import UBVEC_MAX

INT64_MAX = 2**63 - 1
CPU = get_backend("cpu")


def _plain_sums(ids, n, weights) -> list[int]:
    sums = [0] * n
    for i, w in zip(ids.tolist(), weights.tolist()):
        sums[i] += w
    return sums


def test_bin_sums_of_int64_weights_are_exact_past_2_53():
    # 2^53 + 1 has no float64; 2^62 + 3 - 2^62 loses the 3 when summed in that order
    ids = np.array([0, 0, 1, 1, 1, 2], np.int32)
    weights = np.array([2**53, 1, 2**62, 3, -2**62, 2**63 - 1], np.int64)
    sums = CPU.bin_sums(ids, 4, weights)
    assert sums.dtype == np.int64
    assert sums.tolist() == [2**53 + 1, 3, 2**63 - 1, 0]


@pytest.mark.parametrize("id_dtype, nbins", [(np.int32, 2), (np.int64, 2),
                                             (np.int32, ADD_AT_BINS + 1)])
def test_bin_sums_of_many_int32_weights_are_exact_past_2_53(id_dtype, nbins):
    # 5M weights of 2^31 - 1 in bin 0 pass 2^53 after 4.2M of them; odd ones in bin 1; each
    # path: int32 ids into few bins, int64 ids, many bins
    n = 5_000_000
    ids = (np.arange(n) % 7 == 0).astype(id_dtype)
    weights = np.full(n, 2**31 - 1, np.int32)
    weights[::3] -= 2
    sums = CPU.bin_sums(ids, nbins, weights)
    expected = [int(weights[ids == b].sum(dtype=np.int64)) for b in range(2)]
    assert expected[0] > FLOAT_EXACT
    assert sums.tolist() == expected + [0] * (nbins - 2)


@pytest.mark.parametrize("id_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("nbins", [1, 5, 1000, ADD_AT_BINS + 1])
def test_bin_sums_equal_plain_sums(id_dtype, nbins):
    # int32 weights where float64 sums are exact, int64 ones past 2^53 where they are not
    rng = np.random.default_rng(nbins)
    ids = rng.integers(0, nbins, 3000).astype(id_dtype)
    for dtype, high in ((np.int32, 2**31 - 1), (np.int64, 2**55)):
        weights = rng.integers(-high, high, 3000).astype(dtype)
        assert exact_bin_sums(ids, nbins, weights).tolist() == _plain_sums(ids, nbins, weights)
    assert CPU.counts(ids, nbins).tolist() == np.bincount(ids, minlength=nbins).tolist()


def _exact_limit(total: int, tpwgt: float, ub: float) -> int:
    target = Fraction(tpwgt) * total
    return min(max(math.floor(Fraction(ub) * target), math.ceil(target)), INT64_MAX)


@pytest.mark.parametrize("nparts", [2, 3, 64])
def test_part_limits_near_2_63_are_exact_capped_and_never_overflow(nparts):
    for total in (2**53 + 1, 2**62 + 1, INT64_MAX - 2, INT64_MAX):
        for ub in (1.001, 1.03, 2.0, UBVEC_MAX):
            limits = max_part_weights(np.array([total]), uniform_tpwgts(nparts), [ub])
            assert limits.dtype == np.int64
            # a limit stops at the larger of LIMIT_CAP and the total (no part weighs more)
            expected = min(_exact_limit(total, 1.0 / nparts, ub), max(LIMIT_CAP, total))
            assert limits[:, 0].tolist() == [expected] * nparts


def test_part_limits_mix_exact_and_float_columns():
    # uneven targets; the float64 column keeps its rounding slack (1490 unit vertices in 64
    # parts need a part of 24 > 1.03 * 23.28)
    tpwgts = np.array([[0.25, 1 / 64], [0.75, 63 / 64]])
    limits = max_part_weights(np.array([2**62 + 7, 1490]), tpwgts, [1.03, 1.03])
    assert limits[:, 0].tolist() == [_exact_limit(2**62 + 7, t, 1.03) for t in (0.25, 0.75)]
    assert limits[:, 1].tolist() == [24, 1510]
