"""Jet refinement (``refinement/jet_refiner.py``) on a graph held in pieces: the same
partition as one process, for any number of ranks.

The host loop (``refinement/loop.py``) runs unchanged on every rank with these steps; their
scores are all-reduced, so every rank takes the same branch. Each step refreshes the ghosts'
parts, computes its own vertices' moves on the rank's rows (ghost rows are empty) with
``best_moves`` (the GPU's kernels on a rank with a GPU), exchanges the moves' destinations and
gains for the afterburner's twin, which breaks ties by global id, and selects per part with
histograms summed over the ranks (``VertexOrder``)."""

from __future__ import annotations

import numpy as np

from gpmetis.balance import Balance
from gpmetis.context import RefinementContext
from gpmetis.device_graph import DeviceGraph
from gpmetis.distributed.clustering import LocalGraph
from gpmetis.distributed.comm import Comm
from gpmetis.refinement.jet import MoveRequest, best_moves, kept_moves
from gpmetis.refinement.loop import loop_on_host
from gpmetis.refinement.rebalance import (
    VertexOrder,
    inflow_kept,
    rebalanced,
    roomiest_parts,
)


class DistJetSteps:
    """``jet_refiner.JetSteps`` over the ranks, on the backend of the rank's ``lg``: ``part``,
    ``locked`` and the moves are this rank's vertices'; part weights (host) are the whole
    graph's."""

    settle = None

    def __init__(self, comm: Comm, lg: LocalGraph, balance: Balance,
                 context: RefinementContext, finest: bool) -> None:
        self.comm, self.lg, self.balance, self.context = comm, lg, balance, context
        self.c_num, self.c_den = context.filter_finest if finest else context.filter_coarse
        halo = lg.halo
        self.be = be = lg.be
        xp = be.xp
        self.nvtxs = halo.nlocal
        nghost = len(halo.ghosts)
        # the rank's rows and an empty row per ghost: best_moves' per-vertex arrays cover both
        # (the weights fit int32: the pieces refine only graphs whose sums do)
        xadj = xp.concatenate((lg.xadj, xp.full(nghost, lg.xadj[-1], dtype=np.int64)))
        vwgt = xp.concatenate((lg.vwgt, xp.zeros(nghost, dtype=np.int64))).astype(np.int32)
        self.g = DeviceGraph(be, xadj, lg.adjncy, lg.adjwgt.astype(np.int32), vwgt)
        own = xp.arange(halo.first, halo.first + halo.nlocal, dtype=np.int64)
        self.ids = xp.concatenate((own, halo.ghosts))
        self.order = VertexOrder(own, int(halo.vtxdist[-1]), comm.allreduce_sum)

    def _with_ghosts(self, values):
        return self.lg.halo.extended(self.comm, values)

    def score(self, part):
        lg, nparts, be = self.lg, self.balance.nparts, self.be
        ends = self._with_ghosts(part)
        cut = int(lg.adjwgt[ends[lg.src] != ends[lg.adjncy]].sum(dtype=np.int64))
        pw = be.asnumpy(be.bin_sums(part, nparts, lg.vwgt))
        total = self.comm.allreduce_sum(np.concatenate(([cut], pw)).astype(np.int64))
        pw = total[1:]
        excess = int(np.maximum(pw - self.balance.limits[0], 0).sum())
        return (excess, int(total[0]) // 2), pw

    def propagate(self, part, locked, pwgts, loose: bool):
        n, xp = self.nvtxs, self.be.xp
        ends = self._with_ghosts(part)
        request = MoveRequest(0, xp.concatenate((locked, xp.zeros(len(ends) - n, np.uint8))),
                              self.c_num, self.c_den, nparts=self.balance.nparts)
        dest, gain = best_moves(self.be, self.g, ends, request)
        dest, gain = self._with_ghosts(dest[:n]), self._with_ghosts(gain[:n])
        moved = xp.where(kept_moves(self.g, ends, dest, gain, self.ids)[:n], dest[:n], part)
        keep = inflow_kept(part, moved, gain[:n], self.lg.vwgt, self.balance.limits[0], pwgts,
                           loose, self.context.inflow_slack, self.order)
        return xp.where(keep, moved, part).astype(np.int32), keep.astype(np.uint8)

    def rebalance(self, part, pwgts):
        balance, n, be = self.balance, self.nvtxs, self.be
        room = balance.limits[0] - pwgts
        if not (room < 0).any():
            return part
        request = MoveRequest(1, room=be.asarray(room), nparts=balance.nparts)
        dest, gain = best_moves(be, self.g, self._with_ghosts(part), request)
        return rebalanced(part, room, dest[:n], gain[:n], self.lg.vwgt,
                          roomiest_parts(room, balance.group_size), balance.group_size,
                          self.order)


def refine(comm: Comm, lg: LocalGraph, part, balance: Balance, *,
           context: RefinementContext, finest: bool, patience: int):
    """(this rank's vertices' part in the best partition Jet's iterations find from ``part``
    (int32 on ``lg``'s backend), iterations run), as ``jet_refiner.refine`` gives them in one
    process; collective."""
    steps = DistJetSteps(comm, lg, balance, context, finest)
    return loop_on_host(steps.be, steps, part.astype(np.int32, copy=False), patience)
