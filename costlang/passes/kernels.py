"""Kernels: a partition of the operator graph's ops, each part launched as one GPU kernel.

Input: a `Program` and its operator graph. Output: a tuple of `Kernel`s in execution order.
The unfused partition (`one_kernel_per_op`) is the starting point of every fusion pass;
views are not kernels.
"""
from __future__ import annotations

from dataclasses import dataclass

import networkx as nx

__all__ = ["Kernel", "one_kernel_per_op", "kernel_graph"]


@dataclass(frozen=True)
class Kernel:
    name: str
    ops: tuple[str, ...]  # op-node names, in topological order


def one_kernel_per_op(G: nx.DiGraph) -> tuple[Kernel, ...]:
    return tuple(Kernel(n, (n,)) for n in nx.lexicographical_topological_sort(G, key=_order(G))
                 if G.nodes[n]["op"].kind != "view")


def _order(G):
    index = {n: i for i, n in enumerate(G.nodes)}
    return lambda n: index[n]


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


def _owner(G, owner, n, upstream):
    if n in owner:
        return {owner[n]}
    return set().union(*[_owner(G, owner, p, upstream) for p in G.predecessors(n)]) if upstream else set()
