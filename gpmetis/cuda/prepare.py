"""Prepare a GPU machine once after installing: compile our kernels ahead of time where nvcc is
(``fatbin``), then run the gpu engine on small graphs of every shape and mode, so that CuPy's
own kernels (element-wise steps, reductions) are in its on-disk cache before the first real run,
and compile the package's Python to bytecode (which pip does when it installs, a checkout not).

    python -m gpmetis.cuda.prepare [--arch native|release|90,100]
"""

from __future__ import annotations

import argparse
import compileall
import shutil
import sys
import time

import numpy as np

from gpmetis.cuda import fatbin

# (generator, nparts, options) of the runs that fill CuPy's cache: every mode on a mesh-like
# graph, and the power-law paths (pairs after clustering, heavy rows) on a skewed one.
MODES = (
    {}, {"ptype": "rb"}, {"objtype": "vol"}, {"contig": True}, {"minconn": True},
    {"preset": "strong"}, {"ctype": "shem"},
)


def grid3d(side: int) -> tuple[np.ndarray, np.ndarray]:
    """(xadj, adjncy) of the side^3 7-point grid."""
    ids = np.arange(side ** 3, dtype=np.int64).reshape(side, side, side)
    pairs = [np.stack([a.ravel(), b.ravel()]) for a, b in (
        (ids[1:], ids[:-1]), (ids[:, 1:], ids[:, :-1]), (ids[:, :, 1:], ids[:, :, :-1]))]
    return csr(side ** 3, np.concatenate(pairs, axis=1))


def power_law(n: int, avg_degree: int, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """(xadj, adjncy) of a Chung-Lu graph whose expected degrees follow a power law."""
    rng = np.random.default_rng(seed)
    weight = np.arange(1, n + 1, dtype=np.float64) ** -0.75
    ends = rng.choice(n, size=(2, n * avg_degree // 2), p=weight / weight.sum())
    return csr(n, ends)


def csr(n: int, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The symmetric CSR of undirected edges ``ends`` (2 x m), without loops or repeats."""
    u, v = ends[:, ends[0] != ends[1]]
    key = np.unique(np.concatenate([u * n + v, v * n + u]))
    xadj = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(key // n, minlength=n), out=xadj[1:])
    return xadj, (key % n).astype(np.int32)


def warm_cupy_cache(log=print) -> None:
    """Run the gpu engine over the graphs and modes that a user's runs meet."""
    from gpmetis.api import partition
    from gpmetis.graph import Graph

    rng = np.random.default_rng(0)
    mesh = Graph.from_csr(*grid3d(40))
    two = Graph.from_csr(mesh.xadj, mesh.adjncy, rng.integers(1, 4, size=(mesh.nvtxs, 2)))
    skewed = Graph.from_csr(*power_law(1 << 16, 16))
    runs = [(mesh, k, mode) for mode in MODES for k in (8, 64)]
    runs += [(two, 8, mode) for mode in MODES[:5]] + [(skewed, 64, {}), (skewed, 8, {})]
    for graph, nparts, mode in runs:
        partition(graph, nparts, engine="gpu", **mode)
    log(f"gpmetis: {len(runs)} warm-up runs filled CuPy's kernel cache")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gpmetis.cuda.prepare", description=__doc__)
    parser.add_argument("--arch", default="native", help="as python -m gpmetis.cuda.fatbin's")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    if shutil.which("nvcc"):
        status = fatbin.main([f"--arch={args.arch}"])
        if status:
            return status
    else:
        print("gpmetis: nvcc not found: the kernels compile through NVRTC now", file=sys.stderr)
    from gpmetis.backend import cuda_available

    if not cuda_available():
        print("gpmetis: no usable CUDA device: nothing to warm up", file=sys.stderr)
        return 1
    warm_cupy_cache()
    for folder in (fatbin.PACKAGE, fatbin.PACKAGE.parent / "cli"):
        compileall.compile_dir(folder, quiet=1)
    print(f"gpmetis: ready in {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
