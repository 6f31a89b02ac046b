"""Fusion: merge ops into kernels so that intermediates stop making HBM round trips.

Input: the operator graph and a mode. Output: a partition of its ops into `Kernel`s.

- ``none``: one kernel per op.
- ``elementwise``: connected elementwise ops whose outputs have the same shape (one iteration
  space; broadcast operands included) become one kernel.
- ``epilogue``: as ``elementwise``, and elementwise consumers of a matmul, reduction or row-wise
  op with that op's output shape join its kernel (GEMM + bias + GELU as one kernel).

Contract: every op (but views, which are not kernels) is in exactly one kernel; FLOPs are
unchanged; the kernel graph stays acyclic (a merge that would close a cycle is not made).
Views and custom kernels are fusion barriers.
"""
from __future__ import annotations

import networkx as nx

from ..ir.kinds import same_dim
from .kernels import Kernel, kernel_graph, one_kernel_per_op

__all__ = ["fuse", "FUSIBLE_ANCHORS"]

FUSIBLE_ANCHORS = ("matmul", "reduce", "rowwise")


def fuse(G: nx.DiGraph, program, mode: str) -> tuple[Kernel, ...]:
    """Partition the ops of `G` into kernels according to `mode`."""
    kernels = one_kernel_per_op(G)
    if mode == "none":
        return kernels
    group = {k.name: [k.name] for k in kernels}   # group id → ops
    owner = {k.name: k.name for k in kernels}     # op → group id
    order = [k.name for k in kernels]
    for u, v in sorted(G.edges, key=lambda e: (order.index(e[1]) if e[1] in order else -1,
                                               order.index(e[0]) if e[0] in order else -1)):
        if u not in owner or v not in owner or owner[u] == owner[v]:
            continue
        a, b = owner[u], owner[v]
        if not _may_join(G, program, group[a], group[b], u, v, mode):
            continue
        merged = group[a] + group[b]
        trial = _partition(group, order, a, b, merged)
        if nx.is_directed_acyclic_graph(kernel_graph(G, trial)):
            group[a] = merged
            del group[b]
            for op in merged:
                owner[op] = a
    return _partition(group, order)


def _partition(group, order, a=None, b=None, merged=None) -> tuple[Kernel, ...]:
    parts = dict(group)
    if a is not None:
        parts[a] = merged
        del parts[b]
    out = []
    for gid, ops in parts.items():
        ops = sorted(ops, key=order.index)
        out.append(Kernel(_kernel_name(ops), tuple(ops)))
    return tuple(sorted(out, key=lambda k: order.index(k.ops[-1])))


def _kernel_name(ops) -> str:
    return ops[0] if len(ops) == 1 else "+".join(ops) if len(ops) <= 4 else f"{ops[0]}+…+{ops[-1]}"


def _may_join(G, program, ops_a, ops_b, u, v, mode) -> bool:
    """May the group holding producer u and the group holding consumer v become one kernel?"""
    kinds_a = [G.nodes[n]["op"].kind for n in ops_a]
    kinds_b = [G.nodes[n]["op"].kind for n in ops_b]
    if any(k in ("custom", "view") for k in kinds_a + kinds_b):
        return False
    if any(k != "elementwise" for k in kinds_b):
        return False  # nothing fuses in front of an anchor (no prologue fusion)
    anchors = [k for k in kinds_a if k != "elementwise"]
    if anchors and (mode != "epilogue" or len(anchors) > 1 or anchors[0] not in FUSIBLE_ANCHORS):
        return False
    return _same_space(program, ops_a + ops_b)


def _same_space(program, ops) -> bool:
    shapes = [program.tensors[program.nodes[n].output].shape for n in ops]
    first = shapes[0]
    return all(len(s) == len(first) and all(same_dim(x, y, program.bindings) for x, y in zip(s, first))
               for s in shapes[1:])
