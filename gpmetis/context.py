"""The tuning constants of the gpu and cpu engines, one frozen dataclass per phase, gathered in
``Context``; the presets (``-preset``) are values of it: ``DEFAULT`` and ``STRONG``.

``Options.context`` is the context of the options' preset; the pipeline hands each phase its
part (``context.coarsening`` to the coarsening, ...), so a phase reads no preset of its own and
a test or benchmark can run any context. Constants of a format, a kernel's layout or an
algorithm's arithmetic (block sizes, sentinels, offsets) stay in their modules. This module
imports nothing but the standard library's dataclasses: the METIS-only path loads it with the
options.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace


@dataclass(frozen=True)
class CoarseningContext:
    """How far and how the graph is coarsened (``coarsening/``)."""

    # the coarsest graph's target is max(vertices_per_part * nparts, min_vertices): larger
    # targets grow the METIS trials' work more than they save coarsening
    vertices_per_part: int = 20
    min_vertices: int = 1000
    # coarsening ends within this factor of its target: one more level costs more than the
    # trials gain from a smaller graph
    target_slack: float = 1.1
    # a level that removes less than this share of the vertices ends coarsening: it has stalled
    min_shrink: float = 0.10
    # a level of clusters that keeps more than this share of the vertices is made of pairs
    # instead: pairs at best halve the graph too, and such clusters cut worse
    cluster_max_ratio: float = 0.5
    max_levels: int = 64  # levels at most: a bound on the hierarchy, not a target
    # a coarse vertex weighs at most this times (total weight / target) in each constraint,
    # METIS's factor: heavier ones would leave the trials no balanced split
    vertex_weight_limit: float = 1.5
    lp_rounds: int = 3  # label-propagation rounds a level: more give fewer levels, no less time
    # each round's sub-rounds; a vertex proposes in one of them, so proposals seldom conflict
    lp_subrounds: int = 4
    # a round that moves fewer than this share of the vertices ends the level's clustering
    lp_min_round_moves: float = 0.01
    matching_rounds: int = 8  # heavy-edge matching's propose-and-accept rounds, at most
    # a round that matches fewer than this share of the vertices ends the matching
    matching_min_round_gain: float = 0.01
    # two-hop pairs are formed where more than this share of the vertices is left unmatched
    # (leaves and chains around hubs, which no edge can pair)
    two_hop_threshold: float = 0.25
    # -ptype=rb: a depth's pieces are each coarsened as their own bisection would be while
    # there are at most full_size_pieces of them; more share that many pieces' vertices (at
    # least piece_min_vertices each), so a depth's METIS trials stay one bisection's work
    full_size_pieces: int = 16
    piece_min_vertices: int = 100
    # intermediate levels stay on the GPU while they fit in what the device has free beside
    # free_memory_headroom times the input's bytes, and at least in level_memory_budget times
    # them; older ones wait in host memory (copying a level out and back costs more than its
    # coarsening, so only what does not fit moves)
    level_memory_budget: float = 2.0
    free_memory_headroom: float = 3.0
    # the rows' hash tables go back to the device before a contraction where they hold more
    # than 1/pool_release_share of the input's bytes (else the contraction's arrays come on top)
    pool_release_share: int = 4

    def target(self, nparts: int) -> int:
        """How small, in vertices, the coarsest graph of a split into ``nparts`` parts gets."""
        return max(self.vertices_per_part * nparts, self.min_vertices)


@dataclass(frozen=True)
class InitialContext:
    """The METIS trials on the coarsest graph (``initial_partitioning/``)."""

    # METIS trials at once, one worker each, the best kept: fewer end the phase sooner but cut
    # worse; it is also the worker pool's size
    trials: int = 16
    # each piece of a -ptype=rb depth gets at least this many of the trials: fewer cut worse,
    # since rb's tight per-bisection balance leaves refinement little room to repair
    piece_trials: int = 8
    # trials per copy of -preset=strong's runs at once: a run's, so the copies are as good
    copy_trials: int = 16
    # a coarsest graph above this many times the coarsening target has stalled: k-way trials
    stalled: int = 2
    # the bisection tree splits until each piece has at most this many parts, which whole
    # recursive bisections then make: a whole run into many parts costs more than the rounds
    piece_parts: int = 32
    # a coarsest graph of a higher average degree is dense: k-way trials on a thinned graph,
    # where bisections would cut much more and save no time
    dense_degree: int = 64
    # METIS sees each vertex of a dense coarsest graph with this many of its heaviest edges:
    # fewer lose cut, more cost time for the same cut
    thin_degree: int = 8
    # trials run on the workers from this many adjacency entries: below, handing them over
    # costs more than running them here (the partition is the same either way)
    parallel_min_nnz: int = 2_000
    # several constraints: a trial's refinement stops after this many iterations without gain
    # (at most the run's patience): the kept trial is refined again as the coarsest level
    ncon_trial_patience: int = 4
    # several constraints: this many of the best trials (METIS's balance, then cut) are refined;
    # METIS's ranking finds the best among the first few, and a refinement costs more than a trial
    ncon_refined_trials: int = 2
    # several constraints: inputs of at most this many vertices get METIS's multi-constraint
    # k-way trials (their coarsest graph is too coarse for a repair to keep the cut); larger
    # ones the cheaper scalarised bisections first
    ncon_kway_max_vertices: int = 50_000


@dataclass(frozen=True)
class RefinementContext:
    """The refinement of each level (``refinement/``, and the multilevel pipeline's calls of
    -minconn's and the refiners' entries)."""

    # a level stops refining after -niter plus this many iterations without a 0.1% gain
    patience_beyond_niter: int = 2
    max_iterations: int = 300  # Jet iterations a level, at most: a bound on a stuck level
    # an iteration that lowers the cut by less than this share is no gain (and the next
    # label-propagation step may overfill parts)
    improvement: float = 0.001
    # Jet's negative-gain filter (num, den): a losing move is kept where its loss is below
    # num/den of its vertex's edge weight into its own part; Jet's values, looser on coarse
    # levels, where the finer levels repair what a move loses
    filter_finest: tuple[int, int] = (1, 4)
    filter_coarse: tuple[int, int] = (3, 4)
    # a loose label-propagation step may fill a part up to its limit plus 1/inflow_slack of it;
    # unbounded, such steps pile a power-law level into a few parts
    inflow_slack: int = 5
    # several constraints: after a balanced state, rebalancing steps removing less than this
    # share of the excess count as stale
    ncon_settle: float = 0.1
    # -contig: rebalancing rounds at most; each moves at least one vertex or ends
    contig_max_rounds: int = 256
    # -contig: cut-lowering rounds that keep the parts connected, at most, ending after one
    # that lowers the cut by less than 1/contig_refine_stop (each round costs a components search)
    contig_refine_rounds: int = 16
    contig_refine_stop: int = 2000
    contig_chunk_depth: int = 16  # -contig: a moved chunk reaches this many edges into its part
    # -contig: vertices of a part checked for one whose move leaves the part connected
    contig_fill_tries: int = 8
    # -minconn: eliminate while the largest subdomain degree is at least num/den of the
    # average (METIS's rule)
    minconn_bad_factor: tuple[int, int] = (7, 5)
    # -minconn: elimination rounds, and then rebalancing and cut-lowering rounds, at most each;
    # a bound: each round moves a group or ends
    minconn_max_rounds: int = 64
    # -minconn: an elimination may fill a part up to (1 + num/den) times its limit, rebalancing
    # following; METIS's 1/4 cuts more for the same degrees
    minconn_slack: tuple[int, int] = (1, 10)
    # -minconn: an elimination adds at most this many times the removed interface's weight to
    # the cut: lower keeps more of the cut, higher lowers the degrees more
    minconn_cost_factor: int = 8
    # -minconn on several constraints: the fallback rebalancing's refinement stops after this
    # many iterations without gain
    minconn_rebalance_patience: int = 2
    # -minconn: constrained cut-lowering rounds on the finest level, at most
    minconn_refine_rounds: int = 8
    # -minconn: a vertex adjacent to more parts is no candidate of the constrained moves (the
    # check of its destination costs the square of that number)
    minconn_checked_parts: int = 32
    volume_max_rounds: int = 64  # -objtype=vol: volume-refinement rounds, at most
    # -objtype=vol: a round that lowers the volume by less than this share ends the refinement
    volume_improvement: float = 0.001


@dataclass(frozen=True)
class MemoryContext:
    """How the multilevel run hands GPU memory back to the device between levels."""

    # levels of at least 1/release_fraction of the input's vertices start from released pool
    # memory: their arrays would not fit in the pool's fragments; smaller levels' refiners are
    # made while METIS runs, since latency, not memory, is what they cost
    release_fraction: int = 16
    # ... where the pool holds more than this many times the input's bytes: below, the freed
    # blocks stay for the next levels, as allocating anew costs time
    release_above: int = 2


@dataclass(frozen=True)
class RunsContext:
    """The engine's whole runs: how many, and how they are combined (``partitioning/engine.py``,
    ``partitioning/modes/strong.py``)."""

    # whole runs at least (-ncuts may ask for more), the best kept
    min_runs: int = 1
    # k-way runs of one constraint (neither -minconn nor -contig) are combined: each after the
    # first with the best so far by a V-cycle that coarsens within both, so whole regions of
    # either can win (-objtype=cut runs of a small graph run at once, as copies)
    combine: bool = False
    # more runs, at most, where the best -contig or multi-constraint run is over a limit: their
    # rebalancing cannot always keep every part connected, nor every constraint within its limit
    balance_retries: int = 3
    # combined runs run at once, as copies in one multilevel run, while their union stays this
    # small (vertices, adjacency entries): a small graph's GPU run is bound by latency, not work
    batch_max_vertices: int = 1 << 20
    batch_max_entries: int = 1 << 25


@dataclass(frozen=True)
class DirectContext:
    """The direct candidate (``partitioning/modes/direct.py``): a small input split into few
    parts also gets METIS's k-way trials on the input itself, then its refinement; METIS's FM
    refinement moves whole regions that Jet's single-vertex moves miss, and the trials run side
    by side on the cores, so the candidate costs about one METIS run of the input."""

    # inputs of at most this many vertices: a METIS run of the input grows with it, a
    # multilevel run's latency-bound phases do not
    max_vertices: int = 1 << 15
    # into at most this many parts: into more, the candidate mostly cuts more than the
    # multilevel run, in several times its time
    max_parts: int = 8


@dataclass(frozen=True)
class PackingContext:
    """Component packing (``partitioning/components.py``, ``partitioning/modes/packing.py``)."""

    # components up to this many times the largest part limit are packed whole: a larger one
    # would leave its part far over the limit, its excess shed by cuts that the multilevel run
    # places better
    place_max: float = 1.25


@dataclass(frozen=True)
class Context:
    """Every phase's tuning constants: the value a preset names."""

    coarsening: CoarseningContext = field(default_factory=CoarseningContext)
    initial: InitialContext = field(default_factory=InitialContext)
    refinement: RefinementContext = field(default_factory=RefinementContext)
    memory: MemoryContext = field(default_factory=MemoryContext)
    runs: RunsContext = field(default_factory=RunsContext)
    direct: DirectContext = field(default_factory=DirectContext)
    packing: PackingContext = field(default_factory=PackingContext)


# the fast headline setting: one run
DEFAULT = Context()
# more time for a lower cut: four whole runs (docs/quality.md gives what 3, 4 and 6 cost and
# cut), combined by V-cycles on the gpu/cpu engines (the metis engine keeps the best)
STRONG = replace(DEFAULT, runs=replace(DEFAULT.runs, min_runs=4, combine=True))

PRESETS: dict[str, Context] = {"default": DEFAULT, "strong": STRONG}


def preset_context(name: str) -> Context:
    """The context of the preset ``name`` (a key of PRESETS; KeyError for any other)."""
    return PRESETS[name]
