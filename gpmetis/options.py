"""The options object shared by the CLI and the Python API, with METIS 5.1's names and defaults."""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

from gpmetis.errors import OptionError

PTYPES = ("kway", "rb")
OBJTYPES = ("cut", "vol")
CTYPES = ("rm", "shem", "lp")  # lp: gpmetis's label-propagation clusters, not METIS's
IPTYPES = ("grow", "random", "edge", "node", "metisrb")
RTYPES = ("fm", "greedy", "sep2sided", "sep1sided")
ENGINES = ("auto", "gpu", "cpu", "metis")


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

    def validate(self) -> Options:
        """Return self if every value is in range, else raise OptionError naming the option."""
        for name, allowed in (
            ("ptype", PTYPES),
            ("objtype", OBJTYPES),
            ("engine", ENGINES),
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
        if self.ufactor is not None and self.ufactor < 1:
            raise OptionError("ufactor", f"must be a positive integer, got {self.ufactor}")
        if self.niter < 1:
            raise OptionError("niter", f"must be >= 1, got {self.niter}")
        if self.ncuts < 1:
            raise OptionError("ncuts", f"must be >= 1, got {self.ncuts}")
        if self.dbglvl < 0:
            raise OptionError("dbglvl", f"must be >= 0, got {self.dbglvl}")
        if self.ubvec is not None and any(not (u > 1.0) for u in self.ubvec):
            raise OptionError("ubvec", "every entry must be a number greater than 1.0")
        if self.objtype == "vol" and self.ptype == "rb":
            raise OptionError("objtype", "'vol' applies only to -ptype=kway, as in METIS")
        return self

    @property
    def effective_ufactor(self) -> int:
        """METIS's default: 1 for recursive bisection, 30 for k-way."""
        if self.ufactor is not None:
            return self.ufactor
        return 1 if self.ptype == "rb" else 30

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

    def ubfactors(self, ncon: int) -> list[float]:
        """Allowed imbalance per constraint (``ubvec`` wins over ``ufactor``, as in METIS)."""
        if self.ubvec is not None:
            if len(self.ubvec) != ncon:
                raise OptionError(
                    "ubvec", f"has {len(self.ubvec)} entries but the graph has {ncon} constraints"
                )
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


def parse_ubvec(text: str) -> tuple[float, ...]:
    """Parse METIS's space-separated ``-ubvec`` string."""
    try:
        values = tuple(float(t) for t in text.split())
    except ValueError:
        raise OptionError("ubvec", f"'{text}' is not a list of numbers") from None
    if not values:
        raise OptionError("ubvec", "is empty")
    return values
