"""``gpmetis`` under ``mpiexec``: rank 0 reads the graph, each rank takes a block of it
(``gpmetis.distributed``), the ranks partition it together and rank 0 prints the summary and
writes the files. A failure ends every rank with one message from rank 0."""

from __future__ import annotations

import sys
import time

import click


def run_distributed(graphfile: str, nparts: int, options, finish) -> None:
    """The run on every rank; ``finish`` prints and writes on rank 0 (cli.main.finish)."""
    from gpmetis.distributed.comm import Comm
    from gpmetis.distributed.dgraph import DistGraph
    from gpmetis.distributed.partition import partition_pieces
    from gpmetis.errors import GpmetisError
    from gpmetis.io import read_graph
    from gpmetis.options import check_nparts, check_ubvec_ncon

    comm = Comm.world()

    def read():
        graph = read_graph(graphfile, symmetrize=options.symmetrize)
        for warning in graph.warnings:
            click.echo(f"gpmetis: warning: {warning}", err=True)
        check_nparts(nparts, graph.nvtxs)
        check_ubvec_ncon(options.ubvec, graph.ncon)
        return graph

    try:
        t0 = time.perf_counter()
        graph = comm.on_root(read)
        t1 = time.perf_counter()
        piece = DistGraph.scatter(comm, graph)
        result = partition_pieces(comm, piece, nparts, options).result
        t2 = time.perf_counter()
        comm.on_root(lambda: finish(graphfile, nparts, options, graph, result, (t0, t1, t2)))
    except GpmetisError as exc:  # raised on every rank: rank 0 says it
        if comm.root:
            click.echo(f"gpmetis: error: {exc}", err=True)
        sys.exit(exc.exit_code)
    except Exception as exc:  # this rank's alone: the others may wait on it
        comm.abort(f"gpmetis: error: rank {comm.rank}: {type(exc).__name__}: {exc}")
