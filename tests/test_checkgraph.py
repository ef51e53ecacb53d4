"""graphchk's check (METIS 5.1 CheckGraph): every error of a graph as written, in METIS's words
and order, against a direct transcription of METIS's loop."""

from __future__ import annotations

import numpy as np
import pytest

from gpmetis.io import checkgraph
from gpmetis.io.checkgraph import check_graph


def metis_check_graph(xadj, adjncy, adjwgt) -> list[str]:
    """METIS 5.1 CheckGraph's messages, its loop over the entries written out in Python."""
    out = []
    n = len(xadj) - 1
    for i in range(n):
        seen: dict[int, int] = {}
        for j in range(xadj[i], xadj[i + 1]):
            k = int(adjncy[j])
            if i == k:
                out.append(f"Vertex {i + 1} contains a self-loop (i.e., diagonal entry in the "
                           "matrix)!")
            else:
                row = [int(x) for x in adjncy[xadj[k]:xadj[k + 1]]]
                if i in row:
                    l = xadj[k] + row.index(i)  # noqa: E741 (METIS's name)
                    if adjwgt is not None and adjwgt[l] != adjwgt[j]:
                        out.append(f"Edges (u:{i + 1} v:{k + 1} wgt:{adjwgt[j]}) and "
                                   f"(v:{k + 1} u:{i + 1} wgt:{adjwgt[l]}) do not have the "
                                   "same weight!")
                else:
                    out.append(f"Missing edge: ({k + 1} {i + 1})!")
            if seen.get(k, 0):
                out.append(f"Edge {k + 1} from vertex {i + 1} is repeated {seen[k]} times")
            seen[k] = seen.get(k, 0) + 1
    return out


def listing(found) -> list[str]:
    return [line for block in found.blocks() for line in block.split("\n") if block]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("weighted", [False, True])
def test_findings_are_metis_messages_in_metis_order(monkeypatch, seed, weighted):
    monkeypatch.setattr(checkgraph, "BLOCK", 7)  # several blocks, cut anywhere
    rng = np.random.default_rng(seed)
    n = 30
    deg = rng.integers(0, 6, n)
    xadj = np.concatenate([[0], np.cumsum(deg)]).astype(np.int64)
    adjncy = rng.integers(0, n, int(xadj[-1])).astype(np.int32)  # loops, repeats, one-way
    adjwgt = rng.integers(1, 3, len(adjncy)).astype(np.int64) if weighted else None
    found = check_graph(xadj, adjncy, adjwgt)
    expected = metis_check_graph(xadj, adjncy, adjwgt)
    assert listing(found) == expected and len(expected) > 20
    assert found.nerrors == len(expected)
    assert (found.nvtxs, found.nedges) == (n, len(adjncy) // 2)


def test_a_symmetric_graph_has_no_findings():
    xadj = np.array([0, 2, 3, 4], np.int64)
    adjncy = np.array([1, 2, 0, 0], np.int32)
    found = check_graph(xadj, adjncy, np.array([3, 4, 3, 4], np.int64))
    assert found.nerrors == 0 and listing(found) == []
    found = check_graph(np.zeros(3, np.int64), np.zeros(0, np.int32), None)
    assert found.nerrors == 0 and (found.nvtxs, found.nedges) == (2, 0)
