"""``make bench``: gpmetis against METIS 5.1, pymetis and KaMinPar on generated graphs.

For each graph and k: our partition time (graph in memory, warm kernels, median of --repeat runs)
and the undirected edges per second of it, our whole-command wall time (cold processes; with
Python's bytecode cached, as an installed package has it, the median of --wall-runs, each beside
a fresh Python that only imports NumPy and, for a gpu run, CuPy: the floor any such program
pays; and one run without the cache), METIS's partitioning and wall time, pymetis's time,
KaMinPar's time (16 threads, eps 0.03), with cuts, imbalance and ratios; ``--preset strong``
times our strong preset. Peers that are not installed are skipped and named. Prints one table
and writes JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import ROOT, generated_graph, geomean, metis_peer, print_table

DEFAULT_CASES = [
    ("delaunay", 20, 64), ("delaunay", 20, 8), ("delaunay", 20, 256), ("delaunay", 22, 64),
    ("rgg", 20, 64), ("rmat", 20, 64), ("grid3d", 100, 64), ("road", 20, 64), ("road", 23, 64),
    ("grid3d", 300, 64), ("rgg", 23, 64),
]


def _median_time(fn, repeat: int):
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def _fresh_process(args: list[str], env: dict[str, str]) -> float:
    """Seconds of ``python ARGS`` as a fresh process, with ``env`` for its bytecode cache."""
    environ = {key: v for key, v in os.environ.items()
               if key not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")} | env
    start = time.perf_counter()
    subprocess.run([sys.executable, *args], check=True, cwd=ROOT, env=environ)
    return time.perf_counter() - start


def _cold_command(path: Path, k: int, report: Path, env: dict[str, str], preset: str) -> float:
    """Seconds of ``gpmetis PATH K`` as a fresh process (no output file, report to JSON)."""
    return _fresh_process(["-m", "cli.main", str(path), str(k), "-nooutput", "-quiet",
                           f"-json={report}", f"-preset={preset}"], env)


def bench_case(kind: str, size: int, k: int, args, skipped: set[str]) -> dict:
    import gpmetis

    path = generated_graph(kind, size, Path(args.workdir))
    t0 = time.perf_counter()
    graph = gpmetis.read_graph(path)
    row = {"graph": f"{kind} {size}", "k": k, "n": graph.nvtxs, "m": graph.nedges,
           "read": time.perf_counter() - t0}
    # warm-up: kernels compiled, pool started
    gpmetis.partition(graph, k, engine=args.engine, preset=args.preset)
    runs = [gpmetis.partition(graph, k, engine=args.engine, preset=args.preset)
            for _ in range(args.repeat)]
    row["ours"] = statistics.median(r.seconds for r in runs)  # engine time, metrics excluded
    row["medges_s"] = graph.nedges / row["ours"] / 1e6  # undirected edges per partition second
    result = runs[-1]
    row["cut"] = result.edgecut
    row["imb"] = result.imbalance
    row["phases"] = {p: result.stats.get(p) for p in ("coarsening", "initial", "refinement")}
    row["levels"] = len(result.stats.get("levels", []))
    # bytes of the CSR arrays as the GPU holds them: xadj int64, adjncy/adjwgt/vwgt int32
    row["csr_mb"] = (8 * (graph.nvtxs + 1) + 8 * len(graph.adjncy) + 4 * graph.nvtxs) / 2**20
    report = Path(args.workdir) / "wall_report.json"
    row["wall_nopyc"] = _cold_command(path, k, report, {"PYTHONDONTWRITEBYTECODE": "1"},
                                      args.preset)
    # an installed gpmetis and CuPy come with compiled bytecode; the GPU machine's Python
    # writes none and its CuPy has little, so the measured run reads a cache the run before
    # it filled
    cache = {"PYTHONPYCACHEPREFIX": str(Path(args.workdir).resolve() / "pycache")}
    _cold_command(path, k, report, cache, args.preset)
    wall_report = json.loads(report.read_text())
    row["wall_engine"] = wall_report["engine"]
    floor = ["-c", "import numpy, cupy" if row["wall_engine"] == "gpu" else "import numpy"]
    walls, floors = [], []
    for _ in range(args.wall_runs):  # alternating: both see the machine as it is then
        walls.append(_cold_command(path, k, report, cache, args.preset))
        floors.append(_fresh_process(floor, cache))
    row["wall"], row["floor"] = statistics.median(walls), statistics.median(floors)
    row["over_floor"] = row["wall"] - row["floor"]
    # the pool of the one-run process: this graph's peak alone
    row["gpu_mb"] = wall_report["memory"]["peak_gpu_bytes"] / 2**20
    row["gpu_x_csr"] = row["gpu_mb"] / row["csr_mb"]

    if m := metis_peer(path, k, skipped):
        row.update(metis_s=m["seconds"], metis_wall=m["wall"], metis_cut=m["cut"])
    try:
        import pymetis

        adj = pymetis.CSRAdjacency(graph.xadj, graph.adjncy)
        row["pymetis_s"], ref = _median_time(
            lambda: pymetis.part_graph(k, adj, recursive=False), 1)
        row["pymetis_cut"] = ref.edge_cuts
    except ImportError:
        skipped.add("pymetis")
    try:
        import kaminpar

        kg = kaminpar.load_graph(str(path), kaminpar.GraphFileFormat.METIS)
        solver = kaminpar.KaMinPar(args.threads, kaminpar.default_context())
        row["kaminpar_s"], kpart = _median_time(
            lambda: solver.compute_partition(kg, k, 0.03), args.repeat)
        row["kaminpar_cut"] = kaminpar.edge_cut(kg, kpart)
    except ImportError:
        skipped.add("KaMinPar")
    if row.get("metis_s"):
        row["x_metis"] = row["metis_s"] / row["ours"]
        row["x_metis_wall"] = row["metis_wall"] / row["wall"]
        row["x_metis_wall_nopyc"] = row["metis_wall"] / row["wall_nopyc"]
        row["cut_vs_metis"] = row["cut"] / row["metis_cut"]
    if row.get("kaminpar_s"):
        row["x_kaminpar"] = row["kaminpar_s"] / row["ours"]
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cases", default=None,
                        help="comma list kind:size:k (default: the issue's set)")
    parser.add_argument("--workdir", default=str(ROOT / ".bench"))
    parser.add_argument("--engine", default="gpu")
    parser.add_argument("--preset", default="default", help="our preset: default or strong")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--threads", type=int, default=16)
    parser.add_argument("--wall-runs", type=int, default=3,
                        help="cold whole commands per case (median), each beside a floor run")
    parser.add_argument("--json", default=str(ROOT / ".bench" / "bench.json"))
    args = parser.parse_args()
    cases = DEFAULT_CASES
    if args.cases:
        cases = [tuple(int(x) if x.isdigit() else x for x in c.split(":"))
                 for c in args.cases.split(",")]
    rows, skipped = [], set()
    for kind, size, k in cases:
        rows.append(bench_case(kind, size, k, args, skipped))
        print(json.dumps(rows[-1]), flush=True)
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps({"rows": rows, "skipped": sorted(skipped)}, indent=2))
    print()
    print_table(rows, [
        ("graph", "graph", ""), ("k", "k", "d"), ("ours", "ours s", ".3f"),
        ("medges_s", "M edges/s", ".0f"), ("wall", "ours wall s", ".2f"),
        ("floor", "floor s", ".2f"), ("over_floor", "wall - floor s", ".2f"),
        ("wall_nopyc", "wall no .pyc s", ".2f"),
        ("wall_engine", "wall engine", ""), ("cut", "cut", "d"),
        ("imb", "imb", ".3f"),
        ("metis_s", "METIS s", ".3f"), ("metis_wall", "METIS wall s", ".2f"),
        ("metis_cut", "METIS cut", "d"), ("cut_vs_metis", "cut/METIS", ".3f"),
        ("x_metis", "x METIS", ".1f"), ("x_metis_wall", "x METIS wall", ".1f"),
        ("x_metis_wall_nopyc", "x METIS wall no .pyc", ".1f"),
        ("pymetis_s", "pymetis s", ".3f"), ("kaminpar_s", "KaMinPar s", ".3f"),
        ("kaminpar_cut", "KaMinPar cut", "d"), ("x_kaminpar", "x KaMinPar", ".2f"),
        ("gpu_mb", "GPU MB", ".0f"), ("gpu_x_csr", "GPU / CSR", ".2f"),
    ])
    ratios = [r["cut_vs_metis"] for r in rows if "cut_vs_metis" in r]
    if ratios:
        print(f"\ngeometric mean cut / METIS: {geomean(ratios):.3f}")
    if skipped:
        print("skipped peers (not installed):", ", ".join(sorted(skipped)))


if __name__ == "__main__":
    main()
