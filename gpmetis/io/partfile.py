"""The partition file written by gpmetis and the -tpwgts file it reads."""

from __future__ import annotations

import contextlib
import errno
import os
import re
import signal
import stat
import threading
from collections.abc import Iterator

import numpy as np

from gpmetis.errors import GpmetisError, InputError
from gpmetis.io.source import read_bytes
from gpmetis.options import MAX_INT_DIGITS, MIN_TPWGT, parse_decimal

TEMP_NAMES = 10_000  # temporary names tried beside a file before giving up (as tempfile)
# signals that end a process by default (a job's timeout, a closed terminal): while files are
# staged they first remove the temporary files, then end the process as they would have
FATAL_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
LINES_CHUNK = 1 << 22  # part ids formatted at a time


def write_partition(path: str | os.PathLike, part) -> None:
    """Write one 0-based part id per line, atomically: the file appears complete or not at all,
    and an existing file is left untouched when anything fails. GpmetisError when it cannot be
    written; ValueError when ``part`` is not a 1-D array of non-negative integers."""
    atomic_write(path, partition_bytes(part))


def partition_bytes(part) -> bytearray:
    """The partition file's content: one 0-based part id per line. ValueError when ``part`` is
    not a 1-D array of non-negative integers."""
    part = np.asarray(part)
    if part.ndim != 1 or (part.size and not np.issubdtype(part.dtype, np.integer)):
        raise ValueError("part must be a 1-D array of integers")
    if part.size and part.min() < 0:
        raise ValueError("part ids must not be negative")
    return _decimal_lines(part)


def _decimal_lines(values: np.ndarray, chunk: int = LINES_CHUNK) -> bytearray:
    """``'%d\\n'`` of every non-negative integer, built with NumPy (no loop per value), ``chunk``
    values at a time on threads: beside the text, the chunks' arrays are all it holds."""
    from gpmetis.validation import in_threads

    if len(values) == 0:
        return bytearray()
    width = len(str(int(values.max())))
    starts = range(0, len(values), chunk)

    def digits(a: int) -> np.ndarray:  # the digit count of each value of the chunk at a
        v = values[a:a + chunk]
        count = np.ones(len(v), np.int8)
        for j in range(1, width):
            count += v >= 10**j
        return count

    # each chunk's place in the text: its values' digits and newlines
    ends = np.cumsum([int(digits(a).sum(dtype=np.int64)) + len(values[a:a + chunk])
                      for a in starts])
    text = bytearray(int(ends[-1]))
    out = np.frombuffer(text, np.uint8)

    def fill(i: int) -> None:
        a = starts[i]
        v = values[a:a + chunk].astype(np.int64)
        lines = np.empty((len(v), width + 1), np.uint8)
        for j in range(width):  # one column per digit position
            lines[:, width - 1 - j] = v // 10**j % 10 + 48
        lines[:, width] = ord("\n")
        keep = np.arange(width + 1) >= (width - digits(a))[:, None]  # drop the leading zeros
        out[ends[i - 1] if i else 0:ends[i]] = lines[keep]

    in_threads(fill, len(starts))
    return text


def atomic_write(path: str | os.PathLike, payload: bytes | bytearray) -> None:
    """``write_files`` of one file."""
    write_files([(path, payload)])


def write_files(files: list[tuple[str | os.PathLike, bytes | bytearray]]) -> None:
    """Write every (path, payload), all or none (see ``staged_files``)."""
    with staged_files(files):
        pass


@contextlib.contextmanager
def staged_files(files: list[tuple[str | os.PathLike, bytes | bytearray]]) -> Iterator[None]:
    """Write every (path, payload) when the ``with`` body succeeds, all or none: each regular
    file goes first to a temporary file beside it, synced; only when all of them are complete
    and the body has returned are they renamed over their paths, and an existing file is left
    as it was when anything before the renames fails or raises. A path naming a FIFO or a device
    is written in place, never replaced, just before the renames. GpmetisError (naming the path)
    when one cannot be written."""
    staged: list[_Staged] = []
    with _signals_discard():
        try:
            for path, payload in files:
                staged.append(_Staged(os.fspath(path), payload))
            yield
            with _signals_held():  # all files or none: no signal between two renames
                for item in sorted(staged, key=lambda item: item.tmp is not None):
                    item.commit()
        except BaseException:
            for item in staged:
                item.discard()
            raise


class _Terminated(BaseException):
    """A FATAL_SIGNALS signal that arrived while files were staged."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _raise_terminated(signum: int, frame) -> None:
    raise _Terminated(signum)


@contextlib.contextmanager
def _signals_discard() -> Iterator[None]:
    """Within the block, a FATAL_SIGNALS signal whose action is the default (ending the
    process) raises _Terminated, so that the block can remove its temporary files; on the way
    out the signal is sent again with its default action, ending the process as it would have.
    Only the main thread can set handlers: elsewhere the block runs as it is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught = [s for s in FATAL_SIGNALS if signal.getsignal(s) == signal.SIG_DFL]
    for s in caught:
        signal.signal(s, _raise_terminated)
    try:
        yield
    except _Terminated as e:
        signal.signal(e.signum, signal.SIG_DFL)
        caught.remove(e.signum)
        os.kill(os.getpid(), e.signum)
        raise  # a signal that does not end the process at once (blocked) still ends the block
    finally:
        for s in caught:
            signal.signal(s, signal.SIG_DFL)


