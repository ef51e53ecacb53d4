"""METIS's recursive bisection tree: a piece of parts, its halves' targets, and the balance each
bisection keeps (each half within ``-ufactor`` of its share of what the bisection split)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpmetis.balance import max_part_weights


@dataclass(frozen=True)
class Piece:
    """The vertices that carry part id ``first`` and will hold parts [first, first + count)."""

    first: int
    count: int


def bisection_targets(tpwgts: np.ndarray, piece: Piece) -> np.ndarray:
    """(2, ncon) target fractions of a piece's two halves, from ``tpwgts`` (nparts,) or
    (nparts, ncon): per constraint the first ``count // 2`` parts' share of the piece's target
    weight, and the rest (METIS's tpwgts2)."""
    tw = np.asarray(tpwgts, dtype=np.float64)
    columns = tw.reshape(len(tw), -1)[piece.first:piece.first + piece.count]
    halves = []
    for c in range(columns.shape[1]):
        column = columns[:, c]
        left = float(column[:piece.count // 2].sum() / column.sum())
        halves.append((left, 1.0 - left))
    return np.array(halves).T


def bisection_balance(pwgts, tpwgts: np.ndarray, ubfactor: float) -> tuple[int, list[str]]:
    """(total excess, one line per bisection over its limit) of a recursive bisection's part
    weights: at every node of the bisection tree, each half may weigh at most
    ``max_part_weights`` of the node's weight with the halves' targets, the node's real weight
    (not its target) being what the bisection split, as in METIS."""
    pw = np.asarray(pwgts, dtype=np.int64).reshape(-1)
    excess = 0
    lines = []
    pieces = [Piece(0, len(pw))] if len(pw) > 1 else []
    while pieces:
        following = []
        for piece in pieces:
            nleft = piece.count // 2
            halves = [(piece.first, nleft), (piece.first + nleft, piece.count - nleft)]
            weights = np.array([[pw[f:f + c].sum()] for f, c in halves])
            limits = max_part_weights(np.array([weights.sum()]), bisection_targets(tpwgts, piece),
                                      [ubfactor])
            over = np.maximum(weights - limits, 0)[:, 0]
            excess += int(over.sum())
            for (first, count), w, lim, o in zip(halves, weights[:, 0], limits[:, 0], over):
                if o:
                    last = piece.first + piece.count - 1
                    lines.append(f"bisection of parts {piece.first}..{last}: parts "
                                 f"{first}..{first + count - 1} weigh {w}, {o} above "
                                 f"their limit {lim} (ufactor per bisection {ubfactor:g})")
                if count > 1:
                    following.append(Piece(first, count))
        pieces = following
    return excess, lines
