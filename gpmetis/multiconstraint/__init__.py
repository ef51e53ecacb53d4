"""Multi-constraint partitioning (ncon >= 2) for the gpu and cpu engines.

Each level keeps its vertex weights as an (ncon, n) array beside a single "guide" weight that
lets the single-constraint coarsening keep every constraint within METIS's cluster limit; the
coarsest graph is split by METIS trials (``initial``): its own multi-constraint k-way scheme
(``metis_ncon``) or its recursive bisection of scalarised weights, the best of them repaired and
refined by the multi-constraint refinement (``refinement``), which then refines every level on
the engine's backend (on the GPU, a level's loop in one kernel: ``refinement_device``).
``recursive`` runs -ptype=rb on these pieces; -contig, -minconn and -objtype=vol are the
single-constraint modes of ``gpmetis/refinement/`` given the (ncon, n) weights.
"""
