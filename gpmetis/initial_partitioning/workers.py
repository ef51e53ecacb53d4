"""Forked processes that run the METIS trials of the initial partition, each fed through its
own pipe (a job reaches its worker at once, without an executor's queues and threads).

Workers hold no state between jobs: a job is a module-level function and its arguments, so
which worker runs it, or whether one runs here instead, does not change its result.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from collections.abc import Callable, Iterator
from typing import Any

from gpmetis.errors import PartitionError

Job = tuple[Callable[[Any], Any], Any]  # (function, argument), picklable


class _Workers:
    def __init__(self, count: int) -> None:
        context = multiprocessing.get_context("fork")
        self.processes, self.pipes = [], []
        for _ in range(count):
            ours, theirs = context.Pipe()
            # the child closes its copies of our ends: when we exit, every worker sees EOF
            process = context.Process(target=_serve, args=(theirs, [*self.pipes, ours]),
                                      daemon=True)
            process.start()
            theirs.close()
            self.processes.append(process)
            self.pipes.append(ours)

    def submit(self, jobs: list[Job]) -> _Pending:
        """Send job i to worker i mod count now."""
        count = len(self.pipes)
        batches = [(pipe, jobs[w::count]) for w, pipe in enumerate(self.pipes) if jobs[w::count]]
        for pipe, batch in batches:
            try:
                pipe.send(batch)
            except OSError as exc:
                raise _died() from exc
        return _Pending([pipe for pipe, _ in batches], count, len(jobs))

    def kill(self) -> None:
        for process, pipe in zip(self.processes, self.pipes):
            process.kill()
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


def _serve(pipe, parent_ends: list) -> None:
    """A worker's loop: a batch of jobs in, their results (or the error) out. Ctrl-C is the
    parent's to handle; the worker ends when the parent's pipe end closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for end in parent_ends:
        end.close()
    while True:
        try:
            batch = pipe.recv()
        except EOFError:
            return
        try:
            pipe.send([function(argument) for function, argument in batch])
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
    """Kill and reap the workers at once (they hold no state worth a clean shutdown)."""
    global _workers
    if _workers is not None:
        _workers.kill()
        _workers = None


def run_jobs(jobs: list[Job], meanwhile: Iterator[None], parallel: bool) -> list:
    """Each job's result, in order: on the workers where ``parallel`` and there are any, else
    here. While the workers compute, steps of ``meanwhile`` run here (one ``next`` each), as
    long as answers are missing and steps are left. Where a job fails or a worker dies, the
    workers are stopped (answers may be left unread; fresh ones are forked next time) and the
    error raised (a dead worker is a PartitionError)."""
    if not (parallel and _workers is not None):
        return [function(argument) for function, argument in jobs]
    try:
        pending = _workers.submit(jobs)
        while not pending.ready() and next(meanwhile, _DONE) is not _DONE:
            pass
        return pending.results()
    except BaseException:
        stop_workers()
        raise
