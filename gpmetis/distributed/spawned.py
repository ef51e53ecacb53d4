"""A rank of a run that ``spawn.partition_on_gpus`` started: its block of the graph from the
scratch folder, the run (``partition_distributed``), and on rank 0 the Result (or the error)
written back."""

from __future__ import annotations

import pickle
import sys
from pathlib import Path

import numpy as np

from gpmetis.distributed.comm import Comm, finalize
from gpmetis.distributed.dgraph import block_bounds
from gpmetis.distributed.partition import partition_distributed
from gpmetis.distributed.spawn import ARRAYS
from gpmetis.errors import GpmetisError


def _rank_main(folder: str) -> None:
    """One rank of ``partition_on_gpus``: its block of the graph, the run, and on rank 0
    the Result (or the error) written back."""
    work = Path(folder)
    head = pickle.loads((work / "run.pkl").read_bytes())
    arrays = {name: np.load(work / f"{name}.npy", mmap_mode="r")
              for name in ARRAYS if (work / f"{name}.npy").exists()}
    root = True

    def hand_back(error: GpmetisError) -> None:
        (work / "error.pkl").write_bytes(pickle.dumps(error))

    try:
        comm = Comm.world()
        root = comm.root
        comm.on_abort = hand_back  # a rank that ends every rank says why first
        xadj = arrays["xadj"]
        vtxdist = block_bounds(np.asarray(xadj), comm.size)
        lo, hi = int(vtxdist[comm.rank]), int(vtxdist[comm.rank + 1])
        a, b = int(xadj[lo]), int(xadj[hi])
        vwgt = arrays["vwgt"][lo:hi] if head["has_vwgt"] else None
        adjwgt = arrays["adjwgt"][a:b] if head["has_adjwgt"] else None
        vsize = arrays["vsize"][lo:hi] if "vsize" in arrays else None
        out = partition_distributed(vtxdist, np.asarray(xadj[lo:hi + 1]) - a,
                                    arrays["adjncy"][a:b], head["nparts"], vwgt=vwgt,
                                    adjwgt=adjwgt, vsize=vsize, comm=comm,
                                    options=head["options"], name=head["name"])
        if root:
            (work / "result.pkl").write_bytes(pickle.dumps(out.result))
    except GpmetisError as exc:  # raised on every rank (or the world is wrong): rank 0 says it
        if root:
            hand_back(exc)
    finalize()


if __name__ == "__main__":
    _rank_main(sys.argv[1])
