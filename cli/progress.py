"""What a long ``gpmetis`` run is doing, shown on a terminal's standard error.

A run that is still going after SHOW_AFTER seconds gets one transient line on stderr (rich,
imported then: a shorter run imports nothing of it): the phase the main thread is in (reading,
with the file's size; coarsening, with the level; initial partition; refinement, with the
level; METIS; metrics; writing) and the seconds since the start. The phase is read from the main
thread's stack a few times a second, so the pipeline reports nothing and pays nothing for it.
Nothing is shown when stderr is not a terminal or with -quiet; the line is gone once the run
stops it, before the summary.
"""

from __future__ import annotations

import os
import stat
import sys
import threading
import time
from types import FrameType

SHOW_AFTER = 1.0  # seconds
REFRESH_PER_SECOND = 4
# (module prefix, phase): the main thread's outermost frame in one of these names the phase
PHASES = (
    ("gpmetis.io.partfile", "writing"),
    ("gpmetis.io", "reading"),
    ("gpmetis.partitioning.warmup", "reading"),
    ("gpmetis.coarsening", "coarsening"),
    ("gpmetis.initial_partitioning", "initial partition"),
    ("gpmetis.multiconstraint.initial", "initial partition"),
    ("gpmetis.refinement", "refinement"),
    ("gpmetis.multiconstraint.refinement", "refinement"),
    ("gpmetis.partitioning.metis_engine", "METIS"),
    ("gpmetis.metrics", "metrics"),
    ("gpmetis.edge_partitioning", "edge partition"),
)


def _size(nbytes: int) -> str:
    """``nbytes`` in bytes, KB, MB or GB (powers of 1000)."""
    scaled, unit = float(nbytes), "bytes"
    for larger in ("KB", "MB", "GB"):
        if scaled < 1000:
            break
        scaled, unit = scaled / 1000, larger
    return f"{nbytes} bytes" if unit == "bytes" else f"{scaled:.1f} {unit}"


def _phase(frame: FrameType | None) -> tuple[str, str]:
    """(phase, detail) of the stack whose innermost frame is ``frame``: the outermost frame in
    one of PHASES names the phase (the metrics that refinement computes are refinement);
    ("", "") when no frame is in one."""
    phase, detail = "", ""
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        name = frame.f_code.co_name
        phase = next((p for prefix, p in PHASES
                      if module == prefix or module.startswith(prefix + ".")), phase)
        if name == "coarsen" and module.startswith("gpmetis.coarsening"):
            levels = frame.f_locals.get("levels")
            graph = frame.f_locals.get("graph")
            if isinstance(levels, list) and graph is not None:
                detail = f"level {len(levels)}, {getattr(graph, 'nvtxs', '?')} vertices"
        elif name == "multilevel_partition" and phase == "refinement":
            depth = frame.f_locals.get("depth")
            if isinstance(depth, int):
                detail = f"level {depth}"
        frame = frame.f_back
    return phase, detail


class Progress:
    """The progress line of one run (see the module docstring); ``stop`` ends it."""

    def __init__(self, graphfile: str) -> None:
        self.graphfile = graphfile
        try:
            info = os.stat(graphfile)
            self.size = info.st_size if stat.S_ISREG(info.st_mode) else None
        except (OSError, ValueError):
            self.size = None
        self.start = time.perf_counter()
        self.thread = threading.get_ident()
        self._lock = threading.Lock()
        self._stopped = False
        self._live = None
        self._timer = threading.Timer(SHOW_AFTER, self._show)
        self._timer.daemon = True
        self._timer.start()

    def line(self):
        """The line as it is now (a rich Text)."""
        from rich.text import Text

        phase, detail = _phase(sys._current_frames().get(self.thread))
        if phase == "reading":
            name = os.path.basename(self.graphfile)
            detail = name if self.size is None else f"{name}, {_size(self.size)}"
        text = Text()
        text.append("gpmetis: ", style="dim")
        text.append(phase or "working", style="bold")
        if detail:
            text.append(f" ({detail})")
        text.append(f"  {time.perf_counter() - self.start:.1f} s", style="dim")
        return text

    def _show(self) -> None:
        from rich.console import Console
        from rich.live import Live

        with self._lock:
            if self._stopped:
                return
            # stderr goes through the display: a warning printed meanwhile lands above the line
            self._live = Live(get_renderable=self.line, console=Console(stderr=True),
                              refresh_per_second=REFRESH_PER_SECOND, transient=True,
                              redirect_stdout=False, redirect_stderr=True)
            self._live.start()

    def stop(self) -> None:
        """Remove the line (or never show it); the run's own output may follow at once."""
        self._timer.cancel()
        with self._lock:
            self._stopped = True
            if self._live is not None:
                self._live.stop()
                self._live = None


def progress(graphfile: str, quiet: bool) -> Progress | None:
    """The progress line of a run of ``graphfile`` when stderr is a terminal and the run is
    not quiet, else None."""
    if quiet:
        return None
    try:
        if sys.stderr is None or not sys.stderr.isatty():
            return None
    except (ValueError, OSError):
        return None
    return Progress(graphfile)
