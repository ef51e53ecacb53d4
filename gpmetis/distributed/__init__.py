"""Distributed runs: several ranks (MPI processes, one per GPU) holding a graph in pieces."""

from gpmetis.distributed.comm import Comm
from gpmetis.distributed.dgraph import DistGraph
from gpmetis.distributed.partition import DistResult, partition_distributed

__all__ = ["Comm", "DistGraph", "DistResult", "partition_distributed"]
