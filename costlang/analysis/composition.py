"""Blocks and repeats in the results: per-instance figures, repeated bodies, fusion across blocks.

Input: an `Analysis`. Output: data. `repeats(a)` gives, for each `repeat`, its body's figures
once per iteration and in total (× its count); `instance_totals(a, name)` sums the kernels of a
block instance or repeat, each × its count (what `flops(layer)` answers); `crossings(a)` names
the kernels whose ops come from more than one block instance (fusion saw through a block's
boundary); `weight_bytes(a, name)` is the resident weights of the program or of one instance
(`roles=("cache",)`: its caches). An instance that shares another's weights (`{ shares = other }`)
counts them as its own; the program counts each shared weight once. Nothing here unrolls a
repeat: its body was analysed once.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import sympy


__all__ = ["Figures", "RepeatResult", "repeats", "instance_kernels", "instance_totals", "crossings",
           "weight_bytes", "kernel_scopes", "instance_names"]


@dataclass(frozen=True)
class Figures:
    flops: sympy.Expr
    bytes: sympy.Expr
    t_kernel: sympy.Expr
    launches: sympy.Expr
    weight_bytes: sympy.Expr
    cache_bytes: sympy.Expr = sympy.Integer(0)


@dataclass(frozen=True)
class RepeatResult:
    """One `name = repeat(count) block(...)`: its body's kernels, figures per iteration and in total."""
    name: str
    block: str
    count: sympy.Expr
    kernels: tuple[str, ...]
    per_iteration: Figures
    total: Figures


def _inside(name: str, scope: str) -> bool:
    return scope == name or scope.startswith(name + ".")


def instance_kernels(a, name: str) -> list:
    """The kernels whose ops belong to block instance (or repeat) `name`, nested ones included."""
    nodes = a.program.nodes
    return [k for k in a.kernels if any(_inside(name, nodes[op].scope) for op in k.ops)]


def weight_bytes(a, name: Optional[str] = None, per_iteration: bool = False,
                 roles=("weight",), elements: bool = False) -> sympy.Expr:
    """Weights (of the program, or declared inside instance `name`), × their counts; `roles` picks
    others (caches, gradients); with `elements=True` the element count (`parameters()`). A weight
    shared with another instance is counted by each instance that uses it, once in the program. Under
    a pipeline the program's are the stage's that holds the most (its layers and the larger end)."""
    p = a.program
    skip = len(p.repeats[name].outer) + 1 if per_iteration and name in p.repeats else None
    out = []
    for t in p.tensors.values():
        if t.role not in roles:
            continue
        if name is not None and not t.name.startswith(name + "."):
            continue
        if t.storage != t.name and (name is None or t.storage.startswith(name + ".")):
            continue  # another tensor's memory, counted where that tensor is
        if name is None and t.name in p.other_stage_weights:
            continue  # the other pipeline end's (passes.shard): not on the chip that holds the most
        out.append((t.numel if elements else t.bytes) * p.count(t.repeat[skip:] if skip is not None else t.repeat))
    return sympy.Add(*out)


def _figures(kernels, weights, caches, divide=sympy.Integer(1)) -> Figures:
    add = lambda f: sympy.Add(*[k.count / divide * f(k) for k in kernels])  # noqa: E731
    return Figures(add(lambda k: k.flops), add(lambda k: k.bytes), add(lambda k: k.t_kernel),
                   add(lambda k: 1), weights, caches)


def repeats(a) -> tuple[RepeatResult, ...]:
    out = []
    for rep in a.program.repeats.values():
        if rep.name not in a.program.instances:
            continue  # a training step's micro-batch repeat (frontend.optimizer): not a block's
        ks = instance_kernels(a, rep.name)
        per = _figures(ks, weight_bytes(a, rep.name, per_iteration=True),
                       weight_bytes(a, rep.name, per_iteration=True, roles=("cache",)),
                       a.program.count(rep.outer) * rep.count)
        total = _figures(ks, weight_bytes(a, rep.name), weight_bytes(a, rep.name, roles=("cache",)))
        out.append(RepeatResult(rep.name, a.program.instances[rep.name].block, rep.count,
                                tuple(k.name for k in ks), per, total))
    return tuple(out)


def instance_totals(a, name: str):
    """The `Totals` of an instance's kernels, each counted as often as it runs."""
    from costlang.analysis.roofline import _totals
    return _totals(instance_kernels(a, name), a.hardware, a.bindings, a.program.instances[name].span)


def kernel_scopes(a, kernel) -> tuple[str, ...]:
    """The block instances ("" for the top level) whose ops a kernel holds, in op order."""
    seen: list[str] = []
    for op in kernel.ops:
        scope = a.program.nodes[op].scope
        if scope not in seen:
            seen.append(scope)
    return tuple(seen)


def crossings(a) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """(kernel, its scopes) for every kernel that fusion built across a block boundary."""
    return tuple((k.name, s) for k in a.kernels if len(s := kernel_scopes(a, k)) > 1)


def instance_names(a, name: str, limit: int = None) -> Optional[tuple[list[str], int]]:
    """`name[0]`, `name[1]`, ... for a repeat whose count is bound (None while it is free): the first
    `limit` names (default `MAX_LISTED`) and the count. A count of 10^8 is never made into a list."""
    rep = a.program.repeats[name]
    n = rep.count.xreplace(a.bindings)
    if not n.is_Integer:
        return None
    limit = MAX_LISTED if limit is None else limit
    return [f"{name}[{i}]" for i in range(min(int(n), max(limit, 0)))], int(n)


#: instances of one repeat listed by name; the rest are counted
MAX_LISTED = 64
