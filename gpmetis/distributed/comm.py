"""The ranks of a distributed run: MPI's (through mpi4py) when the process was started by
``mpiexec``, else this process alone; and the collectives the distributed pieces use, on NumPy
arrays of explicit dtypes. Integer reductions are exact and do not depend on the ranks' order,
which keeps a distributed run's decisions the same for any number of ranks."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any, NoReturn, TypeVar

import numpy as np

from gpmetis.errors import GpmetisError

T = TypeVar("T")

# what MPICH's and Open MPI's launchers set in each process they start
SIZE_VARIABLES = ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE")
RANK_VARIABLES = ("PMI_RANK", "OMPI_COMM_WORLD_RANK")
LOCAL_RANK_VARIABLES = ("MPI_LOCALRANKID", "PMI_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK")


def launched_ranks() -> int:
    """How many processes ``mpiexec`` started this one among (1 when it did not)."""
    for name in SIZE_VARIABLES:
        if os.environ.get(name, "").isdigit():
            return int(os.environ[name])
    return 1


def launched_rank() -> int:
    """This process's rank among those ``mpiexec`` started (0 when it did not), read before
    MPI starts."""
    for name in RANK_VARIABLES:
        if os.environ.get(name, "").isdigit():
            return int(os.environ[name])
    return 0


def local_rank() -> int:
    """This process's rank among those ``mpiexec`` started on its host (its GPU's index)."""
    for name in LOCAL_RANK_VARIABLES:
        if os.environ.get(name, "").isdigit():
            return int(os.environ[name])
    return 0


def host_cpu_share(hosts: list[str], rank: int, ncpus: int) -> range:
    """The CPUs of rank ``rank``'s host (of ``ncpus``) that are its share, where ``hosts``
    names each rank's host: consecutive blocks, one per rank on the host, in rank order."""
    local = hosts[:rank].count(hosts[rank])
    share = max(ncpus // hosts.count(hosts[rank]), 1)
    start = (local * share) % ncpus
    return range(start, min(start + share, ncpus))


class Comm:
    """A group of ranks: ``mpi`` an mpi4py communicator, or None for this process alone."""

    def __init__(self, mpi: Any = None) -> None:
        self.mpi = mpi
        self.rank = 0 if mpi is None else mpi.Get_rank()
        self.size = 1 if mpi is None else mpi.Get_size()
        self.device: Any = None  # the ranks' NCCL communicator, once ``use_gpus`` made it
        self.gpus = False  # whether ``use_gpus`` gave this rank a GPU
        self.gpu_sharers = 1  # how many ranks use this rank's GPU, once ``use_gpus`` ran
        self.on_abort: Callable[[GpmetisError], None] | None = None

    def use_gpus(self) -> None:
        """Give each rank the GPU of its local rank (modulo the host's GPUs), and where no
        two ranks share one, NCCL between them: the collectives then move device arrays GPU
        to GPU (else through the host). Collective; the first call decides."""
        if self.gpus:
            return
        self.gpus = True
        import socket

        import cupy

        cupy.cuda.Device(local_rank() % cupy.cuda.runtime.getDeviceCount()).use()
        if self.mpi is None:
            return
        gpus = self.mpi.allgather((socket.gethostname(), cupy.cuda.Device().pci_bus_id))
        self.gpu_sharers = gpus.count(gpus[self.rank])
        if len(set(gpus)) == self.size:
            from gpmetis.distributed.nccl import DeviceComm

            self.device = DeviceComm(self)

    @classmethod
    def world(cls) -> Comm:
        """Every rank ``mpiexec`` started (mpi4py is imported only then), or this process."""
        launched = launched_ranks()
        if launched <= 1:
            return cls()
        from mpi4py import MPI

        if MPI.COMM_WORLD.Get_size() != launched:
            library = MPI.Get_library_version().splitlines()[0]
            raise GpmetisError(
                f"mpiexec started {launched} processes but MPI sees "
                f"{MPI.COMM_WORLD.Get_size()}: mpi4py ({library}) and mpiexec come from "
                "different MPI implementations; use the mpiexec of the MPI mpi4py loads")
        comm = cls(MPI.COMM_WORLD)
        comm.unbind_single_cpus()
        return comm

    def unbind_single_cpus(self) -> None:
        """Where ``mpiexec`` bound each rank to one CPU (Open MPI's default for two ranks or
        fewer), let every rank run on its share of its host's CPUs (``host_cpu_share``): its
        threads (the staged copies to its GPU, the host's checks, NCCL's proxy) would
        otherwise take turns on that one CPU. Ranks bound to several CPUs keep their binding.
        Collective."""
        import socket

        hosts = self.allgather_objects(socket.gethostname())
        if not hasattr(os, "sched_setaffinity") or len(os.sched_getaffinity(0)) != 1:
            return
        cpus = host_cpu_share(hosts, self.rank, os.cpu_count() or 1)
        for thread in os.listdir("/proc/self/task"):  # the threads MPI and NumPy started
            try:
                os.sched_setaffinity(int(thread), cpus)
            except OSError:  # a thread that has ended, or CPUs this process may not use
                pass

    @property
    def root(self) -> bool:
        return self.rank == 0

    def allreduce_sum(self, a: np.ndarray) -> np.ndarray:
        """The element-wise sum over the ranks of the int64 or float64 array ``a`` (a device
        array gives a device array)."""
        if on_device(a):
            if self.mpi is None:
                return a.copy()
            if self.device is not None:
                return self.device.allreduce_sum(a)
            import cupy

            return cupy.asarray(self.allreduce_sum(a.get()))
        a = np.ascontiguousarray(a)
        if self.mpi is None:
            return a.copy()
        out = np.empty_like(a)
        self.mpi.Allreduce(a, out)
        return out

    def allreduce_max(self, value: int) -> int:
        if self.mpi is None:
            return int(value)
        from mpi4py import MPI

        return int(self.mpi.allreduce(int(value), op=MPI.MAX))

    def allgather(self, value: int) -> np.ndarray:
        """Every rank's ``value`` (int64), in rank order."""
        mine = np.array([value], dtype=np.int64)
        if self.mpi is None:
            return mine
        out = np.empty(self.size, dtype=np.int64)
        self.mpi.Allgather(mine, out)
        return out

    def allgather_objects(self, obj: Any) -> list:
        """Every rank's ``obj`` (a small picklable value), in rank order."""
        return [obj] if self.mpi is None else self.mpi.allgather(obj)

    def bcast(self, obj: Any) -> Any:
        """The root's ``obj`` (a small picklable value) on every rank."""
        return obj if self.mpi is None else self.mpi.bcast(obj, root=0)

    def alltoallv(self, send: list[np.ndarray], recv_counts: np.ndarray | None = None
                  ) -> list[np.ndarray]:
        """``send[r]`` (one dtype on every rank) goes to rank r; returns what each rank sent
        this one, in rank order (device arrays for device arrays). ``recv_counts``: how much
        each rank sends this one, where known (no exchange of the counts first)."""
        if self.mpi is None:
            return [send[0].copy()]
        if on_device(send[0]):
            if self.device is not None:
                return self.device.alltoallv(send, recv_counts)
            import cupy

            host = self.alltoallv([s.get() for s in send], recv_counts)
            return [cupy.asarray(a) for a in host]
        dtype = send[0].dtype
        counts = np.array([len(s) for s in send], dtype=np.int64)
        if recv_counts is None:
            recv_counts = np.empty(self.size, dtype=np.int64)
            self.mpi.Alltoall(counts, recv_counts)
        recv_counts = np.asarray(recv_counts, dtype=np.int64)
        flat = np.concatenate(send).astype(dtype, copy=False)
        out = np.empty(int(recv_counts.sum()), dtype=dtype)
        self.mpi.Alltoallv((flat, counts, _offsets(counts), _mpi_type(dtype)),
                           (out, recv_counts, _offsets(recv_counts), _mpi_type(dtype)))
        return np.split(out, np.cumsum(recv_counts)[:-1])

    def gather_at_root(self, a):
        """Every rank's 1-D ``a`` concatenated in rank order on the root, on ``a``'s backend
        (device arrays GPU to GPU through NCCL where the ranks have it; a copy where this
        process is alone); None elsewhere. Collective."""
        if self.mpi is None:
            return a.copy()
        if not on_device(a) or self.device is None:
            whole = self.gatherv(a)
            if whole is None or not on_device(a):
                return whole
            from gpmetis.backend import get_backend

            return get_backend("gpu").upload(whole, whole.dtype)
        counts = self.allgather(len(a))
        counts[0] = 0  # (the root's own share stays where it is)
        send = [a[:0]] * self.size
        if not self.root:
            send[0] = a
        got = self.device.alltoallv(send, counts if self.root else np.zeros_like(counts))
        if not self.root:
            return None
        got[0] = a
        return sys.modules["cupy"].concatenate(got)

    def gatherv(self, a: np.ndarray) -> np.ndarray | None:
        """Every rank's 1-D ``a`` concatenated in rank order on the root (a host array);
        None elsewhere."""
        if on_device(a):  # (large arrays through pinned memory)
            from gpmetis.backend import get_backend

            a = get_backend("gpu").asnumpy(a)
        elif self.mpi is None:
            a = a.copy()
        if self.mpi is None:
            return a
        a = np.ascontiguousarray(a)
        counts = self.allgather(len(a))
        out = np.empty(int(counts.sum()), dtype=a.dtype) if self.root else None
        spec = (out, counts, _offsets(counts), _mpi_type(a.dtype)) if self.root else None
        self.mpi.Gatherv((a, len(a), _mpi_type(a.dtype)), spec, root=0)
        return out

    def scatterv(self, a: np.ndarray | None, counts: np.ndarray, dtype) -> np.ndarray:
        """This rank's piece of the root's 1-D ``a``: ``counts[r]`` entries to rank r, in order."""
        counts = np.asarray(counts, dtype=np.int64)
        if self.mpi is None:
            return np.ascontiguousarray(a, dtype=dtype).copy()
        out = np.empty(int(counts[self.rank]), dtype=dtype)
        spec = None
        if self.root:
            a = np.ascontiguousarray(a, dtype=dtype)
            spec = (a, counts, _offsets(counts), _mpi_type(np.dtype(dtype)))
        self.mpi.Scatterv(spec, (out, len(out), _mpi_type(np.dtype(dtype))), root=0)
        return out

    def on_root(self, fn: Callable[[], T]) -> T | None:
        """``fn()`` on the root, its value there (None elsewhere). What it raises is raised on
        the root and, as a GpmetisError with the same message and exit status, on every other
        rank, so none waits in a later collective. Collective."""
        outcome: tuple = ("ok",)
        value = None
        if self.root:
            try:
                value = fn()
            except Exception as exc:
                message = (str(exc) if isinstance(exc, GpmetisError)
                           else f"{type(exc).__name__}: {exc}")
                self.bcast(("error", message, getattr(exc, "exit_code", 1)))
                raise
        outcome = self.bcast(outcome)
        if outcome[0] == "error":
            error = GpmetisError(outcome[1])
            error.exit_code = outcome[2]
            raise error
        return value

    def root_driven(self, fn: Callable[[], T], handlers: dict[str, Callable]) -> T | None:
        """``fn()`` on the root, which may ``call`` the other ranks into ``handlers`` (each a
        collective the root then runs too); the other ranks serve the calls until ``fn``
        returns. Its value on the root, None elsewhere; what it raises, on every rank (a
        GpmetisError elsewhere). Collective."""
        if self.root:
            return self.on_root(fn)
        while True:
            message = self.bcast(None)
            if message[0] != "call":  # on_root's outcome
                if message[0] == "error":
                    error = GpmetisError(message[1])
                    error.exit_code = message[2]
                    raise error
                return None
            try:
                handlers[message[1]](*message[2])
            except Exception as exc:  # the root waits in the call's collectives
                self.abort(f"gpmetis: error: rank {self.rank}: {type(exc).__name__}: {exc}",
                           error=exc)

    def call(self, name: str, *args: Any) -> None:
        """Call the other ranks (serving ``root_driven``) into their handler ``name``."""
        self.bcast(("call", name, args))

    def agree(self, error: GpmetisError | None) -> None:
        """Raise on every rank when any rank had ``error``: that rank's own, the others a
        GpmetisError with its message and exit status (the first failing rank's), so none
        waits in a later collective. Collective."""
        if self.mpi is None:
            if error is not None:
                raise error
            return
        mine = None if error is None else (str(error), error.exit_code)
        failed = [(r, e) for r, e in enumerate(self.allgather_objects(mine)) if e is not None]
        if error is not None:
            raise error
        if failed:
            _, (message, code) = failed[0]
            raised = GpmetisError(message)
            raised.exit_code = code
            raise raised

    def abort(self, message: str, code: int = 1, error: BaseException | None = None) -> None:
        """End every rank: ``message`` on standard error once, exit status ``code`` (a failing
        rank cannot leave the others waiting in a collective); ``on_abort``, where set, gets
        ``error`` (the exception that ends the run) or a GpmetisError of ``message`` first."""
        if self.on_abort is not None:
            self.on_abort(error if isinstance(error, GpmetisError) else GpmetisError(message))
        print(message, file=sys.stderr, flush=True)
        if self.mpi is None:
            raise SystemExit(code)
        self.mpi.Abort(code)
        os._exit(code)  # where an MPI's Abort returns


def finalize() -> None:
    """End MPI where this process started it (Open MPI's ``mpiexec`` counts a rank that exits
    without it as failed)."""
    mpi = sys.modules.get("mpi4py.MPI")
    if mpi is not None and mpi.Is_initialized() and not mpi.Is_finalized():
        mpi.Finalize()


def end_process(code: int, *, agreed: bool = True) -> NoReturn:
    """Exit with ``code`` and without the interpreter's teardown. Where MPI ran and every rank
    ends so (``agreed``: a run's end or an error every rank raised), MPI is ended first and
    the C library's exit handlers run: MPICH's tell its launcher that the rank ended well
    (after ``os._exit`` alone the launcher killed the other ranks now and then). Otherwise
    (an interrupt) every rank is aborted: the others may wait in a collective."""
    mpi = sys.modules.get("mpi4py.MPI")
    if mpi is not None and mpi.Is_initialized() and not mpi.Is_finalized():
        if not agreed:
            mpi.COMM_WORLD.Abort(code)
            os._exit(code)  # where an MPI's Abort returns
        finalize()
        import ctypes

        ctypes.CDLL(None).exit(code)
    os._exit(code)


def on_device(a: Any) -> bool:
    """Whether ``a`` is a device (CuPy) array."""
    return type(a).__module__.startswith("cupy")


def _offsets(counts: np.ndarray) -> np.ndarray:
    return np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64)


def _mpi_type(dtype: np.dtype):
    from mpi4py import MPI

    return MPI._typedict[np.dtype(dtype).char]
