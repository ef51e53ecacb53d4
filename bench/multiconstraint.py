"""``make quality`` (multi-constraint part): our cut and per-constraint balance against METIS
5.1's ``gpmetis`` on the shared graphs given 2 and 3 vertex weights (1, the degree, and a
seeded random 1-5), run side by side at each k.

Prints graph, ncon, k, our cut, METIS's cut, the ratio, both worst constraint balances and
times, then the geometric mean ratio per ncon and the worst row; with ``--objtype vol`` both
run ``-objtype=vol`` and the figures are communication volumes; with ``--contig`` both run
``-contig`` (the graphs that are not connected are left out) and a column says whether every
part of ours is connected. Needs METIS's binary
(docs/performance.md says how to unpack it); without it only our columns are filled.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import ROOT, geomean, metis_binary, print_table, run_metis

RANDOM_SEED = 1
OBJECTIVE = {"cut": "cut", "vol": "volume"}  # the figure compared, per -objtype


def _flags(args) -> tuple[str, ...]:
    """METIS's options for the objective and mode asked."""
    return (("-objtype=vol",) if args.objtype == "vol" else ()) + (
        ("-contig",) if args.contig else ())


def _options(args) -> dict:
    """Our options for the objective and mode asked."""
    return {"engine": args.engine, "objtype": args.objtype, "contig": args.contig}


def _objective(result, args) -> int:
    """Our figure for the objective asked: the edge cut or the communication volume."""
    return result.volume if args.objtype == "vol" else result.edgecut


def constraint_weights(graph, ncon: int) -> np.ndarray:
    """(n, ncon) int64: 1, the degree, a seeded random 1-5 (the first ``ncon`` of them)."""
    rng = np.random.default_rng(RANDOM_SEED)
    columns = [np.ones(graph.nvtxs, np.int64), np.maximum(graph.degrees(), 1),
               rng.integers(1, 6, graph.nvtxs)]
    return np.stack(columns[:ncon], axis=1)


def write_metis(path: Path, graph, vwgt: np.ndarray) -> None:
    """``graph`` with ``vwgt`` as a METIS file (fmt 011 or 010 with ncon weights), written by
    laying every line's tokens out in one array."""
    n, ncon = vwgt.shape
    per_entry = 2 if graph.has_adjwgt else 1
    degree = np.diff(graph.xadj)
    length = ncon + per_entry * degree  # tokens per line
    ends = np.cumsum(length)
    tokens = np.empty(int(ends[-1]) if n else 0, dtype=np.int64)
    starts = ends - length
    row_of_token = np.repeat(np.arange(n), length)
    offset = np.arange(len(tokens)) - starts[row_of_token]
    is_weight = offset < ncon
    tokens[is_weight] = vwgt[row_of_token[is_weight], offset[is_weight]]
    entry = graph.xadj[row_of_token[~is_weight]] + (offset[~is_weight] - ncon) // per_entry
    neighbour = (offset[~is_weight] - ncon) % per_entry == 0
    tokens[~is_weight] = np.where(neighbour, graph.adjncy[entry] + 1,
                                  graph.adjwgt[entry] if graph.has_adjwgt else 0)
    separators = np.full(len(tokens), " ")
    separators[ends - 1] = "\n"
    fmt = "011" if graph.has_adjwgt else "010"
    body = "".join(np.char.add(tokens.astype(str), separators))
    path.write_text(f"{graph.nvtxs} {graph.nedges} {fmt} {ncon}\n{body}")


