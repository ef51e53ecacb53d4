"""Whole-command start-up on small graphs: ``gpmetis FILE K`` against ``python -c "import
numpy"`` with the same interpreter, and METIS 5.1's ``gpmetis`` where it is installed.

    python bench/startup.py [--runs 15] [--k 8] [--graphs 4elt,crack,...]

Each graph is copied into a temporary directory, so every command writes its partition file
there (``FILE.part.K``) and stdout goes to a pipe, as in a script. The commands alternate run by
run, so a slow spell of the machine hits all of them; the table gives the median wall time of
each and our median over the ``import numpy`` median (issue 39's target: at most 1.6).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import ROOT, metis_binary, print_table

GRAPHS = ("4elt", "crack", "cs4", "delaunay_n15", "rgg_n_2_16_s0", "wing_nodal")


def gpmetis_command() -> list[str]:
    """The ``gpmetis`` entry point installed beside this interpreter, else the module run by it."""
    script = Path(sys.executable).with_name("gpmetis")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "from cli.main import run; run()"]


def wall(command: list[str]) -> float:
    """Seconds from start to exit of ``command`` (output to pipes; raises when it fails)."""
    start = time.perf_counter()
    subprocess.run(command, capture_output=True, check=True)
    return time.perf_counter() - start


def measure(graph: Path, k: int, runs: int, metis: list[str] | None) -> dict:
    """Median wall seconds of each command on ``graph``, the commands alternating."""
    commands = {"numpy": [sys.executable, "-c", "import numpy"],
                "ours": [*gpmetis_command(), str(graph), str(k)]}
    if metis is not None:
        commands["metis"] = [*metis, str(graph), str(k)]
    for command in commands.values():  # once untimed: the page cache and .pyc files are warm
        wall(command)
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(runs):
        for name, command in commands.items():
            times[name].append(wall(command))
    row = {name: statistics.median(values) for name, values in times.items()}
    row["ratio"] = row["ours"] / row["numpy"]
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="timed runs of each command")
    parser.add_argument("--k", type=int, default=8, help="NPARTS")
    parser.add_argument("--graphs", default=",".join(GRAPHS),
                        help="fixtures (names in fixtures/ without .graph)")
    args = parser.parse_args()
    metis = metis_binary()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.graphs.split(","):
            graph = Path(tmp) / f"{name}.graph"
            shutil.copyfile(ROOT / "fixtures" / f"{name}.graph", graph)
            rows.append({"graph": name, **measure(graph, args.k, args.runs, metis)})
    print(f"k={args.k}, median of {args.runs} runs each, {sys.executable}")
    print_table(rows, [("graph", "graph", ""), ("numpy", "import numpy s", ".3f"),
                       ("ours", "gpmetis s", ".3f"), ("ratio", "gpmetis / import numpy", ".2f"),
                       ("metis", "METIS 5.1 s", ".3f")])


if __name__ == "__main__":
    main()
