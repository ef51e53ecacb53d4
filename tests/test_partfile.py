"""The partition file (written atomically) and METIS's -tpwgts file."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gpmetis.errors import GpmetisError, InputError
from gpmetis.io import partfile, read_tpwgts, write_partition

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize(
    "values",
    [
        [0],
        [9, 10, 0, 99, 100, 101, 7],
        list(range(1000)),
        [123456789, 0, 5],
    ],
)
def test_partition_file_content(tmp_path, values):
    path = tmp_path / "g.graph.part.4"
    write_partition(path, np.array(values, dtype=np.int32))
    assert path.read_text() == "".join(f"{v}\n" for v in values)


def test_random_partition_round_trips(tmp_path):
    part = np.random.default_rng(1).integers(0, 1000, 100_000)
    path = tmp_path / "p"
    write_partition(path, part)
    np.testing.assert_array_equal(np.loadtxt(path, dtype=np.int64), part)


@pytest.mark.parametrize("chunk", [1, 3, 64, 1 << 22])
def test_partition_text_is_the_same_in_any_chunks(chunk):
    # chunks formatted on threads, each at its place: one line per id, in order
    part = np.random.default_rng(2).integers(0, 10**np.arange(1, 8), (700, 7)).ravel()
    text = partfile._decimal_lines(part, chunk)
    assert bytes(text) == "".join(f"{v}\n" for v in part).encode()


def test_empty_partition(tmp_path):
    write_partition(tmp_path / "p", np.zeros(0, np.int64))
    assert (tmp_path / "p").read_bytes() == b""


def test_replaces_an_existing_file_and_keeps_its_mode(tmp_path):
    path = tmp_path / "p"
    path.write_text("old\n")
    path.chmod(0o640)
    write_partition(path, [1, 0])
    assert path.read_text() == "1\n0\n"
    assert path.stat().st_mode & 0o777 == 0o640
    assert os.listdir(tmp_path) == ["p"]


def test_new_file_mode_follows_the_umask(tmp_path):
    old = os.umask(0o027)
    try:
        write_partition(tmp_path / "p", [0])
    finally:
        os.umask(old)
    assert (tmp_path / "p").stat().st_mode & 0o777 == 0o640


def test_failure_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    path = tmp_path / "p"
    path.write_text("good\n")

    def broken_replace(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(partfile.os, "replace", broken_replace)
    with pytest.raises(GpmetisError, match="No space left"):
        write_partition(path, [0, 1, 2])
    assert path.read_text() == "good\n"
    assert os.listdir(tmp_path) == ["p"]


def test_interrupted_write_leaves_no_temporary(tmp_path, monkeypatch):
    def interrupted(fd):
        raise KeyboardInterrupt

    monkeypatch.setattr(partfile.os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_partition(tmp_path / "p", [0])
    assert os.listdir(tmp_path) == []


STAGED_THEN_SIGNALLED = """
import os, signal, sys
from gpmetis.io.partfile import staged_files
signal.signal(int(sys.argv[2]), signal.SIG_DFL)  # as a shell leaves it (nohup ignores SIGHUP)
with staged_files([(sys.argv[1], b"new\\n")]):
    os.kill(os.getpid(), int(sys.argv[2]))
    print("survived")
"""


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_fatal_signal_while_staged_leaves_no_temporary(tmp_path, signum):
    path = tmp_path / "p"
    path.write_text("good\n")
    proc = subprocess.run([sys.executable, "-c", STAGED_THEN_SIGNALLED, str(path), str(signum)],
                          capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert proc.returncode == -signum, proc.stderr  # ended by the signal, as by default
    assert "survived" not in proc.stdout and "Traceback" not in proc.stderr
    assert path.read_text() == "good\n"
    assert os.listdir(tmp_path) == ["p"]


SIGNALLED_BETWEEN_RENAMES = """
import os, signal, sys
from gpmetis.io import partfile
commit = partfile._Staged.commit
def commit_then_signal(self):
    commit(self)
    os.kill(os.getpid(), signal.SIGTERM)
partfile._Staged.commit = commit_then_signal
with partfile.staged_files([(sys.argv[1], b"new\\n"), (sys.argv[2], b"new\\n")]):
    pass
