"""``gpmetis -help``: the option reference in METIS 5.1 ``gpmetis -help``'s layout (usage,
required parameters, then each option with its values, its default and what it does), for
METIS's options and gpmetis's own."""

GPMETIS_HELP = """\

Usage: gpmetis [options] graphfile nparts

 Required parameters
    graphfile   The graph to partition: a METIS graph file or a Matrix Market
                file (.mtx), either one optionally compressed (.gz, .bz2, .xz).
    nparts      The number of parts to split the graph into.

 Optional parameters
  -ptype=string
     The scheme that computes the k-way partitioning.
     The possible values are:
        rb       - Recursive bisection
        kway     - Direct k-way partitioning [default]

  -ctype=string
     The scheme that groups the vertices of the graph during coarsening.
     The possible values are:
        rm       - Random matching
        shem     - Sorted heavy-edge matching [default of -engine=metis]
        lp       - Label-propagation clusters, gpmetis's own (-engine=gpu, cpu
                   only) [default of -engine=gpu and cpu]

  -iptype=string
     The scheme that computes the initial partitioning of the coarsest graph.
     The possible values are:
        grow     - Bisections grown from a vertex by a greedy scheme
                   [default for -ptype=rb]
        random   - Bisections started from random halves
        metisrb  - METIS's recursive bisection [default for -ptype=kway]
        edge     - An edge separator's start, as ndmetis's (-engine=metis only)
        node     - A node separator's start, as ndmetis's (-engine=metis only)

  -rtype=string [applies only with -engine=metis]
     The refinement scheme of METIS. The gpu and cpu engines refine with Jet
     (then with volume refinement under -objtype=vol) and refuse this option.
     The possible values are:
        fm        - FM refinement [default for -ptype=rb]
        greedy    - Greedy k-way refinement [default for -ptype=kway]
        sep2sided - Two-sided separator refinement, as ndmetis's
        sep1sided - One-sided separator refinement, as ndmetis's

  -objtype=string [applies only when -ptype=kway]
     The objective that the partitioning minimizes.
     The possible values are:
        cut      - The edgecut [default]
        vol      - The total communication volume

  -no2hop
     Coarsening makes no 2-hop matchings when the standard matching fails to
     shrink the graph enough.

  -contig
     The parts should be contiguous. On a graph that is not connected the
     option is ignored, with a warning.

  -minconn [applies only when -ptype=kway]
     The partitioning also lowers the most parts any part is adjacent to
     (the maximum degree of the subdomain graph). Ignored, with a warning,
     when -ptype=rb.

  -tpwgts=filename
     A file of target weights, each line 'part[-part][:cons[-cons]] = fraction'
     (ids from 0, fractions below 1, '%' lines are comments); parts not listed
     share what is left equally. By default all parts get the same weight.

  -ufactor=int
     The most load imbalance allowed among the parts: x allows 1+x/1000.
     For -ptype=rb it bounds each bisection, for -ptype=kway the heaviest part
     against the average. The default is 1 for -ptype=rb (1.001) and 30 for
     -ptype=kway (1.03).

  -ubvec=string
     The most imbalance allowed per constraint, for multi-constraint graphs:
     one number greater than 1 for each constraint, separated by spaces, e.g.
     "1.02 1.2 1.35" for 2%, 20% and 35%. Takes priority over -ufactor.

  -niter=int
     The refinement iterations at each level of the uncoarsening. Default is 10.

  -ncuts=int
     The number of partitionings computed (at most 1000); the one of the best
     edgecut or communication volume is kept. Default is 1.

  -preset=string
     The quality setting.
     The possible values are:
        default  - One run (-ncuts runs) [default]
        strong   - At least 4 runs: combined by the gpu and cpu engines, the
                   best kept by METIS; a lower edgecut for more time

  -seed=int
     The seed of the random number generator. A negative value [default -1]
     selects the engine's fixed seed: a run repeats exactly.

  -engine=string
     The engine that partitions.
     The possible values are:
        auto     - gpu for graphs of at least 1,250,000 vertices plus edges when
                   CUDA is usable and the options allow, else metis [default]
        gpu      - gpmetis's multilevel partitioner on a CUDA GPU
        cpu      - The same partitioner in NumPy, giving the gpu engine's parts
        metis    - METIS, through pymetis, in this process

  -ondisk
     METIS's out-of-core coarsening: not supported (the graph is held in
     memory); an error.

  -nooutput
     No partition file is written.

  -o=filename, -output=filename
     The partition file. Default is graphfile.part.nparts (with -edgepart,
     graphfile.edgepart.nparts).

  -json=filename
     Also write the run's report (the summary's figures, options, timings) as
     JSON to this file.

  -symmetrize
     A graph that lists an edge in one direction only gets the missing
     reverse edges (and the larger weight both ways) instead of an error.

  -edgepart
     Partition the edges instead of the vertices (SPAC) and write the part of
     each edge to graphfile.edgepart.nparts.

  -dbglvl=int
     METIS's debug level; above 0 the summary also shows the time of each
     phase and level. Default is 0.

  -time
     The summary shows the time of each phase and level (-dbglvl=2 unless
     -dbglvl is given).

  -quiet
     Nothing is printed but errors and warnings.

  -version
     Prints the version.

  -help
     Prints this message."""
