"""What METIS's companion programs (mpmetis, ndmetis, m2gmetis, graphchk) share here: the
summary's banner, rules and section lines in METIS 5.1's shapes, and the process wrapper.

The summaries keep METIS 5.1's lines on METIS's line numbers: a rule, a three-line banner (ours
says what runs), a blank line, then METIS's sections; gpmetis's own lines come after METIS's.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Callable

import click

from cli.main import Interrupted, _guard_standard_fds, _interrupt, _print

RULE = "*" * 78
SHORT_RULE = "*" * 70  # graphchk's


def section(title: str, width: int = 77) -> str:
    """METIS's section line: the title, a space, dashes up to ``width`` characters."""
    return f"{title} {'-' * (width - 1 - len(title))}"


def banner(program: str) -> list[str]:
    """The three lines that stand where METIS prints its title, build and type sizes."""
    from gpmetis import __version__

    return [
        f"{program} (gpmetis {__version__}), METIS 5.1 {program} compatible",
        " (runs gpmetis's engines; METIS 5.2 through pymetis where it orders or is chosen)",
        " size of idx_t: 64bits, real_t: 64bits, idx_t *: 64bits",
    ]


def timing_lines(io: float, work: float, label: str, note: str, reporting: float) -> list[str]:
    """METIS's timing block (``label`` is "Partitioning" or "Ordering")."""
    return [
        section("Timing Information"),
        f"  I/O:          \t\t {io:7.3f} sec",
        f"  {label + ':':<14}\t\t {work:7.3f} sec   ({note})",
        f"  Reporting:    \t\t {reporting:7.3f} sec",
    ]


def memory_lines() -> list[str]:
    """METIS's memory block (this process's peak resident memory)."""
    from gpmetis.report import max_rss_mb

    return [section("Memory Information"), f"  Max memory used:\t\t {max_rss_mb():7.3f} MB"]


def yes(flag: bool) -> str:
    return "YES" if flag else "NO"


def emit(text: str, quiet: bool = False) -> None:
    """Print a summary (plain when piped), unless ``quiet``."""
    if not quiet:
        _print(text)


def fail(program: str) -> Callable:
    """Decorator: a GpmetisError becomes ``PROGRAM: error: MESSAGE`` on stderr and its exit
    status (usage 2, input and run-time 1)."""

    def wrap(func: Callable) -> Callable:
        def inner(*args, **kwargs):
            from gpmetis.errors import GpmetisError

            try:
                return func(*args, **kwargs)
            except GpmetisError as exc:
                click.echo(f"{program}: error: {exc}", err=True)
                sys.exit(exc.exit_code)

        inner.__name__ = func.__name__
        inner.__doc__ = func.__doc__
        return inner

    return wrap


def run_program(command: click.Command, program: str) -> None:
    """Run a companion's click command as a process, as ``gpmetis`` runs: SIGINT exits 130
    and writes no file, a closed standard stream never takes a file's descriptor, output is
    flushed before exit."""
    _guard_standard_fds()
    signal.signal(signal.SIGINT, _interrupt)
    try:
        command(prog_name=program)
        code = 0
    except SystemExit as exc:
        code = exc.code
    except Interrupted:
        print(f"{program}: interrupted", file=sys.stderr)
        code = 130
    if isinstance(code, str):
        print(code, file=sys.stderr)
        code = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass
    sys.exit(code or 0)
