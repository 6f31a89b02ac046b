"""Fusion: merge ops into kernels so that intermediates stop making HBM round trips.

Input: the operator graph, the program and a mode. Output: a partition of its ops into `Kernel`s,
in execution order.

- ``none``: one kernel per op.
- ``elementwise``: connected elementwise ops whose outputs have the same shape (one iteration
  space; broadcast operands included) become one kernel.
- ``epilogue``: as ``elementwise``, and elementwise consumers of a matmul, reduction or row-wise
  op with that op's output shape join its kernel (GEMM + bias + GELU as one kernel). Nothing that
  feeds the anchor op joins it (no prologue fusion), and a kernel holds at most one anchor.
- ``flash``: as ``epilogue``, then each attention chain matmul → softmax → matmul becomes one
  kernel (`passes/flash.py`; FlashAttention: the scores never reach HBM).

The pass (`FusionPass`) merges a producer's kernel with a consumer's kernel, edge by edge in
program order, whenever no rule in `RULES` forbids it, and sweeps again until nothing merges:
the result is a fixed point, so applying the pass to its own result changes nothing.
Views and custom kernels are fusion barriers. Its contract is checked by `verify_partition`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

import networkx as nx

from costlang.ir.kinds import same_dim
from costlang.passes.flash import fuse_attention
from costlang.passes.kernels import Kernel, in_execution_order, kernel_name, one_kernel_per_op
from costlang.passes.quotient import KernelDag
from costlang.passes.verify import verify_partition

__all__ = ["fuse", "FusionPass", "FUSIBLE_ANCHORS", "RULES", "why_not_merged"]

FUSIBLE_ANCHORS = ("matmul", "reduce", "rowwise")
#: a mode that extends another: `flash` is `epilogue` plus attention chains (passes/flash.py)
BASE_MODE = {"flash": "epilogue"}


@dataclass
class _Facts:
    """What the rules need to know of one kernel, kept up to date merge by merge (so judging a
    merge costs the size of what changes, not of the kernels: a 10,000-op chain stays linear)."""
    barrier: bool = False                                 # holds a custom kernel, a view or a collective
    anchors: list = field(default_factory=list)           # its non-elementwise kinds
    produced: set = field(default_factory=set)            # the tensors its ops compute
    anchor_inputs: set = field(default_factory=set)       # storages an anchor op reads
    view_inputs: set = field(default_factory=set)         # storages it reads through a view

    @staticmethod
    def of_op(G: nx.DiGraph, program, n: str) -> "_Facts":
        kind, node = G.nodes[n]["op"].kind, program.nodes[n]
        tensors = program.tensors
        return _Facts(kind in ("custom", "view", "collective"),
                      [] if kind == "elementwise" else [kind], {node.output},
                      set() if node.kind == "elementwise" else {tensors[t].storage for t in node.inputs},
                      {tensors[t].storage for t in node.inputs if tensors[t].storage != t})

    def absorb(self, other: "_Facts") -> None:
        self.barrier = self.barrier or other.barrier
        self.anchors += other.anchors
        for mine, theirs in ((self.produced, other.produced), (self.anchor_inputs, other.anchor_inputs),
                             (self.view_inputs, other.view_inputs)):
            mine |= theirs


@dataclass(frozen=True)
class _Merge:
    """A proposed merge: the producer's group, the consumer's group, and the context to judge it."""
    G: nx.DiGraph
    program: object
    mode: str
    producer: list                        # the producer kernel's ops (in no particular order)
    consumer: list
    dag: KernelDag                        # the whole partition before the merge, as a kernel graph
    facts: tuple                          # (producer's _Facts, consumer's _Facts)

    def reads_own(self, inputs: str) -> bool:
        """Whether a storage in either side's `inputs` facts is computed by either side."""
        pf, cf = self.facts
        return any(t in pf.produced or t in cf.produced
                   for side in self.facts for t in getattr(side, inputs))


def _crosses_repeat(m: _Merge) -> bool:
    # A repeated body is analysed once and its costs multiplied: a kernel joining its last op with
    # an op after the repeat (or before it) would run once, not once per iteration.
    return m.G.nodes[m.producer[0]]["op"].repeat != m.G.nodes[m.consumer[0]]["op"].repeat


def _custom_or_view(m: _Merge) -> bool:
    return m.facts[0].barrier or m.facts[1].barrier


def _anchors(m: _Merge) -> list[str]:
    return m.facts[0].anchors + m.facts[1].anchors


def _anchor_not_allowed(m: _Merge) -> bool:
    anchors = _anchors(m)
    return bool(anchors) and (m.mode != "epilogue" or len(anchors) > 1 or anchors[0] not in FUSIBLE_ANCHORS)


def _prologue(m: _Merge) -> bool:
    # An epilogue runs on the anchor's results; an op that feeds the anchor (a prologue) would
    # have to finish before the anchor starts, which one kernel launch does not give it.
    return m.reads_own("anchor_inputs")


