"""Jet refinement (``refinement/jet_refiner.py``) on a graph held in pieces: the same
partition as one process, for any number of ranks.

The host loop (``refinement/loop.py``) runs unchanged on every rank with these steps; their
scores are all-reduced, so every rank takes the same branch. Each step refreshes the ghosts'
parts, computes its own vertices' moves with the single-process twins on the rank's rows (ghost
rows are empty), exchanges the moves' destinations and gains for the afterburner, which breaks
ties by global id, and selects per part with histograms summed over the ranks
(``VertexOrder``)."""

from __future__ import annotations

import numpy as np

from gpmetis.backend import exact_bin_sums, get_backend
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
    """``jet_refiner.JetSteps`` over the ranks: ``part``, ``locked`` and the moves are this
    rank's vertices'; part weights are the whole graph's."""

    settle = None

    def __init__(self, comm: Comm, lg: LocalGraph, balance: Balance,
                 context: RefinementContext, finest: bool) -> None:
        self.comm, self.lg, self.balance, self.context = comm, lg, balance, context
        self.c_num, self.c_den = context.filter_finest if finest else context.filter_coarse
        halo = lg.halo
        self.nvtxs = halo.nlocal
        nghost = len(halo.ghosts)
        self.cpu = get_backend("cpu")
        # the rank's rows and an empty row per ghost: the twins' per-vertex arrays cover both
        xadj = np.concatenate((lg.xadj, np.full(nghost, lg.xadj[-1], dtype=np.int64)))
        vwgt = np.concatenate((lg.vwgt, np.zeros(nghost, dtype=np.int64)))
        self.g = DeviceGraph(self.cpu, xadj, lg.adjncy, lg.adjwgt, vwgt)
        own = np.arange(halo.first, halo.first + halo.nlocal, dtype=np.int64)
        self.ids = np.concatenate((own, halo.ghosts))
        self.order = VertexOrder(own, int(halo.vtxdist[-1]), comm.allreduce_sum)

    def _with_ghosts(self, values: np.ndarray) -> np.ndarray:
        return self.lg.halo.extended(self.comm, values)

    def score(self, part):
        lg, nparts = self.lg, self.balance.nparts
        ends = self._with_ghosts(part)
        cut = lg.adjwgt[ends[lg.src] != ends[lg.adjncy]].sum(dtype=np.int64)
        local = np.concatenate(([cut], exact_bin_sums(part, nparts, lg.vwgt)))
        total = self.comm.allreduce_sum(local.astype(np.int64))
        pw = total[1:]
        excess = int(np.maximum(pw - self.balance.limits[0], 0).sum())
        return (excess, int(total[0]) // 2), pw

    def propagate(self, part, locked, pwgts, loose: bool):
        n = self.nvtxs
        ends = self._with_ghosts(part)
        request = MoveRequest(0, np.concatenate((locked, np.zeros(len(ends) - n, np.uint8))),
                              self.c_num, self.c_den, nparts=self.balance.nparts)
        dest, gain = best_moves(self.cpu, self.g, ends, request)
        dest, gain = self._with_ghosts(dest[:n]), self._with_ghosts(gain[:n])
        moved = np.where(kept_moves(self.g, ends, dest, gain, self.ids)[:n], dest[:n], part)
        keep = inflow_kept(part, moved, gain[:n], self.lg.vwgt, self.balance.limits[0], pwgts,
                           loose, self.context.inflow_slack, self.order)
        return np.where(keep, moved, part).astype(np.int32), keep.astype(np.uint8)

    def rebalance(self, part, pwgts):
        balance, n = self.balance, self.nvtxs
        room = balance.limits[0] - pwgts
        if not (room < 0).any():
            return part
        request = MoveRequest(1, room=room, nparts=balance.nparts)
        dest, gain = best_moves(self.cpu, self.g, self._with_ghosts(part), request)
        return rebalanced(part, room, dest[:n], gain[:n], self.lg.vwgt,
                          roomiest_parts(room, balance.group_size), balance.group_size,
                          self.order)


def refine(comm: Comm, lg: LocalGraph, part: np.ndarray, balance: Balance, *,
           context: RefinementContext, finest: bool, patience: int):
    """(this rank's vertices' part in the best partition Jet's iterations find from ``part``,
    iterations run), as ``jet_refiner.refine`` gives them in one process; collective."""
    steps = DistJetSteps(comm, lg, balance, context, finest)
    return loop_on_host(steps.cpu, steps, np.asarray(part, dtype=np.int32), patience)
