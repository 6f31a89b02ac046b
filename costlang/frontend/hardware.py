"""Hardware descriptions: `hardware NAME [: BASE] { peak ..., memory ... { ... }, launch = ... }`.

Input: an `ast.HardwareDef` and the resolver (for names, units and bases). Output: `ir.Hardware`.
A hardware that extends a base starts from the base's peaks, memory levels and launch overhead
and overrides what it restates; a memory level it restates keeps the base's unrestated fields.
"""
from __future__ import annotations

import sympy

from ..errors import SemanticError
from ..ir.program import Hardware, Memory
from ..units import BYTE, BYTE_PER_S, FLOP_PER_S, SECOND
from . import ast

__all__ = ["resolve_hardware"]

_MEMORY_UNITS = {"bandwidth": BYTE_PER_S, "capacity": BYTE}


def resolve_hardware(r, s: ast.HardwareDef) -> Hardware:
    peaks: dict[str, sympy.Expr] = {}
    memories: dict[str, Memory] = {}
    launch = sympy.Integer(0)
    if s.base is not None:
        if s.base.id not in r.program.hardware:
            raise r.unknown(s.base, "hardware", r.program.hardware)
        base = r.program.hardware[s.base.id]
        peaks, memories, launch = dict(base.peaks), {m.name: m for m in base.memories}, base.launch
    for p in s.peaks:
        r.dtype(p.dtype.id, p.dtype.span)
        value = r.expect(p.value, FLOP_PER_S, f"the peak of {p.dtype.id}").expr
        _positive(value, f"the peak of {p.dtype.id}", p.value.span)
        peaks[p.dtype.id] = value
    for m in s.memories:
        opts = r.options(m.options, _MEMORY_UNITS, "memory")
        old = memories.get(m.name, Memory(m.name, None, None))
        for key, value in opts.items():
            _positive(value, f"the {key} of {m.name}", next(o.value.span for o in m.options if o.name == key))
        memories[m.name] = Memory(m.name, opts.get("bandwidth", old.bandwidth),
                                  opts.get("capacity", old.capacity))
    opts = r.options(s.options, {"launch": SECOND}, "hardware")
    launch = opts.get("launch", launch)
    if launch.is_number and launch.is_negative:
        raise SemanticError("the launch overhead cannot be negative", s.span)
    if not memories or any(m.bandwidth is None for m in memories.values()):
        missing = [m for m, v in memories.items() if v.bandwidth is None]
        raise SemanticError(f"hardware '{s.name}' states no memory bandwidth"
                            + (f" for {', '.join(missing)}" if missing else ""), s.span,
                            "add `memory HBM { bandwidth = ... TB/s; capacity = ... GB }`")
    if not peaks:
        raise SemanticError(f"hardware '{s.name}' states no peak FLOP/s", s.span,
                            "add e.g. `peak fp16 = 989 TFLOP/s`")
    return Hardware(s.name, tuple(peaks.items()), tuple(memories.values()), launch, s.span)


def _positive(value, what, span):
    if value.is_number and not value.is_positive:
        raise SemanticError(f"{what} must be positive, not {value}", span)


