"""The seeded symmetric edge hash of ``edge_hash.cuh``, for the NumPy twins."""

from __future__ import annotations

import numpy as np


def mix32(x: np.ndarray) -> np.ndarray:
    """The 32-bit integer hash of ``edge_hash.cuh`` (uint32 in, uint32 out)."""
    x = x.astype(np.uint32)
    x ^= x >> np.uint32(16)
    x *= np.uint32(0x7FEB352D)
    x ^= x >> np.uint32(15)
    x *= np.uint32(0x846CA68B)
    x ^= x >> np.uint32(16)
    return x


def edge_hash(a: np.ndarray, b: np.ndarray, seed: int) -> np.ndarray:
    """Symmetric seeded hash of the edges {a[i], b[i]} (uint32), equal to ``edge_hash.cuh``'s."""
    lo = np.minimum(a, b).astype(np.uint32)
    hi = np.maximum(a, b).astype(np.uint32)
    return mix32(mix32(lo ^ np.uint32(seed)) + hi)
