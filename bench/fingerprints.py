"""Fingerprints of the partitions a matrix of graphs x nparts x modes x ncon gives, to show that a
refactor changes no result: record them before moving code, compare after each step.

    python bench/fingerprints.py --engine cpu --out before.json
    python bench/fingerprints.py --engine cpu --compare before.json

Each entry is the SHA-256 of the part array (int64) of one run through ``gpmetis.partition``.
A second constraint, where asked for, is derived from the graph (1 + degree mod 3), so the
matrix needs no files beyond the shared graphs.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
GRAPHS = ("4elt.graph", "rgg_n_2_15_s0.graph", "delaunay_n15.graph", "PGPgiantcompo.graph",
          "power.graph", "bcsstk13.mtx")
NPARTS = (2, 8, 64)
MODES = {
    "cut": {}, "rb": {"ptype": "rb"}, "vol": {"objtype": "vol"}, "contig": {"contig": True},
    "minconn": {"minconn": True}, "strong": {"preset": "strong"},
}


def graph_path(name: str) -> Path:
    for folder in (ROOT.parent / "shared" / "graphs", ROOT / "fixtures"):
        if (folder / name).exists():
            return folder / name
    raise SystemExit(f"{name} not found in ../shared/graphs or fixtures/")


def with_two_constraints(graph):
    from gpmetis.graph import Graph

    degree = np.diff(graph.xadj)
    vwgt = np.stack([np.ones_like(degree), 1 + degree % 3], axis=1)
    return Graph.from_csr(graph.xadj, graph.adjncy, vwgt, graph.adjwgt, name=graph.name)


def fingerprints(engine: str, graphs: list[str], nparts: list[int], modes: list[str],
                 ncons: list[int]) -> dict[str, str]:
    """{"graph k=K mode ncon=C": sha256 of the part array} over the matrix."""
    from gpmetis.api import partition
    from gpmetis.io import read_graph

    out = {}
    for name in graphs:
        base = read_graph(graph_path(name))
        for ncon in ncons:
            graph = base if ncon == 1 else with_two_constraints(base)
            for k in nparts:
                for mode in modes:
                    part = partition(graph, k, engine=engine, **MODES[mode]).part
                    digest = hashlib.sha256(np.asarray(part, dtype=np.int64).tobytes())
                    out[f"{name} k={k} {mode} ncon={ncon}"] = digest.hexdigest()[:16]
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine", default="cpu", choices=("cpu", "gpu"))
    parser.add_argument("--graphs", default=",".join(GRAPHS))
    parser.add_argument("--nparts", default=",".join(map(str, NPARTS)))
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--ncon", default="1,2")
    parser.add_argument("--out", type=Path, help="write the fingerprints to this JSON file")
    parser.add_argument("--compare", type=Path, help="compare with this recorded JSON file")
    args = parser.parse_args()
    start = time.perf_counter()
    found = fingerprints(args.engine, args.graphs.split(","),
                         [int(k) for k in args.nparts.split(",")], args.modes.split(","),
                         [int(c) for c in args.ncon.split(",")])
    print(f"{len(found)} runs in {time.perf_counter() - start:.1f} s", file=sys.stderr)
    if args.out:
        args.out.write_text(json.dumps(found, indent=1, sort_keys=True) + "\n")
    if not args.compare:
        return 0
    recorded = json.loads(args.compare.read_text())
    changed = sorted(key for key in found if key in recorded and recorded[key] != found[key])
    for key in changed:
        print(f"changed: {key}")
    print(f"{len(changed)} of {sum(k in recorded for k in found)} recorded partitions changed")
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())
