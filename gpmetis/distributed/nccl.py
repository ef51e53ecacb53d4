"""NCCL between the ranks' GPUs, one GPU each (``Comm.use_gpus``): device arrays travel GPU to
GPU (NVLink within a host) for the halo exchange, the all-to-all of variable-size buffers and
exact integer all-reduces. The communicator is made from a ``Comm``: rank 0's NCCL unique id
is broadcast over MPI; the counts of a variable-size exchange travel over MPI too, where the
receiver does not know them (a few integers per rank)."""

from __future__ import annotations

import os
from typing import Any

import numpy as np


class DeviceComm:
    """NCCL over the ranks of ``comm`` (a ``Comm`` whose ranks each took their GPU, as
    ``Comm.use_gpus`` gives them; CuPy arrays in, CuPy arrays out)."""

    def __init__(self, comm: Any) -> None:
        import cupy
        from cupy.cuda import nccl

        os.environ.setdefault("NCCL_NVLS_ENABLE", "0")  # NVLink multicast off
        self.comm, self.cupy, self.nccl = comm, cupy, nccl
        uid = comm.bcast(nccl.get_unique_id() if comm.root else None)
        self.nc = nccl.NcclCommunicator(comm.size, uid, comm.rank)

    def _type(self, dtype) -> int:
        types = {np.dtype(np.int64): self.nccl.NCCL_INT64, np.dtype(np.int32): self.nccl.NCCL_INT32,
                 np.dtype(np.float64): self.nccl.NCCL_FLOAT64,
                 np.dtype(np.uint8): self.nccl.NCCL_UINT8}
        return types[np.dtype(dtype)]

    def allreduce_sum(self, a):
        """The element-wise sum over the ranks of the device array ``a`` (int64: exact)."""
        a = self.cupy.ascontiguousarray(a)
        out = self.cupy.empty_like(a)
        stream = self.cupy.cuda.get_current_stream().ptr
        self.nc.allReduce(a.data.ptr, out.data.ptr, a.size, self._type(a.dtype),
                          self.nccl.NCCL_SUM, stream)
        return out

    def alltoallv(self, send: list, recv_counts: np.ndarray | None = None) -> list:
        """``send[r]`` (device arrays of one dtype) goes to rank r; returns what each rank sent
        this one, in rank order, as device arrays (one grouped send/recv). ``recv_counts``:
        how much each rank sends this one, where known (else they travel over MPI first)."""
        cp = self.cupy
        dtype = send[0].dtype
        if recv_counts is None:
            recv_counts = [int(c[0]) for c in self.comm.alltoallv(
                [np.array([len(s)], np.int64) for s in send])]
        recv = [cp.empty(int(c), dtype=dtype) for c in recv_counts]
        send = [cp.ascontiguousarray(s) for s in send]
        stream = cp.cuda.get_current_stream().ptr
        kind = self._type(dtype)
        self.nccl.groupStart()
        for r in range(self.comm.size):
            if len(send[r]):
                self.nc.send(send[r].data.ptr, len(send[r]), kind, r, stream)
            if len(recv[r]):
                self.nc.recv(recv[r].data.ptr, len(recv[r]), kind, r, stream)
        self.nccl.groupEnd()
        return recv
