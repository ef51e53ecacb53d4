"""Reading an input file whole: mapped, or read once and decompressed (gzip, bzip2, xz).

Compressed data is recognised by its magic bytes whatever the file is called; a ``.gz``,
``.bz2`` or ``.xz`` name whose data lacks the magic is reported as corrupt. Pipes, character
devices and files that report no size (``/dev/stdin``, FIFOs, ``/proc`` files) are read once, in
blocks; the text read or decompressed so far is bounded by the memory available when the read
began, and a NUL byte ends the read with an error naming its line.
"""

from __future__ import annotations

import contextlib
import ctypes
import itertools
import mmap
import os
import resource
import signal
import stat
import weakref
from collections.abc import Iterable, Iterator

import numpy as np

from gpmetis.errors import InputError

COMPRESSED_SUFFIXES = (".gz", ".bz2", ".xz")
_SUFFIX_KIND = dict(zip(COMPRESSED_SUFFIXES, ("gzip", "bzip2", "xz")))
_MAGIC = {"gzip": b"\x1f\x8b", "bzip2": b"BZh", "xz": b"\xfd7zXZ\x00"}
_MAGIC_BYTES = max(len(m) for m in _MAGIC.values())
BLOCK = 1 << 20  # bytes per read of a stream, and per decompressed piece


def read_bytes(path: str | os.PathLike) -> bytes | bytearray | mmap.mmap:
    """The whole (decompressed) contents of ``path``; InputError naming the file when it is
    missing, a directory, unreadable, corrupt or truncated as compressed data, followed by
    bytes that are not another compressed stream, larger than the available memory, contains
    a NUL byte (streams only: the tokenizer finds them in mapped files), or is empty.

    A plain regular file comes back as a read-only ``mmap`` of it (a bytes-like object with
    ``find`` and slicing): no copy, and the pages come straight from the page cache. While the
    map is alive, a SIGBUS (the file truncated under it) ends the process with a message naming
    the file and exit status 1.
    """
    name = os.fspath(path)
    suffix_kind = _SUFFIX_KIND.get(os.path.splitext(name)[1].lower())
    try:
        with open(name, "rb") as f:
            st = os.fstat(f.fileno())
            if stat.S_ISREG(st.st_mode) and st.st_size > 0:
                kind = _sniff(os.pread(f.fileno(), _MAGIC_BYTES, 0)) or suffix_kind
                if kind is None:
                    return _watched(mmap.mmap(f.fileno(), 0, flags=_MAP_FLAGS,
                                              prot=mmap.PROT_READ), name)
                blocks: Iterator[bytes] = _blocks(f, name)
            else:
                blocks = _blocks(f, name)
                first = next(blocks, b"")
                kind = _sniff(first) or suffix_kind
                blocks = itertools.chain([first], blocks)
            limit = available_memory()
            if kind is None:
                raw = _gather(blocks, name, limit)
            else:
                raw = _decompress(blocks, kind, name, limit)
    except FileNotFoundError:
        raise InputError(name, "no such file") from None
    except IsADirectoryError:
        raise InputError(name, "is a directory, not a file") from None
    except PermissionError:
        raise InputError(name, "permission denied") from None
    except OSError as e:
        raise InputError(name, f"cannot read the file: {e.strerror or e}") from None
    if not raw:
        raise InputError(name, "the file is empty")
    return raw


def is_matrix_market(data) -> bool:
    """Whether the bytes start with a Matrix Market banner."""
    return data[:14].lower() == b"%%matrixmarket"


