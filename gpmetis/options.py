"""The options object shared by the CLI and the Python API, with METIS 5.1's names and defaults."""

from __future__ import annotations

import re
from dataclasses import dataclass, fields, replace
from numbers import Integral

from gpmetis.context import PRESETS as PRESET_CONTEXTS
from gpmetis.context import Context, preset_context
from gpmetis.errors import OptionError

PTYPES = ("kway", "rb")
OBJTYPES = ("cut", "vol")
CTYPES = ("rm", "shem", "lp")  # lp: gpmetis's label-propagation clusters, not METIS's
IPTYPES = ("grow", "random", "edge", "node", "metisrb")
RTYPES = ("fm", "greedy", "sep2sided", "sep1sided")
ENGINES = ("auto", "gpu", "cpu", "metis")
# auto: the gpu engine from this many vertices plus edges, where its whole command (CuPy's
# import and the CUDA start-up included) is shorter than METIS's; small graphs never import CuPy
AUTO_GPU_MIN_SIZE = 1_250_000
# Quality presets: each names a value of the engines' tuning constants (``context.Context``).
PRESETS = tuple(PRESET_CONTEXTS)

# Ranges of the integer options, checked when parsed (CLI) and by ``Options.validate`` (API).
# METIS keeps its options in idx_t and the gpu/cpu engines in int32, so no value passes 2^31-1;
# -ncuts is bounded by what a run can afford: each cut is a whole partitioning run.
INT_OPTION_MAX = 2**31 - 1
NCUTS_MAX = 1000
INT_OPTION_RANGES = {
    "ufactor": (1, INT_OPTION_MAX),
    "niter": (1, INT_OPTION_MAX),
    "ncuts": (1, NCUTS_MAX),
    "seed": (-INT_OPTION_MAX - 1, INT_OPTION_MAX),  # negative: the engine's default seed
    "dbglvl": (0, INT_OPTION_MAX),
}
# -ubvec entries are imbalances 1 + ufactor/1000, so they share -ufactor's range.
UBVEC_MAX = 1.0 + INT_OPTION_MAX / 1000.0
# The smallest target part weight (fraction of a constraint's total) accepted: far below the
# 1/(2^31-1) of a uniform split, far above where METIS's real_t arithmetic stops working (a
# fraction of 1e-300 makes METIS fail).
MIN_TPWGT = 1e-30
# NPARTS: part ids are int32 everywhere (engines, part file), so at most 2^31-1; and at most
# max(nvtxs, NPARTS_SPARE). Parts beyond the vertex count stay empty whatever the engine, yet
# every engine's memory and time grow with NPARTS; up to NPARTS_SPARE of them are allowed so
# that a script can run one NPARTS over graphs of every size.
NPARTS_MAX = 2**31 - 1
NPARTS_SPARE = 1024


@dataclass(frozen=True)
class Options:
    """Every METIS 5.1 ``gpmetis`` option plus gpmetis's own (engine, output, report).

    ``None`` means "METIS's default for this ptype". ``validate`` checks ranges; what an engine
    cannot honour is checked by the driver, which names the option.
    """

    ptype: str = "kway"
    objtype: str = "cut"
    ctype: str | None = None
    iptype: str | None = None
    rtype: str | None = None
    ufactor: int | None = None
    niter: int = 10
    ncuts: int = 1
    seed: int = -1
    no2hop: bool = False
    minconn: bool = False
    contig: bool = False
    ondisk: bool = False
    nooutput: bool = False
    tpwgts: str | tuple[float, ...] | None = None
    ubvec: tuple[float, ...] | None = None
    dbglvl: int = 0
    engine: str = "auto"
    output: str | None = None
    json: str | None = None
    quiet: bool = False
    symmetrize: bool = False
    preset: str = "default"
    gpus: int | str | None = None  # spread the run over this many GPUs of the host, or "all"

    def validate(self) -> Options:
        """Return self if every value is in range, else raise OptionError naming the option."""
        for name, allowed in (
            ("ptype", PTYPES),
            ("objtype", OBJTYPES),
            ("engine", ENGINES),
            ("preset", PRESETS),
        ):
            value = getattr(self, name)
            if value not in allowed:
                raise OptionError(name, f"'{value}' is not one of {', '.join(allowed)}")
        if self.ctype is not None and self.ctype not in CTYPES:
            raise OptionError("ctype", f"'{self.ctype}' is not one of {', '.join(CTYPES)}")
        if self.iptype is not None and self.iptype not in IPTYPES:
            raise OptionError("iptype", f"'{self.iptype}' is not one of {', '.join(IPTYPES)}")
        if self.rtype is not None and self.rtype not in RTYPES:
            raise OptionError("rtype", f"'{self.rtype}' is not one of {', '.join(RTYPES)}")
        for name, (low, high) in INT_OPTION_RANGES.items():
            value = getattr(self, name)
            if value is not None:
                check_int_option(name, value, low, high)
        if self.ubvec is not None:
            check_ubvec(self.ubvec)
        for name in ("output", "json", "tpwgts"):
            if getattr(self, name) == "":
                raise OptionError(name, "needs a file name, got an empty one")
        if self.gpus is not None:
            count = isinstance(self.gpus, int) and not isinstance(self.gpus, bool)
            if self.gpus != "all" and not (count and self.gpus >= 1):
                raise OptionError("gpus", f"must be a positive number of GPUs or all, got "
                                          f"{self.gpus!r}")
            if self.engine not in ("auto", "gpu"):
                raise OptionError("gpus", f"runs the gpu engine, not -engine={self.engine}")
        if self.objtype == "vol" and self.ptype == "rb":
            raise OptionError("objtype", "'vol' applies only to -ptype=kway, as in METIS")
        return self

    @property
    def effective_ufactor(self) -> int:
        """METIS's default: 1 for recursive bisection, 30 for k-way."""
        if self.ufactor is not None:
            return self.ufactor
        return 1 if self.ptype == "rb" else 30

    @property
    def trial_ufactor(self) -> int:
        """The imbalance, in ufactor's units, that the METIS runs inside a partition allow:
        the tightest -ubvec entry where given (in METIS ubvec wins over ufactor), else
        ``effective_ufactor``; at least 1, the least METIS accepts (an entry below 1.0005 would
        round to 0): the limits themselves are ``ubfactors``, which refinement enforces."""
        if self.ubvec is not None:
            return max(1, round((min(self.ubvec) - 1.0) * 1000))
        return self.effective_ufactor

    def effective_ctype(self, engine: str) -> str:
        """The coarsening scheme ``engine`` runs: label-propagation clusters on the gpu and cpu
        engines, heavy-edge matching in METIS, unless ``-ctype`` says otherwise."""
        if self.ctype is not None:
            return self.ctype
        return "shem" if engine == "metis" else "lp"

    @property
    def effective_iptype(self) -> str:
        if self.iptype is not None:
            return self.iptype
        return "grow" if self.ptype == "rb" else "metisrb"

    @property
    def effective_rtype(self) -> str:
        if self.rtype is not None:
            return self.rtype
        return "fm" if self.ptype == "rb" else "greedy"

    @property
    def context(self) -> Context:
        """The tuning constants of the preset (``context.PRESETS``)."""
        return preset_context(self.preset)

    @property
    def runs(self) -> int:
        """Whole partitioning runs, the best kept: ``ncuts``, at least the preset's
        ``min_runs``."""
        return max(self.ncuts, self.context.runs.min_runs)

    def ubfactors(self, ncon: int) -> list[float]:
        """Allowed imbalance per constraint (``ubvec`` wins over ``ufactor``, as in METIS)."""
        if self.ubvec is not None:
            check_ubvec_ncon(self.ubvec, ncon)
            return list(self.ubvec)
        return [1.0 + self.effective_ufactor / 1000.0] * ncon

    def with_(self, **changes) -> Options:
        return replace(self, **changes)

    @classmethod
    def from_kwargs(cls, **kwargs) -> Options:
        """Build from keyword arguments named like METIS's options; unknown names are errors."""
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(kwargs) - names)
        if unknown:
            raise OptionError(unknown[0], "is not a METIS or gpmetis option")
        if isinstance(kwargs.get("ubvec"), str):
            kwargs["ubvec"] = parse_ubvec(kwargs["ubvec"])
        return cls(**kwargs).validate()


