"""Where a distributed run's time goes: grid3d S at K partitioned by
``partition_distributed`` (under ``mpiexec -n N``, or by one rank without it), each phase of
the multilevel run on the pieces timed with the GPU synchronized before and after it, beside
the single-process engine's seconds on the same graph. The second of two runs is reported
(the first compiles and fills caches). Rank 0 prints one row per phase: seconds, calls (nested
phases count inside their parents; the collectives' calls say how many a run makes) and, on
the gpu engine, the most GPU memory its arrays held above what they held when it started,
against rank 0's share of the CSR (xadj int64, adjncy and adjwgt int32, vwgt int32), and the
most CuPy's pool held in the phase (its cached free blocks included) above what the arrays held
when the run started; on the cpu engine, the same of its host arrays (``tracemalloc``, which
NumPy reports to).

    python bench/dist_phases.py --side 300 --k 64
    mpiexec -n 2 python bench/dist_phases.py --side 300 --k 64
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
import tracemalloc
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.dist import path_block  # noqa: E402
from bench.largest import grid3d_csr, grid3d_rows  # noqa: E402

SECONDS: defaultdict[str, float] = defaultdict(float)
CALLS: Counter = Counter()
PEAK: Counter = Counter()  # bytes above the phase's start, the most of its calls
# bytes the pool's arrays hold now, their most since the innermost phase began, and in the run
USED = [0, 0, 0]
# the most bytes CuPy's pool held (its arrays and its cached free blocks) in the run, and since
# the innermost phase began
POOL = [0, 0]
POOL_PEAK: Counter = Counter()  # the most bytes the pool held in the phase, the most of its calls
LABELS: list[str] = []  # in the order the table prints them


def timed(owner, name: str, label: str, sync: Callable[[], None]) -> None:
    """Replace ``owner.name`` by a wrapper that adds its synchronized time to ``label``."""
    fn = getattr(owner, name)
    LABELS.append(label)

    def wrapper(*args, **kwargs):
        sync()
        start = time.perf_counter()
        note_host_peak()
        USED[0] = used_bytes()
        outer, USED[1] = USED[1], USED[0]
        outer_pool, POOL[1] = POOL[1], pool_bytes()
        base = USED[0]
        try:
            return fn(*args, **kwargs)
        finally:
            sync()
            note_host_peak()
            SECONDS[label] += time.perf_counter() - start
            CALLS[label] += 1
            PEAK[label] = max(PEAK[label], USED[1] - base)
            USED[1] = max(outer, USED[1])
            POOL_PEAK[label] = max(POOL_PEAK[label], POOL[1])
            POOL[1] = max(outer_pool, POOL[1])

    setattr(owner, name, wrapper)


def instrument(sync: Callable[[], None]) -> None:
    import gpmetis.distributed.clustering as clustering
    import gpmetis.distributed.contraction as contraction
    import gpmetis.distributed.metrics as metrics
    import gpmetis.distributed.multilevel as multilevel
    import gpmetis.distributed.partition as partition
    import gpmetis.distributed.refinement as refinement
    from gpmetis.distributed.comm import Comm
    from gpmetis.distributed.halo import Halo

    phases = (
        (partition, "validate", "validation of the pieces"),
        (partition.DistributedRun, "local", "the piece's local view (upload, halo)"),
        (partition.DistributedRun, "_share", "the part's share at each rank"),
        (multilevel, "_coarsen_pieces", "coarsening on the pieces"),
        (multilevel, "lp_clustering", "  clustering"),
        (clustering, "_local_clusters", "    the clusters a rank sees, numbered"),
        (clustering, "best_cluster", "    best_cluster"),
        (clustering, "_approve_in_id_order", "    the approval at the owners"),
        (clustering, "_group_islands", "    islands grouped"),
        (clustering, "_number_clusters", "    clusters numbered"),
        (clustering, "ask_owners", "    the owners' weights"),
        (clustering.ToOwners, "send", "    rows to their owners (and in contraction)"),
        (clustering.ToOwners, "reply", "    the owners' replies"),
        (multilevel, "contract", "  contraction"),
        (contraction, "_local_rows", "    the rank's rows contracted"),
        (contraction, "_with_records", "    the records"),
        (contraction, "contract_rows", "    contract (of the rows, then with the records)"),
        (contraction, "_owned_view", "    the owned rows' view"),
        (multilevel, "_root_run", "rank 0's run on the gathered level"),
        (multilevel, "refine", "refinement on the pieces"),
        (refinement, "best_moves", "  best_moves"),
        (refinement, "afterburner", "  afterburner"),
        (refinement, "state_sums", "  score"),
        (refinement, "cap_inflow", "  inflow cap"),
        (refinement, "rebalance_moves", "  rebalancing selection"),
        (Halo, "laid_out", "  parts laid out in id order"),
        (Halo, "laid_out_columns", "  moves laid out in id order"),
        (metrics, "state", "score's state on the pieces"),
        (metrics, "metrics", "metrics on the pieces"),
        (metrics, "components", "  components on the pieces"),
        (Halo, "exchange", "halo exchanges"),
        *((Comm, name, f"Comm.{name}")
          for name in ("alltoallv", "allreduce_sum", "gatherv", "scatterv")),
    )
    for owner, name, label in phases:
        timed(owner, name, label, sync)


def used_bytes() -> int:
    """The bytes the GPU pool's arrays hold now, or, where ``tracemalloc`` traces (the cpu
    engine), the host's (0 otherwise)."""
    if tracemalloc.is_tracing():
        return tracemalloc.get_traced_memory()[0]
    if "cupy" not in sys.modules:
        return 0
    return int(sys.modules["cupy"].get_default_memory_pool().used_bytes())


