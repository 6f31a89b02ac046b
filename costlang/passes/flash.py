"""FlashAttention as fusion: attention chains become one kernel, so the N×N scores never reach HBM.

Input: the operator graph, the program and a partition (the `epilogue` fusion's). Output: a
coarser partition in which every attention chain

    S = matmul(Q, Kᵀ) → [elementwise]* → softmax → [elementwise]* → O = matmul(P, V)

is one kernel (with whatever epilogue the kernels it merges already had). A chain qualifies when
each tensor between its first matmul and its last is read by the next op of the chain only and
is not a program output, so nothing but the chain needs it in memory. How that kernel's HBM
traffic follows from its tiling (Dao et al. 2022, Algorithm 1) is `analysis.reuse`'s business;
this pass only decides what one kernel is. The chain patterns are data (`CHAIN`).

In a training step the attention's backward is one kernel too (Dao et al. 2022, Algorithm 2):
the backward recomputes the scores and probabilities (the front end's recompute copies S' = Q·Kᵀ,
[elementwise]*, P' = softmax, `OpNode.recompute`) and the group

    S' → P' → { dV = P'ᵀ·dO ; dP = dO·Vᵀ → dS = grad_softmax(P', dP) → [elementwise]* →
                dQ = dS·K , dKᵀ = Qᵀ·dS }

is one kernel when P', dP, dS and the tensors between are read inside it only: it reads Q, K, V,
dO and writes dQ, dK, dV; S', P', dP and dS stay on chip.
"""
from __future__ import annotations

from typing import Optional

import networkx as nx

from costlang.ir.graph import consumers_of_storage, program_outputs

__all__ = ["CHAIN", "attention_chains", "attention_backwards", "fuse_attention"]

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


def attention_backwards(G: nx.DiGraph, program) -> list[tuple[str, ...]]:
    """Every attention backward of a training step (see the module docstring), as its ops."""
    consumers, outputs = consumers_of_storage(program), program_outputs(program)
    nodes, out = program.nodes, []
    producer = {n.output: n for n in nodes.values() if n.output is not None}

    def only(t, readers) -> bool:
        s = program.tensors[t].storage
        return s not in outputs and consumers.get(s, set()) <= set(readers)

    for p in nodes.values():
        if not (p.recompute and p.kind == "rowwise" and p.op.name == "softmax" and p.name in G.nodes):
            continue
        chain, m = [p.name], producer.get(program.tensors[p.inputs[0]].storage)
        while m is not None and m.recompute and m.kind == "elementwise" and only(m.output, chain[:1]):
            chain.insert(0, m.name)
            m = producer.get(program.tensors[m.inputs[0]].storage)
        if m is None or not m.recompute or m.kind != "matmul" or not only(m.output, chain[:1]):
            continue
        chain.insert(0, m.name)
        readers = consumers.get(p.output, set())
        grads = [r for r in readers if nodes[r].kind == "rowwise" and nodes[r].op.name == "grad_softmax"]
        dv = [r for r in readers if nodes[r].kind == "matmul"]
        if len(grads) != 1 or len(dv) != 1 or len(readers) != 2:
            continue
        g = nodes[grads[0]]
        dp = producer.get(program.tensors[g.inputs[1]].storage) if len(g.inputs) > 1 else None
        if dp is None or dp.kind != "matmul" or not only(dp.output, [g.name]):
            continue
        rest, frontier, ok = [], [g.output], True
        while frontier and ok:
            t = frontier.pop()
            for r in sorted(consumers.get(t, set())):
                n = nodes[r]
                if n.kind == "elementwise" and n.output is not None and r not in rest:
                    rest.append(r)
                    frontier.append(n.output)
                elif n.kind == "matmul":
                    rest.append(r) if r not in rest else None
                else:
                    ok = False
        if not ok or sum(nodes[r].kind == "matmul" for r in rest) != 2 or \
                not only(g.output, [r for r in rest]) or program.tensors[g.output].storage in outputs:
            continue
        out.append(tuple(chain + [dp.name, dv[0], g.name] + rest))
    return out


def fuse_attention(G: nx.DiGraph, program, kernels) -> list[tuple[str, ...]]:
    """The partition `kernels` (tuples of ops) with each attention chain's kernels merged, and in
    a training step each attention backward's."""
    index = {n: i for i, n in enumerate(G.nodes)}
    owner = {op: i for i, group in enumerate(kernels) for op in group}
    groups = {i: tuple(g) for i, g in enumerate(kernels)}
    for chain in attention_chains(G, program) + attention_backwards(G, program):
        parts = sorted({owner[op] for op in chain})
        merged = tuple(sorted(sum((groups.pop(p) for p in parts), ()), key=index.__getitem__))
        groups[parts[0]] = merged
        for op in merged:
            owner[op] = parts[0]
    return list(groups.values())
