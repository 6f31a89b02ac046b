"""Serving pools: `pool NAME { hardware = HW; count = N; network = 50 GB/s; latency = 5 us }`, and a
block call placed on one: `decode = llama3_8b_decode(...) { pool = NAME }`.

Input: an `ast.PoolDef`, or a call's `pool` option, and the resolver. Output: `ir.system.Pool`
in `Program.pools`; instance → pool in `Program.placements`. A pool is `count` replicas of one
hardware (a chip preset, not a system: a replica is one chip); `network` is a replica's network
bandwidth (B/s, one direction) and `latency` its α, for the KV transfers between pools. The
queries layer analyses each pool's instances on its pool's hardware (`queries.pools`); with
pools and no `use hardware` line, the first pool's hardware is the program's.
"""
from __future__ import annotations

import sympy

from costlang.errors import SemanticError
from costlang.ir.system import Pool
from costlang.units import BYTE_PER_S, DIMENSIONLESS, SECOND
from costlang.frontend import ast

__all__ = ["resolve_pool", "place"]

_OPTIONS = {"count": DIMENSIONLESS, "network": BYTE_PER_S, "latency": SECOND}
#: the most replicas a pool holds (the simulation keeps a scheduler and a cache for each)
MAX_REPLICAS = 100_000


def resolve_pool(r, s: ast.PoolDef) -> Pool:
    hardware = None
    rest = []
    for o in s.options:
        if o.name != "hardware":
            rest.append(o)
            continue
        if hardware is not None:
            raise SemanticError("'hardware' is given twice", o.span)
        if not isinstance(o.value, ast.Name):
            raise SemanticError("`hardware` names a hardware preset, e.g. `hardware = h100_sxm`", o.value.span)
        name = o.value.id
        if name in r.program.systems and name not in r.program.hardware:
            raise SemanticError(f"'{name}' is a system; a pool is replicas of one chip", o.value.span,
                                f"name its chip, `hardware = {r.program.systems[name].chip}`, and the "
                                "replicas with `count = N`")
        if name not in r.program.hardware:
            raise r.unknown(o.value, "hardware", r.program.hardware)
        hardware = name
    if hardware is None:
        raise SemanticError(f"pool '{s.name}' names no hardware", s.span, "add `hardware = h100_sxm`")
    opts = r.options(tuple(rest), _OPTIONS, "pool")
    count = opts.get("count", sympy.Integer(1))
    bound = count.xreplace(r.program.bindings)
    if not (bound.is_number and bound.is_integer and bound.is_positive) or bound > MAX_REPLICAS:
        span = next(o.value.span for o in rest if o.name == "count")
        shown = str(bound) if len(str(bound)) <= 20 else f"{float(bound):.3g}"
        raise SemanticError(f"a pool's count is a whole number of replicas from 1 to {MAX_REPLICAS:,}, not {shown}",
                            span, "the simulation keeps a scheduler and a cache per replica")
    link = opts.get("network")
    if link is not None and link.xreplace(r.program.bindings).is_zero:
        span = next(o.value.span for o in rest if o.name == "network")
        raise SemanticError("a pool's network bandwidth must be positive", span)
    return Pool(s.name, hardware, bound, link, opts.get("latency", sympy.Integer(0)), s.span)


def place(r, o: ast.Option, instance: str) -> None:
    """`{ pool = NAME }` on a block call: the instance runs on that pool's hardware."""
    if not isinstance(o.value, ast.Name):
        raise SemanticError("`pool` names a pool defined above (`pool NAME { hardware = ...; count = ... }`)",
                            o.value.span)
    if o.value.id not in r.program.pools:
        raise r.unknown(o.value, "pool", r.program.pools)
    r.program.placements[instance] = (o.value.id, o.span)
