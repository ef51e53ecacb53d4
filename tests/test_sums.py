"""Weight sums past float64's 2^53: the cpu backend's bin sums are exact integers for every
int64 total."""

from __future__ import annotations

import numpy as np
import pytest

from gpmetis.backend import FLOAT_EXACT, exact_bin_sums, get_backend

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


def test_bin_sums_of_many_int32_weights_are_exact_past_2_53():
    # 5M weights of 2^31 - 1 in one bin pass 2^53 after 4.2M of them; odd ones in others
    n = 5_000_000
    ids = (np.arange(n) % 7 == 0).astype(np.int32)
    weights = np.full(n, 2**31 - 1, np.int32)
    weights[::3] -= 2
    sums = CPU.bin_sums(ids, 2, weights)
    expected = [int(weights[ids == b].sum(dtype=np.int64)) for b in range(2)]
    assert expected[0] > FLOAT_EXACT
    assert sums.tolist() == expected


@pytest.mark.parametrize("nbins", [1, 5, 1000])
def test_bin_sums_equal_plain_sums(nbins):
    # int32 weights take the float64 path (exact there), int64 ones near 2^52 the int64 one
    rng = np.random.default_rng(nbins)
    ids = rng.integers(0, nbins, 3000).astype(np.int32)
    for dtype, high in ((np.int32, 2**31 - 1), (np.int64, 2**52)):
        weights = rng.integers(-high, high, 3000).astype(dtype)
        assert exact_bin_sums(ids, nbins, weights).tolist() == _plain_sums(ids, nbins, weights)
    assert CPU.counts(ids, nbins).tolist() == np.bincount(ids, minlength=nbins).tolist()
