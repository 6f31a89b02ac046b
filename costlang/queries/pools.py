"""Serving pools: the block instances placed on a pool are analysed on its hardware.

Input: an analysed program with `pool` statements and `{ pool = NAME }` placements
(`frontend.pools`). Output: `analysis_on` (the program analysed on another pool's hardware, once
per hardware, without its queries), `pool_of` (the pool a kernel, tensor or instance name runs
on) and `pool_answers`: per pool its hardware, replicas, network, the instances on it with each
one's T_kernel there, and the weights and caches a replica holds against its capacity. Queries
about an instance (`t_kernel(decode)`) are answered on its pool's hardware
(`queries.evaluate`); whole-program figures stay on the program's hardware.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Optional

import sympy

from costlang.analysis.roofline import analyze_roofline

__all__ = ["PoolAnswer", "analysis_on", "pool_of", "pool_answers"]

_ANSWERED = ("queries", "solves", "compares")


@dataclass(frozen=True)
class PoolAnswer:
    """One pool: `count` replicas of `hardware`; per instance placed on it (name, T_kernel on it);
    what one replica holds (weights + caches of its instances, bytes) against its capacity."""
    name: str
    hardware: str
    count: sympy.Expr
    network: Optional[sympy.Expr]
    latency: sympy.Expr
    instances: tuple[tuple[str, sympy.Expr], ...]
    held: sympy.Expr
    capacity: sympy.Expr


def analysis_on(analysis, hardware: str):
    """The same program, fusion mode and bindings analysed on `hardware` (without its queries)."""
    if hardware == analysis.hardware.name:
        return analysis
    if hardware not in analysis.other_hardware:
        program = analysis.program
        quiet = {f.name: type(getattr(program, f.name))() for f in dataclasses.fields(program)
                 if f.name in _ANSWERED}
        analysis.other_hardware[hardware] = analyze_roofline(dataclasses.replace(program, **quiet),
                                                             fusion=analysis.fusion, hardware=hardware)
    return analysis.other_hardware[hardware]


def pool_of(program, name: str) -> Optional[str]:
    """The pool an instance, or a kernel or tensor inside one (`decode.layer.mlp`), is placed on."""
    if not program.placements:
        return None
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        placed = program.placements.get(".".join(parts[:i]))
        if placed is not None:
            return placed[0]
    return None


def pool_answers(analysis, figure) -> tuple[PoolAnswer, ...]:
    """Each pool's answer; `figure(analysis, func, instance)` evaluates `func(instance)` as a query
    would (passed in: the query evaluator is this layer's caller)."""
    program = analysis.program
    out = []
    for pool in program.pools.values():
        on = analysis_on(analysis, pool.hardware)
        names = [i for i, (p, _) in program.placements.items() if p == pool.name]
        times = tuple((i, figure(on, "t_kernel", i)) for i in names)
        held = sympy.Add(*[figure(on, "weight_bytes", i) + figure(on, "cache_bytes", i) for i in names])
        out.append(PoolAnswer(pool.name, pool.hardware, pool.count, pool.link, pool.latency, times,
                              held, on.hardware.capacity))
    return tuple(out)
