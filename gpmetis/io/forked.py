"""Reading a graph in a forked child process, so the parent can do other work meanwhile.

The child runs the ordinary reader and sends the arrays back through a pipe (a small pickled
header, then the raw bytes of each array); unit weights are not sent but rebuilt. A reader
error comes back as the same InputError; if the child dies for any other reason, the parent
reads the file itself, so the outcome never differs from ``read_graph``; a pipe, FIFO or device,
which cannot be read twice, is then reported as unreadable instead.
"""

from __future__ import annotations

import fcntl
import os
import pickle
import struct

import numpy as np

from gpmetis.errors import InputError
from gpmetis.graph import Graph
from gpmetis.io import read_graph
from gpmetis.io.source import rereadable

PIPE_BYTES = 1 << 20
_LENGTH = struct.Struct("<Q")
_ARRAYS = ("xadj", "adjncy", "vwgt", "adjwgt", "vsize")


class PendingGraph:
    """A graph being read by a child process; ``result()`` waits for it."""

    def __init__(self, path: str, symmetrize: bool) -> None:
        self.path, self.symmetrize = path, symmetrize
        read_fd, write_fd = os.pipe()
        _widen(write_fd)
        self.pid = os.fork()
        if self.pid == 0:  # the child: read, send, exit without running any parent cleanup
            os.close(read_fd)
            code = 0
            try:
                _send(write_fd, _read(path, symmetrize))
            except InputError as exc:
                _send_message(write_fd, {"error": (exc.path, exc.reason, exc.line)})
            except BaseException:  # noqa: BLE001 - the parent reads again and reports
                code = 1
            finally:
                os._exit(code)
        os.close(write_fd)
        self._fd = read_fd

    def result(self) -> Graph:
        """The graph, or the reader's InputError; the same as ``read_graph`` would give."""
        with os.fdopen(self._fd, "rb", buffering=0) as pipe:
            try:
                graph = _receive(pipe)
            except EOFError:
                graph = None
        os.waitpid(self.pid, 0)
        if graph is not None:
            return graph
        if not rereadable(self.path):
            raise InputError(self.path, "the process reading it failed, and a stream cannot be "
                             "read a second time")
        return _read(self.path, self.symmetrize)


def _read(path: str, symmetrize: bool) -> Graph:
    return read_graph(path, symmetrize=symmetrize)


def _widen(fd: int) -> None:
    """Fewer, larger transfers (Linux pipes hold 64 KiB by default)."""
    try:
        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
    except (AttributeError, OSError):
        pass


def _send_message(fd: int, message: dict) -> None:
    data = pickle.dumps(message)
    _write_all(fd, memoryview(_LENGTH.pack(len(data)) + data))


def _send(fd: int, graph: Graph) -> None:
    arrays = {name: getattr(graph, name) for name in _ARRAYS}
    if not graph.has_vwgt:
        arrays["vwgt"] = None
    if not graph.has_adjwgt:
        arrays["adjwgt"] = None
    sent = {name: a for name, a in arrays.items() if a is not None}
    _send_message(fd, {
        "arrays": [(name, a.dtype.str, a.shape) for name, a in sent.items()],
        "ncon": graph.ncon, "name": graph.name, "has_vwgt": graph.has_vwgt,
        "has_adjwgt": graph.has_adjwgt, "warnings": graph.warnings,
    })
    for a in sent.values():
        _write_all(fd, memoryview(np.ascontiguousarray(a)).cast("B"))


def _receive(pipe) -> Graph:
    head = _read_exact(pipe, _LENGTH.size)
    message = pickle.loads(_read_exact(pipe, _LENGTH.unpack(head)[0]))
    if "error" in message:
        raise InputError(*message["error"])
    fields = {name: None for name in _ARRAYS}
    for name, dtype, shape in message["arrays"]:
        a = np.empty(shape, dtype=np.dtype(dtype))
        _read_into(pipe, memoryview(a).cast("B"))
        fields[name] = a
    n, nnz = len(fields["xadj"]) - 1, len(fields["adjncy"])
    if fields["vwgt"] is None:
        fields["vwgt"] = np.ones((n, message["ncon"]), np.int64)
    if fields["adjwgt"] is None:
        fields["adjwgt"] = np.ones(nnz, np.int64)
    return Graph(**fields, name=message["name"], has_vwgt=message["has_vwgt"],
                 has_adjwgt=message["has_adjwgt"], warnings=message["warnings"])


def _write_all(fd: int, view: memoryview) -> None:
    while len(view):
        view = view[os.write(fd, view[:PIPE_BYTES]):]


def _read_exact(pipe, size: int) -> bytes:
    buf = bytearray(size)
    _read_into(pipe, memoryview(buf))
    return bytes(buf)


def _read_into(pipe, view: memoryview) -> None:
    while len(view):
        got = pipe.readinto(view)
        if not got:
            raise EOFError("the reading process ended early")
        view = view[got:]
