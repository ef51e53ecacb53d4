"""The graphs that ``python -m gpmetis.cuda.prepare`` warms CuPy's cache with are valid graphs
of the shapes they stand for."""

from __future__ import annotations

import numpy as np

from gpmetis.cuda.prepare import grid3d, power_law
from gpmetis.graph import validated_graph


def test_grid3d_is_the_seven_point_grid():
    xadj, adjncy = grid3d(4)
    g = validated_graph(xadj, adjncy, None, None)
    degrees = np.diff(g.xadj)
    assert g.nvtxs == 64 and g.nedges == 3 * 4 * 4 * 3
    assert degrees.min() == 3 and degrees.max() == 6 and (degrees == 6).sum() == 8


def test_power_law_is_symmetric_and_skewed():
    xadj, adjncy = power_law(1 << 12, 16)
    g = validated_graph(xadj, adjncy, None, None)  # raises on a loop, repeat or missing reverse
    degrees = np.diff(g.xadj)
    assert degrees.max() > 20 * np.median(degrees)
