"""METIS's own prints (C's printf on file descriptors 1 and 2, which ``sys.stdout`` does not
reach) sent elsewhere at the descriptor level while a block runs; and whether the METIS trials
inside the gpu/cpu engines may print at all (``trial_prints``)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache

_trials_shown = False  # the trials' prints are the engine's business, not the user's


@contextmanager
def trial_prints(shown: bool) -> Iterator[None]:
    """Within the block, the METIS trials' prints are shown where ``shown`` (-dbglvl > 0),
    else discarded (also outside any such block)."""
    global _trials_shown
    before, _trials_shown = _trials_shown, shown
    try:
        yield
    finally:
        _trials_shown = before


def trials_quiet() -> bool:
    """Whether the METIS trials run now print nothing."""
    return not _trials_shown


@cache
def _libc():
    import ctypes

    return ctypes.CDLL(None)


def _flush() -> None:
    """Python's and C's buffered output written out, to the descriptors they hold now."""
    for stream in (sys.stdout, sys.stderr):
        if stream is not None:
            stream.flush()
    _libc().fflush(None)


@contextmanager
def redirected(fds: tuple[int, ...], target: int) -> Iterator[None]:
    """Each of ``fds`` pointing at the open descriptor ``target`` while the block runs, then
    back; buffered output is flushed on both sides of each swap, so what was written before
    the block is not redirected and what was written inside it is."""
    _flush()
    saved = [os.dup(fd) for fd in fds]
    for fd in fds:
        os.dup2(target, fd)
    try:
        yield
    finally:
        _flush()
        for fd, kept in zip(fds, saved):
            os.dup2(kept, fd)
            os.close(kept)


@contextmanager
def silenced(quiet: bool = True) -> Iterator[None]:
    """Stdout and stderr (descriptors 1 and 2) on /dev/null while the block runs, where
    ``quiet``; nothing changes otherwise."""
    if not quiet:
        yield
        return
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        with redirected((1, 2), null):
            yield
    finally:
        os.close(null)
