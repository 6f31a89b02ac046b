"""Hardware descriptions: `hardware NAME [: BASE] { peak ..., memory ... { ... }, launch = ... }`.

Input: an `ast.HardwareDef` and the resolver (for names, units and bases). Output: `ir.Hardware`.
A hardware that extends a base starts from the base's peaks, memory levels, launch overhead, SM
count, sector size and efficiency factors and overrides what it restates; a memory level it
restates keeps the base's unrestated fields and its place in the list (levels are listed farthest
first: HBM, L2, shared memory, registers; new levels are appended).
`peak DTYPE` and `peak matrix DTYPE` are the matrix (tensor-core) peak, `peak vector DTYPE` the
vector units'; `memory NAME per SM { ... }` states a per-SM level (its chip bandwidth is × `sms`).
"""
from __future__ import annotations

import dataclasses

import sympy

from costlang.errors import SemanticError
from costlang.ir.program import Efficiency, Hardware, Memory
from costlang.units import BYTE, BYTE_PER_S, DIMENSIONLESS, FLOP_PER_S, SECOND
from costlang.frontend import ast

__all__ = ["resolve_hardware", "check_fraction"]

_MEMORY_UNITS = {"bandwidth": BYTE_PER_S, "capacity": BYTE}
# tdp: watts; pj_per_flop and pj_per_byte: picojoules per FLOP and per byte moved from the main memory
_HARDWARE_UNITS = {"launch": SECOND, "sms": DIMENSIONLESS, "sector": BYTE, "tdp": DIMENSIONLESS,
                   "pj_per_flop": DIMENSIONLESS, "pj_per_byte": DIMENSIONLESS}
_PEAK_UNITS = ("matrix", "vector")


def resolve_hardware(r, s: ast.HardwareDef) -> Hardware:
    hw = Hardware(s.name, (), (), sympy.Integer(0), s.span)
    if s.base is not None:
        if s.base.id not in r.program.hardware:
            raise r.unknown(s.base, "hardware", r.program.hardware)
        hw = dataclasses.replace(r.program.hardware[s.base.id], name=s.name, span=s.span, base=s.base.id)
    peaks, vector = dict(hw.peaks), dict(hw.vector_peaks)
    stated: dict = {}  # (kind, dtype) → span, within this block: a second one would silently win
    for p in s.peaks:
        r.dtype(p.dtype.id, p.dtype.span)
        key = (p.unit.id if p.unit is not None else "matrix", p.dtype.id)
        if key in stated:
            raise SemanticError(f"the {'vector ' * (key[0] == 'vector')}peak of {p.dtype.id} is given twice "
                                f"(first at line {stated[key].line})", p.span, "keep one of them")
        stated[key] = p.span
        if p.unit is not None and p.unit.id not in _PEAK_UNITS:
            raise SemanticError(f"a peak is `matrix` or `vector`, not '{p.unit.id}'", p.unit.span,
                                "write `peak fp16 = ...` (the matrix peak) or `peak vector fp32 = ...`")
        value = r.expect(p.value, FLOP_PER_S, f"the peak of {p.dtype.id}").expr
        _positive(value, f"the peak of {p.dtype.id}", p.value.span)
        (vector if p.unit is not None and p.unit.id == "vector" else peaks)[p.dtype.id] = value
    memories = _memories(r, s, {m.name: m for m in hw.memories})
    opts = r.options(s.options, _HARDWARE_UNITS, "hardware")
    for key in ("sms", "sector", "tdp", "pj_per_flop", "pj_per_byte"):
        if key in opts:
            _positive(opts[key], f"'{key}'", next(o.value.span for o in s.options if o.name == key))
    launch = opts.get("launch", hw.launch)
    if launch.is_number and launch.is_negative:
        raise SemanticError("the launch overhead cannot be negative", s.span)
    _check_complete(s, memories, peaks, opts.get("sms", hw.sms))
    effs = {e.key: e for e in hw.efficiencies}
    given: dict = {}  # within this block: a second `efficiency HBM = ...` would silently win
    for e in s.efficiencies:
        if e.key.id in given:
            raise SemanticError(f"efficiency {e.key.id} is given twice (first at line {given[e.key.id].line})",
                                e.span, "keep one of them")
        given[e.key.id] = e.span
        if e.key.id not in ("compute", "matrix", "vector") and e.key.id not in memories:
            raise SemanticError(f"unknown efficiency '{e.key.id}'", e.key.span,
                                "an efficiency names `compute`, `matrix`, `vector` or a memory level: "
                                + ", ".join(memories))
        effs[e.key.id] = Efficiency(e.key.id, check_fraction(r, e.value, f"efficiency {e.key.id}"), e.source)
    return dataclasses.replace(hw, peaks=tuple(peaks.items()), memories=tuple(memories.values()),
                               launch=launch, vector_peaks=tuple(vector.items()),
                               sms=opts.get("sms", hw.sms), sector=opts.get("sector", hw.sector),
                               tdp=opts.get("tdp", hw.tdp), efficiencies=tuple(effs.values()),
                               pj_per_flop=opts.get("pj_per_flop", hw.pj_per_flop),
                               pj_per_byte=opts.get("pj_per_byte", hw.pj_per_byte))


