"""The CUDA modules compiled ahead of time: one fatbin per ``.cu`` file, built by nvcc when the
package is built (``python -m gpmetis.cuda.fatbin``), so a first run loads machine code instead
of compiling every module through NVRTC.

A fatbin is named after its module and a hash of the source text it was built from: an edited
kernel, or a header it pastes in, never loads a stale build; it is compiled at run time instead.
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1]
FATBIN_DIR = Path(__file__).with_name("fatbin")
NVCC_FLAGS = ("-std=c++17",)
# Architectures a release build covers (Ampere to Blackwell), and PTX of the newest for later GPUs.
RELEASE_ARCHS = ("80", "86", "89", "90", "100", "120")


def kernel_source(cu_file: Path) -> str:
    """The text of ``cu_file`` with each ``#include "relative/path"`` replaced by that file's
    text (recursively, each file once)."""
    seen: set[Path] = set()

    def expand(path: Path) -> str:
        path = path.resolve()
        if path in seen:
            return ""
        seen.add(path)
        lines = []
        for line in path.read_text().splitlines():
            stripped = line.strip()
            if stripped.startswith('#include "') and stripped.endswith('"'):
                lines.append(expand(path.parent / stripped[len('#include "'):-1]))
            else:
                lines.append(line)
        return "\n".join(lines)

    return expand(cu_file) + "\n"


def module_files() -> list[Path]:
    """Every kernel module of the package (headers are pasted into them)."""
    return sorted(PACKAGE.rglob("*.cu"))


def fatbin_path(cu_file: Path, source: str, directory: Path) -> Path:
    """Where the fatbin built from ``source`` (the text of ``cu_file``) lies."""
    stem = ".".join(cu_file.resolve().relative_to(PACKAGE).with_suffix("").parts)
    digest = hashlib.sha256((" ".join(NVCC_FLAGS) + "\0" + source).encode()).hexdigest()[:16]
    return directory / f"{stem}-{digest}.fatbin"


def prebuilt(cu_file: Path, source: str) -> Path | None:
    """The fatbin of ``cu_file`` built from exactly ``source``, or None (always for a file
    outside the package)."""
    if not cu_file.resolve().is_relative_to(PACKAGE):
        return None
    path = fatbin_path(cu_file, source, FATBIN_DIR)
    return path if path.is_file() else None


def gencode_flags(archs: list[str]) -> list[str]:
    """nvcc's flags for machine code of each architecture (``native``: the GPUs of this
    machine) and PTX of the newest, which later GPUs compile when they load it."""
    if archs == ["native"]:
        return ["-arch=native"]
    flags = [f"-gencode=arch=compute_{a},code=sm_{a}" for a in archs]
    newest = max(archs, key=int)
    return [*flags, f"-gencode=arch=compute_{newest},code=compute_{newest}"]


def build(archs: list[str], directory: Path = FATBIN_DIR, nvcc: str = "nvcc",
          files: list[Path] | None = None) -> list[Path]:
    """Compile every module (or ``files``) into ``directory`` with nvcc, in parallel, removing
    fatbins of older sources there; returns the fatbins. Raises RuntimeError naming the module
    when nvcc fails."""
    import subprocess
    import tempfile
    from concurrent.futures import ThreadPoolExecutor

    directory.mkdir(parents=True, exist_ok=True)
    flags = gencode_flags(archs)

    def compile_one(cu_file: Path) -> Path:
        source = kernel_source(cu_file)
        target = fatbin_path(cu_file, source, directory)
        with tempfile.TemporaryDirectory() as scratch:
            src = Path(scratch) / cu_file.name
            src.write_text(source)
            out = Path(scratch) / target.name
            proc = subprocess.run([nvcc, *NVCC_FLAGS, "-fatbin", *flags, "-w", str(src),
                                   "-o", str(out)], capture_output=True, text=True)
            if proc.returncode != 0:
                raise RuntimeError(f"nvcc failed on {cu_file.name}:\n{proc.stderr.strip()}")
            os.replace(out, target)
        stem = target.name.rsplit("-", 1)[0]
        for old in directory.glob(f"{stem}-*.fatbin"):
            if old != target:
                old.unlink(missing_ok=True)
        return target

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        return list(pool.map(compile_one, files or module_files()))


def main(argv: list[str] | None = None) -> int:
    import argparse
    import shutil

    parser = argparse.ArgumentParser(
        prog="python -m gpmetis.cuda.fatbin",
        description="Compile gpmetis's CUDA kernels ahead of time with nvcc.")
    parser.add_argument("--arch", default="native",
                        help="'native' (this machine's GPUs), 'release' (sm_"
                        + ", sm_".join(RELEASE_ARCHS) + ") or a comma list such as 90,100")
    parser.add_argument("--nvcc", default=shutil.which("nvcc") or "nvcc")
    args = parser.parse_args(argv)
    archs = (list(RELEASE_ARCHS) if args.arch == "release"
             else [a.strip().removeprefix("sm_") for a in args.arch.split(",")])
    if archs != ["native"] and not all(a.isdigit() for a in archs):
        parser.error(f"--arch={args.arch}: expected native, release or numbers such as 90,100")
    try:
        built = build(archs, nvcc=args.nvcc)
    except (OSError, RuntimeError) as exc:
        print(f"gpmetis: {exc}", file=sys.stderr)
        return 1
    print(f"gpmetis: {len(built)} CUDA modules compiled into {FATBIN_DIR}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
