"""The ``-help`` of ``gpmetis`` and of its companions (``mpmetis``, ``ndmetis``, ``m2gmetis``,
``graphchk``): option references in the layout of METIS 5.1's ``-help`` of each program (the
usage line, the required parameters, then each option with its values, its default and what it
does), for METIS's options and gpmetis's own. Options that two programs share in meaning share
their paragraph here."""


def _reference(usage: str, required: str, *options: str) -> str:
    """A METIS-style ``-help``: usage, required parameters, the options' paragraphs."""
    return (f"\nUsage: {usage}\n\n Required parameters\n{required}\n\n Optional parameters\n"
            + "\n\n".join(options))


_PTYPE = """\
  -ptype=string
     The scheme that computes the k-way partitioning.
     The possible values are:
        rb       - Recursive bisection
        kway     - Direct k-way partitioning [default]"""

_CTYPE = """\
  -ctype=string
     The scheme that groups the vertices of the graph during coarsening.
     The possible values are:
        rm       - Random matching
        shem     - Sorted heavy-edge matching [default of -engine=metis]
        lp       - Label-propagation clusters, gpmetis's own (-engine=gpu, cpu
                   only) [default of -engine=gpu and cpu]"""

_IPTYPE = """\
  -iptype=string
     The scheme that computes the initial partitioning of the coarsest graph.
     The possible values are:
        grow     - Bisections grown from a vertex by a greedy scheme
                   [default for -ptype=rb]
        random   - Bisections started from random halves
        metisrb  - METIS's recursive bisection [default for -ptype=kway]
        edge     - An edge separator's start, as ndmetis's (-engine=metis only)
        node     - A node separator's start, as ndmetis's (-engine=metis only)"""

_RTYPE = """\
  -rtype=string [applies only with -engine=metis]
     The refinement scheme of METIS. The gpu and cpu engines refine with Jet
     (then with volume refinement under -objtype=vol) and refuse this option.
     The possible values are:
        fm        - FM refinement [default for -ptype=rb]
        greedy    - Greedy k-way refinement [default for -ptype=kway]
        sep2sided - Two-sided separator refinement, as ndmetis's
        sep1sided - One-sided separator refinement, as ndmetis's"""

_OBJTYPE = """\
  -objtype=string [applies only when -ptype=kway]
     The objective that the partitioning minimizes.
     The possible values are:
        cut      - The edgecut [default]
        vol      - The total communication volume"""

_NO2HOP = """\
  -no2hop
     Coarsening makes no 2-hop matchings when the standard matching fails to
     shrink the graph enough."""

_CONTIG = """\
  -contig
     The parts should be contiguous. On a graph that is not connected the
     option is ignored, with a warning."""

_MINCONN = """\
  -minconn [applies only when -ptype=kway]
     The partitioning also lowers the most parts any part is adjacent to
     (the maximum degree of the subdomain graph). Ignored, with a warning,
     when -ptype=rb."""

_TPWGTS = """\
  -tpwgts=filename
     A file of target weights, each line 'part[-part][:cons[-cons]] = fraction'
     (ids from 0, fractions below 1, '%' lines are comments); parts not listed
     share what is left equally. By default all parts get the same weight."""

_UFACTOR = """\
  -ufactor=int
     The most load imbalance allowed among the parts: x allows 1+x/1000.
     For -ptype=rb it bounds each bisection, for -ptype=kway the heaviest part
     against the average. The default is 1 for -ptype=rb (1.001) and 30 for
     -ptype=kway (1.03)."""

_NITER = """\
  -niter=int
     The refinement iterations at each level of the uncoarsening. Default is 10."""

_NCUTS = """\
  -ncuts=int
     The number of partitionings computed (at most 1000); the one of the best
     edgecut or communication volume is kept. Default is 1."""

_SEED = """\
  -seed=int
     The seed of the random number generator. A negative value [default -1]
     selects the engine's fixed seed: a run repeats exactly."""

