"""Jet refinement (``refinement/jet_refiner.py``) on a graph held in pieces: the same
partition as one process, for any number of ranks.

The host loop (``refinement/loop.py``) runs unchanged on every rank with these steps; their
scores are all-reduced, so every rank takes the same branch (a score after the first adds the
change its moved vertices make, as the device loop's does). A rank runs the single-process
steps' kernels (``best_moves``, ``afterburner``, ``state_sums``) on a graph of its rows and an
empty row per ghost, laid out in global id order (``Halo.ordered_ids``), so that their ties
by vertex id are the global ones. Each step refreshes the ghosts' parts (the step after a
score takes the score's), and the moves' destinations and gains, in one exchange, before the
afterburner. The per-part selections (``cap_inflow``,
``rebalance_moves``) run on the rank's vertices, which they place among all by their ids, and
sum their histograms over the ranks (``VertexOrder``)."""

from __future__ import annotations

import numpy as np

from gpmetis.balance import Balance
from gpmetis.context import RefinementContext
from gpmetis.device_graph import DeviceGraph
from gpmetis.distributed.clustering import LocalGraph
from gpmetis.distributed.comm import Comm
from gpmetis.refinement.jet import MoveRequest, afterburner, best_moves, state_sums
from gpmetis.refinement.loop import loop_on_host
from gpmetis.refinement.rebalance import VertexOrder, cap_inflow, rebalance_moves


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
        n, low, high = halo.nlocal, halo.nlow, len(halo.ghosts) - halo.nlow
        self.own = slice(low, low + n)
        xadj = xp.concatenate((xp.zeros(low, dtype=np.int64), lg.xadj,
                               xp.full(high, lg.xadj[-1], dtype=np.int64)))
        vwgt = xp.zeros(low + n + high, dtype=np.int32)
        vwgt[self.own] = lg.vwgt
        self.g = g = DeviceGraph(be, xadj, halo.ordered_ids(lg.adjncy),
                                 lg.adjwgt, vwgt)
        self.rows = DeviceGraph(be, lg.xadj, g.adjncy, g.adjwgt, vwgt[self.own])  # own rows
        self.locked = xp.zeros(low + n + high, dtype=np.uint8)
        self.order = VertexOrder(int(halo.vtxdist[-1]), halo.first, comm.allreduce_sum)
        self.scored = (None, None)  # (the part score laid out last, that layout)
        self.state = (None, None)  # (the layout score read last, its whole state, host)

    def _laid_out(self, values):
        return self.lg.halo.laid_out(self.comm, values)

    def _laid_out_part(self, part):
        """``part`` laid out; the step after ``score`` takes the part it laid out (the loop
        changes no part in place)."""
        scored, ends = self.scored
        self.scored = (None, None)
        return ends if scored is part else self._laid_out(part)

    def score(self, part):
        """As JetSteps.score; the state after the first is the last one's plus the change
        its moved vertices make (each rank reads its moved rows)."""
        ends = self._laid_out(part)
        self.scored = (part, ends)
        last, total = self.state
        sums = state_sums(self.be, self.g, ends, self.balance.nparts, prev=last)
        total = self.comm.allreduce_sum(sums) + (0 if total is None else total)
        self.state = (ends, total)
        pw = total[1:]
        excess = int(np.maximum(pw - self.balance.limits[0], 0).sum())
        return (excess, int(total[0]) // 2), pw

    def propagate(self, part, locked, pwgts, loose: bool):
        own, be = self.own, self.be
        ends = self._laid_out_part(part)
        self.locked[own] = locked
        request = MoveRequest(0, self.locked, self.c_num, self.c_den,
                              nparts=self.balance.nparts)
        dest, gain = best_moves(be, self.g, ends, request)
        dest, gain = self.lg.halo.laid_out_columns(self.comm, dest[own], gain[own])
        _, moved = afterburner(be, self.g, ends, dest, gain, request)
        locked, part = cap_inflow(be, self.rows, part, moved[own], gain[own],
                                  self.balance.limits[0], pwgts, loose=loose,
                                  slack=self.context.inflow_slack, order=self.order)
        return part, locked

    def rebalance(self, part, pwgts):
        balance, own, be = self.balance, self.own, self.be
        room = balance.limits[0] - pwgts
        if not (room < 0).any():
            return part
        request = MoveRequest(1, room=be.asarray(room), nparts=balance.nparts)
        dest, gain = best_moves(be, self.g, self._laid_out_part(part), request)
        return rebalance_moves(be, self.rows, part, room, dest[own], gain[own],
                               balance.group_size, self.order)


def refine(comm: Comm, lg: LocalGraph, part, balance: Balance, *,
           context: RefinementContext, finest: bool, patience: int):
    """(this rank's vertices' part in the best partition Jet's iterations find from ``part``
    (int32 on ``lg``'s backend), iterations run), as ``jet_refiner.refine`` gives them in one
    process; collective."""
    lg.reload()  # the unit edge weights coarsening read as ones
    steps = DistJetSteps(comm, lg, balance, context, finest)
    return loop_on_host(steps.be, steps, part.astype(np.int32, copy=False), patience)