def _memories(r, s: ast.HardwareDef, memories: dict) -> dict:
    stated: dict = {}  # within this block: a second `memory HBM { ... }` would silently win
    for m in s.memories:
        if m.name in stated:
            raise SemanticError(f"memory '{m.name}' is given twice in hardware '{s.name}' (first at line "
                                f"{stated[m.name].line})", m.span, "state each memory level once")
        stated[m.name] = m.span
        if m.per is not None and m.per.id.upper() != "SM":
            raise SemanticError(f"a memory level is per chip or `per SM`, not per '{m.per.id}'", m.per.span)
        opts = r.options(m.options, _MEMORY_UNITS, "memory")
        old = memories.get(m.name, Memory(m.name, None, None))
        for key, value in opts.items():
            _positive(value, f"the {key} of {m.name}", next(o.value.span for o in m.options if o.name == key))
        memories[m.name] = Memory(m.name, opts.get("bandwidth", old.bandwidth),
                                  opts.get("capacity", old.capacity),
                                  old.per_sm if m.per is None and m.name in memories else m.per is not None)
    return memories


def _check_complete(s: ast.HardwareDef, memories: dict, peaks: dict, sms) -> None:
    if not memories or any(m.bandwidth is None for m in memories.values()):
        missing = [m for m, v in memories.items() if v.bandwidth is None]
        raise SemanticError(f"hardware '{s.name}' states no memory bandwidth"
                            + (f" for {', '.join(missing)}" if missing else ""), s.span,
                            "add `memory HBM { bandwidth = ... TB/s; capacity = ... GB }`")
    if not peaks:
        raise SemanticError(f"hardware '{s.name}' states no peak FLOP/s", s.span,
                            "add e.g. `peak fp16 = 989 TFLOP/s`")
    per_sm = [m.name for m in memories.values() if m.per_sm]
    if per_sm and sms is None:
        raise SemanticError(f"hardware '{s.name}' has per-SM memory ({', '.join(per_sm)}) but no SM count",
                            s.span, "add `sms = 132` (the number of SMs), with its source")


def check_fraction(r, expr: ast.Expr, what: str) -> sympy.Expr:
    """An efficiency factor: a plain number in (0, 1] (checked when it is a number)."""
    value = r.expect(expr, DIMENSIONLESS, what).expr
    bound = value.xreplace(r.program.bindings)
    if bound.is_number and not (bound.is_positive and (bound - 1).is_nonpositive):
        raise SemanticError(f"{what} is a fraction of the peak, in (0, 1], not {bound}", expr.span)
    return value


def _positive(value, what, span):
    if value.is_number and not value.is_positive:
        raise SemanticError(f"{what} must be positive, not {value}", span)
