"""pymetis's public names with pymetis's behaviour, for ``import gpmetis as pymetis``.

``Options`` holds METIS's integer option array by name (every entry -1, "METIS's default",
until set), as pymetis's does; ``run_options`` turns it, a real ``pymetis.Options``, a
``gpmetis.options.Options`` or a mapping of option names into the ``gpmetis.options.Options``
the engines take. The enums carry METIS 5's numeric codes, so values read from one library mean
the same in the other.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import Any, NamedTuple

import numpy as np

from gpmetis.errors import OptionError
from gpmetis.options import CTYPES, IPTYPES, OBJTYPES, RTYPES
from gpmetis.options import Options as RunOptions


class OPType(IntEnum):
    """METIS's operation codes."""

    PMETIS = 0
    KMETIS = 1
    OMETIS = 2


class OptionKey(IntEnum):
    """Indices into METIS's options array."""

    PTYPE = 0
    OBJTYPE = 1
    CTYPE = 2
    IPTYPE = 3
    RTYPE = 4
    DBGLVL = 5
    NITER = 6
    NCUTS = 7
    SEED = 8
    NO2HOP = 9
    MINCONN = 10
    CONTIG = 11
    COMPRESS = 12
    CCORDER = 13
    PFACTOR = 14
    NSEPS = 15
    UFACTOR = 16
    NUMBERING = 17
    HELP = 18
    TPWGTS = 19
    NCOMMON = 20
    NOOUTPUT = 21
    BALANCE = 22
    GTYPE = 23
    UBVEC = 24


class PType(IntEnum):
    """Partitioning schemes: recursive bisection or direct k-way."""

    RB = 0
    KWAY = 1


class GType(IntEnum):
    """The graph a mesh is partitioned through: its dual (elements) or nodal (nodes) graph."""

    DUAL = 0
    NODAL = 1


class CType(IntEnum):
    """Coarsening schemes: random or sorted heavy-edge matching."""

    RM = 0
    SHEM = 1


class IPType(IntEnum):
    """Initial partitioning schemes."""

    GROW = 0
    RANDOM = 1
    EDGE = 2
    NODE = 3
    METISRB = 4


class RType(IntEnum):
    """Refinement schemes."""

    FM = 0
    GREEDY = 1
    SEP2SIDED = 2
    SEP1SIDED = 3


class DebugLevel(IntEnum):
    """METIS's debug-level bits."""

    INFO = 1
    TIME = 2
    COARSEN = 4
    REFINE = 8
    IPART = 16
    MOVEINFO = 32
    SEPINFO = 64
    CONNINFO = 128
    CONTIGINFO = 256
    MEMORY = 2048


class ObjType(IntEnum):
    """Objectives: edge cut, communication volume, node separator."""

    CUT = 0
    VOL = 1
    NODE = 2


class Status(IntEnum):
    """METIS's return codes."""

    OK = 1
    ERROR_INPUT = -2
    ERROR_MEMORY = -3
    ERROR = -4


METIS_NOPTIONS = 40
SEED_MODULUS = 2**31  # a METIS-style seed beyond the engines' 31 bits is taken modulo this
_OPTION_INDEX = {key.name.lower(): int(key) for key in OptionKey}


class Options:
    """METIS's options by name, mutable like pymetis's: ``Options(seed=1)``, ``opt.ufactor = 50``.

    Every option reads -1 (METIS's default) until set. Names: ptype, objtype, ctype, iptype,
    rtype, dbglvl, niter, ncuts, seed, no2hop, minconn, contig, compress, ccorder, pfactor,
    nseps, ufactor, numbering, help, tpwgts, ncommon, nooutput, balance, gtype, ubvec. Values
    are integers (METIS's codes, see the enums); anything else raises TypeError, an unknown
    name AttributeError.
    """

    __slots__ = ("_values",)

    def __init__(self, **kwargs: int) -> None:
        object.__setattr__(self, "_values", [-1] * METIS_NOPTIONS)
        for name, value in kwargs.items():
            setattr(self, name, value)

    def __getattr__(self, name: str) -> int:
        if name not in _OPTION_INDEX:
            raise AttributeError(name)
        return self._values[_OPTION_INDEX[name]]

    def __setattr__(self, name: str, value: int) -> None:
        if name not in _OPTION_INDEX:
            raise AttributeError(name)
        self._set(_OPTION_INDEX[name], value)

    def _get(self, idx: int) -> int:
        """The value at METIS's option index ``idx``."""
        return self._values[idx]

    def _set(self, idx: int, value: int) -> None:
        """Set METIS's option index ``idx``; TypeError unless ``value`` is an integer."""
        if isinstance(value, bool):
            value = int(value)
        if not isinstance(value, (int, np.integer)):
            raise TypeError("METIS options accept only integer values.")
        if not 0 <= idx < METIS_NOPTIONS:
            raise IndexError(f"option index {idx} is not in [0, {METIS_NOPTIONS})")
        self._values[idx] = int(value)

    def set_defaults(self) -> None:
        """Every option back to -1 (METIS's default)."""
        self._values[:] = [-1] * METIS_NOPTIONS

    def __repr__(self) -> str:
        set_ = {k: self._values[i] for k, i in _OPTION_INDEX.items() if self._values[i] != -1}
        return f"Options({', '.join(f'{k}={v}' for k, v in set_.items())})"