_ENGINE = """\
  -engine=string
     The engine that partitions.
     The possible values are:
        auto     - gpu for graphs of at least 1,250,000 vertices plus edges when
                   CUDA is usable and the options allow, else metis [default]
        gpu      - gpmetis's multilevel partitioner on a CUDA GPU
        cpu      - The same partitioner in NumPy, giving the gpu engine's parts
        metis    - METIS, through pymetis, in this process"""

_QUIET = """\
  -quiet
     Nothing is printed but errors and warnings."""

_HELP = """\
  -help
     Prints this message."""

GPMETIS_HELP = _reference(
    "gpmetis [options] graphfile nparts",
    """\
    graphfile   The graph to partition: a METIS graph file or a Matrix Market
                file (.mtx), either one optionally compressed (.gz, .bz2, .xz).
    nparts      The number of parts to split the graph into.""",
    _PTYPE, _CTYPE, _IPTYPE, _RTYPE, _OBJTYPE, _NO2HOP, _CONTIG, _MINCONN, _TPWGTS, _UFACTOR,
    """\
  -ubvec=string
     The most imbalance allowed per constraint, for multi-constraint graphs:
     one number greater than 1 for each constraint, separated by spaces, e.g.
     "1.02 1.2 1.35" for 2%, 20% and 35%. Takes priority over -ufactor.""",
    _NITER, _NCUTS,
    """\
  -preset=string
     The quality setting.
     The possible values are:
        default  - One run (-ncuts runs) [default]
        strong   - At least 4 runs: combined by the gpu and cpu engines, the
                   best kept by METIS; a lower edgecut for more time""",
    _SEED, _ENGINE,
    """\
  -gpus=int
     Spread the run over this many GPUs of the host (-gpus=all: every one):
     the command runs again as that many ranks of mpiexec, one GPU each, and
     writes the same partition file as one GPU (pip install 'gpmetis[mpi]').""",
    """\
  -ondisk
     METIS's out-of-core coarsening: not supported (the graph is held in
     memory); an error.""",
    """\
  -nooutput
     No partition file is written.""",
    """\
  -o=filename, -output=filename
     The partition file. Default is graphfile.part.nparts (with -edgepart,
     graphfile.edgepart.nparts).""",
    """\
  -json=filename
     Also write the run's report (the summary's figures, options, timings) as
     JSON to this file.""",
    """\
  -symmetrize
     A graph that lists an edge in one direction only gets the missing
     reverse edges (and the larger weight both ways) instead of an error.""",
    """\
  -edgepart
     Partition the edges instead of the vertices (SPAC) and write the part of
     each edge to graphfile.edgepart.nparts.""",
    """\
  -dbglvl=int
     METIS's debug level; above 0 the summary also shows the time of each
     phase and level. Default is 0.""",
    """\
  -time
     The summary shows the time of each phase and level (-dbglvl=2 unless
     -dbglvl is given).""",
    _QUIET,
    """\
  -version
     Prints the version.""",
    _HELP,
)

_GTYPE = """\
  -gtype=string
     {what}
     The possible values are:
        dual     - The dual graph: one vertex per element, two elements
                   adjacent when they share -ncommon nodes [default]
        nodal    - The nodal graph: one vertex per node, two nodes adjacent
                   when an element holds both"""

_NCOMMON = """\
  -ncommon=int [applies only when -gtype=dual]
     The number of nodes two elements must share to be adjacent in the dual
     graph. Default is 1."""

