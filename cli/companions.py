"""What METIS's companion programs (mpmetis, ndmetis, m2gmetis, graphchk) share here: printing
a summary and the process wrapper. The summary's lines in METIS 5.1's shapes (banner, rules,
sections) are gpmetis.report's.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Callable

import click

from cli.main import Interrupted, _guard_standard_fds, _interrupt, _print


def emit(text: str, quiet: bool = False) -> None:
    """Print a summary (plain when piped), unless ``quiet``."""
    if not quiet:
        _print(text)


def fail(program: str) -> Callable:
    """Decorator: a GpmetisError becomes ``PROGRAM: error: MESSAGE`` on stderr and its exit
    status (usage 2, input and run-time 1); a MemoryError, ``out of memory`` and status 1."""

    def wrap(func: Callable) -> Callable:
        def inner(*args, **kwargs):
            from gpmetis.errors import GpmetisError

            try:
                return func(*args, **kwargs)
            except GpmetisError as exc:
                click.echo(f"{program}: error: {exc}", err=True)
                sys.exit(exc.exit_code)
            except MemoryError:  # what the up-front memory checks could not foresee
                click.echo(f"{program}: error: out of memory", err=True)
                sys.exit(1)

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
