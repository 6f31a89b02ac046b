"""The operator graph: a networkx DiGraph whose nodes are op applications and whose edges are tensors.

Input: a resolved `Program`. Output: `nx.DiGraph` with one node per `OpNode` (attribute `op`)
and an edge producer → consumer for every tensor passed between them (attribute `tensors`).
Views are nodes too; byte accounting follows `Tensor.storage` through them.
"""
from __future__ import annotations

from typing import Optional

import networkx as nx

from costlang.ir.program import Program

__all__ = ["operator_graph", "program_outputs", "consumers_of_storage", "storage_of", "ordered_topological_sort"]


def operator_graph(program: Program) -> nx.DiGraph:
    """The DAG of op applications, in definition order.

    >>> from costlang.api import load_string
    >>> p = load_string("input x: fp16[8]\\ny = relu(x)\\nz = exp(y)").program
    >>> G = operator_graph(p)
    >>> list(G.edges(data="tensors"))
    [('y', 'z', ('y',))]
    """
    G = nx.DiGraph()
    producer = {n.output: n.name for n in program.nodes.values() if n.output}
    for node in program.nodes.values():
        G.add_node(node.name, op=node)
    for node in program.nodes.values():
        for t in node.inputs:
            if t in producer:
                src = producer[t]
                names = G.edges[src, node.name]["tensors"] if G.has_edge(src, node.name) else ()
                G.add_edge(src, node.name, tensors=names + ((t,) if t not in names else ()))
    return G


def storage_of(program: Program, tensor: str) -> str:
    return program.tensors[tensor].storage


def consumers_of_storage(program: Program) -> dict[str, set[str]]:
    """Storage tensor → the non-view nodes that read it (directly or through views)."""
    out: dict[str, set[str]] = {}
    tensors = program.tensors
    for node in program.nodes.values():
        if node.kind == "view":
            continue
        for t in node.inputs:
            s = tensors[t].storage
            if s in out:
                out[s].add(node.name)
            else:
                out[s] = {node.name}
    return out


def program_outputs(program: Program, read: Optional[dict] = None) -> set[str]:
    """Storages the program must leave in memory: marked outputs, and computed tensors no op reads
    (`read`: the program's `consumers_of_storage`, found when not given)."""
    read = consumers_of_storage(program) if read is None else read
    outs = {storage_of(program, t) for t in program.outputs}
    for node in program.nodes.values():
        if node.output and node.kind != "view" and node.output not in read and not node.recompute:
            # (a recomputed result nothing reads is scratch: the backward needs only the others)
            viewed = any(program.tensors[t].storage == node.output and t in program.outputs
                         for t in program.tensors)
            if not viewed:
                outs.add(node.output)
    return outs


def ordered_topological_sort(nodes, edges, key) -> list:
    """`nx.lexicographical_topological_sort` of the graph (nodes, edges) by `key`, as a list.
    When the key already increases along every edge (a program's ops in definition order, almost
    always), that order is the nodes sorted by key (ties in the nodes' order, as networkx breaks
    them), which costs far less than building a graph and running its heap.

    >>> ordered_topological_sort("bca", [("b", "a"), ("c", "a")], key={"b": 0, "c": 1, "a": 2}.__getitem__)
    ['b', 'c', 'a']
    >>> ordered_topological_sort("abc", [("b", "a"), ("c", "a")], key={"a": 0, "b": 1, "c": 2}.__getitem__)
    ['b', 'c', 'a']
    """
    nodes, edges = list(nodes), list(edges)
    if all(key(u) < key(v) for u, v in edges):
        return sorted(nodes, key=key)
    G = nx.DiGraph()
    G.add_nodes_from(nodes)
    G.add_edges_from(edges)
    return list(nx.lexicographical_topological_sort(G, key=key))
