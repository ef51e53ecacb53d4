"""The ``graphchk`` command: METIS 5.1 ``graphchk``: check a graph file, optionally write a
corrected copy. gpmetis's readers do the checks; a bad graph exits 1 (METIS exits 0)."""

from __future__ import annotations

import click

from cli.companions import emit, fail, run_program
from cli.help import GRAPHCHK_HELP
from cli.main import CONTEXT, MetisStyleCommand, _same_file
from gpmetis.report import SHORT_RULE, banner, section


@click.command("graphchk", cls=MetisStyleCommand, context_settings=CONTEXT,
               metis_help=GRAPHCHK_HELP)
@click.argument("graphfile", type=click.Path(dir_okay=False))
@click.argument("fixedfile", type=click.Path(dir_okay=False), required=False)
@click.option("-quiet", is_flag=True, help="print nothing but errors")
@fail("graphchk")
def main(graphfile: str, fixedfile: str | None, quiet: bool) -> None:
    """Check the graph in GRAPHFILE (METIS graph or Matrix Market): format, ranges, weights,
    then, as METIS's graphchk, list each self loop, missing reverse edge, reverse edge of
    another weight and repeated edge. With FIXEDFILE, also write the graph with missing
    reverse edges added, self loops dropped and repeated edges merged, like METIS's
    graphchk. Exit status 0 when the graph is correct, 1 when it is not."""
    from gpmetis.errors import GpmetisError, InputError, OptionError
    from gpmetis.io import check_graph_file, read_graph
    from gpmetis.io.partfile import atomic_write
    from gpmetis.mesh import graph_bytes

    if fixedfile is not None and _same_file(fixedfile, graphfile):
        raise OptionError("fixedfile", f"'{fixedfile}' is the input graph; writing it would "
                                       "destroy it")
    lines = [SHORT_RULE, *banner("graphchk"), "", section("Graph Information", 69)]
    try:
        found = check_graph_file(graphfile)
    except InputError as exc:  # where METIS's reader stops: the one message
        emit("\n".join([*lines, f"  Name: {graphfile}", "", section("Checking Graph...", 69),
                        str(exc), "   The format of the graph is incorrect!", "",
                        SHORT_RULE]), quiet)
        raise SystemExit(1) from None
    emit("\n".join([*lines, f"  Name: {graphfile}, #Vertices: {found.nvtxs}, "
                            f"#Edges: {found.nedges}", "", section("Checking Graph...", 69)]),
         quiet)
    if not quiet:  # METIS lists every error: a block of lines at a time
        for block in found.blocks():
            emit(block)
    lines = []
    if found.nerrors == 0:
        lines.append("   The format of the graph is correct!")
    else:
        lines += [f"A total of {found.nerrors} errors exist in the input file. Correct them, "
                  "and run again!", "   The format of the graph is incorrect!"]
        if fixedfile is not None:
            try:
                atomic_write(fixedfile, graph_bytes(read_graph(graphfile, symmetrize=True)))
                lines.append(f"   A corrected version was stored at {fixedfile}")
            except GpmetisError as exc:
                lines.append(f"   No corrected version could be written: {exc}")
    emit("\n".join([*lines, "", SHORT_RULE]), quiet)
    if found.nerrors:
        raise SystemExit(1)


def run() -> None:
    """The ``graphchk`` process."""
    run_program(main, "graphchk")


if __name__ == "__main__":
    run()