# names of a descriptor the process already has open (/dev/stdout, /dev/fd/3, ...): written
# through that descriptor, as a shell's redirection to them is, never replaced by a new file
_DESCRIPTOR_NAME = re.compile(r"/dev/std(out|err)|/(?:dev|proc/self)/fd/(\d+)")


class _Staged:
    """One file of ``write_files``: a regular file's content in a synced temporary file beside
    it (``tmp``; beside the file a symbolic link names, which is replaced, not the link), or
    the content of a FIFO, a device or an open descriptor's name held for ``commit`` (``tmp``
    None)."""

    def __init__(self, name: str, payload: bytes | bytearray) -> None:
        self.name, self.payload, self.tmp = name, payload, None
        self.target, self.fd = os.path.realpath(name), _descriptor(name)
        if self.fd is not None:
            return  # written through the descriptor by commit
        try:
            mode = os.stat(name).st_mode
        except OSError:
            mode = None
        if mode is not None and stat.S_ISDIR(mode):
            raise GpmetisError(f"{name}: cannot write the file: it is a directory")
        if mode is not None and not stat.S_ISREG(mode):
            return  # a FIFO or a device: written in place by commit
        try:
            fd, self.tmp = _create_beside(self.target)
        except OSError as e:
            raise GpmetisError(f"{name}: cannot write the file: {e.strerror or e}") from None
        try:
            with os.fdopen(fd, "wb") as f:
                os.fchmod(f.fileno(), _new_file_mode(self.target))
                f.write(payload)
                f.flush()
                os.fsync(f.fileno())
        except BaseException as e:
            self.discard()
            if isinstance(e, OSError):
                raise GpmetisError(f"{name}: cannot write the file: {e.strerror or e}") from None
            raise

    def commit(self) -> None:
        try:
            if self.tmp is None:
                # an open descriptor, or a FIFO or device (no O_CREAT: it must stay)
                fd = os.dup(self.fd) if self.fd is not None else os.open(self.name, os.O_WRONLY)
                with os.fdopen(fd, "wb") as f:
                    f.write(self.payload)
                return
            os.replace(self.tmp, self.target)
        except OSError as e:
            raise GpmetisError(f"{self.name}: cannot write the file: {e.strerror or e}") from None
        self.tmp = None
        directory = os.path.dirname(self.target)
        with contextlib.suppress(OSError):  # make the rename durable too
            dfd = os.open(directory, os.O_RDONLY)
            try:
                os.fsync(dfd)
            finally:
                os.close(dfd)

    def discard(self) -> None:
        if self.tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(self.tmp)
            self.tmp = None


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """Within the block SIGINT and FATAL_SIGNALS are only noted (Python runs every handler in
    the main thread, whichever thread the signal reached); each one noted is raised again,
    to its own handler, as the block ends."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    came: list[int] = []
    held = {s: signal.getsignal(s) for s in (signal.SIGINT, *FATAL_SIGNALS)}
    held = {s: h for s, h in held.items() if h is not None}  # None: set outside Python
    for s in held:
        signal.signal(s, lambda signum, frame: came.append(signum))
    try:
        yield
    finally:
        for s, handler in held.items():
            signal.signal(s, handler)
        for s in dict.fromkeys(came):
            signal.raise_signal(s)


def _descriptor(name: str) -> int | None:
    """The descriptor that ``name`` stands for (/dev/stdout: 1, /dev/fd/N: N), or None."""
    match = _DESCRIPTOR_NAME.fullmatch(os.path.normpath(os.path.abspath(name)))
    if match is None:
        return None
    stream, number = match.groups()
    return int(number) if stream is None else 1 if stream == "out" else 2


def _create_beside(name: str) -> tuple[int, str]:
    """A new, empty file (mode 0o600) in ``name``'s directory, named ``.NAME.PID.N.tmp`` with
    the first N not taken: (its descriptor, its path). The exclusive create never opens a file
    that exists; tempfile.mkstemp's random names would cost a small run their imports."""
    directory = os.path.dirname(os.path.abspath(name))
    prefix = os.path.join(directory, f".{os.path.basename(name)}.{os.getpid()}.")
    for n in range(TEMP_NAMES):
        path = f"{prefix}{n}.tmp"
        try:
            return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600), path
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, f"no free temporary name beside it ({prefix}N.tmp)")


def _new_file_mode(name: str) -> int:
    """The mode ``open(name, 'w')`` would give: the old file's, else 0o666 less the umask."""
    try:
        return os.stat(name).st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


