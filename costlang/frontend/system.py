"""Systems: `system NAME [: BASE] { chip = HW; axis NAME = SIZE; link KIND over AXES { ... } }`.

Input: an `ast.SystemDef` and the resolver. Output: `ir.system.System`. A system that extends a
base keeps its chip, axes and links and adds or restates some; every axis needs exactly one link.
A link states its bandwidth per direction (`one_way = ...`) or summed over both directions
(`bidirectional = ...`, halved), exactly one of the two; `latency` (α, default 0 s) and `links`
(links per chip along the axis, default 1) are optional, and so is a fat tree's `oversubscription`
with its `leaf` (chips of the axis under one leaf switch).
"""
from __future__ import annotations

import sympy

from costlang.errors import SemanticError, did_you_mean
from costlang.ir.system import LINK_KINDS, Link, MeshAxis, System
from costlang.units import BYTE_PER_S, DIMENSIONLESS, SECOND
from costlang.frontend import ast

__all__ = ["resolve_system", "select_system"]

_LINK_OPTIONS = {"one_way": BYTE_PER_S, "bidirectional": BYTE_PER_S, "latency": SECOND,
                 "links": DIMENSIONLESS, "oversubscription": DIMENSIONLESS, "leaf": DIMENSIONLESS}


def resolve_system(r, s: ast.SystemDef) -> System:
    chip, sizes, links = None, {}, {}
    if s.base is not None:
        if s.base.id not in r.program.systems:
            raise r.unknown(s.base, "system", r.program.systems)
        base = r.program.systems[s.base.id]
        chip = base.chip
        sizes = {a.name: a.size for a in base.axes}
        links = {a.name: a.link for a in base.axes}
    for o in s.options:
        if o.name != "chip":
            raise SemanticError(f"unknown system option '{o.name}'", o.span,
                                "a system takes `chip = HARDWARE`, `axis NAME = SIZE` and `link KIND over AXIS { ... }`")
        if not isinstance(o.value, ast.Name):
            raise SemanticError("`chip` names a hardware, e.g. `chip = h100_sxm`", o.value.span)
        if o.value.id not in r.program.hardware:
            raise r.unknown(o.value, "hardware", r.program.hardware)
        chip = o.value.id
    if chip is None:
        raise SemanticError(f"system '{s.name}' names no chip", s.span, "add `chip = h100_sxm` (a hardware name)")
    seen = set()
    for a in s.axes:  # a derived system may restate a base's axis (its size; the link stays)
        if a.name in seen:
            raise SemanticError(f"axis '{a.name}' is declared twice", a.span)
        seen.add(a.name)
        sizes[a.name] = _axis_size(r, a)
    declared_here = set()
    for link in s.links:
        resolved = _link(r, link)
        for axis in link.axes:
            if axis.id not in sizes:
                raise r.unknown(axis, "axis", sizes)
            if axis.id in declared_here:
                raise SemanticError(f"axis '{axis.id}' already has a link in this system", axis.span)
            declared_here.add(axis.id)
            links[axis.id] = resolved
    missing = [a for a in sizes if a not in links]
    if missing:
        raise SemanticError(f"system '{s.name}' has no link for axis {', '.join(missing)}", s.span,
                            f"add e.g. `link NVLink over {missing[0]} {{ one_way = 450 GB/s }}`")
    if not sizes:
        raise SemanticError(f"system '{s.name}' has no axes", s.span, "add e.g. `axis gpu = 8`")
    return System(s.name, chip, tuple(MeshAxis(a, sizes[a], links[a]) for a in sizes), s.span)


def _axis_size(r, a: ast.AxisDef) -> sympy.Expr:
    size = r.expect(a.size, DIMENSIONLESS, f"the size of axis '{a.name}'").expr
    bound = size.xreplace(r.program.bindings)
    if bound.is_number and not (bound.is_integer and bound.is_positive):
        raise SemanticError(f"axis '{a.name}' counts chips and must be a positive whole number, not {bound}",
                            a.size.span)
    return size


def _link(r, link: ast.LinkDef) -> Link:
    if link.kind.id not in LINK_KINDS:
        raise SemanticError(f"unknown link kind '{link.kind.id}'", link.kind.span,
                            did_you_mean(link.kind.id, LINK_KINDS) or f"kinds are: {', '.join(LINK_KINDS)}")
    opts = r.options(link.options, _LINK_OPTIONS, "link")
    given = [k for k in ("one_way", "bidirectional") if k in opts]
    if len(given) != 1:
        what = "both" if given else "neither"
        raise SemanticError(f"a link states its bandwidth as one_way or bidirectional, exactly one ({what} given)",
                            link.span, "one_way = per direction; bidirectional = both directions summed "
                            "(costlang halves it)")
    for key, value in opts.items():
        bound = value.xreplace(r.program.bindings)
        if bound.is_number and (bound.is_negative or (key != "latency" and not bound.is_positive)):
            raise SemanticError(f"the {key} of a link must be positive, not {bound}",
                                next(o.value.span for o in link.options if o.name == key))
    span = lambda key: next(o.value.span for o in link.options if o.name == key)  # noqa: E731
    ratio, leaf = opts.get("oversubscription", sympy.Integer(1)), opts.get("leaf")
    bound = ratio.xreplace(r.program.bindings)
    if bound.is_number and bound < 1:
        raise SemanticError(f"a fat tree's oversubscription is downlinks over uplinks, at least 1, not {bound}",
                            span("oversubscription"), "2 for a 2:1 tree; 1 (or nothing) for a non-blocking one")
    if leaf is not None:
        bound = leaf.xreplace(r.program.bindings)
        if bound.is_number and not bound.is_integer:
            raise SemanticError(f"a leaf switch holds a whole number of the axis's chips, not {bound}", span("leaf"))
    elif "oversubscription" in opts:
        raise SemanticError("an oversubscribed fat tree needs the chips under one leaf switch", span("oversubscription"),
                            "add `leaf = 16` (chips of the axis per leaf switch)")
    one_way = opts[given[0]] / (2 if given[0] == "bidirectional" else 1)
    return Link(link.kind.id, one_way, given[0], opts.get("latency", sympy.Integer(0)),
                opts.get("links", sympy.Integer(1)), ratio, leaf)


def select_system(r, s: ast.Use) -> None:
    """`use system NAME`: the system, and its chip as the hardware."""
    p = r.program
    if s.hardware.id not in p.systems:
        raise r.unknown(s.hardware, "system", p.systems)
    if p.hardware_span and p.hardware_span.file == s.span.file:
        raise SemanticError("hardware is already selected in this file (at line "
                            f"{p.hardware_span.line})", s.span,
                            "`use system NAME` selects the system's chip as the hardware too")
    r.select_hardware(s.span, p.systems[s.hardware.id].chip, s.hardware.id)