def rereadable(path: str | os.PathLike) -> bool:
    """Whether ``path`` names a regular file, which can be read more than once (a pipe, FIFO or
    device cannot: read those once). False when it cannot be examined."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def available_memory() -> int:
    """Bytes this process can still allocate: the least of the system's MemAvailable, the
    cgroup's headroom (v2 ``memory.max`` less ``memory.current``) and the address-space limit
    (RLIMIT_AS) less the current size. Unknown parts are ignored."""
    limits = []
    meminfo = _fields("/proc/meminfo")
    if "MemAvailable" in meminfo:
        limits.append(meminfo["MemAvailable"] * 1024)
    with contextlib.suppress(OSError, ValueError):
        with open("/sys/fs/cgroup/memory.max") as f:
            cap = f.read().strip()
        with open("/sys/fs/cgroup/memory.current") as f:
            used = int(f.read())
        if cap != "max":
            limits.append(int(cap) - used)
    soft = resource.getrlimit(resource.RLIMIT_AS)[0]
    if soft != resource.RLIM_INFINITY:
        limits.append(soft - _fields("/proc/self/status").get("VmSize", 0) * 1024)
    return max(min(limits, default=1 << 62), 0)


def require_memory(nbytes: int, path: str, line: int | None, what: str) -> None:
    """InputError naming ``path`` and ``line`` when ``nbytes`` (what ``what`` needs, e.g. "a
    graph of 2000000000 vertices") exceed the memory available (``available_memory``)."""
    free = available_memory()
    if nbytes > free:
        raise InputError(
            path, f"{what} needs {_gib(nbytes)} of memory; {_gib(free)} is available", line
        )


def _gib(nbytes: int) -> str:
    return f"{nbytes / 2**30:.1f} GiB"


def _fields(path: str) -> dict[str, int]:
    """The ``Name: number ...`` lines of a /proc file as a dict (empty when unreadable)."""
    out = {}
    with contextlib.suppress(OSError):
        with open(path) as f:
            for line in f:
                key, _, rest = line.partition(":")
                words = rest.split()
                if words and words[0].isdigit():
                    out[key] = int(words[0])
    return out


def _sniff(head: bytes) -> str | None:
    """The compression whose magic bytes ``head`` starts with, if any."""
    return next((kind for kind, magic in _MAGIC.items() if head.startswith(magic)), None)


def _blocks(f, name: str) -> Iterator[bytes]:
    """The bytes of ``f`` from its current position, read once, BLOCK at a time."""
    while True:
        try:
            block = f.read(BLOCK)
        except OSError as e:
            raise InputError(name, f"cannot read the file: {e.strerror or e}") from None
        if not block:
            return
        yield block


def _append(out: bytearray, piece: bytes, name: str, limit: int) -> None:
    """``out += piece``; InputError past ``limit`` bytes or at a NUL byte (naming its line)."""
    if len(out) + len(piece) > limit:
        raise InputError(
            name, f"the input is larger than the {_gib(limit)} of memory available to read it"
        )
    nul = piece.find(b"\0")
    out += piece
    if nul >= 0:
        at = len(out) - len(piece) + nul
        raise InputError(name, "a NUL byte: not a text file", out.count(b"\n", 0, at) + 1)


def _gather(blocks: Iterable[bytes], name: str, limit: int) -> bytearray:
    out = bytearray()
    for block in blocks:
        _append(out, block, name, limit)
    return out


def _decompress(blocks: Iterable[bytes], kind: str, name: str, limit: int) -> bytearray:
    """The concatenated contents of the ``kind`` streams in ``blocks``, BLOCK at a time (the
    compressed file is never held whole). Bytes after a stream must start another one; the xz
    format's stream padding (NUL bytes) is skipped."""
    import lzma  # the decompressors load with a compressed file only
    import zlib

    magic = _MAGIC[kind]
    out = bytearray()
    dec = None
    streams = 0
    pending = b""
    try:
        for block in itertools.chain(blocks, [None]):
            data = pending + block if block is not None else pending
            pending = b""
            while data:
                if dec is None:  # at the start of a stream
                    if block is not None and len(data) < len(magic):
                        pending = data  # too short to tell: wait for the next block
                        break
                    if kind == "xz" and streams and not data.strip(b"\0"):
                        break  # stream padding
                    if not data.startswith(magic):
                        if streams:
                            raise InputError(
                                name, f"trailing bytes after the end of the {kind} data, "
                                f"not another {kind} stream (the file is damaged or has "
                                "something appended)")
                        raise InputError(name, f"corrupt or truncated {kind} data: no {kind} "
                                         "header")
                    dec = _decompressor(kind)
                data = _inflate(dec, kind, data, out, name, limit)
                if dec.eof:
                    dec, streams = None, streams + 1
        if dec is not None:
            raise InputError(name, f"corrupt or truncated {kind} data: the stream ends early")
    except (OSError, EOFError, ValueError, zlib.error, lzma.LZMAError) as e:
        raise InputError(name, f"corrupt or truncated {kind} data: {e}") from None
    return out


def _decompressor(kind: str):
    if kind == "gzip":
        import zlib

        return zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    if kind == "bzip2":
        import bz2

        return bz2.BZ2Decompressor()
    import lzma

    return lzma.LZMADecompressor()


def _inflate(dec, kind: str, data: bytes, out: bytearray, name: str, limit: int) -> bytes:
    """Feed ``data`` to ``dec`` (a ``kind`` decompressor), appending its output to ``out``
    BLOCK at a time; returns the bytes after the end of the stream (empty unless it ended)."""
    if kind == "gzip":
        while data and not dec.eof:
            _append(out, dec.decompress(data, BLOCK), name, limit)
            data = dec.unconsumed_tail
        return dec.unused_data if dec.eof else b""
    _append(out, dec.decompress(data, BLOCK), name, limit)
    while not dec.eof and not dec.needs_input:
        _append(out, dec.decompress(b"", BLOCK), name, limit)
    return dec.unused_data if dec.eof else b""


_MAP_FLAGS = mmap.MAP_PRIVATE | getattr(mmap, "MAP_POPULATE", 0)

# The files mapped now, and the SIGBUS handler installed while there are any.
_mapped: dict[int, str] = {}
_map_ids = itertools.count()
_SIGNAL_HANDLER = ctypes.CFUNCTYPE(None, ctypes.c_int)
_bus = {"previous": None, "installed": False}


def _on_sigbus(signum: int) -> None:
    """Runs in the faulting thread: a read from a mapped file beyond its (new) end."""
    names = ", ".join(dict.fromkeys(_mapped.values())) or "the input file"
    os.write(2, f"gpmetis: error: {names}: the file was truncated or replaced while it was "
                "being read\n".encode())
    os._exit(1)


_sigbus_handler = _SIGNAL_HANDLER(_on_sigbus)


def _libc_signal():
    libc = ctypes.CDLL(None)
    fn = libc.signal
    fn.restype, fn.argtypes = ctypes.c_void_p, (ctypes.c_int, ctypes.c_void_p)
    return fn


def _watched(m: mmap.mmap, name: str) -> mmap.mmap:
    """``m``, registered so that a SIGBUS while it is mapped is reported (see read_bytes)."""
    key = next(_map_ids)
    _mapped[key] = name
    if not _bus["installed"]:
        with contextlib.suppress(OSError, AttributeError):
            handler = ctypes.cast(_sigbus_handler, ctypes.c_void_p)
            _bus["previous"] = _libc_signal()(signal.SIGBUS, handler)
            _bus["installed"] = True
    weakref.finalize(m, _unwatch, key)
    return m


def _unwatch(key: int) -> None:
    _mapped.pop(key, None)
    if not _mapped and _bus["installed"]:
        _libc_signal()(signal.SIGBUS, _bus["previous"])
        _bus["installed"] = False


@contextlib.contextmanager
def reading_allocations() -> Iterator[None]:
    """Allocation settings for reading a big file, measured on a 2-core VM reading a 195 MB
    graph: the read took up to twice as long without them.

    - glibc keeps freed blocks of up to 32 MiB on its heap instead of mapping and unmapping
      the per-chunk temporaries on every chunk (the values glibc adopts by itself once a
      32 MiB block has been freed; set once per process, only where glibc is the C library);
    - NumPy does not ask for transparent huge pages while reading: filling them stalled the
      kernel on page compaction, far longer than the faults of ordinary pages cost.
    """
    _tune_malloc()
    madvise = getattr(getattr(np, "_core", None), "multiarray", None)
    set_huge = getattr(madvise, "_set_madvise_hugepage", None)
    previous = set_huge(False) if set_huge else None
    try:
        yield
    finally:
        if set_huge:
            set_huge(previous)


_malloc_tuned = False


def _tune_malloc() -> None:
    global _malloc_tuned
    if _malloc_tuned:
        return
    _malloc_tuned = True
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None)
        if libc.gnu_get_libc_version:
            libc.mallopt(-3, 32 << 20)  # M_MMAP_THRESHOLD
            libc.mallopt(-1, 64 << 20)  # M_TRIM_THRESHOLD
