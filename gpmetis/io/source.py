"""Reading an input file whole: mapped, or decompressed (``.gz``, ``.bz2``, ``.xz``)."""

from __future__ import annotations

import bz2
import contextlib
import ctypes
import gzip
import lzma
import mmap
import os
import stat
import zlib
from collections.abc import Iterator

import numpy as np

from gpmetis.errors import InputError

_CODECS = {
    ".gz": ("gzip", gzip.decompress),
    ".bz2": ("bzip2", bz2.decompress),
    ".xz": ("xz", lzma.decompress),
}
COMPRESSED_SUFFIXES = tuple(_CODECS)


def read_bytes(path: str | os.PathLike) -> bytes | mmap.mmap:
    """The whole (decompressed) contents of ``path``; InputError naming the file when it is
    missing, a directory, unreadable, corrupt or truncated as compressed data, or empty.

    A plain regular file comes back as a read-only ``mmap`` of it (a bytes-like object with
    ``find`` and slicing): no copy, and the pages come straight from the page cache. Changing
    the file while it is being read is not supported.
    """
    name = os.fspath(path)
    suffix = os.path.splitext(name)[1].lower()
    try:
        with open(name, "rb") as f:
            if suffix not in _CODECS and _mappable(f):
                return mmap.mmap(f.fileno(), 0, flags=_MAP_FLAGS, prot=mmap.PROT_READ)
            raw = f.read()
    except FileNotFoundError:
        raise InputError(name, "no such file") from None
    except IsADirectoryError:
        raise InputError(name, "is a directory, not a file") from None
    except PermissionError:
        raise InputError(name, "permission denied") from None
    except OSError as e:
        raise InputError(name, f"cannot read the file: {e.strerror or e}") from None
    if suffix in _CODECS:
        kind, decompress = _CODECS[suffix]
        try:
            raw = decompress(raw)
        except (OSError, EOFError, ValueError, zlib.error, lzma.LZMAError) as e:
            raise InputError(name, f"corrupt or truncated {kind} data: {e}") from None
    if not raw:
        raise InputError(name, "the file is empty")
    return raw


_MAP_FLAGS = mmap.MAP_PRIVATE | getattr(mmap, "MAP_POPULATE", 0)


def _mappable(f) -> bool:
    """Whether ``f`` is a non-empty regular file (which mmap can map)."""
    st = os.fstat(f.fileno())
    return stat.S_ISREG(st.st_mode) and st.st_size > 0


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
