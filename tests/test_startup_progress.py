"""The progress line of a long run on a terminal's stderr: shown while the run is going, never
with -quiet or off a terminal, and nothing of rich imported by a run that ends sooner."""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import FIXTURES

from cli import progress

ROOT = Path(__file__).resolve().parents[1]
ENTRY = "from cli.main import run; run()"
WAIT = 60  # seconds a test waits for the line before it fails


def _read(fd: int, seconds: float) -> bytes:
    """What the terminal ``fd`` shows within ``seconds`` (less once it is closed)."""
    out, end = b"", time.monotonic() + seconds
    while (left := end - time.monotonic()) > 0:
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            break
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # the command exited and closed its end
            break
        if not chunk:
            break
        out += chunk
    return out


def _plain(raw: bytes) -> str:
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", raw.decode(errors="replace"))


def _run_on_a_fifo(tmp_path: Path, *options: str, wait_for: str | None):
    """``gpmetis FIFO 4 OPTIONS`` with stderr on a terminal; the graph is written into the FIFO
    once the terminal shows ``wait_for`` (None: once the line would have shown), so that the run
    lasts as long as the test needs. Returns (terminal text until then, terminal text after,
    the finished process)."""
    fifo = tmp_path / "graph.fifo"
    os.mkfifo(fifo)
    terminal, child_end = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-c", ENTRY, str(fifo), "4", "-nooutput", *options],
                            stdout=subprocess.PIPE, stderr=child_end, cwd=ROOT)
    os.close(child_end)
    try:
        if wait_for is None:
            before = _plain(_read(terminal, progress.SHOW_AFTER + 1.5))
        else:
            before = ""
            end = time.monotonic() + WAIT
            while wait_for not in before and time.monotonic() < end:
                before += _plain(_read(terminal, 0.2))
        with open(fifo, "w") as f:
            f.write((FIXTURES / "4elt.graph").read_text())
        stdout, _ = proc.communicate(timeout=WAIT)
        after = _plain(_read(terminal, 1.0))
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(terminal)
    return before, after, proc, stdout.decode()


def test_a_long_run_shows_what_it_does_on_a_terminal(tmp_path):
    before, _, proc, stdout = _run_on_a_fifo(tmp_path, wait_for="reading")
    assert "gpmetis: reading (graph.fifo)" in before
    assert proc.returncode == 0 and "Edgecut:" in stdout


def test_quiet_shows_no_progress(tmp_path):
    before, after, proc, stdout = _run_on_a_fifo(tmp_path, "-quiet", wait_for=None)
    assert proc.returncode == 0 and stdout == ""
    assert before + after == ""


def test_a_run_that_ends_sooner_imports_nothing_of_rich():
    code = """
import io, sys, time
from cli import progress

class Terminal(io.StringIO):
    def isatty(self):
        return True

sys.stderr = Terminal()
shown = progress.progress("g.graph", quiet=False)
shown.stop()
time.sleep(progress.SHOW_AFTER + 0.5)
print(shown is not None, "rich" in sys.modules, repr(sys.stderr.getvalue()))
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, check=True)
    assert proc.stdout.split() == ["True", "False", "''"]


def test_no_progress_off_a_terminal_or_when_quiet(monkeypatch):
    class Terminal:
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr(sys, "stderr", Terminal())
    assert progress.progress("g.graph", quiet=True) is None
    with open(os.devnull, "w") as null:
        monkeypatch.setattr(sys, "stderr", null)
        assert progress.progress("g.graph", quiet=False) is None


@pytest.mark.parametrize("nbytes, text", [(0, "0 bytes"), (999, "999 bytes"), (1000, "1.0 KB"),
                                          (1_390_000_000, "1.4 GB"), (5 * 10**12, "5000.0 GB")])
def test_sizes(nbytes, text):
    assert progress._size(nbytes) == text


def test_the_phase_is_the_outermost_known_frame():
    # functions of two made-up pipeline modules: refinement that computes metrics
    metrics = {"__name__": "gpmetis.metrics", "progress": progress, "sys": sys}
    exec("def compute():\n    return progress._phase(sys._getframe())", metrics)
    jet = {"__name__": "gpmetis.refinement.jet", "compute": metrics["compute"]}
    exec("def refine():\n    return compute()", jet)
    assert jet["refine"]() == ("refinement", "")
    assert metrics["compute"]() == ("metrics", "")