def check_int_option(name: str, value: object, low: int, high: int) -> None:
    """OptionError naming ``name`` unless ``value`` is an integer (not a bool) in [low, high]."""
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise OptionError(name, f"must be an integer, got {value!r}")
    if not low <= value <= high:
        raise OptionError(name, f"must be between {low} and {high}, got {value}")


def check_ubvec(ubvec: tuple[float, ...]) -> None:
    """OptionError unless every entry is a finite number in (1, UBVEC_MAX]."""
    for u in ubvec:
        if not 1.0 < u <= UBVEC_MAX:  # false for nan and inf too
            raise OptionError(
                "ubvec", f"every entry must be a number greater than 1.0 and at most "
                         f"{UBVEC_MAX:g}, got {u}")


def check_ubvec_ncon(ubvec: tuple[float, ...] | None, ncon: int) -> None:
    """OptionError unless ``ubvec`` (when given) has one entry per constraint."""
    if ubvec is not None and len(ubvec) != ncon:
        raise OptionError(
            "ubvec", f"has {len(ubvec)} entries but the graph has {ncon} "
                     f"constraint{'s' if ncon > 1 else ''}")


def check_nparts(nparts: int, nvtxs: int) -> None:
    """OptionError named "nparts" unless 1 <= nparts <= min(NPARTS_MAX, max(nvtxs,
    NPARTS_SPARE)): no memory then grows with NPARTS beyond the graph's and NPARTS_SPARE."""
    if isinstance(nparts, bool) or not isinstance(nparts, Integral) or nparts < 1:
        raise OptionError("nparts", f"must be a positive integer, got {nparts!r}")
    if nparts > NPARTS_MAX:
        raise OptionError("nparts", f"must be at most {NPARTS_MAX} (part ids are 32-bit), got "
                                    f"{nparts}")
    if nparts > max(nvtxs, NPARTS_SPARE):
        raise OptionError("nparts", f"{nparts} parts for a graph of {nvtxs} "
                                    f"vert{'ex' if nvtxs == 1 else 'ices'}: more parts than "
                                    f"vertices are allowed only up to {NPARTS_SPARE}")


# digits of the longest integer any option or id can hold (2^63 - 1); checked before int(),
# which refuses strings of more than 4300 digits
MAX_INT_DIGITS = 19
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def parse_decimal(text: str) -> float:
    """A number written as C's strtod reads decimals (``1.05``, ``.5``, ``2e-3``); ValueError
    for anything else, such as Python's ``1_1`` (11) or non-ASCII digits."""
    if _DECIMAL.fullmatch(text.strip()) is None:
        raise ValueError(text)
    return float(text)


def parse_ubvec(text: str) -> tuple[float, ...]:
    """Parse METIS's space-separated ``-ubvec`` string; OptionError for anything but finite
    numbers in (1, UBVEC_MAX]."""
    try:
        values = tuple(parse_decimal(t) for t in text.split())
    except ValueError:
        raise OptionError("ubvec", f"'{text}' is not a list of numbers") from None
    if not values:
        raise OptionError("ubvec", "is empty")
    check_ubvec(values)
    return values