"""


def test_signal_between_renames_waits_until_every_file_is_in_place(tmp_path):
    first, second = tmp_path / "a", tmp_path / "b"
    for path in (first, second):
        path.write_text("old\n")
    proc = subprocess.run([sys.executable, "-c", SIGNALLED_BETWEEN_RENAMES, str(first),
                           str(second)], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert proc.returncode == -signal.SIGTERM, proc.stderr
    assert first.read_text() == second.read_text() == "new\n"  # both, never one of two
    assert sorted(os.listdir(tmp_path)) == ["a", "b"]


def test_signal_handlers_restored_after_staging(tmp_path):
    before = [signal.getsignal(s) for s in partfile.FATAL_SIGNALS]
    write_partition(tmp_path / "p", [0])
    assert [signal.getsignal(s) for s in partfile.FATAL_SIGNALS] == before


def test_unwritable_directory(tmp_path):
    with pytest.raises(GpmetisError, match="cannot write"):
        write_partition(tmp_path / "missing" / "p", [0])


@pytest.mark.parametrize("part", [[-1, 0], [[0, 1]], [0.5]])
def test_bad_partition_arrays(tmp_path, part):
    with pytest.raises(ValueError):
        write_partition(tmp_path / "p", np.array(part))


def tpwgts(tmp_path, text, nparts, ncon=1):
    path = tmp_path / "tp"
    path.write_text(text)
    return read_tpwgts(path, nparts, ncon)


def test_tpwgts_unlisted_parts_share_the_rest(tmp_path):
    got = tpwgts(tmp_path, "0 = 0.4\n 1 =0.2\n", 4)
    np.testing.assert_allclose(got, [[0.4], [0.2], [0.2], [0.2]])
    assert got.dtype == np.float64 and got.shape == (4, 1)


def test_tpwgts_ranges_constraints_and_overrides(tmp_path):
    text = "% a comment\n0-2 = 0.1\n\n1:1 = 0.3\n3 : 0-1 = 0.3\n2\t= 0.2\n"
    got = tpwgts(tmp_path, text, 5, 2)
    # part 4 is never listed: it gets what the others leave of 1
    np.testing.assert_allclose(got[:, 0], [0.1, 0.1, 0.2, 0.3, 0.3])
    np.testing.assert_allclose(got[:, 1], [0.1, 0.3, 0.2, 0.3, 0.1])


def test_tpwgts_all_listed_are_rescaled(tmp_path):
    got = tpwgts(tmp_path, "0-1 = 0.6\n", 2)
    np.testing.assert_allclose(got, [[0.5], [0.5]])


TPWGTS_ERRORS = [
    ("0 0.5\n", 1, "expected"),
    ("0 = 0.5\nx = 0.1\n", 2, "expected"),
    ("0 = half\n", 1, "not a number"),
    ("4 = 0.1\n", 1, "part range 4-4"),
    ("2-1 = 0.1\n", 1, "part range 2-1"),
    ("0:1 = 0.1\n", 1, "constraint range 1-1"),
    ("0 = 1.0\n", 1, "between 1e-30 and 1"),
    ("0 = 0\n", 1, "between 1e-30 and 1"),
    ("0 = 1e-300\n", 1, "between 1e-30 and 1"),  # METIS fails on it
    ("0 = nan\n", 1, "is not a number"),
    ("0 = inf\n", 1, "is not a number"),
    ("0 = 0.1_5\n", 1, "is not a number"),
    ("0 = 0.5 % half\n", 1, "is not a number"),
    # white space inside a number: METIS 5.1 drops it (part 10, fraction 0.25)
    ("1 0 = 0.5\n", 1, "white space inside a part or constraint id"),
    ("0:0 1 = 0.5\n", 1, "white space inside a part or constraint id"),
    ("0 = 0.1\n0 = 0. 2 5\n", 2, "'0. 2 5' has white space inside the number"),
    ("0 = 2 e-1\n", 1, "white space inside the number"),
    ("0 = 1e-30\n1-3 = 0.9\n", None, "target weight comes to"),  # rescaled: 3.7e-31
    ("0 = 0.7\n1 = 0.4\n", None, "add up to 1.1"),
    ("0 = 0.5\n1 = 0.5\n", None, "leaving nothing for the 2 parts"),
]


@pytest.mark.parametrize("text,line,words", TPWGTS_ERRORS)
def test_tpwgts_errors(tmp_path, text, line, words):
    with pytest.raises(InputError) as info:
        tpwgts(tmp_path, text, 4)
    assert info.value.line == line and words in info.value.reason
    assert str(info.value).startswith(str(tmp_path / "tp"))


def test_tpwgts_missing_file(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        read_tpwgts(tmp_path / "nope", 2)


def test_descriptor_names_are_written_through_the_descriptor(tmp_path):
    # /dev/fd/N (and /dev/stdout) name an open stream: appended to, never replaced by a file
    log = tmp_path / "log"
    log.write_bytes(b"before\n")
    with open(log, "ab") as f:
        partfile.write_files([(f"/dev/fd/{f.fileno()}", b"0\n1\n")])
    assert log.read_bytes() == b"before\n0\n1\n"
    r, w = os.pipe()
    try:
        partfile.write_files([(f"/proc/self/fd/{w}", b"2\n")])
        assert os.read(r, 16) == b"2\n"
    finally:
        os.close(r)
        os.close(w)


def test_a_symbolic_link_is_written_through(tmp_path):
    target, link = tmp_path / "real.part", tmp_path / "link.part"
    link.symlink_to(target)
    write_partition(link, np.array([1, 0]))
    assert link.is_symlink() and target.read_text() == "1\n0\n"
