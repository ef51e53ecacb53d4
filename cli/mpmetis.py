"""The ``mpmetis`` command: METIS 5.1 ``mpmetis``'s options, files and summary, partitioned by
gpmetis's engines (the mesh's dual or nodal graph built with NumPy)."""

from __future__ import annotations

import time

import click

from cli.companions import emit, fail, run_program
from cli.help import MPMETIS_HELP
from cli.main import CONTEXT, MetisInt, MetisStyleCommand, _choice, _int
from gpmetis.options import CTYPES, ENGINES, IPTYPES, NPARTS_MAX, OBJTYPES, PTYPES, RTYPES
from gpmetis.report import (
    RULE,
    banner,
    memory_lines,
    minconn_ran,
    section,
    timing_lines,
    yes,
)


@click.command("mpmetis", cls=MetisStyleCommand, context_settings=CONTEXT,
               metis_help=MPMETIS_HELP)
@click.argument("meshfile", type=click.Path(dir_okay=False))
@click.argument("nparts", type=MetisInt(1, NPARTS_MAX))
@click.option("-gtype", type=_choice(("dual", "nodal")), default="dual",
              help="dual (default): partition the elements' graph | nodal: the nodes' graph")
@click.option("-ptype", type=_choice(PTYPES), default="kway", help="rb | kway (default)")
@click.option("-ctype", type=_choice(CTYPES), default=None, help="rm | shem | lp")
@click.option("-iptype", type=_choice(IPTYPES), default=None, help="initial partitioning")
@click.option("-rtype", type=_choice(RTYPES), default=None, help="refinement (METIS only)")
@click.option("-objtype", type=_choice(OBJTYPES), default="cut", help="cut (default) | vol")
@click.option("-contig", is_flag=True,
              help="connected parts (ignored, with a warning, on a disconnected graph)")
@click.option("-minconn", is_flag=True,
              help="lower the most parts any part is adjacent to (k-way; ignored with rb)")
@click.option("-no2hop", is_flag=True, help="no 2-hop matching during coarsening")
@click.option("-tpwgts", type=str, default=None, help="file of target partition weights")
@click.option("-ufactor", type=_int("ufactor"), default=None,
              help="allowed imbalance 1+x/1000 (default 30 for kway, 1 for rb)")
@click.option("-ncommon", type=MetisInt(1, 2**31 - 1), default=1,
              help="nodes two elements share to be adjacent in the dual graph (default 1)")
@click.option("-niter", type=_int("niter"), default=10, help="refinement iterations")
@click.option("-ncuts", type=_int("ncuts"), default=1, help="best of this many runs")
@click.option("-nooutput", is_flag=True, help="write no partition files")
@click.option("-seed", type=_int("seed"), default=-1, help="random seed")
@click.option("-dbglvl", type=_int("dbglvl"), default=0, help="debug level")
@click.option("-engine", type=_choice(ENGINES), default="auto",
              help="auto (default) | gpu | cpu | metis")
@click.option("-quiet", is_flag=True, help="print nothing but errors and warnings")
@fail("mpmetis")
def main(meshfile: str, nparts: int, gtype: str, ncommon: int, quiet: bool, **opts) -> None:
    """Partition the mesh in MESHFILE into NPARTS parts and write MESHFILE.epart.NPARTS (one
    part per element) and MESHFILE.npart.NPARTS (one per node), like METIS's mpmetis."""
    from gpmetis.api import part_mesh_graph
    from gpmetis.io.partfile import partition_bytes, staged_files
    from gpmetis.mesh import read_mesh
    from gpmetis.options import Options, check_nparts

    options = Options(**opts).validate()
    t0 = time.perf_counter()
    mesh = read_mesh(meshfile)
    t1 = time.perf_counter()
    check_nparts(nparts, mesh.ne if gtype == "dual" else mesh.nn)
    result, epart, npart = part_mesh_graph(mesh, nparts, options, gtype=gtype, ncommon=ncommon)
    t2 = time.perf_counter()
    files = [] if options.nooutput else [
        (f"{meshfile}.epart.{nparts}", partition_bytes(epart)),
        (f"{meshfile}.npart.{nparts}", partition_bytes(npart)),
    ]
    o = options
    objective = "Volume" if o.objtype == "vol" else "Edgecut"
    value = result.volume if o.objtype == "vol" else result.edgecut
    lines = [
        RULE, *banner("mpmetis"), "",
        section("Mesh Information"),
        f" Name: {meshfile}, #Elements: {mesh.ne}, #Nodes: {mesh.nn}, #Parts: {nparts}",
        *([f"  Balancing Constraints: {mesh.ewgt.shape[1]}"]
          if mesh.ewgt is not None and mesh.ewgt.shape[1] > 1 else []),
        "",
        section("Options"),
        f" ptype={o.ptype}, objtype={o.objtype}, ctype={o.effective_ctype(result.engine)}, "
        f"rtype={o.effective_rtype}, iptype={o.effective_iptype}",
        f" dbglvl={o.dbglvl}, ufactor={1 + o.effective_ufactor / 1000:.3f}, "
        f"minconn={yes(minconn_ran(o))}, contig={yes(o.contig)}, nooutput={yes(o.nooutput)}",
        f" seed={o.seed}, niter={o.niter}, ncuts={o.ncuts}",
        f" gtype={gtype}, ncommon={ncommon}, niter={o.niter}, ncuts={o.ncuts}",
        "",
        section("Direct k-way Partitioning" if o.ptype == "kway" else "Recursive Partitioning"),
        f" - {objective}: {value}.",
        "",
        "",
        *timing_lines(t1 - t0, result.seconds, "Partitioning", f"{result.engine} engine",
                      (t2 - t1) - result.seconds),
        "",
        *memory_lines(),
        f"  Engine: {result.engine} (-engine={o.engine})",
        RULE,
    ]
    for warning in result.warnings:
        click.echo(f"mpmetis: warning: {warning}", err=True)
    with staged_files(files):
        emit("\n".join(lines), quiet)


def run() -> None:
    """The ``mpmetis`` process."""
    run_program(main, "mpmetis")


if __name__ == "__main__":
    run()
