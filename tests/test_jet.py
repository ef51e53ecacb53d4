"""The Jet refinement loop (cpu engine; test_gpu_twins.py holds the device loop to it)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import load_fixture

from gpmetis.backend import get_backend
from gpmetis.device_graph import DeviceGraph
from gpmetis.metrics import edgecut, part_weights
from gpmetis.refinement import rebalance
from gpmetis.refinement.jet import IMPROVEMENT, refine

CPU = get_backend("cpu")


@pytest.mark.parametrize("nparts", [8, 64])
def test_label_propagation_is_loose_only_after_a_strict_step_that_stalled(monkeypatch, nparts):
    g = DeviceGraph.upload(CPU, load_fixture("3elt"))
    maxpwgt = np.full(nparts, int(1.03 * g.vwgt.sum() / nparts), np.int64)
    steps = []  # (loose, cut before, cut after, part weights before, after)
    cap_inflow = rebalance.cap_inflow

    def recording(be, g, part, moved, gain, nparts, maxpwgt, pwgts, *, loose):
        keep, capped = cap_inflow(be, g, part, moved, gain, nparts, maxpwgt, pwgts, loose=loose)
        cuts = [edgecut(be, g.src, g.adjncy, g.adjwgt, p) for p in (part, capped)]
        after = part_weights(be, g.vwgt[:, None], capped, nparts)[:, 0]
        steps.append((loose, *cuts, pwgts.copy(), after))
        return keep, capped

    monkeypatch.setattr(rebalance, "cap_inflow", recording)
    start = (np.arange(g.nvtxs) * nparts // g.nvtxs).astype(np.int32)
    refine(CPU, g, start, nparts, maxpwgt, finest=True, patience=12)
    loose = [s[0] for s in steps]
    assert not loose[0] and any(loose) and not all(loose)
    for (was_loose, before, after, *_), now_loose in zip(steps, loose[1:]):
        assert now_loose == (not was_loose and after >= (1 - IMPROVEMENT) * before)
    for is_loose, _, _, pw_before, pw_after in steps:
        if not is_loose:  # a strict step fills no part beyond its limit
            assert np.all(pw_after <= np.maximum(maxpwgt, pw_before))
