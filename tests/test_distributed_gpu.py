"""Distributed runs on GPUs (``mpiexec -n 2``, one GPU per rank, NCCL between them): the device
halo exchange equals the host one, all-reduces are exact, large all-to-alls arrive whole, and
the multilevel run on the ranks' GPUs gives one GPU process's partition (``gpmetis`` under
``mpiexec`` and with ``-gpus=2``)."""

from __future__ import annotations

import re
import subprocess
import sys

import numpy as np
import pytest
from conftest import random_graph, requires_cuda
from test_distributed import HERE, MPIEXEC, gpu_read_files, mpiexec, pieces

from gpmetis import partition

pytestmark = [pytest.mark.gpu, requires_cuda,
              pytest.mark.skipif(MPIEXEC is None, reason="no mpiexec (pip install '.[mpi]')")]


def _gpus() -> int:
    import cupy

    return cupy.cuda.runtime.getDeviceCount()


@pytest.mark.parametrize("name", ["4elt", "add20"])
def test_nccl_halo_exchange_and_all_reduce_between_two_gpus(name):
    if _gpus() < 2:
        pytest.skip("needs two GPUs (the nvidia-h200-x2 kind)")
    done = pieces(2, "nccl", name)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("ranks", [2, 3])
def test_multilevel_on_the_ranks_gpus_gives_one_gpu_process_partition(ranks):
    # on two GPUs two ranks take one each and talk over NCCL; ranks that share a GPU (three
    # on two, or any on one) talk through the host
    done = pieces(ranks, "multilevel", "gpu")
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("ranks", [2, 3])
def test_metrics_on_the_ranks_gpus_equal_one_process(ranks):
    # the cut, volume and subdomain degrees by the GPU's row scan of each rank's rows
    done = pieces(ranks, "metrics", "gpu")
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("ranks", [1, 2, 3])
def test_validation_on_the_ranks_gpus_names_one_process_faults(ranks):
    # the GPUs' verdict passes exactly the clean pieces; the rest get the host's message
    done = pieces(ranks, "validate", "gpu")
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("ranks", [1, 2, 3])
def test_ranks_parse_their_lines_on_their_gpus(tmp_path, ranks):
    # the fast-* files must be read on the GPUs; the faults get the host reader's message
    done = pieces(ranks, "read-gpu", *gpu_read_files(tmp_path))
    assert done.returncode == 0, done.stderr


def test_partition_with_gpus_gives_one_gpu_process_result():
    if _gpus() < 2:
        pytest.skip("needs two GPUs (the nvidia-h200-x2 kind)")
    graph = random_graph(150_000, 6, seed=7, weighted=True)
    got = partition(graph, 16, gpus=2)
    one = partition(graph, 16, engine="gpu")
    assert np.array_equal(got.part, one.part) and got.edgecut == one.edgecut
    assert got.engine == "gpu" and got.stats["distributed"]["ranks"] == 2


@pytest.mark.parametrize("launch", ["mpiexec", "-gpus"])
def test_gpmetis_on_two_gpus_writes_one_gpu_process_part_file(tmp_path, launch):
    # past the 65,536 vertices a run gathers at once: the ranks' GPUs coarsen and refine
    if launch == "-gpus" and _gpus() < 2:
        pytest.skip("needs two GPUs (the nvidia-h200-x2 kind)")
    graph = random_graph(150_000, 6, seed=5, weighted=True)
    path = tmp_path / "random.graph"
    rows = np.split(graph.adjncy + 1, graph.xadj[1:-1])
    weights = np.split(graph.adjwgt, graph.xadj[1:-1])
    lines = [f"{graph.nvtxs} {graph.nedges} 011"]
    lines += [" ".join(map(str, [w, *np.column_stack((r, ew)).ravel()]))
              for w, r, ew in zip(graph.vwgt[:, 0], rows, weights)]
    path.write_text("\n".join(lines) + "\n")
    command = [sys.executable, "-m", "cli.main", str(path), "32"]
    if launch == "mpiexec":
        done = mpiexec(2, *command, "-engine=gpu", cwd=HERE.parent)
    else:
        done = subprocess.run([*command, "-gpus=2"], capture_output=True, text=True,
                              timeout=300, cwd=HERE.parent)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Ranks: 2" in re.sub(r"\x1b\[[0-9;]*m", "", done.stdout)  # without Rich's colours
    part = np.loadtxt(f"{path}.part.32", dtype=np.int32)
    assert np.array_equal(part, partition(graph, 32, engine="gpu").part)