@dataclass(frozen=True)
class CSRAdjacency:
    """A graph in CSR form: vertex i's neighbours are
    ``adjacent[adj_starts[i]:adj_starts[i+1]]``."""

    adj_starts: Any
    adjacent: Any


class GraphPartition(NamedTuple):
    """``part_graph``'s result: METIS's objective (the edge cut, or the communication volume
    under objtype vol) and each vertex's part (an ``array.array`` of int64, a list for nparts=1,
    as pymetis's; a dict keyed by node for a networkx graph)."""

    edge_cuts: int
    vertex_part: Any


class MeshPartition(NamedTuple):
    """``part_mesh``'s result: the cut of the partitioned graph (dual or nodal), each element's
    part and each node's part (``array.array``s of int64, lists for n_parts < 2, as
    pymetis's)."""

    edge_cuts: int
    element_part: Any
    vertex_part: Any


def zero_copy_dtype() -> np.dtype:
    """The integer dtype gpmetis takes without converting (int64, pymetis's ``idx_t`` on 64-bit
    builds)."""
    return np.dtype(np.int64)


def verify_nd(perm: Sequence[int], iperm: Sequence[int]) -> int:
    """pymetis's check of an ordering: 0 when ``perm`` and ``iperm`` are inverse permutations,
    1 when ``perm[iperm[i]] != i`` for some i, 2 when ``iperm[perm[i]] != i`` for some i."""
    p = np.asarray(perm, dtype=np.int64)
    q = np.asarray(iperm, dtype=np.int64)
    n = len(p)
    if len(q) != n or ((p < 0) | (p >= n)).any() or ((q < 0) | (q >= n)).any():
        raise ValueError("perm and iperm must be permutations of 0..n-1 of the same length")
    ids = np.arange(n)
    if (ids != q[p]).any():
        return 2
    if (ids != p[q]).any():
        return 1
    return 0


_METIS_NAMES = ("ptype", "objtype", "ctype", "iptype", "rtype", "dbglvl", "niter", "ncuts",
                "seed", "no2hop", "minconn", "contig", "ufactor", "numbering", "compress",
                "ccorder", "pfactor", "nseps")


def metis_values(options: Any) -> dict[str, int]:
    """The METIS option values set (not -1) in a gpmetis or pymetis ``Options``, by name."""
    values = {}
    for name in _METIS_NAMES:
        value = getattr(options, name)
        if value != -1:
            values[name] = int(value)
    return values


def check_numbering(options: Any) -> None:
    """ValueError unless a METIS-style ``options.numbering`` is -1 or 0, as pymetis requires."""
    if options is not None and not isinstance(options, (RunOptions, Mapping)):
        if options.numbering not in (-1, 0):
            raise ValueError("METIS numbering option must be set to 0 or the default")


def run_options(options: Any) -> tuple[RunOptions, bool]:
    """(``gpmetis.options.Options``, whether it names the ptype) for ``options``: None, a
    ``gpmetis.options.Options``, a mapping of its field names, or a METIS-style ``Options``
    (ours or pymetis's; options that only orderings use are ignored here)."""
    if options is None:
        return RunOptions(), False
    if isinstance(options, RunOptions):
        return options.validate(), True
    if isinstance(options, Mapping):
        return RunOptions.from_kwargs(**options), "ptype" in options
    values = metis_values(options)
    fields: dict[str, Any] = {}
    for name, names in (("objtype", OBJTYPES), ("ctype", CTYPES), ("iptype", IPTYPES),
                        ("rtype", RTYPES)):
        if name in values:
            fields[name] = _code(name, values[name], names)
    if "ptype" in values:
        fields["ptype"] = _code("ptype", values["ptype"], ("rb", "kway"))
    for name in ("dbglvl", "niter", "ncuts", "ufactor"):
        if name in values:
            fields[name] = values[name]
    if "seed" in values:
        # pymetis takes 64-bit seeds (random.getrandbits(32) and the like); ours are 31-bit
        fields["seed"] = values["seed"] % SEED_MODULUS if values["seed"] >= 0 else values["seed"]
    for name in ("no2hop", "minconn", "contig"):
        if name in values:
            fields[name] = bool(values[name])
    return RunOptions(**fields).validate(), "ptype" in values


def _code(name: str, code: int, names: tuple[str, ...]) -> str:
    if not 0 <= code < len(names) or (name == "ctype" and names[code] == "lp"):
        raise OptionError(name, f"METIS code {code} is not a {name}")
    return names[code]
