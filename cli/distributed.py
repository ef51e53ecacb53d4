"""``gpmetis`` under ``mpiexec``: the ranks read the graph in blocks (``gpmetis.distributed``),
partition it together, and rank 0 prints the summary and writes the files. A failure ends
every rank with one message from rank 0."""

from __future__ import annotations

import os
import sys
import time
from dataclasses import replace

import click

from gpmetis.distributed.comm import launched_ranks
from gpmetis.errors import GpmetisError, OptionError


def on_gpus(options):
    """``-gpus=N`` (or ``all``): this command again as N ranks of ``mpiexec`` (the MPI that
    mpi4py loads), each on one GPU of this host; under ``mpiexec`` already, N must be its
    number of ranks. Returns the options the ranks run (the gpu engine's)."""
    from gpmetis.distributed.spawn import gpu_count, mpiexec_path

    ranks = launched_ranks()
    if ranks > 1:
        if options.gpus not in ("all", ranks):
            raise OptionError("gpus", f"{options.gpus} under mpiexec of {ranks} ranks: give "
                                      "one of them")
        gpu_count(1)  # a usable CUDA device, named as -gpus's
    elif (n := gpu_count(options.gpus)) > 1:
        mpiexec = mpiexec_path()
        sys.stdout.flush()
        os.execv(mpiexec, [mpiexec, "-n", str(n), sys.executable, "-m", "cli.main",
                           *sys.argv[1:]])
    return replace(options, gpus=None, engine="gpu")


def run_distributed(graphfile: str, nparts: int, options, finish, c_stdout_to_stderr) -> None:
    """The run on every rank; ``finish`` prints and writes on rank 0 (cli.main.finish), and
    METIS's own prints go to stderr inside ``c_stdout_to_stderr`` (cli.main's). A METIS
    text or Matrix Market file is read by every rank in byte ranges; other inputs (compressed
    files, pipes, a METIS file under -symmetrize) by rank 0, which hands out the blocks."""
    from gpmetis.distributed.comm import Comm
    from gpmetis.distributed.dgraph import DistGraph
    from gpmetis.distributed.partition import partition_pieces
    from gpmetis.distributed.read import read_pieces
    from gpmetis.distributed.read_mtx import read_mtx_pieces
    from gpmetis.io import read_graph
    from gpmetis.options import check_nparts, check_ubvec_ncon

    comm = Comm.world()
    try:
        t0 = time.perf_counter()
        how = comm.bcast(comm.on_root(lambda: _reading(graphfile, options.symmetrize)))
        if how == "metis":
            piece = read_pieces(comm, graphfile, options.engine)
        elif how == "mtx":
            piece = read_mtx_pieces(comm, graphfile)
        else:
            piece = DistGraph.scatter(comm, comm.on_root(
                lambda: read_graph(graphfile, symmetrize=options.symmetrize)))
        t1 = time.perf_counter()
        ncon = 1 if piece.vwgt is None else piece.vwgt.shape[1]
        comm.on_root(lambda: (check_nparts(nparts, int(piece.vtxdist[-1])),
                              check_ubvec_ncon(options.ubvec, ncon)))
        with c_stdout_to_stderr():
            out = partition_pieces(comm, piece, nparts, options)
        t2 = time.perf_counter()

        def report() -> None:
            for warning in out.graph.warnings:
                click.echo(f"gpmetis: warning: {warning}", err=True)
            finish(graphfile, nparts, options, out.graph, out.result, (t0, t1, t2))

        comm.on_root(report)
    except GpmetisError as exc:  # raised on every rank: rank 0 says it
        if comm.root:
            click.echo(f"gpmetis: error: {exc}", err=True)
        sys.exit(exc.exit_code)
    except Exception as exc:  # this rank's alone: the others may wait on it
        comm.abort(f"gpmetis: error: rank {comm.rank}: {type(exc).__name__}: {exc}")


def _reading(graphfile: str, symmetrize: bool) -> str:
    """How the ranks read ``graphfile``: ``metis`` or ``mtx`` (each rank its byte range), or
    ``root`` (rank 0 reads it and hands out blocks: compressed files, pipes, a METIS file
    under -symmetrize)."""
    from gpmetis.distributed.read import plain_format

    kind = plain_format(graphfile)
    return "root" if kind is None or (kind == "metis" and symmetrize) else kind
