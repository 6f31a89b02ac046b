"""Work shared between analyses of one program: the scenarios of a `compare`, sweeps' baselines.

Input: a program, its hardware and fusion mode. Output: its kernels and their modelled costs
(`structure`), and kernel verdicts (`decide_bound`), each computed once per distinct input.

A scenario that only gives dims or params other values keeps the same op nodes and tensors (the
program is copied with the same objects), so the partition into kernels and each kernel's FLOPs
and bytes, which are expressions in the symbols, are the same: only the values substituted into
them differ. Fusion consults the bindings only to compare two dims that are written differently
(`same_dim`), so those dims' values are part of the key. Verdicts depend on the bound values of
T_compute, T_memory and the launch time, and a model's kernels repeat the same few: they are
remembered per (expressions, bindings). Both tables are bounded and hold immutable results.
"""
from __future__ import annotations

from typing import Optional

import sympy

from costlang.errors import Span
from costlang.ir.graph import operator_graph
from costlang.passes.fusion import fuse
from costlang.passes.costs import Costing
from costlang.analysis.memo import remembered
from costlang.analysis.reuse import model_traffic
from costlang.analysis.verdict import Verdict, decide

__all__ = ["structure", "decide_bound", "bindings_key", "BindingsKey", "clear"]

_STRUCTURES: dict = {}
_GRAPHS: dict = {}  # the operator graph and the compared dims' symbols, per (nodes, tensors)
_VERDICTS: dict = {}
_LIMIT = 32


def _compared_dims(program, G) -> set:
    """Symbols of the dims fusion may compare that are written differently (same_dim's inputs)."""
    syms: set = set()
    for u, v in G.edges:
        a = program.tensors[program.nodes[u].output].shape if program.nodes[u].output else ()
        b = program.tensors[program.nodes[v].output].shape if program.nodes[v].output else ()
        for x, y in zip(a, b):
            if x != y:
                syms |= x.free_symbols | y.free_symbols
    return syms


def structure(program, hw, mode: str):
    """(operator graph, kernels, modelled KernelCosts) of the program on hw under mode; shared by
    every analysis whose ops, tensors, hardware and compared dims are the same."""
    nodes, tensors = tuple(program.nodes.values()), tuple(program.tensors.values())
    # identities, not equality: hashing every node would cost as much as the work saved; the
    # tables keep the objects alive, so an id is not reused while its entry exists
    ids = (tuple(map(id, nodes)), tuple(map(id, tensors)))
    graph = _GRAPHS.get(ids)
    if graph is None:
        G = operator_graph(program)
        graph = (nodes, tensors, G, _compared_dims(program, G))
        if len(_GRAPHS) >= _LIMIT:
            _GRAPHS.pop(next(iter(_GRAPHS)))
        _GRAPHS[ids] = graph
    G, syms = graph[2], graph[3]
    compared = tuple(sorted(((s, program.bindings.get(s)) for s in syms), key=str))
    key = (mode, id(hw), *ids, compared)
    found = _STRUCTURES.get(key)
    if found is not None:
        return found[1:]
    costing = Costing(program)  # the verifier's costs of the fused kernels are the analysis's
    kernels = fuse(G, program, mode, costing=costing)
    costs = tuple(model_traffic(program, hw, k.ops, costing.of(k.ops)) for k in kernels)
    if len(_STRUCTURES) >= _LIMIT:
        _STRUCTURES.pop(next(iter(_STRUCTURES)))
    _STRUCTURES[key] = ((hw, nodes, tensors), G, kernels, costs)
    return G, kernels, costs


class BindingsKey:
    """The bindings as a key of the tables (`_VERDICTS`, `memo._BOUND`): their sorted items, hashed
    once. A tuple would hash every symbol and value again at each lookup, a few hundred per
    analysis; one analysis passes the same key object to every lookup, which a dict compares by
    identity first."""
    __slots__ = ("items", "_hash")

    def __init__(self, items: tuple):
        self.items, self._hash = items, hash(items)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other) -> bool:
        return self is other or (isinstance(other, BindingsKey) and self._hash == other._hash
                                 and self.items == other.items)

    def __repr__(self) -> str:
        return f"BindingsKey({self.items!r})"


def bindings_key(bindings: dict) -> BindingsKey:
    return BindingsKey(tuple(sorted(bindings.items(), key=lambda kv: str(kv[0]))))


def decide_bound(t_compute, t_memory, launch, bindings: dict, key,
                 span: Optional[Span] = None) -> Verdict:
    """`verdict.decide` on the bound times, once per (expressions, bindings)."""
    return remembered(_VERDICTS, (t_compute, t_memory, launch, key),
                      lambda: decide(t_compute.xreplace(bindings), t_memory.xreplace(bindings),
                                     launch.xreplace(bindings), span), 4096)


def clear() -> None:
    _STRUCTURES.clear()
    _GRAPHS.clear()
    _VERDICTS.clear()
