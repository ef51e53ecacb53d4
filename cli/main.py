"""The ``gpmetis`` command: METIS 5.1 ``gpmetis``'s options and output, plus gpmetis's own."""

from __future__ import annotations

import os
import re
import signal
import stat
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import click

from cli.help import GPMETIS_HELP
from gpmetis.options import (
    CTYPES,
    ENGINES,
    INT_OPTION_RANGES,
    IPTYPES,
    MAX_INT_DIGITS,
    NPARTS_MAX,
    OBJTYPES,
    PRESETS,
    PTYPES,
    RTYPES,
)

if TYPE_CHECKING:
    from rich.text import Text

    from cli.progress import Progress

CONTEXT = {"help_option_names": ["-help", "--help", "-h"], "max_content_width": 100}


def _choice(values: tuple[str, ...]) -> click.Choice:
    return click.Choice(values, case_sensitive=False)


class MetisInt(click.ParamType):
    """An integer in ASCII digits (a leading '-' where ``low`` < 0) within [low, high]; click's
    own int also takes '1_000', '+5' and non-ASCII digits."""

    name = "integer"

    def __init__(self, low: int, high: int) -> None:
        self.low, self.high = low, high

    def convert(self, value, param, ctx) -> int:
        if isinstance(value, int):
            number = value
        elif re.fullmatch(r"-?[0-9]+" if self.low < 0 else r"[0-9]+", value):
            if len(value.lstrip("-").lstrip("0")) > MAX_INT_DIGITS:
                self.fail(f"'{value[:24]}...' is not between {self.low} and {self.high}",
                          param, ctx)
            number = int(value)
        else:
            self.fail(f"'{value}' is not an integer written in the digits 0-9", param, ctx)
        if not self.low <= number <= self.high:
            self.fail(f"{number} is not between {self.low} and {self.high}", param, ctx)
        return number


def _int(name: str) -> MetisInt:
    return MetisInt(*INT_OPTION_RANGES[name])


