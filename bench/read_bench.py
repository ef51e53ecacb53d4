"""Time ``read_graph`` on a big METIS file against the ``I/O:`` time METIS's gpmetis prints.

    python3 bench/read_bench.py FILE [--repeat 3] [--metis PATH]

For example on ``python3 ../shared/tools/gen_graph.py delaunay 22 /tmp/d22.graph``. Each read
runs in a fresh Python process and is timed around ``read_graph`` inside it; the peak RSS of
those processes (``RUSAGE_CHILDREN``, interpreter and NumPy included) is given per input byte.
METIS runs as ``gpmetis FILE 2 -nooutput`` (``--metis``, else METIS 5.1 where the benchmarks
find it, else ``gpmetis`` on PATH), after our reads so that its memory is not counted.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import ROOT, metis_binary, print_table, run_metis

CHILD = """
import json, sys, time
from gpmetis.io import read_graph
start = time.perf_counter()
graph = read_graph(sys.argv[1])
seconds = time.perf_counter() - start
print(json.dumps({"seconds": seconds, "n": graph.nvtxs, "m": graph.nedges}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--metis", help="METIS 5.1's gpmetis binary")
    args = parser.parse_args()
    size = args.file.stat().st_size
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}

    reads = []
    for _ in range(args.repeat):
        out = subprocess.run(
            [sys.executable, "-c", CHILD, str(args.file)],
            capture_output=True,
            text=True,
            check=True,
            env=env,
        ).stdout
        reads.append(json.loads(out))
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    seconds = [r["seconds"] for r in reads]
    rows = [
        {
            "what": "read_graph (gpmetis.io)",
            "min": min(seconds),
            "median": statistics.median(seconds),
            "peak": peak / 2**20,
            "per_byte": peak / size,
        }
    ]

    prefix = [args.metis] if args.metis else metis_binary()
    if prefix is None and shutil.which("gpmetis"):
        prefix = [shutil.which("gpmetis")]
    if prefix:
        io = [run_metis(prefix, args.file, 2)["io"] for _ in range(args.repeat)]
        rows.append({"what": "METIS gpmetis I/O:", "min": min(io), "median": statistics.median(io)})

    print(
        f"{args.file}: {size / 2**20:.1f} MiB, n = {reads[0]['n']}, m = {reads[0]['m']}, "
        f"{args.repeat} runs each"
    )
    print_table(
        rows,
        [
            ("what", "reader", "s"),
            ("min", "min s", ".3f"),
            ("median", "median s", ".3f"),
            ("peak", "peak RSS MiB", ".0f"),
            ("per_byte", "peak RSS / input byte", ".2f"),
        ],
    )
    if prefix:
        print(f"read_graph / METIS I/O (medians): {rows[0]['median'] / rows[1]['median']:.2f}")
    else:
        print("METIS's gpmetis not found: give it with --metis")


if __name__ == "__main__":
    main()