# White space may stand around the fields, never inside an id or the fraction (the line's
# white space at the ends is stripped first).
_TPWGTS_LINE = re.compile(r"(\d+)\s*(?:-\s*(\d+)\s*)?(?::\s*(\d+)\s*(?:-\s*(\d+)\s*)?)?=\s*(.*)")


def read_tpwgts(path: str | os.PathLike, nparts: int, ncon: int = 1) -> np.ndarray:
    """Target part weights from a METIS 5.1 ``-tpwgts`` file, as float64 (nparts, ncon).

    Each line is ``part[-part][:constraint[-constraint]] = fraction`` (ids 0-based, ranges
    inclusive, no constraint = all of them; white space around the fields, never inside a number
    (METIS reads '1 0' as 10); blank and ``%`` lines skipped)
    with MIN_TPWGT <= fraction < 1; a later line overrides an earlier one. As in METIS, the
    parts left out of a constraint share what the listed ones leave of 1 equally, and a
    constraint that lists every part is rescaled to sum to 1. Every resulting target is at
    least MIN_TPWGT. InputError (with the line) on anything else.
    """
    name = os.fspath(path)
    try:
        text = bytes(read_bytes(name)).decode("ascii")
    except UnicodeDecodeError:
        raise InputError(name, "a tpwgts file must be plain ASCII text") from None
    tpwgts = np.full((nparts, ncon), -1.0)
    for lineno, raw in enumerate(text.split("\n"), 1):
        line = raw.strip()
        if line and not line.startswith("%"):
            first, last, c_first, c_last, fraction = _tpwgts_line(name, lineno, line, nparts,
                                                                  ncon)
            tpwgts[first : last + 1, c_first : c_last + 1] = fraction
    return _complete_tpwgts(name, tpwgts)


def _tpwgts_line(name: str, lineno: int, line: str, nparts: int, ncon: int
                 ) -> tuple[int, int, int, int, float]:
    """(first part, last part, first constraint, last constraint, fraction) of a tpwgts line;
    InputError naming the line for anything else."""
    match = _TPWGTS_LINE.fullmatch(line)
    if match is None and _TPWGTS_LINE.fullmatch("".join(line.split())):
        raise InputError(name, f"white space inside a part or constraint id in '{line}'",
                         lineno)
    if match is None:
        raise InputError(
            name,
            f"expected 'part[-part][:constraint[-constraint]] = fraction', found '{line}'",
            lineno,
        )
    first, last, c_first, c_last, value = match.groups()
    if any(len(d.lstrip("0")) > MAX_INT_DIGITS for d in (first, last, c_first, c_last) if d):
        raise InputError(name, "a part or constraint id has more than "
                         f"{MAX_INT_DIGITS} digits", lineno)
    first = int(first)
    last = first if last is None else int(last)
    if c_first is None:
        c_first, c_last = 0, ncon - 1
    else:
        c_first = int(c_first)
        c_last = c_first if c_last is None else int(c_last)
    if not 0 <= first <= last < nparts:
        raise InputError(name, f"part range {first}-{last} is not within 0-{nparts - 1}", lineno)
    if not 0 <= c_first <= c_last < ncon:
        raise InputError(
            name, f"constraint range {c_first}-{c_last} is not within 0-{ncon - 1}", lineno
        )
    try:
        fraction = parse_decimal(value)
    except ValueError:
        why = "is not a number"
        with contextlib.suppress(ValueError):
            parse_decimal("".join(value.split()))
            why = "has white space inside the number"
        raise InputError(name, f"'{value}' {why}", lineno) from None
    if not MIN_TPWGT <= fraction < 1.0:
        raise InputError(
            name, f"the fraction {value} is not between {MIN_TPWGT:g} and 1 (1 excluded)", lineno,
        )
    return first, last, c_first, c_last, fraction


def _complete_tpwgts(name: str, tpwgts: np.ndarray) -> np.ndarray:
    """``tpwgts`` (-1 where no line gave a target) with each constraint's unlisted parts
    sharing what the listed ones leave of 1, or rescaled where every part is listed."""
    nparts, ncon = tpwgts.shape
    for c in range(ncon):
        given = tpwgts[:, c] > 0
        total = float(tpwgts[given, c].sum())
        nleft = nparts - int(given.sum())
        if nleft == 0:
            tpwgts[:, c] /= total
        elif total >= 1.0:
            raise InputError(
                name,
                f"the fractions for constraint {c} add up to {total:g}, leaving nothing for the "
                f"{nleft} parts not listed",
            )
        else:
            tpwgts[~given, c] = (1.0 - total) / nleft
        if tpwgts[:, c].min() < MIN_TPWGT:
            raise InputError(
                name, f"constraint {c}: a part's target weight comes to "
                      f"{tpwgts[:, c].min():g}, below the smallest allowed, {MIN_TPWGT:g}")
    return tpwgts
