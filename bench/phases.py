"""Where a warm run's time goes: phases, levels and the initial partition's METIS rounds.

    PYTHONPATH=. python3 bench/phases.py FILE K [RUNS] [E=engine] [P=piece_parts]
        [T=coarsening factor] [TD=thin degree] [DD=dense degree] [TR=trials] [prof]

Runs ``gpmetis.partition`` once to warm up, then RUNS times (seeds 1, 2, ...), and prints the
median phases, the cuts, the last run's levels (vertices, coarsening ms, refinement iterations),
the median time of each round of METIS trials, and the step timings of each run. The ``X=``
settings replace the default preset's context (``gpmetis.context``) in this process: T its
coarsening's vertices per part, the others as named (A/B on the device); ``prof`` adds a
cProfile of one more run.
"""

from __future__ import annotations

import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import gpmetis  # noqa: E402
from gpmetis import context  # noqa: E402
from gpmetis.device_graph import DeviceGraph  # noqa: E402
from gpmetis.initial_partitioning import metis_trials  # noqa: E402
from gpmetis.partitioning import multilevel  # noqa: E402


def _settings(args: list[str]) -> str:
    """Apply the X= settings to the default preset's context; the engine to run."""
    engine = "gpu"
    coarsening, initial = {}, {}
    names = {"P": "piece_parts", "TD": "thin_degree", "DD": "dense_degree", "TR": "trials"}
    for arg in args:
        name, _, value = arg.partition("=")
        if name == "E":
            engine = value
        elif name == "T":
            coarsening["vertices_per_part"] = int(value)
        elif name in names:
            initial[names[name]] = int(value)
    default = context.DEFAULT
    context.PRESETS["default"] = replace(
        default, coarsening=replace(default.coarsening, **coarsening),
        initial=replace(default.initial, **initial))
    return engine


def _timed(steps: dict, name: str, function):
    def wrapper(*args, **kwargs):
        start = time.perf_counter()
        result = function(*args, **kwargs)
        steps.setdefault(name, []).append((time.perf_counter() - start) * 1e3)
        return result
    return wrapper


def main() -> None:
    path, k = sys.argv[1], int(sys.argv[2])
    rest = sys.argv[3:]
    runs = int(rest.pop(0)) if rest and rest[0].isdigit() else 7
    engine = _settings(rest)
    rounds: list[tuple] = []
    steps: dict[str, list[float]] = {}
    trials = metis_trials._Trials.__call__

    def traced(self, graphs, recursive, ntrials=None, **kwargs):
        start = time.perf_counter()
        result = trials(self, graphs, recursive, ntrials, **kwargs)
        rounds.append((len(graphs), ntrials or self.ntrials, max(len(g[2]) for g in graphs),
                       graphs[0][4], (time.perf_counter() - start) * 1e3))
        return result

    metis_trials._Trials.__call__ = traced
    multilevel.initial_partition = _timed(steps, "initial_partition",
                                          multilevel.initial_partition)
    multilevel.refiner_for = _timed(steps, "refiner_for()", multilevel.refiner_for)
    metis_trials._bisection_tree = _timed(steps, "bisection_tree", metis_trials._bisection_tree)
    metis_trials._kway = _timed(steps, "kway", metis_trials._kway)
    metis_trials._induced = _timed(steps, "induced", metis_trials._induced)
    DeviceGraph.to_host = _timed(steps, "to_host", DeviceGraph.to_host)

    graph = gpmetis.read_graph(path)
    gpmetis.partition(graph, k, engine=engine)
    results, per_run = [], []
    for seed in range(1, runs + 1):
        rounds.clear()
        steps.clear()
        results.append(gpmetis.partition(graph, k, seed=seed, engine=engine))
        per_run.append(list(rounds))
        print("   ", {name: (len(v), round(sum(v), 2)) for name, v in steps.items()})
    phases = {p: statistics.median(r.stats[p] for r in results) * 1e3
              for p in ("coarsening", "initial", "refinement")}
    total = statistics.median(r.seconds for r in results) * 1e3
    print(f"{path} k={k} {rest} total {total:.1f} ms",
          " ".join(f"{p} {v:.1f}" for p, v in phases.items()),
          "cuts", [r.edgecut for r in results[:5]],
          f"imb {max(r.imbalance for r in results):.3f}")
    print("  levels", [(lv["nvtxs"], round(lv["seconds"] * 1e3, 2), lv["refine_iterations"])
                       for lv in results[-1].stats["levels"]])
    for i, first in enumerate(per_run[0]):
        ms = statistics.median(run[i][4] for run in per_run if len(run) > i)
        print(f"  round {i}: graphs x trials {first[:2]}, max n {first[2]}, parts {first[3]}, "
              f"{ms:.2f} ms")
    if "prof" in rest:
        import cProfile
        import pstats

        profile = cProfile.Profile()
        profile.enable()
        gpmetis.partition(graph, k, seed=1, engine=engine)
        profile.disable()
        pstats.Stats(profile).sort_stats("tottime").print_stats(25)


if __name__ == "__main__":
    main()
