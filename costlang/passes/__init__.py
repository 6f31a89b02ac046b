"""Passes over the operator graph: partitions of its ops into kernels (fusion) and their verifier.

Input: the operator graph (`ir.graph`) and the `Program`. Output: tuples of `Kernel`s.
"""
from costlang.passes.fusion import FusionPass, fuse
from costlang.passes.kernels import Kernel, kernel_graph, one_kernel_per_op
from costlang.passes.verify import PartitionError, verify_partition

__all__ = ["FusionPass", "Kernel", "PartitionError", "fuse", "kernel_graph", "one_kernel_per_op",
           "verify_partition"]
