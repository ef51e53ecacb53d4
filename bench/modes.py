"""The modes of issue 38 against METIS 5.1's ``gpmetis`` with the same option: ``-ptype=rb``,
``-contig`` and ``-objtype=vol``, side by side per graph and k.

    python bench/modes.py [--engine cpu|gpu] [--ks 2,8,64] [--modes rb,contig,vol]
                          [--graphs NAME,...] [--generated delaunay:20 ...]

Prints, per mode, graph and k: our cut and communication volume, METIS's, the ratio of the
mode's objective (the volume for vol, else the cut), our worst balance (rb: the bisections over
their per-bisection limit, ``-`` when none), whether every part is connected (contig;
``ignored`` on a graph of several components, as METIS does), and both partitioning times; then
the geometric mean ratio per mode, naming its objective. Without METIS's binary only our columns are
filled. ``--generated`` graphs come from gen_graph.py (timed as the median of ``--repeat``
runs with the graph in memory, after one warm-up run).
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import ROOT, generated_graph, geomean, metis_binary, print_table

MODES = {"rb": ({"ptype": "rb"}, ["-ptype=rb"]), "contig": ({"contig": True}, ["-contig"]),
         "vol": ({"objtype": "vol"}, ["-objtype=vol"])}
OBJECTIVES = {"vol": "volume"}  # the figure a mode is scored by (others: the cut)


def run_metis_mode(prefix: list[str], path: Path, k: int, flags: list[str]) -> dict:
    """METIS's cut, communication volume, partitioning time and contiguity with ``flags``."""
    out = subprocess.run([*prefix, str(path), str(k), "-nooutput", *flags], capture_output=True,
                         text=True, check=True).stdout
    line = re.search(r"Edgecut: (\d+), communication volume: (\d+)\.", out)
    return {"cut": int(line.group(1)), "volume": int(line.group(2)),
            "seconds": float(re.search(r"Partitioning:\s+([\d.]+)", out).group(1)),
            "contiguous": "Each partition is contiguous" in out}


def run_ours(gpmetis, graph, k: int, engine: str, mode: str, repeat: int) -> dict:
    """Our cut and volume, median partitioning time of ``repeat`` runs, balance and
    contiguity."""
    kwargs = MODES[mode][0]
    times = []
    for _ in range(repeat):
        result = gpmetis.partition(graph, k, engine=engine, **kwargs)
        times.append(result.seconds)
    m = result.metrics
    connected = m.part_components == k
    contig = ("ignored" if result.stats.get("contig") else
              "yes" if connected else f"no ({m.noncontiguous} split)")
    rb_over = [w for w in result.warnings if w.startswith("bisection")]
    return {"cut": result.edgecut, "volume": result.volume, "seconds": statistics.median(times),
            "imbalance": result.imbalance, "contiguous": contig,
            "rb_over": str(len(rb_over)) if rb_over else "-", "engine": result.engine}


def main() -> None:
    import gpmetis
    from gpmetis.io import read_graph

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--engine", default="cpu", choices=("cpu", "gpu"))
    parser.add_argument("--ks", default="2,8,64")
    parser.add_argument("--modes", default="rb,contig,vol")
    parser.add_argument("--graphs", default="", help="fixture names (default: every .graph)")
    parser.add_argument("--generated", nargs="*", default=[], help="KIND:SIZE, e.g. delaunay:20")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--workdir", default="/tmp/gpmetis-bench")
    args = parser.parse_args()

    paths = ([ROOT / "fixtures" / f"{n}.graph" for n in args.graphs.split(",")] if args.graphs
             else sorted((ROOT / "fixtures").glob("*.graph")))
    paths += [generated_graph(*spec.split(":")[:1], int(spec.split(":")[1]), Path(args.workdir))
              for spec in args.generated]
    ks = [int(k) for k in args.ks.split(",")]
    metis = metis_binary()
    rows = []
    for path in paths:
        graph = read_graph(path)
        generated = path.parent != ROOT / "fixtures"
        for mode in args.modes.split(","):
            for k in ks:
                if generated:  # warm-up: kernels loaded, workers started
                    run_ours(gpmetis, graph, k, args.engine, mode, 1)
                start = time.perf_counter()
                ours = run_ours(gpmetis, graph, k, args.engine, mode,
                                args.repeat if generated else 1)
                row = {"graph": path.stem, "n": graph.nvtxs, "mode": mode, "k": k,
                       "cut": ours["cut"], "volume": ours["volume"], "imb": ours["imbalance"],
                       "rb_over": ours["rb_over"],
                       "contig": ours["contiguous"], "s": ours["seconds"],
                       "wall": time.perf_counter() - start}
                if metis:
                    theirs = run_metis_mode(metis, path, k, MODES[mode][1])
                    objective = OBJECTIVES.get(mode, "cut")
                    row.update(metis_cut=theirs["cut"], metis_volume=theirs["volume"],
                               metis_s=theirs["seconds"],
                               ratio=ours[objective] / max(theirs[objective], 1),
                               speedup=theirs["seconds"] / max(ours["seconds"], 1e-9),
                               metis_contig="yes" if theirs["contiguous"] else "no")
                rows.append(row)
                print(f"{path.stem} {mode} k={k}: {row}", file=sys.stderr, flush=True)
    print(f"engine: {args.engine}")
    print_table(rows, [("graph", "graph", ""), ("n", "n", "d"), ("mode", "mode", ""),
                       ("k", "k", "d"), ("cut", "cut", "d"), ("metis_cut", "METIS cut", "d"),
                       ("volume", "volume", "d"), ("metis_volume", "METIS volume", "d"),
                       ("ratio", "objective / METIS", ".3f"), ("imb", "imbalance", ".3f"),
                       ("rb_over", "rb bisections over", ""), ("contig", "connected", ""),
                       ("metis_contig", "METIS connected", ""), ("s", "ours s", ".3f"),
                       ("metis_s", "METIS s", ".3f"), ("speedup", "speed-up", ".1f")])
    for mode in args.modes.split(","):
        ratios = [r["ratio"] for r in rows if r["mode"] == mode and "ratio" in r]
        if ratios:
            print(f"geometric mean {OBJECTIVES.get(mode, 'cut')} / METIS, {mode}: "
                  f"{geomean(ratios):.3f} "
                  f"({len(ratios)} runs, worst {max(ratios):.3f})")


if __name__ == "__main__":
    main()
