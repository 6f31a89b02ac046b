"""The partition verifier: the contract every fusion pass must keep, checked after it runs.

Input: the operator graph, the program, a partition of its ops into kernels and the mode that
made it. Output: nothing, or `PartitionError`. A violation is a bug in costlang, not a mistake
in the `.cost` file, so it is not a `CostlangError` (the CLI reports it as an internal error).

Checked: every non-view op is in exactly one kernel and no view is in any; no kernel and no op is
named like a block instance or repeat (a name means one thing: `t_kernel(decode)` on an instance
is the instance's totals, never its last kernel's); the kernel graph is
acyclic; FLOPs equal the unfused FLOPs; the bytes never exceed the unfused bytes (the fused
reads and writes are a sub-multiset of the unfused ones, so this holds for every value of the
free symbols); and every kernel obeys its mode (`none`: one op; `elementwise`: fused kernels are
elementwise only; `epilogue`: at most one matmul, reduction or row-wise op per fused kernel,
and none of the kernel's other ops feeds it; `flash`: as `epilogue`, or whole attention chains (or attention backwards)
with an elementwise epilogue).
"""
from __future__ import annotations

from collections import Counter
from typing import Optional

import networkx as nx
import sympy

from costlang.passes.costs import Costing, grouped_sum
from costlang.passes.flash import attention_backwards, attention_chains
from costlang.passes.kernels import kernel_graph, one_kernel_per_op

__all__ = ["PartitionError", "verify_partition"]

_ANCHORS = ("matmul", "reduce", "rowwise")


class PartitionError(RuntimeError):
    """A fusion pass broke its contract (a bug in costlang, not in the input)."""


def verify_partition(G: nx.DiGraph, program, kernels, mode: str, costing: Optional[Costing] = None) -> None:
    """Raise `PartitionError` unless `kernels` is a valid partition of G's ops under `mode`
    (`costing`: the program's kernel costs, to share them with the caller)."""
    _check_cover(G, kernels)
    _check_names(program, kernels)
    _check_acyclic(G, kernels)
    _check_mode(G, program, kernels, mode)
    costing = costing or Costing(program)
    unfused, fused = costing.partition(one_kernel_per_op(G)), costing.partition(kernels)
    _check_flops(unfused, fused)
    _check_bytes(unfused, fused)


def _check_names(program, kernels) -> None:
    """No kernel, and no op in one, has the name of a block instance or repeat."""
    instances = set(program.instances) | set(program.repeats)
    clash = sorted({name for k in kernels for name in (k.name, *k.ops) if name in instances})
    if clash:
        raise PartitionError(f"kernels named like block instances: {clash}")


def _check_cover(G, kernels) -> None:
    placed = Counter(op for k in kernels for op in k.ops)
    ops = {n for n in G.nodes if G.nodes[n]["op"].kind != "view"}
    twice = sorted(op for op, n in placed.items() if n > 1)
    missing = sorted(ops - set(placed))
    stray = sorted(set(placed) - ops)
    if twice or missing or stray or any(not k.ops for k in kernels):
        raise PartitionError(f"not a partition of the ops: in two kernels {twice}, in none {missing}, "
                             f"not ops (or views) {stray}")
    names = Counter(k.name for k in kernels)
    if any(n > 1 for n in names.values()):
        raise PartitionError(f"two kernels share a name: {sorted(k for k, n in names.items() if n > 1)}")


def _check_acyclic(G, kernels) -> None:
    Q = kernel_graph(G, kernels)
    if not nx.is_directed_acyclic_graph(Q):
        raise PartitionError(f"the kernel graph has a cycle: {nx.find_cycle(Q)}")
    position = {k.name: i for i, k in enumerate(kernels)}
    late = [(u, v) for u, v in Q.edges if position[u] > position[v]]
    if late:
        raise PartitionError(f"kernels are not in execution order: {late}")


def _check_mode(G, program, kernels, mode: str) -> None:
    order = {n: i for i, n in enumerate(nx.topological_sort(G))}
    chains = {}
    if mode == "flash":
        chains = {op: chain for chain in attention_chains(G, program) + attention_backwards(G, program)
                  for op in chain}
    for k in kernels:
        kinds = [G.nodes[n]["op"].kind for n in k.ops]
        if len(kinds) == 1:
            continue
        if mode == "flash" and any(op in chains for op in k.ops):
            _check_flash_kernel(G, k, chains)
            continue
        anchors = [x for x in kinds if x != "elementwise"]
        ok = {"none": False, "elementwise": not anchors,
              "epilogue": len(anchors) <= 1 and all(x in _ANCHORS for x in anchors),
              "flash": len(anchors) <= 1 and all(x in _ANCHORS for x in anchors)}.get(mode, False)
        if not ok:
            raise PartitionError(f"kernel {k.name!r} mixes {kinds}, which fusion mode {mode!r} forbids")
        fed = [n for n in k.ops if G.nodes[n]["op"].kind != "elementwise" and _fed_from(G, order, n, k.ops)]
        if fed:
            raise PartitionError(f"kernel {k.name!r} computes inputs of its anchor {fed[0]!r} (a prologue)")


def _fed_from(G, order: dict, n: str, ops) -> bool:
    """Whether one of `ops` is an ancestor of n. The backward search stops at nodes earlier in the
    topological order than the earliest of `ops` (no path from them can start at one of `ops`), so
    it visits the window between them and n, not all of n's ancestors."""
    members, first = set(ops) - {n}, min(order[o] for o in ops)
    seen, stack = {n}, [n]
    while stack:
        for p in G.predecessors(stack.pop()):
            if p in members:
                return True
            if p not in seen and order[p] > first:
                seen.add(p)
                stack.append(p)
    return False


def _check_flash_kernel(G, k, chains) -> None:
    """A flash kernel holds whole attention chains and, beyond them, only elementwise ops."""
    inside = {op for op in k.ops if op in chains}
    whole = all(set(chains[op]) <= set(k.ops) for op in inside)
    others = [op for op in k.ops if op not in inside and G.nodes[op]["op"].kind != "elementwise"]
    if not whole or others:
        raise PartitionError(f"kernel {k.name!r} is not an attention chain and its epilogue")


def _check_flops(unfused, fused) -> None:
    before = grouped_sum(c.flops for c in unfused)
    after = grouped_sum(c.flops for c in fused)
    if sympy.expand(after - before) != 0:
        raise PartitionError(f"fusion changed the FLOPs: {before} → {after}")


def _check_bytes(unfused, fused) -> None:
    def traffic(costs):
        return Counter((d, t.tensor, t.bytes) for c in costs
                       for d, ts in (("read", c.reads), ("write", c.writes)) for t in ts)
    extra = traffic(fused) - traffic(unfused)
    if extra:
        raise PartitionError(f"fusion added memory traffic the unfused program does not have: "
                             f"{sorted(map(str, extra))}")
