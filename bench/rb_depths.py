"""-ptype=rb depth by depth: the time of each depth of the bisection tree, its pieces, and how
many multilevel jobs and coarsenings the whole run took (one of each per depth).

    python bench/rb_depths.py [--engine cpu|gpu] [--ks 64,256] [--generated delaunay:16 ...]
                              [--graphs PATH ...] [--repeat 1]

A depth's time runs from the start of its split (``split_pieces``, once per depth) to the next
depth's, the last one's to the final fill of empty parts (``fill_empty_parts``, the end of
``recursive_partition``); the run's time is the median of
``--repeat`` runs after a warm-up run (whose workers and kernels stay for the timed ones).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import generated_graph, print_table


def instrument(events: list) -> None:
    """Record (what, time, detail) in ``events`` at each depth's split, multilevel job and
    coarsening of the rb pipeline."""
    from gpmetis.partitioning import multilevel, recursive

    def wrap(module, name: str, what: str, detail=lambda args: None):
        inner = getattr(module, name)

        def wrapper(*args, **kwargs):
            events.append((what, time.perf_counter(), detail(args)))
            return inner(*args, **kwargs)

        setattr(module, name, wrapper)

    wrap(recursive, "split_pieces", "depth", lambda args: len(args[2]))
    wrap(recursive, "multilevel_bisections", "job", lambda args: args[0].nvtxs)
    wrap(multilevel, "coarsen", "coarsen")
    wrap(recursive, "fill_empty_parts", "end")


def run(gpmetis, graph, k: int, engine: str, repeat: int, events: list) -> dict:
    """The median run's total and its depths' rows."""
    gpmetis.partition(graph, k, engine=engine, ptype="rb")  # warm-up
    timed = []
    for _ in range(repeat):
        events.clear()
        result = gpmetis.partition(graph, k, engine=engine, ptype="rb")
        timed.append((result.seconds, list(events), result))
    timed.sort(key=lambda t: t[0])
    seconds, log, result = timed[len(timed) // 2]
    end = next(t for what, t, _ in log if what == "end")
    splits = [(t, pieces) for what, t, pieces in log if what == "depth"]
    jobs = [n for what, _, n in log if what == "job"]
    depths = []
    for d, (t, pieces) in enumerate(splits):
        following = splits[d + 1][0] if d + 1 < len(splits) else end
        depths.append({"depth": d, "pieces": pieces,
                       "nvtxs": jobs[d] if d < len(jobs) else 0, "ms": 1e3 * (following - t)})
    return {"k": k, "cut": result.edgecut, "s": seconds, "jobs": len(jobs),
            "coarsen": sum(1 for what, _, _ in log if what == "coarsen"),
            "depths": len(depths), "rows": depths}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--engine", default="cpu", choices=("cpu", "gpu"))
    parser.add_argument("--ks", default="64,256")
    parser.add_argument("--generated", nargs="*", default=[], help="KIND:SIZE, e.g. delaunay:16")
    parser.add_argument("--graphs", nargs="*", default=[], help="METIS graph files")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--workdir", default="/tmp/gpmetis-bench")
    args = parser.parse_args()

    import gpmetis

    events: list = []
    instrument(events)
    paths = [Path(p) for p in args.graphs] + [
        generated_graph(kind, int(size), Path(args.workdir))
        for kind, size in (spec.split(":") for spec in args.generated)]
    totals = []
    for path in paths:
        graph = gpmetis.read_graph(path)
        for k in (int(x) for x in args.ks.split(",")):
            row = run(gpmetis, graph, k, args.engine, args.repeat, events)
            print(f"\n{path.name} k={k}: {row['s']:.3f} s, cut {row['cut']}, "
                  f"{row['jobs']} multilevel jobs, {row['coarsen']} coarsenings, "
                  f"{row['depths']} depths")
            print_table(row["rows"], [("depth", "depth", "d"), ("pieces", "pieces", "d"),
                                      ("nvtxs", "vertices", "d"), ("ms", "ms", ".1f")])
            totals.append({"graph": path.name, **row})
    print()
    print_table(totals, [("graph", "graph", "s"), ("k", "k", "d"), ("s", "s", ".3f"),
                         ("cut", "cut", "d"), ("jobs", "jobs", "d"),
                         ("coarsen", "coarsenings", "d"), ("depths", "depths", "d")])
    print(f"\nmedian of {args.repeat} run(s) after a warm-up, engine {args.engine}")


if __name__ == "__main__":
    main()
