"""What-if settings as edits of the file: the program resolved again with changed dims, params and dtypes.

Input: a resolved `Program` (its `origin`: the main file's text, path and earlier what-ifs) and
settings (`ast.Option`s of a `scenario` block or of `--set`), or names of symbols to free. Output:
a new `Program`, resolved again from the file with the changes (`ir.program.Overrides`), so every
shape, size and dtype rule holds as if the file were edited, and an error a setting causes points
at the file's span, naming the setting. Hardware, fusion and math settings are applied to the
program as before (`frontend.variants`); tensors and nodes the settings leave unchanged stay the
same objects, so analyses share their work (`analysis.shared`).
"""
from __future__ import annotations

import dataclasses
from typing import Sequence

import sympy

from costlang.errors import SemanticError, Source
from costlang.ir.program import Overrides, Program
from costlang.frontend import ast
from costlang.frontend.parser import parse_kept
from costlang.frontend.resolve import resolve
from costlang.frontend.variants import APPLY, RESOLVED, check_once, copy_program, math_everywhere, setting_kind, setting_text

__all__ = ["apply_settings", "unbind"]

_ORDER = ("hardware", "figure", "peak", "efficiency", *RESOLVED, "math", "fusion")


def apply_settings(program: Program, settings: Sequence[ast.Option]) -> Program:
    """The program with every setting applied, hardware first (its figures apply to the new one).

    Dims, params and dtypes are changed by resolving the file again with them (`ir.program.
    Overrides`): an error they cause (`K = 7` where a matmul needs K = J = 5) points at the file."""
    check_once(settings)
    kinds = [(setting_kind(program, o), o) for o in settings]
    out = copy_program(program)
    changes: dict = {"symbols": {}, "dtypes": {}}
    for kind in _ORDER:
        if kind == "math" and (changes["symbols"] or changes["dtypes"]):
            out = _resolve_again(out, changes, [o for k, o in kinds if k in RESOLVED])
        for k, o in kinds:
            if k == kind:
                out = APPLY[kind](out, o, changes) if kind in RESOLVED else APPLY[kind](out, o)
    out.settings = (*program.settings, *(setting_text(o) for o in settings))
    return out


def unbind(program: Program, names: Sequence[str]) -> Program:
    """The program with these dims/params free (their stated values ignored). A size that must
    equal a freed one (K and J of a matmul) follows it: J is tied to K (`Program.ties`)."""
    ties = _ties(program, names)
    changes = {"symbols": {**{n: None for n in names}, **{str(t): v for t, v in ties.items()}}, "dtypes": {}}
    words = [f"{n} free" for n in names] + [f"{t} = {v}" for t, v in ties.items()]
    out = _resolve_again(copy_program(program), changes, (), words)
    out.ties = tuple((str(t), v) for t, v in ties.items())
    return out


def _ties(program: Program, names: Sequence[str]) -> dict:
    """Bound symbols that must follow freed ones: for each recorded equality of sizes (`a = b`)
    that no longer holds once `names` are free, a bound symbol of the other side is solved for."""
    bindings = program.bindings
    released = {program.symbols[n].symbol for n in names}
    ties: dict = {}
    changed = True
    while changed:
        changed = False
        for a, b, _ in program.equalities:
            tie = _tie(a, b, bindings, released, ties)
            if tie is not None:
                ties[tie[0]] = tie[1]
                released.add(tie[0])
                changed = True
    return ties


def _tie(a, b, bindings, released, ties):
    """(symbol, value) that keeps a = b when the released symbols vary, or None (none needed or found)."""
    for this, other in ((a, b), (b, a)):
        if not (this.free_symbols & released) or other.free_symbols & released:
            continue
        for s in sorted(other.free_symbols - this.free_symbols, key=str):
            if s not in bindings:
                continue
            keep = {k: v for k, v in bindings.items() if k is not s and k not in released}
            equation = (this - other).xreplace(ties).xreplace(keep)
            x = sympy.Dummy(positive=True)
            found = [v for v in sympy.solve(equation.xreplace({s: x}), x) if v.is_positive is not False]
            if len(found) == 1:
                return s, found[0]
    return None


def _keep_unchanged(old: Program, new: Program) -> None:
    """Tensors and nodes a setting did not change stay the very same objects (B = 64 leaves every
    shape in B), so that analyses share their kernels and costs (`analysis.shared`)."""
    for table in (new.tensors, new.nodes):
        before = old.tensors if table is new.tensors else old.nodes
        for name, x in table.items():
            y = before.get(name)
            if y is not None and y is not x and y == x:
                table[name] = y


def _resolve_again(program: Program, changes: dict, settings, ties=()) -> Program:
    """The file resolved again with changed symbols and dtypes (and earlier what-ifs kept)."""
    origin = program.origin
    if origin is None or origin.source is None:
        raise SemanticError("this program was not resolved from a file, so its dims and dtypes cannot be "
                            "changed", settings[0].span if settings else None)
    old = origin.overrides
    text = "; ".join(t for t in (old.text, *(setting_text(o) for o in settings), *ties) if t)
    overrides = dataclasses.replace(old, symbols={**old.symbols, **changes["symbols"]},
                                    dtypes={**old.dtypes, **changes["dtypes"]}, text=text)
    out = resolve(parse_kept(origin.source.text, origin.source.name), origin.path, origin.prelude, overrides)
    if origin.after is not None:  # the passes the program went through after resolving (sharding)
        again = dataclasses.replace(out.origin, after=origin.after)
        out = origin.after(out)
        out.origin = again
    for kept in ("hardware", "selected_hardware", "hardware_span", "fusion", "solves", "compares", "settings"):
        setattr(out, kept, getattr(program, kept))
    _keep_unchanged(program, out)
    if overrides.math is not None:
        math_everywhere(out, program.dtypes[overrides.math])
    return out
