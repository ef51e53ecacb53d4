"""The modes of issue 38 against METIS 5.1's ``gpmetis`` with the same option: ``-ptype=rb``,
``-contig``, ``-objtype=vol`` and ``-minconn``, side by side per graph and k.

    python bench/modes.py [--engine cpu|gpu] [--ks 2,8,64] [--modes rb,contig,vol,minconn]
                          [--graphs NAME,...] [--generated delaunay:20 ...] [--ncon 2]

Prints, per mode, graph and k: our cut and communication volume, METIS's, the ratio of the
mode's objective (the volume for vol, else the cut), our worst balance (rb: the bisections over
their per-bisection limit, ``-`` when none), whether every part is connected (contig;
``ignored`` on a graph of several components, as METIS does), the largest subdomain degree (the
most parts one part is adjacent to) of both and its ratio, and both partitioning times; contig,
vol and minconn rows also show our cut without the mode. Then the geometric mean ratios per
mode, naming the objective (minconn: also of the degree), and the runs over the balance limit.
Without METIS's binary only our columns are filled. ``--generated`` graphs come from
gen_graph.py (timed as the median of ``--repeat`` runs with the graph in memory, after one
warm-up run). ``--ncon 2`` or ``3`` gives every graph that many vertex weights (1, the degree,
a seeded random 1-5, as bench/multiconstraint.py; METIS reads the same weighted file; the
imbalances are the worst constraint's).
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
         "vol": ({"objtype": "vol"}, ["-objtype=vol"]),
         "minconn": ({"minconn": True}, ["-minconn"])}
OBJECTIVES = {"vol": "volume"}  # the figure a mode is scored by (others: the cut)


def run_metis_mode(prefix: list[str], path: Path, k: int, flags: list[str]) -> dict:
    """METIS's cut, communication volume, partitioning time, balance, contiguity and largest
    subdomain degree with ``flags``."""
    out = subprocess.run([*prefix, str(path), str(k), "-nooutput", *flags], capture_output=True,
                         text=True, check=True).stdout
    line = re.search(r"Edgecut: (\d+), communication volume: (\d+)\.", out)
    return {"cut": int(line.group(1)), "volume": int(line.group(2)),
            "seconds": float(re.search(r"Partitioning:\s+([\d.]+)", out).group(1)),
            "imbalance": max(float(x) for x in re.findall(r"constraint #\d+:\s+([\d.]+)", out)),
            "contiguous": "Each partition is contiguous" in out,
            "maxdeg": int(re.search(r"Subdomain connectivity: max: (\d+)", out).group(1))}


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
    # (a multi-constraint graph's lines start with their constraint)
    rb_over = [w for w in result.warnings if "bisection" in w]
    return {"cut": result.edgecut, "volume": result.volume, "seconds": statistics.median(times),
            "imbalance": result.imbalance, "contiguous": contig, "maxdeg": m.maxndom,
            "over": any(w.startswith("constraint") for w in result.warnings if w not in rb_over),
            "rb_over": str(len(rb_over)) if rb_over else "-", "engine": result.engine}


def _weighted(graph, path: Path, ncon: int, workdir: Path, metis) -> tuple:
    """``graph`` with ``ncon`` vertex weights, and the METIS file holding it (written for
    METIS where it is installed)."""
    from bench.multiconstraint import constraint_weights, write_metis
    from gpmetis.graph import Graph

    vwgt = constraint_weights(graph, ncon)
    weighted = Graph.from_csr(graph.xadj, graph.adjncy, vwgt,
                              graph.adjwgt if graph.has_adjwgt else None, name=graph.name)
    out = workdir / f"{path.stem}.ncon{ncon}.graph"
    if metis and not out.exists():
        workdir.mkdir(parents=True, exist_ok=True)
        write_metis(out, graph, vwgt)
    return weighted, out


def main() -> None:
    import gpmetis
    from gpmetis.io import read_graph

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--engine", default="cpu", choices=("cpu", "gpu"))
    parser.add_argument("--ks", default="2,8,64")
    parser.add_argument("--modes", default="rb,contig,vol,minconn")
    parser.add_argument("--graphs", default="",
                        help="fixture names (default: every .graph; none: only --generated)")
    parser.add_argument("--generated", nargs="*", default=[], help="KIND:SIZE, e.g. delaunay:20")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--workdir", default="/tmp/gpmetis-bench")
    parser.add_argument("--ncon", type=int, default=1)
    args = parser.parse_args()

    if args.graphs == "none":
        paths = []
    elif args.graphs:
        paths = [ROOT / "fixtures" / f"{n}.graph" for n in args.graphs.split(",")]
    else:
        paths = sorted((ROOT / "fixtures").glob("*.graph"))
    paths += [generated_graph(*spec.split(":")[:1], int(spec.split(":")[1]), Path(args.workdir))
              for spec in args.generated]
    ks = [int(k) for k in args.ks.split(",")]
    metis = metis_binary()
    rows = []
    for path in paths:
        graph = read_graph(path)
        generated = path.parent != ROOT / "fixtures"
        if args.ncon > 1:
            graph, path = _weighted(graph, path, args.ncon, Path(args.workdir), metis)
        for mode in args.modes.split(","):
            for k in ks:
                if generated:  # warm-up: kernels loaded, workers started
                    run_ours(gpmetis, graph, k, args.engine, mode, 1)
                start = time.perf_counter()
                ours = run_ours(gpmetis, graph, k, args.engine, mode,
                                args.repeat if generated else 1)
                row = {"graph": path.stem, "n": graph.nvtxs, "mode": mode, "k": k,
                       "cut": ours["cut"], "volume": ours["volume"], "imb": ours["imbalance"],
                       "rb_over": ours["rb_over"], "over": ours["over"],
                       "contig": ours["contiguous"], "maxdeg": ours["maxdeg"],
                       "s": ours["seconds"],
                       "wall": time.perf_counter() - start}
                if metis:
                    theirs = run_metis_mode(metis, path, k, MODES[mode][1])
                    objective = OBJECTIVES.get(mode, "cut")
                    row.update(metis_cut=theirs["cut"], metis_volume=theirs["volume"],
                               metis_s=theirs["seconds"],
                               ratio=ours[objective] / max(theirs[objective], 1),
                               speedup=theirs["seconds"] / max(ours["seconds"], 1e-9),
                               metis_imb=theirs["imbalance"],
                               metis_contig="yes" if theirs["contiguous"] else "no",
                               metis_maxdeg=theirs["maxdeg"],
                               deg_ratio=ours["maxdeg"] / max(theirs["maxdeg"], 1))
                if mode != "rb":  # the same run without the mode: what the mode costs in cut
                    plain = gpmetis.partition(graph, k, engine=args.engine).edgecut
                    row.update(plain_cut=plain, vs_plain=ours["cut"] / max(plain, 1))
                rows.append(row)
                print(f"{path.stem} {mode} k={k}: {row}", file=sys.stderr, flush=True)
    print(f"engine: {args.engine}")
    print_table(rows, [("graph", "graph", ""), ("n", "n", "d"), ("mode", "mode", ""),
                       ("k", "k", "d"), ("cut", "cut", "d"), ("metis_cut", "METIS cut", "d"),
                       ("volume", "volume", "d"), ("metis_volume", "METIS volume", "d"),
                       ("ratio", "objective / METIS", ".3f"), ("plain_cut", "our plain cut", "d"),
                       ("vs_plain", "cut / plain", ".3f"), ("imb", "imbalance", ".3f"),
                       ("metis_imb", "METIS imbalance", ".3f"),
                       ("rb_over", "rb bisections over", ""), ("contig", "connected", ""),
                       ("metis_contig", "METIS connected", ""), ("maxdeg", "max degree", "d"),
                       ("metis_maxdeg", "METIS max degree", "d"),
                       ("deg_ratio", "degree / METIS", ".3f"), ("s", "ours s", ".3f"),
                       ("metis_s", "METIS s", ".3f"), ("speedup", "speed-up", ".1f")])
    for mode in args.modes.split(","):
        ratios = [r["ratio"] for r in rows if r["mode"] == mode and "ratio" in r]
        if ratios:
            print(f"geometric mean {OBJECTIVES.get(mode, 'cut')} / METIS, {mode}: "
                  f"{geomean(ratios):.3f} "
                  f"({len(ratios)} runs, worst {max(ratios):.3f})")
        plain = [r["vs_plain"] for r in rows if r["mode"] == mode and "vs_plain" in r]
        if plain:
            print(f"geometric mean cut / our plain run, {mode}: {geomean(plain):.3f}")
        degrees = [r["deg_ratio"] for r in rows if r["mode"] == mode and "deg_ratio" in r]
        if degrees:
            print(f"geometric mean largest subdomain degree / METIS, {mode}: "
                  f"{geomean(degrees):.3f} (worst {max(degrees):.3f})")
        over = [r for r in rows if r["mode"] == mode and r["over"]]
        print(f"{mode}: {len(over)} of {sum(r['mode'] == mode for r in rows)} runs over the "
              f"balance limit")


if __name__ == "__main__":
    main()
