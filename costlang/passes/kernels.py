"""Kernels: a partition of the operator graph's ops, each part launched as one GPU kernel.

Input: a `Program` and its operator graph. Output: a tuple of `Kernel`s in execution order.
The unfused partition (`one_kernel_per_op`) is the starting point of every fusion pass;
views are not kernels.
"""
from __future__ import annotations

from dataclasses import dataclass

import networkx as nx

from costlang.ir.graph import ordered_topological_sort

__all__ = ["Kernel", "one_kernel_per_op", "kernel_graph", "in_execution_order", "kernel_name"]


@dataclass(frozen=True)
class Kernel:
    name: str
    ops: tuple[str, ...]  # op-node names, in topological order


def one_kernel_per_op(G: nx.DiGraph) -> tuple[Kernel, ...]:
    """The unfused partition: one kernel per op that is not a view, in definition order.

    >>> from costlang.api import load_string
    >>> G = load_string("input x: fp16[8]\\ny = transpose(x)\\nz = exp(y)").graph
    >>> [k.name for k in one_kernel_per_op(G)]
    ['z']
    """
    return tuple(Kernel(n, (n,)) for n in ordered_topological_sort(G.nodes, G.edges, key=_order(G))
                 if G.nodes[n]["op"].kind != "view")


def _order(G):
    index = {n: i for i, n in enumerate(G.nodes)}
    return lambda n: index[n]


def kernel_name(ops) -> str:
    """A kernel is named after its ops: `a`, `a+b+c`, or `a+…+z` for more than four."""
    return ops[0] if len(ops) == 1 else "+".join(ops) if len(ops) <= 4 else f"{ops[0]}+…+{ops[-1]}"


def kernel_graph(G: nx.DiGraph, kernels) -> nx.DiGraph:
    """The quotient of the operator graph by the kernels (views contracted into their consumers)."""
    owner = {op: k.name for k in kernels for op in k.ops}
    Q = nx.DiGraph()
    Q.add_nodes_from(k.name for k in kernels)
    for u, v in G.edges:
        a, b = _owner(G, owner, u, upstream=True), owner.get(v)
        for src in a:
            if b is not None and src != b:
                Q.add_edge(src, b)
    return Q


def in_execution_order(G: nx.DiGraph, kernels) -> tuple[Kernel, ...]:
    """The kernels topologically sorted by the kernel graph, ties broken by definition order.

    Sorting by any one op's position is not enough: a kernel {a, d} must run before a kernel {b}
    that reads a, even though d comes after b in the file.
    """
    index = {n: i for i, n in enumerate(G.nodes)}
    by_name = {k.name: k for k in kernels}
    first = {k.name: min(index[op] for op in k.ops) for k in kernels}
    Q = kernel_graph(G, kernels)
    order = ordered_topological_sort(Q.nodes, Q.edges, key=first.__getitem__)
    return tuple(by_name[name] for name in order)


def _owner(G, owner, n, upstream):
    if n in owner:
        return {owner[n]}
    return set().union(*[_owner(G, owner, p, upstream) for p in G.predecessors(n)]) if upstream else set()
