"""Time ``read_graph`` on a big graph file, in GB/s of file, against its peer: the ``I/O:`` time
METIS's gpmetis prints for a METIS file, ``scipy.io.mmread`` for a Matrix Market file; where
CUDA is usable and the file is not compressed, also the GPU reader the gpu engine's command
uses (``io.metis_gpu`` or ``io.mtx_gpu``: the file mapped, uploaded and parsed, the graph back
on the host), timed after the CUDA context exists, as in a run where it starts while the file
is mapped (``warmup.GpuRead``); its kernels load inside the timing, as in a run, and as there
CuPy's ``cupyx`` runs without SciPy (``warmup.keep_scipy_from_cupyx``).

    python3 bench/read_bench.py FILE [--repeat 3] [--metis PATH] [--mtx-weights]

For example on ``python3 ../shared/tools/gen_graph.py delaunay 22 /tmp/d22.graph``, or a
``.mtx`` written from it with ``scipy.io.mmwrite``. Each read runs in a fresh Python process and
is timed around the call inside it; the peak RSS of our reads (``RUSAGE_CHILDREN``, interpreter
and NumPy included) is given per input byte. METIS runs as ``gpmetis FILE 2 -nooutput``
(``--metis``, else METIS 5.1 where the benchmarks find it, else ``gpmetis`` on PATH), after our
reads so that its memory is not counted. ``mmread`` returns the COO matrix only: the graph
(A + A^T without the diagonal, sorted and deduplicated) is work ``read_graph`` does on top.
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
graph = read_graph(sys.argv[1], mtx_weights=sys.argv[2] == "1")
seconds = time.perf_counter() - start
print(json.dumps({"seconds": seconds, "n": graph.nvtxs, "m": graph.nedges}))
"""
GPU = """
import json, sys, time
from gpmetis.backend import cuda_available, get_backend
from gpmetis.partitioning.warmup import keep_scipy_from_cupyx
if not cuda_available():
    print(json.dumps(None))
    raise SystemExit
keep_scipy_from_cupyx()  # as the command does: cupyx's first import would bring SciPy in
from gpmetis.io.metis_gpu import read_metis_gpu
from gpmetis.io.mtx_gpu import read_matrix_market_gpu
from gpmetis.io.source import read_bytes
be = get_backend("gpu")
be.xp.zeros(1)
be.synchronize()
path, weights, mtx = sys.argv[1], sys.argv[2] == "1", sys.argv[3] == "1"
start = time.perf_counter()
data = read_bytes(path)
if mtx:
    graph = read_matrix_market_gpu(be, data, path, mtx_weights=weights)
else:
    graph = read_metis_gpu(be, data, path)
be.synchronize()
print(json.dumps({"seconds": time.perf_counter() - start, "read": graph is not None}))
"""
SCIPY = """
import json, sys, time
import scipy.io
start = time.perf_counter()
scipy.io.mmread(sys.argv[1])
print(json.dumps({"seconds": time.perf_counter() - start}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--metis", help="METIS 5.1's gpmetis binary")
    parser.add_argument("--mtx-weights", action="store_true",
                        help="read a Matrix Market file's values as edge weights")
    args = parser.parse_args()
    matrix_market = args.file.name.lower().endswith((".mtx", ".mtx.gz", ".mtx.bz2", ".mtx.xz"))
    size = args.file.stat().st_size
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}

    def child(code: str, *extra: str) -> dict:
        out = subprocess.run([sys.executable, "-c", code, str(args.file), *extra],
                             capture_output=True, text=True, check=True, env=env).stdout
        return json.loads(out)

    reads = [child(CHILD, str(int(args.mtx_weights))) for _ in range(args.repeat)]
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    rows = [dict(timing("read_graph (gpmetis.io)", [r["seconds"] for r in reads], size),
                 peak=peak / 2**20, per_byte=peak / size)]

    compressed = args.file.name.lower().endswith((".gz", ".bz2", ".xz"))
    gpu = None if compressed else child(GPU, str(int(args.mtx_weights)), str(int(matrix_market)))
    if gpu is not None and not gpu["read"]:
        print("the GPU reader declined the file: the CPU reader reads it in a run")
    elif gpu is not None:
        more = [child(GPU, str(int(args.mtx_weights)), str(int(matrix_market)))["seconds"]
                for _ in range(args.repeat - 1)]
        rows.append(timing("GPU reader (mtx_gpu)" if matrix_market else "GPU reader (metis_gpu)",
                           [gpu["seconds"], *more], size))

    prefix = None
    if matrix_market:
        peer = [child(SCIPY)["seconds"] for _ in range(args.repeat)]
        rows.append(timing("scipy.io.mmread", peer, size))
    else:
        prefix = [args.metis] if args.metis else metis_binary()
        if prefix is None and shutil.which("gpmetis"):
            prefix = [shutil.which("gpmetis")]
        if prefix:
            io = [run_metis(prefix, args.file, 2)["io"] for _ in range(args.repeat)]
            rows.append(timing("METIS gpmetis I/O:", io, size))

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
            ("rate", "GB/s (median)", ".3f"),
            ("peak", "peak RSS MiB", ".0f"),
            ("per_byte", "peak RSS / input byte", ".2f"),
        ],
    )
    for row in rows[1:]:
        print(f"read_graph / {row['what']} (medians): {rows[0]['median'] / row['median']:.2f}")
    if not matrix_market and prefix is None:
        print("METIS's gpmetis not found: give it with --metis")


def timing(what: str, seconds: list[float], size: int) -> dict:
    """A table row: min and median seconds, and the median's rate in GB/s of file."""
    median = statistics.median(seconds)
    return {"what": what, "min": min(seconds), "median": median, "rate": size / median / 1e9}


if __name__ == "__main__":
    main()