def main() -> None:
    import gpmetis
    from gpmetis.graph import Graph

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--engine", default="cpu")
    parser.add_argument("--ks", default="2,8,64")
    parser.add_argument("--ncons", default="2,3")
    parser.add_argument("--graphs", default=None, help="comma-separated shared graph names")
    parser.add_argument("--generated", default=None,
                        help="gen_graph.py graphs as KIND:SIZE:NCON,... (timed in process: "
                             "median of --repeat runs after a warm-up, single-constraint "
                             "time alongside; METIS's median of --repeat runs)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--objtype", default="cut", choices=("cut", "vol"))
    parser.add_argument("--contig", action="store_true")
    parser.add_argument("--workdir", default=str(ROOT / ".bench"))
    args = parser.parse_args()
    workdir = Path(args.workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    names = (args.graphs.split(",") if args.graphs else
             sorted(p.stem for p in (ROOT / "fixtures").glob("*.graph")))
    metis = metis_binary()
    if args.generated:
        _generated(gpmetis, Graph, args, metis, workdir)
        return
    rows = []
    for name in names:
        base = gpmetis.read_graph(ROOT / "fixtures" / f"{name}.graph")
        if args.contig and not _connected(base):
            continue
        for ncon in (int(c) for c in args.ncons.split(",")):
            vwgt = constraint_weights(base, ncon)
            graph = Graph.from_csr(base.xadj, base.adjncy, vwgt,
                                   base.adjwgt if base.has_adjwgt else None, name=name)
            path = workdir / f"{name}.ncon{ncon}.graph"
            if metis:
                write_metis(path, base, vwgt)
            for k in (int(x) for x in args.ks.split(",")):
                ref = run_metis(metis, path, k, _flags(args)) if metis else None
                start = time.perf_counter()
                result = gpmetis.partition(graph, k, **_options(args))
                seconds = time.perf_counter() - start
                ours = _objective(result, args)
                rows.append({
                    "graph": name, "ncon": ncon, "k": k, "cut": ours,
                    "metis": ref[OBJECTIVE[args.objtype]] if ref else None,
                    "ratio": ours / max(ref[OBJECTIVE[args.objtype]], 1) if ref else None,
                    "imb": max(result.metrics.imbalance),
                    "metis_imb": max(ref["imbalances"]) if ref else None,
                    "seconds": seconds, "metis_seconds": ref["seconds"] if ref else None,
                    "connected": "yes" if result.metrics.part_components == k else "no",
                })
    name = OBJECTIVE[args.objtype]
    print_table(rows, [("graph", "graph", ""), ("ncon", "ncon", "d"), ("k", "k", "d"),
                       ("cut", f"our {name}", "d"), ("metis", f"METIS {name}", "d"),
                       ("ratio", "ratio", ".3f"), ("imb", "our max balance", ".3f"),
                       ("metis_imb", "METIS max balance", ".3f"), ("seconds", "our s", ".2f"),
                       ("metis_seconds", "METIS s", ".3f"),
                       *([("connected", "every part connected", "")] if args.contig else [])])
    print()
    for ncon in sorted({r["ncon"] for r in rows}):
        print(f"geometric mean ratio ncon={ncon}: "
              f"{geomean(r['ratio'] for r in rows if r['ncon'] == ncon):.3f}")
    print(f"geometric mean ratio all: {geomean(r['ratio'] for r in rows):.3f}")
    worst = max(rows, key=lambda r: r["ratio"] or 0)
    print(f"worst: {worst['graph']} ncon={worst['ncon']} k={worst['k']} "
          f"{worst['ratio'] or float('nan'):.3f}; max balance ours "
          f"{max(r['imb'] for r in rows):.4f}")


def _connected(graph) -> bool:
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components

    n = graph.nvtxs
    matrix = csr_matrix((np.ones(len(graph.adjncy)), graph.adjncy, graph.xadj), shape=(n, n))
    return connected_components(matrix, directed=False)[0] == 1


def _generated(gpmetis, Graph, args, metis, workdir: Path) -> None:
    """The speed table: ours (ncon weights and the plain graph) against METIS 5.1."""
    from bench.common import generated_graph

    rows = []
    for spec in args.generated.split(","):
        kind, size, ncon = spec.split(":")
        base_path = generated_graph(kind, int(size), workdir)
        base = gpmetis.read_graph(base_path)
        vwgt = constraint_weights(base, int(ncon))
        graph = Graph.from_csr(base.xadj, base.adjncy, vwgt,
                               base.adjwgt if base.has_adjwgt else None)
        path = workdir / f"{kind}{size}.ncon{ncon}.graph"
        if metis and not path.exists():
            write_metis(path, base, vwgt)
        for k in (int(x) for x in args.ks.split(",")):
            # METIS's time moves as much as ours between runs: its median run too
            refs = sorted((run_metis(metis, path, k, _flags(args)) for _ in range(args.repeat)),
                          key=lambda r: r["seconds"]) if metis else [None]
            ref = refs[len(refs) // 2]
            timed = {}
            for label, g in (("mc", graph), ("plain", base)):
                gpmetis.partition(g, k, **_options(args))  # warm-up
                runs = [gpmetis.partition(g, k, **_options(args)) for _ in range(args.repeat)]
                timed[label] = sorted(runs, key=lambda r: r.seconds)[len(runs) // 2]
            ours = timed["mc"]
            value = _objective(ours, args)
            rows.append({
                "graph": f"{kind} {size}", "ncon": int(ncon), "k": k, "cut": value,
                "metis": ref[OBJECTIVE[args.objtype]] if ref else None,
                "ratio": value / ref[OBJECTIVE[args.objtype]] if ref else None,
                "imb": max(ours.metrics.imbalance),
                "metis_imb": max(ref["imbalances"]) if ref else None,
                "seconds": ours.seconds, "plain": timed["plain"].seconds,
                "metis_seconds": ref["seconds"] if ref else None,
                "speedup": ref["seconds"] / ours.seconds if ref else None,
                "vs_plain": ours.seconds / timed["plain"].seconds,
                "connected": "yes" if ours.metrics.part_components == k else "no",
            })
    name = OBJECTIVE[args.objtype]
    print_table(rows, [("graph", "graph", ""), ("ncon", "ncon", "d"), ("k", "k", "d"),
                       ("cut", f"our {name}", "d"), ("metis", f"METIS {name}", "d"),
                       ("ratio", f"{name} / METIS", ".3f"), ("imb", "our max balance", ".3f"),
                       ("metis_imb", "METIS max balance", ".3f"), ("seconds", "ours s", ".3f"),
                       ("plain", "ours ncon=1 s", ".3f"), ("vs_plain", "x ncon=1", ".2f"),
                       ("metis_seconds", "METIS s", ".2f"), ("speedup", "x METIS", ".1f"),
                       *([("connected", "every part connected", "")] if args.contig else [])])


if __name__ == "__main__":
    main()
