"""A run on several GPUs of this host from one process (``gpus=N``): the graph goes to a
scratch folder as ``.npy`` files, ``mpiexec`` (of the MPI that mpi4py loads) starts N ranks
(``spawned``) that each map their block of it and partition it together, one GPU each, and
rank 0 hands back the ``Result``, or the error one process would have raised."""

from __future__ import annotations

import os
import pickle
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from gpmetis.errors import GpmetisError, OptionError
from gpmetis.graph import Graph
from gpmetis.options import Options

if TYPE_CHECKING:
    from gpmetis.partitioning.driver import Result

ARRAYS = ("xadj", "adjncy", "vwgt", "adjwgt", "vsize")


def mpiexec_path() -> str:
    """The ``mpiexec`` beside this Python (``pip install 'gpmetis[mpi]'`` puts MPICH's
    there), else the first on PATH; GpmetisError where there is none."""
    found = (shutil.which("mpiexec", path=str(Path(sys.executable).parent))
             or shutil.which("mpiexec"))
    if found is None:
        raise GpmetisError("several GPUs need mpiexec: pip install 'gpmetis[mpi]'")
    return found


def gpu_count(gpus: int | str) -> int:
    """The GPUs a run of ``gpus`` (a number or ``all``) takes on this host; OptionError where
    the host has fewer, or no usable CUDA device (as ``-engine=gpu``)."""
    from gpmetis.backend import cuda_available

    if not cuda_available():
        raise OptionError("gpus", "the gpu engine needs CuPy and a CUDA device; none is "
                                  "usable here")
    import cupy

    have = cupy.cuda.runtime.getDeviceCount()
    n = have if gpus == "all" else int(gpus)
    if n > have:
        raise OptionError("gpus", f"{n}: this host has {have} GPU{'s' * (have != 1)}")
    return n


def partition_on_gpus(graph: Graph, nparts: int, options: Options, ranks: int) -> Result:
    """``driver.partition``'s Result of ``graph`` under ``options`` (the gpu engine's) run by
    ``ranks`` processes, one GPU each (every rank count gives one process's partition)."""
    with tempfile.TemporaryDirectory(prefix="gpmetis-gpus-") as folder:
        work = Path(folder)
        for name in ARRAYS:
            a = getattr(graph, name)
            if a is not None:
                np.save(work / f"{name}.npy", a)
        head = {"name": graph.name, "has_vwgt": graph.has_vwgt,
                "has_adjwgt": graph.has_adjwgt, "nparts": nparts,
                "options": options}
        (work / "run.pkl").write_bytes(pickle.dumps(head))
        # NVLink multicast off unless set; this gpmetis importable by the ranks
        env = {"NCCL_NVLS_ENABLE": "0", **os.environ}
        env["PYTHONPATH"] = os.pathsep.join(
            [str(Path(__file__).resolve().parents[2]), *filter(None, [env.get("PYTHONPATH")])])
        # the ranks' prints (-dbglvl) reach this process's stdout; their errors are read back
        done = subprocess.run([mpiexec_path(), "-n", str(ranks), sys.executable, "-m",
                               "gpmetis.distributed.spawned", folder], stderr=subprocess.PIPE,
                              text=True, env=env)
        for name in ("result.pkl", "error.pkl"):
            if (work / name).exists():
                outcome = pickle.loads((work / name).read_bytes())
                if name == "error.pkl":
                    raise outcome
                return outcome
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    raise GpmetisError(f"the run on {ranks} GPUs ended with exit status {done.returncode}"
                       + (f": {lines[-1]}" if lines else ""))
