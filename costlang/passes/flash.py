"""FlashAttention as fusion: attention chains become one kernel, so the N×N scores never reach HBM.

Input: the operator graph, the program and a partition (the `epilogue` fusion's). Output: a
coarser partition in which every attention chain

    S = matmul(Q, Kᵀ) → [elementwise]* → softmax → [elementwise]* → O = matmul(P, V)

is one kernel (with whatever epilogue the kernels it merges already had). A chain qualifies when
each tensor between its first matmul and its last is read by the next op of the chain only and
is not a program output, so nothing but the chain needs it in memory. How that kernel's HBM
traffic follows from its tiling (Dao et al. 2022, Algorithm 1) is `analysis.reuse`'s business;
this pass only decides what one kernel is. The chain patterns are data (`CHAIN`).
"""
from __future__ import annotations

from typing import Optional

import networkx as nx

from costlang.ir.graph import consumers_of_storage, program_outputs

__all__ = ["CHAIN", "attention_chains", "fuse_attention"]

#: the chain read backwards from its last op: (kind, op name or None for any, repeatable)
CHAIN = (("matmul", None, False), ("elementwise", None, True), ("rowwise", "softmax", False),
         ("elementwise", None, True), ("matmul", None, False))


def attention_chains(G: nx.DiGraph, program) -> list[tuple[str, ...]]:
    """Every attention chain of the program, as its ops in program order (linear in the ops)."""
    consumers, outputs = consumers_of_storage(program), program_outputs(program)
    producers = {n.output: n for n in program.nodes.values() if n.output}  # a kernel's name need not be its tensor's
    chains = []
    for name in G.nodes:
        chain = _chain_ending_at(program, name, consumers, outputs, producers)
        if chain is not None:
            chains.append(chain)
    return chains


def _chain_ending_at(program, last: str, consumers, outputs, producers) -> Optional[tuple[str, ...]]:
    pattern, node, ops, i = tuple(reversed(CHAIN)), program.nodes[last], [], 0
    while node is not None:
        kind, op, repeat = pattern[i]
        if node.kind == kind and (op is None or node.op.name == op):
            ops.append(node.name)
            if i == len(pattern) - 1:
                return tuple(reversed(ops))
            i += 0 if repeat else 1
            node = _chain_input(program, node, consumers, outputs, producers)
        elif repeat:
            i += 1
        else:
            return None
    return None


def _chain_input(program, node, consumers, outputs, producers):
    """The op that produces `node`'s chain operand (the first input; any input of an elementwise
    op), provided only `node` reads it and it is not a program output."""
    for t in node.inputs if node.kind == "elementwise" else node.inputs[:1]:
        storage = program.tensors[t].storage
        producer = producers.get(storage)
        if producer is not None and producer.output == storage and storage not in outputs \
                and consumers.get(storage, set()) == {node.name} and producer.kind != "view":
            return producer
    return None


def fuse_attention(G: nx.DiGraph, program, kernels) -> list[tuple[str, ...]]:
    """The partition `kernels` (tuples of ops) with each attention chain's kernels merged."""
    index = {n: i for i, n in enumerate(G.nodes)}
    owner = {op: i for i, group in enumerate(kernels) for op in group}
    groups = {i: tuple(g) for i, g in enumerate(kernels)}
    for chain in attention_chains(G, program):
        parts = sorted({owner[op] for op in chain})
        merged = tuple(sorted(sum((groups.pop(p) for p in parts), ()), key=index.__getitem__))
        groups[parts[0]] = merged
        for op in merged:
            owner[op] = parts[0]
    return list(groups.values())