MPMETIS_HELP = _reference(
    "mpmetis [options] meshfile nparts",
    """\
    meshfile    The mesh to partition: a METIS mesh file, optionally
                compressed (.gz, .bz2, .xz).
    nparts      The number of parts to split the mesh into.""",
    _GTYPE.format(what="The graph of the mesh that is partitioned; the other side of the mesh\n"
                       "     gets its parts from it."),
    _PTYPE, _CTYPE, _IPTYPE, _RTYPE, _OBJTYPE, _NO2HOP, _CONTIG, _MINCONN, _TPWGTS, _UFACTOR,
    _NCOMMON, _NITER, _NCUTS,
    """\
  -nooutput
     No partition files are written. By default they are meshfile.epart.nparts
     (the part of each element) and meshfile.npart.nparts (of each node).""",
    _SEED, _ENGINE,
    """\
  -dbglvl=int
     The debug level; above 0 the METIS runs print their own messages (on the
     gpu and cpu engines, the METIS runs on the coarsest graph). Default is 0.""",
    _QUIET, _HELP,
)

NDMETIS_HELP = _reference(
    "ndmetis [options] graphfile",
    """\
    graphfile   The graph to order: a METIS graph file or a Matrix Market file
                (.mtx), either one optionally compressed, with at most one
                vertex weight. The ordering (METIS's METIS_NodeND, through
                pymetis) is written to graphfile.iperm.""",
    """\
  -ctype=string
     The scheme that matches the vertices of the graph during coarsening.
     The possible values are:
        rm       - Random matching
        shem     - Sorted heavy-edge matching [default]""",
    """\
  -iptype=string
     The scheme that computes the initial separator of the coarsest graph.
     The possible values are:
        edge     - A separator made from an edge cut
        node     - A separator grown by a greedy node-based scheme [default]""",
    """\
  -rtype=string
     The scheme that refines the separators.
     The possible values are:
        1sided   - One-sided node-based refinement [default]
        2sided   - Two-sided node-based refinement""",
    """\
  -ufactor=int
     The most load imbalance allowed between the two sides of each bisection:
     x allows 1+x/1000 (2*max(left,right)/(left+right)). Default is 200 (1.2).""",
    """\
  -pfactor=int
     With x > 0, the vertices of degree above 0.1*x times the average degree
     are left out of the dissection and ordered last. Default is 0: none.""",
    _NO2HOP,
    """\
  -nocompress
     Vertices of identical adjacency lists are not merged before ordering.""",
    """\
  -ccorder
     The connected components of the graph are found and ordered separately.""",
    """\
  -niter=int
     The refinement iterations at each level of the uncoarsening. Default is 10.""",
    """\
  -nseps=int
     The number of separators computed at each bisection of the dissection;
     the smallest is kept. Default is 1.""",
    """\
  -nooutput
     No ordering file (graphfile.iperm) is written.""",
    """\
  -seed=int
     The seed of METIS's random number generator. Default is -1: METIS's fixed
     seed. Any seed gives the same ordering on every run.""",
    """\
  -dbglvl=int
     METIS's debug level; above 0 METIS prints its own messages. Default is 0.""",
    _QUIET, _HELP,
)

M2GMETIS_HELP = _reference(
    "m2gmetis [options] meshfile graphfile",
    """\
    meshfile    The mesh: a METIS mesh file, optionally compressed (.gz, .bz2,
                .xz).
    graphfile   The file the graph is written to, in METIS's graph format.""",
    _GTYPE.format(what="The graph of the mesh that is written."),
    _NCOMMON,
    """\
  -dbglvl=int
     METIS's debug level: accepted as METIS's m2gmetis accepts it; it changes
     nothing. Default is 0.""",
    _QUIET, _HELP,
)

GRAPHCHK_HELP = _reference(
    "graphchk [options] graphfile [fixedfile]",
    """\
    graphfile   The graph to check: a METIS graph file or a Matrix Market file
                (.mtx), either one optionally compressed (.gz, .bz2, .xz).
                Every error found is listed; the exit status is 0 when the
                graph is correct, 1 when it is not.""",
    """\
    fixedfile   Where a corrected copy of an incorrect graph is written:
                missing reverse edges added, self loops dropped, repeated
                edges merged. Nothing is written for a correct graph.""",
    """\
  -quiet
     Nothing is printed but errors: the exit status tells whether the graph
     is correct.""",
    _HELP,
)
