"""What ``-contig``, ``-minconn`` and ``-objtype=vol`` cost on the gpu engine, counted on the cpu
engine: per call of ``make_contiguous`` / ``minimize_connectivity`` / ``refine_volume`` (one per
run, one per level, one per run), its rounds, the operations that read a device value back to
the host on CuPy (a sync each: ``nonzero`` and ``flatnonzero``, ``unique``, boolean-mask
indexing, ``bool``/``int`` of an array, ``asnumpy``), the array operations (ufunc calls, array
module functions, indexing with arrays: about one kernel launch each on CuPy), the components
searches (each several syncs on the GPU) and the NumPy time.

    python bench/mode_syncs.py [--graphs NAME,...] [--generated delaunay:18 ...] [--ks 8,64]
                               [--modes contig,minconn,vol]

A run partitions the graph on the cpu engine, keeping each call's input, then replays the
call on a NumPy backend whose arrays count those operations (the partition is the same).
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
import types
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import ROOT, generated_graph, print_table

COUNT: collections.Counter = collections.Counter()
SYNC_FUNCTIONS = {"flatnonzero", "nonzero", "unique", "argwhere"}


class Counted(np.ndarray):
    """A NumPy array that counts what would read a CuPy array back to the host."""

    def __bool__(self) -> bool:
        COUNT["bool"] += 1
        return bool(np.asarray(self))

    def __int__(self) -> int:
        COUNT["int"] += 1
        return int(np.asarray(self))

    def item(self, *args):
        COUNT["item"] += 1
        return np.asarray(self).item(*args)

    def __getitem__(self, index):
        if isinstance(index, np.ndarray):
            COUNT["ops"] += 1
            if index.dtype == np.bool_:
                COUNT["mask"] += 1
        return super().__getitem__(index)

    def __setitem__(self, index, value) -> None:
        if isinstance(index, np.ndarray) or isinstance(value, np.ndarray):
            COUNT["ops"] += 1
        super().__setitem__(index, value)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        COUNT["ops"] += 1
        plain = tuple(x.view(np.ndarray) if isinstance(x, Counted) else x for x in inputs)
        if "out" in kwargs:
            kwargs["out"] = tuple(x.view(np.ndarray) if isinstance(x, Counted) else x
                                  for x in kwargs["out"])
        return counted(getattr(ufunc, method)(*plain, **kwargs))


def counted(x):
    """``x`` (an array or a tuple of them) as Counted arrays."""
    if isinstance(x, np.ndarray) and not isinstance(x, Counted):
        return x.view(Counted)
    if isinstance(x, tuple):
        return tuple(counted(y) for y in x)
    return x


class CountingNumpy(types.ModuleType):
    """NumPy whose functions return Counted arrays and count the syncing ones."""

    def __getattr__(self, name: str):
        attr = getattr(np, name)
        if not callable(attr) or isinstance(attr, (type, np.ufunc)):
            return attr

        def call(*args, **kwargs):
            COUNT["ops"] += 1
            if name in SYNC_FUNCTIONS:
                COUNT[name] += 1
            return counted(attr(*args, **kwargs))
        return call


def counting_backend():
    from gpmetis.backend import Backend

    class CountingBackend(Backend):
        def asnumpy(self, a) -> np.ndarray:
            COUNT["asnumpy"] += 1
            return np.asarray(a).view(np.ndarray)

        def sources(self, xadj, nnz: int):
            return counted(super().sources(xadj, nnz))

        def bin_sums(self, ids, n: int, weights=None):
            return counted(super().bin_sums(np.asarray(ids), n, None if weights is None
                                            else np.asarray(weights)))

        def unique(self, a):
            COUNT["unique"] += 1
            return counted(super().unique(a))

        def argsort_stable(self, a):
            return counted(super().argsort_stable(a))

    return CountingBackend("cpu", CountingNumpy("numpy"))


def _copy(a):
    """A host copy of an array argument; anything else as it is."""
    return np.array(a) if isinstance(a, np.ndarray) else a


def capture(graph, k: int, mode: str) -> list[dict]:
    """The inputs of every make_contiguous / minimize_connectivity / refine_volume call of a
    cpu-engine run."""
    import gpmetis
    import gpmetis.partitioning.multilevel as multilevel
    import gpmetis.refinement.contiguity as contiguity

    calls = []
    originals = (contiguity.make_contiguous, multilevel.minimize_connectivity,
                 multilevel.refine_volume)

    def keep(step):
        def wrapped(be, g, part, balance, *extra, **keywords):
            calls.append({"arrays": tuple(np.array(a) for a in (g.xadj, g.adjncy, g.adjwgt,
                                                                g.vwgt)),
                          "part": np.array(part), "balance": balance, "step": step,
                          "extra": tuple(_copy(a) for a in extra),
                          "keywords": {key: _copy(a) for key, a in keywords.items()}})
            return step(be, g, part, balance, *extra, **keywords)
        return wrapped

    contiguity.make_contiguous = keep(originals[0])
    multilevel.minimize_connectivity = keep(originals[1])
    multilevel.refine_volume = keep(originals[2])
    options = {"objtype": "vol"} if mode == "vol" else {mode: True}
    try:
        gpmetis.partition(graph, k, engine="cpu", **options)
    finally:
        (contiguity.make_contiguous, multilevel.minimize_connectivity,
         multilevel.refine_volume) = originals
    return calls


def replay(call: dict) -> dict:
    """One captured call on the counting backend: rounds, syncs, components searches, time."""
    import gpmetis.metrics as metrics
    import gpmetis.refinement.contiguity as contiguity
    import gpmetis.refinement.minconn as minconn
    from gpmetis.device_graph import DeviceGraph

    be = counting_backend()
    g = DeviceGraph(be, *(counted(a) for a in call["arrays"]))
    original = metrics.connected_components

    def components(*args, **kwargs):
        COUNT["components"] += 1
        return counted(original(*args, **kwargs))

    contiguity.connected_components = minconn.connected_components = components
    COUNT.clear()
    try:
        start = time.perf_counter()
        _, rounds = call["step"](be, g, counted(call["part"]), call["balance"],
                                 *(counted(a) for a in call["extra"]),
                                 **{key: counted(a) for key, a in call["keywords"].items()})
        seconds = time.perf_counter() - start
    finally:
        contiguity.connected_components = minconn.connected_components = original
    return {"n": len(call["part"]), "rounds": rounds, "components": COUNT["components"],
            "syncs": sum(v for key, v in COUNT.items() if key not in ("components", "ops")),
            "ops": COUNT["ops"],
            "s": seconds}


def main() -> None:
    from gpmetis.io import read_graph

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--graphs", default="4elt,delaunay_n16")
    parser.add_argument("--generated", nargs="*", default=[], help="KIND:SIZE, e.g. delaunay:18")
    parser.add_argument("--ks", default="8,64")
    parser.add_argument("--modes", default="contig,minconn")
    parser.add_argument("--workdir", default="/tmp/gpmetis-bench")
    args = parser.parse_args()
    paths = [ROOT / "fixtures" / f"{name}.graph" for name in args.graphs.split(",") if name]
    paths += [generated_graph(spec.split(":")[0], int(spec.split(":")[1]), Path(args.workdir))
              for spec in args.generated]
    rows = []
    for path in paths:
        graph = read_graph(path)
        for mode in args.modes.split(","):
            for k in (int(k) for k in args.ks.split(",")):
                for level, call in enumerate(capture(graph, k, mode)):
                    row = {"graph": path.stem, "mode": mode, "k": k, "call": level,
                           **replay(call)}
                    rounds = row["rounds"]
                    row["rounds"] = ("+".join(str(r) for r in rounds)
                                     if isinstance(rounds, tuple) else str(rounds))
                    rows.append(row)
    print_table(rows, [("graph", "graph", ""), ("mode", "mode", ""), ("k", "k", "d"),
                       ("call", "call", "d"), ("n", "n", "d"), ("rounds", "rounds", ""),
                       ("components", "components searches", "d"),
                       ("syncs", "other syncs", "d"), ("ops", "array ops", "d"),
                       ("s", "numpy s", ".3f")])


if __name__ == "__main__":
    main()
