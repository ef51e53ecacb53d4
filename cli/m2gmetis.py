"""The ``m2gmetis`` command: METIS 5.1 ``m2gmetis``: a mesh file's dual or nodal graph written
as a METIS graph file."""

from __future__ import annotations

import time

import click

from cli.companions import emit, fail, run_program
from cli.help import M2GMETIS_HELP
from cli.main import CONTEXT, MetisInt, MetisStyleCommand, _choice, _int, _same_file
from gpmetis.report import RULE, banner, memory_lines, section, timing_lines


@click.command("m2gmetis", cls=MetisStyleCommand, context_settings=CONTEXT,
               metis_help=M2GMETIS_HELP)
@click.argument("meshfile", type=click.Path(dir_okay=False))
@click.argument("graphfile", type=click.Path(dir_okay=False))
@click.option("-gtype", type=_choice(("dual", "nodal")), default="dual",
              help="dual (default): the elements' graph | nodal: the nodes' graph")
@click.option("-ncommon", type=MetisInt(1, 2**31 - 1), default=1,
              help="nodes two elements share to be adjacent in the dual graph (default 1)")
@click.option("-dbglvl", type=_int("dbglvl"), default=0, help="debug level")
@click.option("-quiet", is_flag=True, help="print nothing but errors and warnings")
@fail("m2gmetis")
def main(meshfile: str, graphfile: str, gtype: str, ncommon: int, dbglvl: int,
         quiet: bool) -> None:
    """Write the dual or nodal graph of the mesh in MESHFILE to GRAPHFILE (METIS graph
    format), like METIS's m2gmetis."""
    from gpmetis.errors import OptionError
    from gpmetis.io.partfile import staged_files
    from gpmetis.mesh import dual_graph, graph_bytes, nodal_graph, read_mesh

    if _same_file(meshfile, graphfile):
        raise OptionError("graphfile", f"'{graphfile}' is the input mesh; writing it would "
                                       "destroy it")
    t0 = time.perf_counter()
    mesh = read_mesh(meshfile)
    t1 = time.perf_counter()
    if gtype == "dual":
        graph = dual_graph(mesh.eptr, mesh.eind, mesh.nn, ncommon)
    else:
        graph = nodal_graph(mesh.eptr, mesh.eind, mesh.nn)
    t2 = time.perf_counter()
    payload = graph_bytes(graph)
    lines = [
        RULE, *banner("m2gmetis"), "",
        section("Mesh Information"),
        f" Name: {meshfile}, #Elements: {mesh.ne}, #Nodes: {mesh.nn}",
        section("Options"),
        f" gtype={gtype}, ncommon={ncommon}, outfile={graphfile}",
        "",
        f" - #nvtxs: {graph.nvtxs}, #edges: {len(graph.adjncy)}",
        "",
        *timing_lines(t1 - t0, t2 - t1, "Partitioning", "graph construction", 0.0),
        "",
        *memory_lines(),
        RULE,
    ]
    with staged_files([(graphfile, payload)]):
        emit("\n".join(lines), quiet)


def run() -> None:
    """The ``m2gmetis`` process."""
    run_program(main, "m2gmetis")


if __name__ == "__main__":
    run()
