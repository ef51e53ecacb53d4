"""Multi-constraint partitioning (ncon >= 2) for the gpu and cpu engines.

Each level keeps its vertex weights as an (ncon, n) array beside a single "guide" weight that
lets the single-constraint coarsening keep every constraint within METIS's cluster limit; the
coarsest graph is split by a bisection tree balanced per constraint (``bisection``) and by METIS
recursive-bisection trials on scalarised weights (``initial``), each repaired and refined by
the multi-constraint refinement (``refinement``), which then refines every level on the
engine's backend (on the GPU, a level's loop in one kernel: ``refinement_device``).
"""