def _other_space(m: _Merge) -> bool:
    # Every kernel already has one iteration space (singletons trivially; merges keep it), so one
    # op of each side stands for its kernel.
    p = m.program
    a, b = (p.tensors[p.nodes[side[0]].output].shape for side in (m.producer, m.consumer))
    return not (len(a) == len(b) and all(x == y or same_dim(x, y, p.bindings) for x, y in zip(a, b)))


def _reads_own_output_through_view(m: _Merge) -> bool:
    # A transposed or reshaped read of a tensor the kernel itself computes needs elements that
    # other threads produce: the tensor must go through memory, so the two sides stay apart.
    return m.reads_own("view_inputs")


def _closes_cycle(m: _Merge) -> bool:
    # Checked last. Merging two kernels joined through a third would make that third kernel
    # both run before and after the merged one.
    return m.dag.closes_cycle(m.dag.group(m.producer[0]), m.dag.group(m.consumer[0]))


# (reason, rule): a merge is made only when no rule holds. Ordered cheap to expensive.
RULES: tuple[tuple[str, Callable[[_Merge], bool]], ...] = (
    ("a repeated body is fused on its own: no kernel spans a repeat's boundary", _crosses_repeat),
    ("custom kernels and views are fusion barriers", _custom_or_view),
    ("only the epilogue mode fuses into a matmul, reduction or row-wise op, one per kernel",
     _anchor_not_allowed),
    ("nothing that feeds a matmul, reduction or row-wise op fuses into its kernel (no prologue)",
     _prologue),
    ("the ops' outputs have different shapes (different iteration spaces)", _other_space),
    ("the kernel would read a tensor it computes through a view", _reads_own_output_through_view),
    ("the merge would close a cycle in the kernel graph", _closes_cycle),
)


def why_not_merged(m: _Merge) -> Optional[str]:
    """The first rule that forbids the merge, or None when it may be made."""
    return next((reason for reason, rule in RULES if rule(m)), None)


@dataclass(frozen=True)
class FusionPass:
    """Fusion as a named pass with a contract.

    Before: `start` partitions the non-view ops of G (default: one kernel per op).
    After: a coarser partition in execution order; every non-view op is in exactly one kernel,
    FLOPs are unchanged, bytes never increase, the kernel graph is acyclic, and no two
    adjacent kernels may still merge. `verify_partition` checks the contract after every run.
    """
    mode: str
    name: str = "fusion"

    def apply(self, G: nx.DiGraph, program, start=None, costing=None) -> tuple[Kernel, ...]:
        kernels = start if start is not None else one_kernel_per_op(G)
        if self.mode != "none":
            groups = [k.ops for k in kernels]
            while _sweep(G, program, BASE_MODE.get(self.mode, self.mode), groups):
                pass
            if self.mode == "flash":
                groups = fuse_attention(G, program, groups)
            kernels = [Kernel(kernel_name(g), g) for g in groups]
        kernels = in_execution_order(G, kernels)
        verify_partition(G, program, kernels, self.mode, costing)
        return kernels


def fuse(G: nx.DiGraph, program, mode: str, start=None, costing=None) -> tuple[Kernel, ...]:
    """Partition the ops of `G` into kernels according to `mode` (see `FusionPass`); `costing`
    (`passes.costs.Costing`) keeps the kernel costs the verifier computes, for the caller.

    >>> from costlang.api import load_string
    >>> m = load_string("input x: fp32[8]\\na = cos(x)\\nb = cos(a)")
    >>> [k.name for k in fuse(m.graph, m.program, "elementwise")]
    ['a+b']
    """
    return FusionPass(mode).apply(G, program, start, costing)


def _sweep(G: nx.DiGraph, program, mode: str, groups: list) -> bool:
    """One pass over the edges in program order, merging where allowed; True if any merged.

    The kernel graph is kept up to date merge by merge (`KernelDag`), so a sweep costs about one
    step per edge rather than a quotient graph per proposal."""
    index = {n: i for i, n in enumerate(G.nodes)}
    dag = KernelDag(G, groups, index)
    facts = {}
    for k, ops in dag.ops.items():
        facts[k] = _Facts.of_op(G, program, ops[0])
        for n in ops[1:]:
            facts[k].absorb(_Facts.of_op(G, program, n))
    merged_any = False
    for u, v in sorted(G.edges, key=lambda e: (index[e[1]], index[e[0]])):
        a, b = dag.group(u), dag.group(v)
        if a is None or b is None or a == b:
            continue  # a view on one side, or already together
        if why_not_merged(_Merge(G, program, mode, dag.ops[a], dag.ops[b], dag, (facts[a], facts[b]))) is None:
            keep, gone = dag.merge(a, b)
            facts[keep].absorb(facts.pop(gone))
            merged_any = True
    groups[:] = dag.groups()
    return merged_any
