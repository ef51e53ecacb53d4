"""One level's refiner, for one constraint or several: Jet (``jet_refiner``) where the graph has
one, else the multi-constraint refiner (``ncon_refiner``). Both return the best state their
iterations find (least excess over ``balance``'s limits, then lowest cut)."""

from __future__ import annotations

from collections.abc import Callable

from gpmetis.backend import Backend
from gpmetis.balance import Balance
from gpmetis.context import RefinementContext
from gpmetis.device_graph import DeviceGraph
from gpmetis.refinement import jet_refiner, ncon_refiner


def refiner_for(be: Backend, g: DeviceGraph, weights, balance: Balance, *,
                context: RefinementContext, finest: bool, patience: int) -> Callable:
    """A function from a partition of ``g`` to (the refined partition, iterations run: ``int``
    reads it), under ``context``. ``weights``: None (``g.vwgt`` is the one constraint) or
    (ncon, n) on ``be``. ``patience``: iterations without a gain before the level stops; the
    multi-constraint refiner's coarser levels stop at half of it (a loose step's excess takes
    several rebalancing steps to remove there, and the finest level refines what they
    leave)."""
    if weights is None:
        return jet_refiner.refiner(be, g, balance, context=context, finest=finest,
                                   patience=patience)
    if not finest:
        patience = -(-patience // 2)

    def refine(part):
        return ncon_refiner.refine(be, g, weights, part, balance, context=context,
                                   finest=finest, patience=patience)

    return refine
