"""Forked processes that run the METIS trials of the initial partition, each fed through its
own pipe (a job reaches its worker at once, without an executor's queues and threads).

Workers hold no state between jobs: a job is a module-level function and its arguments, so
which worker runs it, or whether one runs here instead, does not change its result. The NumPy
arrays among a job's arguments reach the workers through memory they share with this process
(an anonymous shared mapping made before the fork), each array written once however many jobs
take it: only their places go through the pipes. On the workers those arrays are read-only
views, shared by the jobs that take the same array: a job only reads its arrays. Each worker
imports PRELOAD as soon as it is forked, while this process goes on, so that the first job does
not wait for it; this module imports ``multiprocessing`` only when it forks. METIS's own
prints during the jobs (C's printf: warnings such as "Cannot bisect a graph with 0 vertices")
are discarded, here and on the workers, unless ``trial_prints`` shows them (-dbglvl): the
trials are the engine's business, not the user's.
"""

from __future__ import annotations

import importlib
import math
import mmap
import os
import signal
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from gpmetis.c_output import silenced, trials_quiet
from gpmetis.errors import PartitionError

Job = tuple[Callable[[Any], Any], Any]  # (function, argument), picklable
# bytes of the arena shared with the workers (address space: pages are used as written); a
# submission whose arrays do not fit sends them through the pipes
ARENA_BYTES = 1 << 28
ARENA_ALIGN = 64
PRELOAD = ("pymetis",)  # what the METIS trials import (pymetis's import alone took ~50 ms)


@dataclass(frozen=True)
class _Shared:
    """An array written into the arena: its offset, dtype and shape."""

    offset: int
    dtype: str
    shape: tuple[int, ...]

    def view(self, arena: mmap.mmap) -> np.ndarray:
        count = math.prod(self.shape)
        return np.frombuffer(arena, self.dtype, count, self.offset).reshape(self.shape)


