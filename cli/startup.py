"""Start-up of the command-line programs: what they need before anything is imported."""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

# pymetis.version's own parse of its version text
_VERSION = re.compile(r"([0-9.]+)([a-z0-9]*?)")


def preset_pymetis_version() -> None:
    """Give pymetis its ``pymetis.version`` module, with the values that module computes, from
    the ``Version:`` line of pymetis's METADATA file. pymetis's own module asks
    ``importlib.metadata``, whose import (the ``email`` package with it) costs a small run
    ~40 ms. Nothing happens when pymetis or its version module is imported already, or when
    exactly one METADATA file beside the package does not give a version: pymetis then reads
    it itself."""
    if "pymetis" in sys.modules or "pymetis.version" in sys.modules:
        return
    import importlib.util

    try:
        spec = importlib.util.find_spec("pymetis")
    except (ImportError, ValueError):
        return
    if spec is None or not spec.submodule_search_locations:
        return
    site = Path(next(iter(spec.submodule_search_locations))).parent
    found = list(site.glob("pymetis-*.dist-info/METADATA"))
    if len(found) != 1:
        return
    try:
        with found[0].open(encoding="utf-8") as metadata:
            text = next((line[len("Version:"):].strip() for line in metadata
                         if line.startswith("Version:")), "")
    except (OSError, UnicodeDecodeError):
        return
    match = _VERSION.fullmatch(text)
    try:
        number = tuple(int(p) for p in match.group(1).split("."))
    except (AttributeError, ValueError):  # no match, or an empty number ("2025..2")
        return
    module = types.ModuleType("pymetis.version")
    module.__dict__.update(VERSION_TEXT=text, VERSION=number, VERSION_STATUS=match.group(2),
                           version=text, version_tuple=number,
                           __all__=["VERSION", "VERSION_STATUS", "VERSION_TEXT", "version",
                                    "version_tuple"])
    sys.modules["pymetis.version"] = module