def pool_bytes() -> int:
    """The bytes CuPy's pool holds now, its cached free blocks included (0 without CuPy)."""
    if "cupy" not in sys.modules:
        return 0
    return int(sys.modules["cupy"].get_default_memory_pool().total_bytes())


def note_host_peak() -> None:
    """Fold the host's peak since the last call (``tracemalloc``'s) into the innermost phase's
    and the run's (the GPU's are noted at each allocation)."""
    if tracemalloc.is_tracing():
        USED[0], peak = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        USED[1], USED[2] = max(USED[1], peak), max(USED[2], peak)


def watch_gpu_memory() -> None:
    """Route CuPy's allocations through its pool, noting the bytes its arrays hold."""
    import cupy

    pool = cupy.get_default_memory_pool()

    def malloc(size: int):
        memory = pool.malloc(size)
        USED[0] = pool.used_bytes()
        total = int(pool.total_bytes())
        POOL[0], POOL[1] = max(POOL[0], total), max(POOL[1], total)
        USED[1] = max(USED[1], USED[0])
        USED[2] = max(USED[2], USED[0])
        return memory

    cupy.cuda.set_allocator(malloc)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--side", type=int, default=300)
    ap.add_argument("--path", type=int, help="the path of this many vertices, not grid3d")
    ap.add_argument("--k", type=int, default=64)
    ap.add_argument("--engine", default="gpu")
    ap.add_argument("--no-single", action="store_true",
                    help="no one-process run to compare with (the graph is never built whole)")
    args = ap.parse_args()
    from gpmetis.backend import get_backend
    from gpmetis.distributed import partition_distributed
    from gpmetis.distributed.comm import Comm, launched_ranks

    be = get_backend(args.engine)
    name = f"path {args.path}" if args.path else f"grid3d {args.side}"
    comm = Comm.world() if launched_ranks() > 1 else Comm()
    single = None
    if comm.root and not args.no_single:
        import gpmetis
        from gpmetis.graph import Graph

        graph = Graph.from_csr(*(path_block(args.path, 0, args.path) if args.path
                                 else grid3d_csr(args.side)), name=name)
        single = [gpmetis.partition(graph, args.k, engine=args.engine) for _ in range(2)][-1]
        del graph
    if args.path:
        vtxdist = np.linspace(0, args.path, comm.size + 1).astype(np.int64)
        xadj, adjncy = path_block(args.path, int(vtxdist[comm.rank]), int(vtxdist[comm.rank + 1]))
    else:
        vtxdist = np.linspace(0, args.side, comm.size + 1).astype(np.int64) * args.side**2
        xadj, adjncy = grid3d_rows(args.side, int(vtxdist[comm.rank]),
                                   int(vtxdist[comm.rank + 1]), np.int64)
    instrument(be.synchronize if be.gpu else lambda: None)
    if be.gpu:
        watch_gpu_memory()
    else:
        tracemalloc.start()
    for _ in range(2):
        gc.collect()  # the previous run's arrays go before the base is read
        if be.gpu:  # the run's pool starts from the arrays alive, without cached blocks
            be.release_free_memory()
            POOL[0] = POOL[1] = pool_bytes()
        SECONDS.clear()
        CALLS.clear()
        PEAK.clear()
        POOL_PEAK.clear()
        USED[2] = base = USED[0] = used_bytes()
        start = time.perf_counter()
        out = partition_distributed(vtxdist, xadj, adjncy, args.k, comm=comm,
                                    engine=args.engine)
        wall = time.perf_counter() - start
        note_host_peak()
    if not comm.root:
        return
    ranks = (f"{comm.size} rank(s) {out.seconds:.2f} s engine, {wall:.2f} s wall (cut "
             f"{out.edgecut})")
    if single is None:
        print(f"{name}, k={args.k}, {args.engine} engine: {ranks}")
    else:
        print(f"{name}, k={args.k}, {args.engine} engine: one process {single.seconds:.2f} s "
              f"(cut {single.edgecut}; coarsening {single.stats['coarsening']:.2f} s, initial "
              f"{single.stats['initial']:.2f} s, refinement {single.stats['refinement']:.2f} s); "
              f"{ranks}; the same part file and metrics: "
              f"{np.array_equal(out.result.part, single.part)}, "
              f"{out.result.metrics == single.metrics}")
    nlocal = len(xadj) - 1
    share = 8 * (nlocal + 1) + 8 * len(adjncy) + 4 * nlocal
    pool = (f", CuPy's pool {(POOL[0] - base) / 1e9:.2f} GB above them "
            f"({(POOL[0] - base) / share:.2f} x, its cached free blocks included)" if be.gpu
            else "")
    print(f"rank 0's share of the CSR {share / 1e9:.2f} GB; in the run its arrays held at "
          f"most {(USED[2] - base) / 1e9:.2f} GB above the {base / 1e9:.2f} GB they held "
          f"before it ({(USED[2] - base) / share:.2f} x the share){pool}")
    where = "GPU" if be.gpu else "host"
    pooled = " pool's most in it, above the run's start / CSR share |" if be.gpu else ""
    print(f"| phase | seconds | calls | {where} GB above its start | / CSR share |{pooled}")
    print("|---|---|---|---|---|" + ("---|" if be.gpu else ""))
    for label in (x for x in LABELS if CALLS[x]):
        pool = f" {(POOL_PEAK[label] - base) / share:.2f} |" if be.gpu else ""
        print(f"| {label} | {SECONDS[label]:.3f} | {CALLS[label]} | {PEAK[label] / 1e9:.2f} | "
              f"{PEAK[label] / share:.2f} |{pool}")


if __name__ == "__main__":
    main()