def _strip_equals(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """click reads the one-letter ``-o=FILE`` as ``-o`` with value ``=FILE``; METIS style means
    FILE."""
    return value[1:] if value and value.startswith("=") else value


class MetisUsageError(click.UsageError):
    """A usage error shown as the programs' other errors are: one line on stderr,
    ``PROGRAM: error: MESSAGE (see 'PROGRAM -help')``, exit status 2."""

    def show(self, file=None) -> None:
        program = self.ctx.command.name if self.ctx else "gpmetis"
        message = self.format_message().rstrip(".")
        click.echo(f"{program}: error: {message} (see '{program} -help')", file=file,
                   err=file is None)


class MetisStyleCommand(click.Command):
    """Names an unknown ``-option`` whole (click would split it into one-letter options),
    reports usage errors as MetisUsageError, and prints ``metis_help`` (when given) for -help.
    """

    def __init__(self, *args, metis_help: str | None = None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.metis_help = metis_help

    def get_help(self, ctx: click.Context) -> str:
        return self.metis_help if self.metis_help is not None else super().get_help(ctx)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        known = {opt.split("=")[0] for p in self.params for opt in getattr(p, "opts", [])}
        known |= set(ctx.help_option_names)
        for arg in args:
            if arg == "--":
                break
            if not arg.startswith("-") or arg.startswith("--"):
                continue
            name = arg.split("=", 1)[0]
            if name.lstrip("-").isdigit():
                raise MetisUsageError(f"NPARTS must be a positive integer, got {arg}", ctx)
            if name not in known and name[:2] not in known:
                raise MetisUsageError(f"No such option: {name}", ctx)
        try:
            return super().parse_args(ctx, args)
        except click.UsageError as exc:
            raise MetisUsageError(exc.format_message(), exc.ctx or ctx) from None


@click.command("gpmetis", cls=MetisStyleCommand, context_settings=CONTEXT,
               metis_help=GPMETIS_HELP)
@click.argument("graphfile", type=click.Path(dir_okay=True, readable=False))
@click.argument("nparts", type=MetisInt(1, NPARTS_MAX))
@click.option("-ptype", type=_choice(PTYPES), default="kway",
              help="rb (recursive bisection) | kway (default)")
@click.option("-objtype", type=_choice(OBJTYPES), default="cut", help="cut (default) | vol")
@click.option("-ctype", type=_choice(CTYPES), default=None,
              help="rm | shem (METIS's default) | lp (clusters; default of the gpu/cpu engines)")
@click.option("-iptype", type=_choice(IPTYPES), default=None, help="initial partitioning scheme")
@click.option("-rtype", type=_choice(RTYPES), default=None, help="refinement scheme (METIS only)")
@click.option("-ufactor", type=_int("ufactor"), default=None,
              help="allowed imbalance 1+x/1000 (default 30 for kway, 1 for rb)")
@click.option("-niter", type=_int("niter"), default=10, help="refinement iterations")
@click.option("-ncuts", type=_int("ncuts"), default=1, help="best of this many runs")
@click.option("-seed", type=_int("seed"), default=-1, help="random seed")
@click.option("-preset", type=_choice(PRESETS), default="default",
              help="default | strong (several runs combined: a lower cut for more time)")
@click.option("-no2hop", is_flag=True, help="no 2-hop matching during coarsening")
@click.option("-minconn", is_flag=True,
              help="lower the most parts any part is adjacent to (k-way; ignored with rb)")
@click.option("-contig", is_flag=True,
              help="connected parts (ignored, with a warning, on a disconnected graph)")
@click.option("-ondisk", is_flag=True, help="METIS's out-of-core option (not supported)")
@click.option("-nooutput", is_flag=True, help="write no partition file")
@click.option("-tpwgts", type=str, default=None, help="file of target partition weights")
@click.option("-ubvec", type=str, default=None, help="per-constraint imbalance, e.g. '1.02 1.2'")
@click.option("-dbglvl", type=_int("dbglvl"), default=0, help="> 0: per-phase timing")
@click.option("-time", "show_time", is_flag=True, help="print per-phase and per-level timing")
@click.option("-engine", type=_choice(ENGINES), default="auto",
              help="auto (default) | gpu | cpu | metis")
@click.option("-gpus", type=str, default=None,
              help="spread the graph over N GPUs of this host (N or all): N ranks, one GPU each")
@click.option("-o", "-output", "output", type=str, default=None, callback=_strip_equals,
              help="partition file (default GRAPHFILE.part.NPARTS)")
@click.option("-json", "json_file", type=str, default=None, help="also write the report as JSON")
@click.option("-quiet", is_flag=True, help="print nothing but errors and warnings")
@click.option("-symmetrize", is_flag=True, help="add missing reverse edges instead of failing")
@click.version_option(None, "--version", "-version", package_name="gpmetis",
                      message="%(prog)s (gpmetis) %(version)s")
@click.option("-edgepart", is_flag=True,
              help="partition the edges (SPAC) and write GRAPHFILE.edgepart.NPARTS")
def main(graphfile: str, nparts: int, show_time: bool, json_file: str | None, **opts) -> None:
    """Partition GRAPHFILE (METIS graph or Matrix Market, optionally .gz/.bz2/.xz) into NPARTS
    parts and write GRAPHFILE.part.NPARTS, like METIS's gpmetis."""
    from gpmetis.distributed.comm import launched_rank, launched_ranks
    from gpmetis.errors import GpmetisError
    from gpmetis.options import Options, parse_ubvec

    try:
        if opts["ubvec"] is not None:
            opts["ubvec"] = parse_ubvec(opts["ubvec"])
        if show_time and opts["dbglvl"] == 0:
            opts["dbglvl"] = 2
        edgepart = opts.pop("edgepart")
        if opts["gpus"] is not None and opts["gpus"].isdecimal():
            opts["gpus"] = int(opts["gpus"])
        options = Options(json=json_file, **opts).validate()
        if options.gpus is not None:
            from cli.distributed import on_gpus

            options = on_gpus(options)
        if edgepart:
            if launched_rank() != 0:  # under mpiexec the edges are partitioned by rank 0
                return
            from cli.edgepart import run_edgepart

            run_edgepart(graphfile, nparts, options, _same_file, _print)
            return
        _check_paths(graphfile, nparts, options)
        if launched_ranks() > 1:
            from cli.distributed import run_distributed

            run_distributed(graphfile, nparts, options, finish, _c_stdout_to_stderr)
            return
        from cli.progress import progress

        shown = progress(graphfile, options.quiet)  # on a terminal, from about a second on
        try:
            _run(graphfile, nparts, options, shown)
        finally:
            if shown is not None:
                shown.stop()
    except GpmetisError as exc:
        if launched_rank() == 0:  # under mpiexec every rank has the error: rank 0 says it
            click.echo(f"gpmetis: error: {exc}", err=True)
        sys.exit(exc.exit_code)


def _output_path(graphfile: str, nparts: int, options) -> str | None:
    return None if options.nooutput else options.output or f"{graphfile}.part.{nparts}"


def _same_file(a: str, b: str) -> bool:
    """Whether writing ``a`` would replace the file ``b``: the same existing file, or the same
    resolved path. Devices never count: they are written into, not replaced."""
    try:
        if stat.S_ISCHR(os.stat(a).st_mode):
            return False
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def _check_paths(graphfile: str, nparts: int, options) -> None:
    """OptionError when an output would overwrite the input graph or the other output."""
    from gpmetis.errors import OptionError

    output = _output_path(graphfile, nparts, options)
    if output is not None and _same_file(output, graphfile):
        raise OptionError("o", f"'{output}' is the input graph; writing it would destroy it")
    if options.json is not None:
        if _same_file(options.json, graphfile):
            raise OptionError("json", f"'{options.json}' is the input graph; writing it would "
                                      "destroy it")
        if output is not None and _same_file(options.json, output):
            raise OptionError("json", f"'{options.json}' is also the partition file")


def _run(graphfile: str, nparts: int, options, shown: Progress | None = None) -> None:
    """Read, check NPARTS, partition, print the summary, then write the files: all of them or
    none, and only when everything before succeeded. ``shown``: the run's progress line, gone
    before the summary."""
    from gpmetis.io import read_graph
    from gpmetis.options import check_nparts, check_ubvec_ncon
    from gpmetis.partitioning import warmup
    from gpmetis.partitioning.driver import partition

    if not options.quiet and sys.stdout is None:
        raise _stdout_error("it is closed")
    t0 = time.perf_counter()
    pending = warmup.start(graphfile, options)  # GPU start-up overlaps the read
    graph = pending.result() if pending else read_graph(graphfile, symmetrize=options.symmetrize)
    t1 = time.perf_counter()
    for warning in graph.warnings:
        click.echo(f"gpmetis: warning: {warning}", err=True)
    check_nparts(nparts, graph.nvtxs)
    check_ubvec_ncon(options.ubvec, graph.ncon)
    with _c_stdout_to_stderr():
        result = partition(graph, nparts, options)
    t2 = time.perf_counter()
    finish(graphfile, nparts, options, graph, result, (t0, t1, t2), shown)


def finish(graphfile: str, nparts: int, options, graph, result, times: tuple[float, ...],
           shown: Progress | None = None) -> None:
    """Print the summary of ``result`` (read from ``times[0]`` to ``times[1]``, partitioned
    until ``times[2]``), then write the part file and the JSON report: all or none."""
    from gpmetis.io.partfile import partition_bytes, staged_files
    from gpmetis.report import Timing, format_summary, report_dict

    t0, t1, t2 = times
    for warning in result.warnings:
        click.echo(f"gpmetis: warning: {warning}", err=True)
    files = []
    output = _output_path(graphfile, nparts, options)
    if output is not None:
        files.append((output, partition_bytes(result.part)))
    t3 = time.perf_counter()
    # partition() times the engine alone; the rest of its time went to the metrics (reporting).
    timing = Timing(io=(t1 - t0) + (t3 - t2), partitioning=result.seconds,
                    reporting=(t2 - t1) - result.seconds)
    if options.json:
        import json

        report = report_dict(graph, result, options, timing, partition_file=output)
        files.append((options.json, json.dumps(report, indent=2).encode()))
    if shown is not None:
        shown.stop()
    with staged_files(files):  # written once the summary is out
        if not options.quiet:
            _print(format_summary(graph, result, options, timing))


@contextmanager
def _c_stdout_to_stderr() -> Iterator[None]:
    """File descriptor 1 on stderr while METIS runs in this process: its own prints (-dbglvl,
    its warnings) go there, so stdout carries the summary alone (nothing with -quiet, JSON
    alone with -json=/dev/stdout)."""
    from gpmetis.c_output import redirected

    with redirected((1,), 2):
        yield


def _stdout_error(why: str):
    from gpmetis.errors import GpmetisError

    return GpmetisError(f"cannot print the summary on standard output: {why} (-quiet prints "
                        "nothing)")


# What a summary on a terminal colours: section headings ("Timing Information ----") and the
# rules, and figures: whole numbers standing alone after the banner (whose numbers are versions).
# A digit that is part of a word (4elt, 64bits), a label ("constraint #0") or a dotted version
# ("0.1.0") is no figure.
HEADING = re.compile(r"^\S.*? -{3,}$|^\*{20,}$", re.MULTILINE)
FIGURE = re.compile(r"(?<![\w.#-])-?\d+(?:\.\d+)?(?!\w|\.\w)")


def summary_text(text: str) -> Text:
    """``text`` as a rich Text whose headings and figures are styled (nothing else is)."""
    from rich.text import Text

    styled = Text(text)
    styled.highlight_regex(HEADING, "bold")
    banner_end = text.find("\n\n")
    for figure in FIGURE.finditer(text, max(banner_end, 0)):
        styled.stylize("bold cyan", figure.start(), figure.end())
    return styled


def _print(text: str) -> None:
    """Print and flush a summary: coloured on a terminal, plain text otherwise. GpmetisError
    when standard output cannot take it."""
    try:
        if sys.stdout.isatty():
            from rich.console import Console

            Console(highlight=False, soft_wrap=True).print(summary_text(text))
        else:
            click.echo(text)
        sys.stdout.flush()
    except OSError as e:
        raise _stdout_error(e.strerror or str(e)) from None


class Interrupted(BaseException):
    """SIGINT (Ctrl-C) in the ``gpmetis`` process. Not a KeyboardInterrupt, which click turns
    into "Aborted!" and exit status 1; every file being written is discarded on the way out."""


def _interrupt(signum: int, frame) -> None:
    raise Interrupted


def _guard_standard_fds() -> None:
    """Point a closed stdin, stdout or stderr at /dev/null, so that no file this process opens
    takes its number (METIS would print into it). ``sys.stdout`` stays None when stdout was
    closed: a summary then fails with a message."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            null = os.open(os.devnull, os.O_RDWR)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)


def run() -> None:
    """The ``gpmetis`` process: ``main``, then an exit that skips the interpreter's teardown
    (freeing the GPU memory pool and context, joining the METIS workers: ~0.4 s after a
    large run). Output is flushed first and the METIS workers are stopped, so nothing is lost
    and nothing is left running. SIGINT ends the run with status 130 and writes no file."""
    from cli.startup import preset_pymetis_version

    _guard_standard_fds()
    preset_pymetis_version()
    signal.signal(signal.SIGINT, _interrupt)
    from gpmetis.distributed.comm import end_process, launched_rank

    agreed = True  # every rank ends this way (not an interrupt of one)
    try:
        code = 0
        if launched_rank() == 0:
            main()
        else:
            code = _other_rank_main()
    except SystemExit as exc:
        code = exc.code
    except Interrupted:
        print("gpmetis: interrupted", file=sys.stderr)
        code, agreed = 130, False
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the teardown below is not interrupted
    if isinstance(code, str):
        print(code, file=sys.stderr)
        code = 1
    workers = sys.modules.get("gpmetis.initial_partitioning.workers")
    if workers is not None:  # only a run that imported it can have forked any
        workers.stop_workers()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass
    end_process(code or 0, agreed=agreed)


def _other_rank_main() -> int:
    """``main`` on a rank other than 0 of ``mpiexec``'s: the same run, but a usage error, which
    every rank finds, is rank 0's to print; its exit status."""
    try:
        main.main(standalone_mode=False)
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.ClickException as exc:
        return exc.exit_code
    except click.Abort:
        return 1
    return 0


if __name__ == "__main__":
    run()
