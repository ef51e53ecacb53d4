"""Shared pieces of the benchmarks: graph generation, METIS's binary, result tables."""

from __future__ import annotations

import math
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GEN_CANDIDATES = [
    ROOT / ".tools" / "gen_graph.py",
    ROOT.parent / "shared" / "tools" / "gen_graph.py",
]


def generated_graph(kind: str, size: int, workdir: Path, seed: int | None = None) -> Path:
    """The METIS file of ``gen_graph.py KIND SIZE [--seed SEED]`` in ``workdir`` (generated
    once)."""
    workdir.mkdir(parents=True, exist_ok=True)
    path = workdir / (f"{kind}{size}.graph" if seed is None else f"{kind}{size}s{seed}.graph")
    if not path.exists():
        gen = next((p for p in GEN_CANDIDATES if p.exists()), None)
        if gen is None:
            raise SystemExit("gen_graph.py not found (copy ../shared/tools into .tools/)")
        extra = [] if seed is None else ["--seed", str(seed)]
        subprocess.run([sys.executable, str(gen), kind, str(size), str(path), *extra],
                       check=True, stdout=subprocess.DEVNULL)
    return path


def metis_binary() -> list[str] | None:
    """The command prefix that runs METIS 5.1's gpmetis, or None when it is not installed."""
    unpacked = Path("/tmp/metis/usr/bin/gpmetis")
    if unpacked.exists():
        lib = "/tmp/metis/usr/lib/x86_64-linux-gnu"
        return ["env", f"LD_LIBRARY_PATH={lib}", str(unpacked)]
    system = shutil.which("gpmetis", path="/usr/bin")
    return [system] if system else None


def run_metis(prefix: list[str], path: Path, k: int, flags: tuple[str, ...] = ()) -> dict:
    """METIS's cut, communication volume, partitioning time, I/O time and whole-command wall
    time, with the options ``flags``."""
    start = time.perf_counter()
    proc = subprocess.run([*prefix, str(path), str(k), "-nooutput", *flags], capture_output=True,
                          text=True, check=True)
    wall = time.perf_counter() - start
    out = proc.stdout
    return {
        "cut": int(re.search(r"Edgecut: (\d+)", out).group(1)),
        "volume": int(re.search(r"communication volume: (\d+)", out).group(1)),
        "seconds": float(re.search(r"Partitioning:\s+([\d.]+)", out).group(1)),
        "io": float(re.search(r"I/O:\s+([\d.]+)", out).group(1)),
        "wall": wall,
        "imbalance": float(re.search(r"constraint #0:\s+([\d.]+)", out).group(1)),
        "imbalances": [float(x) for x in re.findall(r"constraint #\d+:\s+([\d.]+)", out)],
    }


def metis_peer(path: Path, k: int, skipped: set[str]) -> dict | None:
    """``run_metis`` of METIS 5.1's binary where it is installed, else None with the peer
    named in ``skipped``."""
    metis = metis_binary()
    if not metis:
        skipped.add("METIS 5.1 gpmetis")
        return None
    return run_metis(metis, path, k)


def geomean(values) -> float:
    values = [v for v in values if v and v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def print_table(rows: list[dict], columns: list[tuple[str, str, str]]) -> None:
    """Print ``rows`` with (key, header, format) columns as a Markdown table."""
    print("| " + " | ".join(h for _, h, _ in columns) + " |")
    print("|" + "---|" * len(columns))
    for row in rows:
        cells = []
        for key, _, fmt in columns:
            value = row.get(key)
            cells.append("-" if value is None else format(value, fmt))
        print("| " + " | ".join(cells) + " |")


def cpu_count() -> int:
    return os.cpu_count() or 1