def _share(jobs: list[Job], arena: mmap.mmap) -> list[Job]:
    """``jobs`` with the arrays of their tuple arguments written into ``arena`` and replaced by
    ``_Shared`` places (an array taken by several jobs is written once); ``jobs`` as they are
    when the arrays do not fit."""
    places: dict[int, _Shared] = {}
    end = 0
    shared = []
    for function, argument in jobs:
        if isinstance(argument, tuple):
            items = []
            for item in argument:
                if isinstance(item, np.ndarray):
                    if id(item) not in places:
                        if end + item.nbytes > len(arena):
                            return jobs
                        place = _Shared(end, item.dtype.str, item.shape)
                        place.view(arena)[...] = item
                        places[id(item)] = place
                        end += -(-item.nbytes // ARENA_ALIGN) * ARENA_ALIGN
                    item = places[id(item)]
                items.append(item)
            argument = tuple(items)
        shared.append((function, argument))
    return shared


def _unshare(argument: Any, arena: mmap.mmap) -> Any:
    """A job's argument with its ``_Shared`` places read back as read-only views of ``arena``
    (jobs read their arrays, which other jobs may share)."""
    if not isinstance(argument, tuple):
        return argument
    views = []
    for item in argument:
        if isinstance(item, _Shared):
            item = item.view(arena)
            item.flags.writeable = False
        views.append(item)
    return tuple(views)


class _Workers:
    def __init__(self, count: int) -> None:
        import multiprocessing

        context = multiprocessing.get_context("fork")
        self.processes, self.pipes = [], []
        self.arena = mmap.mmap(-1, ARENA_BYTES)  # shared with the children forked below
        for _ in range(count):
            ours, theirs = context.Pipe()
            # the child closes its copies of our ends: when we exit, every worker sees EOF
            process = context.Process(target=_serve,
                                      args=(theirs, [*self.pipes, ours], self.arena),
                                      daemon=True)
            process.start()
            theirs.close()
            self.processes.append(process)
            self.pipes.append(ours)

    def submit(self, jobs: list[Job], quiet: bool) -> _Pending:
        """Send job i to worker i mod count now, its METIS prints discarded where ``quiet``;
        the arena holds the jobs' arrays until the results are in (the next submission
        overwrites them)."""
        count = len(self.pipes)
        jobs = _share(jobs, self.arena)
        batches = [(pipe, jobs[w::count]) for w, pipe in enumerate(self.pipes) if jobs[w::count]]
        for pipe, batch in batches:
            try:
                pipe.send((quiet, batch))
            except OSError as exc:
                raise _died() from exc
        return _Pending([pipe for pipe, _ in batches], count, len(jobs))

    def kill(self) -> None:
        # every worker signalled before any is waited for: they die at once, not in turn
        for process in self.processes:
            process.kill()
        for process, pipe in zip(self.processes, self.pipes):
            process.join()
            pipe.close()


class _Pending:
    """The answers of one submission, in the jobs' order once all have come."""

    def __init__(self, pipes: list, count: int, njobs: int) -> None:
        self.pipes, self.count, self.njobs = pipes, count, njobs

    def ready(self) -> bool:
        return all(pipe.poll() for pipe in self.pipes)

    def results(self) -> list:
        answers = [_answer(pipe) for pipe in self.pipes]
        return [answers[i % self.count][i // self.count] for i in range(self.njobs)]


def _serve(pipe, parent_ends: list, arena: mmap.mmap) -> None:
    """A worker's loop: a batch of jobs in, their results (or the error) out. Ctrl-C is the
    parent's to handle; the worker ends when the parent's pipe end closes. METIS's own prints
    go to stderr (stdout is the parent's to write), or nowhere for a batch sent ``quiet``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.dup2(2, 1)
    for end in parent_ends:
        end.close()
    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError:  # the job that needs it reports it
            pass
    while True:
        try:
            quiet, batch = pipe.recv()
        except EOFError:
            return
        try:
            with silenced(quiet):
                results = [function(_unshare(argument, arena)) for function, argument in batch]
            pipe.send(results)
        except Exception as exc:  # the caller re-raises it
            pipe.send(exc)


def _answer(pipe) -> list:
    try:
        answer = pipe.recv()
    except (EOFError, OSError) as exc:
        raise _died() from exc
    if isinstance(answer, Exception):
        raise answer
    return answer


def _died() -> PartitionError:
    return PartitionError("a METIS trial worker process ended unexpectedly")


_workers: _Workers | None = None
_DONE = object()  # what next() gives once meanwhile has no steps left


def start_workers(count: int) -> None:
    """Fork up to ``count`` workers now (one per core at most), before the engine starts CUDA
    (workers only run pymetis); nothing when one core would run them all."""
    global _workers
    count = min(count, os.cpu_count() or 1)
    if _workers is None and count > 1:
        _workers = _Workers(count)


def stop_workers() -> None:
    """Kill and reap the workers at once (they hold no state worth a clean shutdown; a container
    whose first process reaps no orphans would keep them as zombies)."""
    global _workers
    if _workers is not None:
        _workers.kill()
        _workers = None


def run_jobs(jobs: list[Job], meanwhile: Iterator[None], parallel: bool) -> list:
    """Each job's result, in order: on the workers where ``parallel`` and there are any, else
    here; METIS's prints as ``trial_prints`` says. While the workers compute, steps of
    ``meanwhile`` run here (one ``next`` each), as long as answers are missing and steps are
    left. Where a job fails or a worker dies, the workers are stopped (answers may be left
    unread; fresh ones are forked next time) and the error raised (a dead worker is a
    PartitionError)."""
    if not (parallel and _workers is not None):
        with silenced(trials_quiet()):
            return [function(argument) for function, argument in jobs]
    try:
        pending = _workers.submit(jobs, trials_quiet())
        while not pending.ready() and next(meanwhile, _DONE) is not _DONE:
            pass
        return pending.results()
    except BaseException:
        stop_workers()
        raise
