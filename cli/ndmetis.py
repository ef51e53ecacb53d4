"""The ``ndmetis`` command: METIS 5.1 ``ndmetis``'s options, ``.iperm`` file and summary; the
ordering is METIS's METIS_NodeND (through pymetis)."""

from __future__ import annotations

import time

import click

from cli.companions import emit, fail, run_program
from cli.help import NDMETIS_HELP
from cli.main import CONTEXT, MetisInt, MetisStyleCommand, _choice, _int
from gpmetis.report import RULE, banner, memory_lines, section, timing_lines, yes

# ndmetis's -rtype names and METIS's codes (RType.SEP2SIDED, RType.SEP1SIDED)
_RTYPES = {"2sided": 2, "1sided": 3}


@click.command("ndmetis", cls=MetisStyleCommand, context_settings=CONTEXT,
               metis_help=NDMETIS_HELP)
@click.argument("graphfile", type=click.Path(dir_okay=False))
@click.option("-ctype", type=_choice(("rm", "shem")), default="shem", help="rm | shem (default)")
@click.option("-iptype", type=_choice(("edge", "node")), default="node",
              help="edge | node (default): the initial separator")
@click.option("-rtype", type=_choice(tuple(_RTYPES)), default="1sided",
              help="1sided (default) | 2sided node refinement")
@click.option("-ufactor", type=_int("ufactor"), default=200,
              help="allowed imbalance of each bisection 1+x/1000 (default 200)")
@click.option("-pfactor", type=MetisInt(0, 2**31 - 1), default=0,
              help="order vertices of degree > 0.1*x*average last (default 0: none)")
@click.option("-nseps", type=MetisInt(1, 2**31 - 1), default=1,
              help="separators tried at each bisection")
@click.option("-niter", type=_int("niter"), default=10, help="refinement iterations")
@click.option("-seed", type=_int("seed"), default=-1, help="random seed")
@click.option("-no2hop", is_flag=True, help="no 2-hop matching during coarsening")
@click.option("-nocompress", is_flag=True, help="do not merge vertices of equal adjacency")
@click.option("-ccorder", is_flag=True, help="order connected components separately")
@click.option("-nooutput", is_flag=True, help="write no .iperm file")
@click.option("-dbglvl", type=_int("dbglvl"), default=0, help="debug level")
@click.option("-quiet", is_flag=True, help="print nothing but errors and warnings")
@fail("ndmetis")
def main(graphfile: str, ctype: str, iptype: str, rtype: str, ufactor: int, pfactor: int,
         nseps: int, niter: int, seed: int, no2hop: bool, nocompress: bool, ccorder: bool,
         nooutput: bool, dbglvl: int, quiet: bool) -> None:
    """Compute a fill-reducing ordering of the graph in GRAPHFILE (METIS graph or Matrix
    Market) and write GRAPHFILE.iperm (vertex i's position, one per line), like METIS's
    ndmetis."""
    import pymetis

    from gpmetis.errors import InputError
    from gpmetis.io import read_graph
    from gpmetis.io.partfile import partition_bytes, staged_files

    t0 = time.perf_counter()
    graph = read_graph(graphfile)
    t1 = time.perf_counter()
    if graph.ncon != 1:
        raise InputError(graphfile, f"the graph has {graph.ncon} constraints; an ordering needs "
                                    "one vertex weight")
    opts = pymetis.Options(ctype=("rm", "shem").index(ctype), iptype=2 + ("edge", "node")
                           .index(iptype), rtype=_RTYPES[rtype], ufactor=ufactor,
                           pfactor=pfactor, nseps=nseps, niter=niter, seed=seed,
                           no2hop=int(no2hop), compress=int(not nocompress),
                           ccorder=int(ccorder), dbglvl=dbglvl)
    perm, iperm = pymetis.nested_dissection(
        pymetis.CSRAdjacency(graph.xadj, graph.adjncy),
        vweights=graph.vwgt[:, 0] if graph.has_vwgt else None, options=opts)
    t2 = time.perf_counter()
    files = [] if nooutput else [(f"{graphfile}.iperm", partition_bytes(iperm))]
    nonzeros, opcount = _fill(graph, iperm)
    t3 = time.perf_counter()
    lines = [
        RULE, *banner("ndmetis"), "",
        section("Graph Information"),
        f" Name: {graphfile}, #Vertices: {graph.nvtxs}, #Edges: {graph.nedges}",
        "",
        section("Options"),
        f" ctype={ctype}, rtype={rtype}, iptype={iptype}, seed={seed}, dbglvl={dbglvl}",
        f" ufactor={1 + ufactor / 1000:.3f}, pfactor={0.1 * pfactor:.2f}, no2hop={yes(no2hop)}, "
        f"ccorder={yes(ccorder)}, compress={yes(not nocompress)}, , nooutput={yes(nooutput)}",
        f" niter={niter}, nseps={nseps}",
        "",
        section("Node-based Nested Dissection"),
        f"  Nonzeros: {nonzeros} \tOperation Count: {opcount}",
        "",
        *timing_lines(t1 - t0, t2 - t1, "Ordering", "METIS time", t3 - t2),
        "",
        *memory_lines(),
        RULE,
    ]
    with staged_files(files):
        emit("\n".join(lines), quiet)


def _fill(graph, iperm) -> tuple[str, str]:
    """The Cholesky factor's off-diagonal nonzeros and operation count (sum of c^2 - c over
    its columns' counts c) under the ordering, formatted as METIS does ("%6.3e"), from
    SuperLU's symbolic factorisation (scipy); "n/a" without scipy."""
    import numpy as np

    try:
        import scipy.sparse as sp
        from scipy.sparse.linalg import splu
    except ImportError:
        return "n/a", "n/a"
    n = graph.nvtxs
    if n == 0:
        return f"{0.0:6.3e}", f"{0.0:6.3e}"
    perm = np.argsort(np.asarray(iperm))
    a = sp.csr_matrix((np.full(len(graph.adjncy), -1.0), graph.adjncy, graph.xadj), shape=(n, n))
    a = a[perm][:, perm] + sp.diags(graph.degrees()[perm].astype(np.float64) + 1.0)
    factor = splu(a.tocsc(), permc_spec="NATURAL", diag_pivot_thresh=0.0, relax=1,
                  panel_size=1, options={"SymmetricMode": True})
    counts = np.diff(factor.L.indptr).astype(np.float64) - 1.0
    return f"{counts.sum():6.3e}", f"{(counts * counts - counts).sum():6.3e}"


def run() -> None:
    """The ``ndmetis`` process."""
    run_program(main, "ndmetis")


if __name__ == "__main__":
    run()
