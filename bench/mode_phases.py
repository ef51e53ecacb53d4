"""Where a warm run of METIS's modes spends its time on the gpu engine: per call of the modes'
own steps, device-synchronised around each.

    PYTHONPATH=. python3 bench/mode_phases.py KIND:SIZE:K:MODE ... [--engine cpu]

MODE is rb, contig, minconn or vol; the graph comes from gen_graph.py (``bench.common``). For
each spec: one warm-up run, then one timed run of the mode and of the plain k-way run, and the
mode's calls in order: for rb each depth's multilevel job (pieces, vertices, its coarsening,
initial partition and refinement, and each level's vertices and Jet iterations); for minconn
each level's ``minimize_connectivity`` and its rounds; for contig ``make_contiguous``; for vol
``refine_volume``. Then the totals of the inner steps of contig and minconn (their rounds'
methods), outermost calls only.
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import gpmetis  # noqa: E402
from bench.common import generated_graph  # noqa: E402
from gpmetis.partitioning import multilevel, recursive  # noqa: E402
from gpmetis.refinement import contiguity, minconn  # noqa: E402

MODES = {"rb": {"ptype": "rb"}, "contig": {"contig": True}, "minconn": {"minconn": True},
         "vol": {"objtype": "vol"}}
CALLS: list[str] = []  # the mode's calls of the timed run, in order
INNER: collections.Counter = collections.Counter()  # inner step -> seconds
COUNTS: collections.Counter = collections.Counter()
_depth = [0]


def _synchronised(be, run):
    be.synchronize()
    start = time.perf_counter()
    out = run()
    be.synchronize()
    return out, time.perf_counter() - start


def _wrap_bisections() -> None:
    inner = recursive.multilevel_bisections

    def timed(g, labels, tpwgts, options, seed):
        (part, stats), seconds = _synchronised(g.be, lambda: inner(g, labels, tpwgts, options,
                                                                   seed))
        levels = [(lvl["nvtxs"], lvl["refine_iterations"]) for lvl in stats.levels]
        CALLS.append(f"depth of {len(tpwgts)} pieces, {g.nvtxs} vertices: {seconds * 1e3:.1f} ms"
                     f" (coarsening {stats.coarsening * 1e3:.1f}, initial "
                     f"{stats.initial * 1e3:.1f}, refinement {stats.refinement * 1e3:.1f}); "
                     f"levels (vertices, iterations) {levels}")
        return part, stats

    recursive.multilevel_bisections = timed


def _wrap_call(module, name: str) -> None:
    """Time every call of module.name(be, g, ...) returning (part, rounds)."""
    inner = getattr(module, name)

    def timed(be, g, *args, **kwargs):
        out, seconds = _synchronised(be, lambda: inner(be, g, *args, **kwargs))
        CALLS.append(f"{name}, {g.nvtxs} vertices: {seconds * 1e3:.1f} ms, rounds {out[1]}")
        return out

    setattr(module, name, timed)


def _wrap_inner(cls, name: str) -> None:
    """Sum the time of the outermost calls of the method cls.name (``self.be`` its backend)."""
    inner = getattr(cls, name)

    def timed(self, *args, **kwargs):
        if _depth[0]:
            return inner(self, *args, **kwargs)
        _depth[0] += 1
        try:
            out, seconds = _synchronised(self.be, lambda: inner(self, *args, **kwargs))
        finally:
            _depth[0] -= 1
        key = f"{cls.__name__}.{name}"
        INNER[key] += seconds
        COUNTS[key] += 1
        return out

    setattr(cls, name, timed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("specs", nargs="+", help="KIND:SIZE:K:MODE, e.g. grid3d:100:64:rb")
    parser.add_argument("--engine", default="gpu", choices=("gpu", "cpu"))
    parser.add_argument("--workdir", default=".bench")
    args = parser.parse_args()
    _wrap_bisections()
    _wrap_call(multilevel, "minimize_connectivity")
    _wrap_call(multilevel, "refine_volume")
    _wrap_call(contiguity, "make_contiguous")
    for name in ("merge_components", "rebalance_round", "refine_round"):
        _wrap_inner(contiguity.Contiguity, name)
    for name in ("merge_fragments", "vertex_part_pairs", "eliminate_round", "constrained_round"):
        _wrap_inner(minconn.MinConn, name)
    for spec in args.specs:
        kind, size, k, mode = spec.split(":")
        graph = gpmetis.read_graph(generated_graph(kind, int(size), Path(args.workdir)))
        options = {"engine": args.engine, **MODES[mode]}
        gpmetis.partition(graph, int(k), **options)
        gpmetis.partition(graph, int(k), engine=args.engine)
        CALLS.clear()
        INNER.clear()
        COUNTS.clear()
        start = time.perf_counter()
        result = gpmetis.partition(graph, int(k), **options)
        seconds = time.perf_counter() - start
        start = time.perf_counter()
        gpmetis.partition(graph, int(k), engine=args.engine)
        plain = time.perf_counter() - start
        print(f"{spec}: {seconds:.3f} s (plain k-way run {plain:.3f} s), cut {result.edgecut}")
        for line in CALLS:
            print(f"  {line}")
        for key, total in INNER.most_common():
            print(f"  {key}: {COUNTS[key]} calls, {total * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
