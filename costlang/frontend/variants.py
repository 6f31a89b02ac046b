"""Program variants: the same resolved program with substitutions, for what-if, solve and sweep.

Input: a resolved `Program` and what to change: settings (`ast.Option`s of a `scenario` block or
of `--set`), symbols to leave free, hardware figures to make symbolic. Output: a new `Program`;
the original is never modified, so it can be analysed again under every variant. Dims, params
and dtypes are changed by resolving the file again with them (`frontend.edits`, which applies
every setting with the functions here), so every shape, size and dtype rule holds as if the file
were edited. While the file is resolved,
`check_solve` and `check_scenario` check those statements against it. Settings:

  NAME = expr        a dim or param takes another value (a plain number)
  hardware = NAME    (or hw) analyse on another hardware
  fusion = MODE      another fusion mode
  bandwidth = expr, capacity = expr, launch = expr, peak_DTYPE = expr
                     change one figure of the selected hardware; a value may use the current
                     figures: `bandwidth = 2 * bandwidth()`, `peak_fp16 = peak(fp16) / 2`
  TENSOR = DTYPE     store one tensor in another dtype (views of it follow; ops that read it
                     compute and store as the dtype rules say, as if the file were edited)
  weights = DTYPE, inputs = DTYPE, tensors = DTYPE
                     every weight / input / tensor in another dtype
  math = DTYPE       every kernel does its math in DTYPE (uses that dtype's peak)
"""
from __future__ import annotations

import copy
import dataclasses
from typing import Sequence

import sympy

from costlang.errors import CostNameError, SemanticError, SolveError, Span, UnitError, did_you_mean
from costlang.frontend import ast
from costlang.frontend.typecheck import check_expression
from costlang.frontend.expr import evaluate, unit_words
from costlang.ir.program import FUSION_MODES, Dtype, Efficiency, Hardware, Program, Value
from costlang.units import BYTE, BYTE_PER_S, DIMENSIONLESS, FLOP_PER_S, SECOND

__all__ = ["check_settings", "evaluate_setting", "setting_kind", "setting_text", "for_analysis", "APPLY", "RESOLVED",
           "copy_program", "math_everywhere",
           "generalize", "lift_hardware", "Lifted", "HARDWARE_FIGURES", "ROLE_SETTINGS", "HARDWARE_TARGETS",
           "check_solve", "check_scenario"]

#: what a solve may solve for besides a dim or param: a figure of the hardware (`lift_hardware`)
HARDWARE_TARGETS = ("bandwidth", "peak")
HARDWARE_FIGURES = {"bandwidth": BYTE_PER_S, "capacity": BYTE, "launch": SECOND}
ROLE_SETTINGS = {"weights": ("weight",), "inputs": ("input",), "tensors": None}
_NAMED = {"hardware": "hardware", "hw": "hardware", "fusion": "fusion", "math": "math"}


def setting_kind(program: Program, option: ast.Option) -> str:
    """What a setting changes: symbol, hardware, fusion, math, figure, peak, role or tensor."""
    name = option.name
    if name in program.symbols:
        return "symbol"
    if name in _NAMED:
        return _NAMED[name]
    if name in HARDWARE_FIGURES:
        return "figure"
    if name.startswith("peak_") and name[5:] in program.dtypes:
        return "peak"
    if name in ROLE_SETTINGS:
        return "role"
    if name.startswith("efficiency_"):
        return "efficiency"
    if name in program.tensors:
        return "tensor"
    known = [*program.symbols, *_NAMED, *HARDWARE_FIGURES, *ROLE_SETTINGS, *program.tensors,
             *(f"peak_{d}" for d in program.dtypes)]
    raise CostNameError(f"unknown setting '{name}'", option.span,
                        did_you_mean(name, known) or "a setting names a dim, param, tensor, "
                        "hardware, fusion, bandwidth, capacity, launch, peak_DTYPE, efficiency_KEY, "
                        "weights, inputs, tensors or math")


# --- checks while resolving ---------------------------------------------------------------------

def check_solve(r, s: ast.Solve) -> None:
    """A solve names a known dim, param, `bandwidth` or `peak`, and both sides are well formed."""
    name = s.target.id
    if name not in r.program.symbols and name not in HARDWARE_TARGETS:
        raise SolveError(f"cannot solve for '{name}': it is not a dim or param of this file",
                         s.target.span, did_you_mean(name, [*r.program.symbols, *HARDWARE_TARGETS])
                         or "solve for a dim, a param, `bandwidth` or `peak`")
    if s.lhs is not None:
        check_expression(r, s.lhs)
        check_expression(r, s.rhs)


def check_scenario(r, s: ast.Scenario) -> None:
    """Every setting is known and applies to what the file has defined so far."""
    for o in s.settings:
        kind = setting_kind(r.program, o)
        if kind in ("figure", "peak") and r.program.selected_hardware is None:
            raise SolveError(f"'{o.name}' changes the selected hardware, but none is selected yet",
                             o.span, "put the scenario after `use hardware ...`")
    check_settings(r.program, s.settings)


#: settings that change what the file says: the file is resolved again with them (`frontend.edits`)
RESOLVED = ("role", "tensor", "symbol")


def check_settings(program: Program, settings: Sequence[ast.Option]) -> None:
    """Raise the first problem of settings (a `scenario` while its file is resolved), applying none."""
    check_once(settings)
    for o in settings:
        kind = setting_kind(program, o)
        if kind in RESOLVED:
            APPLY[kind](program, o, {"symbols": {}, "dtypes": {}})
        else:
            APPLY[kind](copy_program(program), o)


def check_once(settings: Sequence[ast.Option]) -> None:
    seen: set[str] = set()
    for o in settings:
        if o.name in seen:
            raise SemanticError(f"'{o.name}' is set twice", o.span)
        seen.add(o.name)


def setting_text(o: ast.Option) -> str:
    """A setting as it was written (`weights=int4`)."""
    s = o.span
    return s.source.line(s.line)[s.column - 1: s.end_column - 1] if s.line == s.end_line else o.name


def for_analysis(program: Program) -> Program:
    """A copy without what-if statements: analysing it never re-enters solve or compare."""
    out = copy_program(program)
    out.solves, out.compares = [], []
    return out


def copy_program(program: Program) -> Program:
    out = copy.copy(program)
    out.symbols, out.tensors, out.nodes = dict(program.symbols), dict(program.tensors), dict(program.nodes)
    out.hardware, out.bindings = dict(program.hardware), dict(program.bindings)
    return out


def _name_value(o: ast.Option, what: str) -> str:
    if not isinstance(o.value, ast.Name):
        raise SemanticError(f"'{o.name}' takes {what} name", o.value.span)
    return o.value.id


def _set_symbol(p: Program, o: ast.Option, changes: dict) -> Program:
    s = p.symbols[o.name]
    v = _evaluate(p, o.value)
    if v.unit != DIMENSIONLESS:
        raise UnitError(f"{s.kind} '{s.name}' takes a plain number, not {unit_words(v.unit)}", o.value.span)
    value = v.expr.xreplace(p.bindings)
    if value.is_number and not value.is_positive:
        raise SemanticError(f"{s.kind} '{s.name}' must be positive, not {value}", o.value.span)
    if s.kind == "dim" and value.is_number and not value.is_integer:
        raise SemanticError(f"dim '{s.name}' counts elements and must be a whole number, not {value}",
                            o.value.span)
    changes["symbols"][o.name] = value
    return p


def _set_hardware(p: Program, o: ast.Option) -> Program:
    name = _name_value(o, "a hardware")
    if name not in p.hardware:
        from costlang.errors import hardware_hint
        raise CostNameError(f"unknown hardware '{name}'", o.value.span, hardware_hint(name, p.hardware, p.systems))
    p.selected_hardware = name
    return p


def _set_fusion(p: Program, o: ast.Option) -> Program:
    mode = _name_value(o, "a fusion mode")
    if mode not in FUSION_MODES:
        raise SemanticError(f"unknown fusion mode '{mode}'", o.value.span, f"modes are: {', '.join(FUSION_MODES)}")
    p.fusion = mode
    return p


def _selected(p: Program, span: Span) -> Hardware:
    if p.selected_hardware is None:
        raise SemanticError("no hardware is selected, so there is no figure to change", span)
    return p.hardware[p.selected_hardware]


def _replace_hardware(p: Program, hw: Hardware) -> Program:
    p.hardware[hw.name] = hw
    p.selected_hardware = hw.name
    return p


def _set_figure(p: Program, o: ast.Option) -> Program:
    hw = _selected(p, o.span)
    value = _expect(p, o, HARDWARE_FIGURES[o.name])
    if o.name == "launch":
        return _replace_hardware(p, dataclasses.replace(hw, name=_what_if(hw.name), launch=value))
    main = hw.main_memory
    memory = dataclasses.replace(main, **{o.name: value})
    memories = tuple(memory if m is main else m for m in hw.memories)
    return _replace_hardware(p, dataclasses.replace(hw, name=_what_if(hw.name), memories=memories))


def _set_peak(p: Program, o: ast.Option) -> Program:
    hw = _selected(p, o.span)
    dtype, value = o.name[5:], _expect(p, o, FLOP_PER_S)
    peaks = dict(hw.peaks)
    peaks[dtype] = value
    return _replace_hardware(p, dataclasses.replace(hw, name=_what_if(hw.name), peaks=tuple(peaks.items())))


def _set_efficiency(p: Program, o: ast.Option) -> Program:
    """A scenario's efficiency factor (`efficiency_HBM = 0.8`): it replaces the hardware's."""
    hw = _selected(p, o.span)
    key = o.name[len("efficiency_"):]
    if key not in ("compute", "matrix", "vector") and hw.level(key) is None:
        raise CostNameError(f"unknown efficiency '{key}'", o.span, "an efficiency names compute, matrix, "
                            "vector or a memory level: " + ", ".join(m.name for m in hw.memories))
    value = _expect(p, o, DIMENSIONLESS)
    bound = value.xreplace(p.bindings)
    if bound.is_number and not (bound.is_positive and (bound - 1).is_nonpositive):
        raise SemanticError(f"{o.name} is a fraction of the peak, in (0, 1], not {bound}", o.value.span)
    effs = tuple(e for e in hw.efficiencies if e.key != key) + (Efficiency(key, value, None, "scenario"),)
    return _replace_hardware(p, dataclasses.replace(hw, name=_what_if(hw.name), efficiencies=effs))


def _what_if(name: str) -> str:
    return name if name.endswith(" (what-if)") else f"{name} (what-if)"


def _dtype(p: Program, o: ast.Option) -> Dtype:
    name = _name_value(o, "a dtype")
    if name not in p.dtypes:
        raise CostNameError(f"unknown dtype '{name}'", o.value.span, did_you_mean(name, p.dtypes))
    return p.dtypes[name]


def _retype(p: Program, storages, dtype: Dtype, changes: dict) -> Program:
    for name in storages:
        changes["dtypes"][name] = dtype.name
    return p


def _set_role(p: Program, o: ast.Option, changes: dict) -> Program:
    roles = ROLE_SETTINGS[o.name]
    storages = {t.storage for t in p.tensors.values() if roles is None or t.role in roles}
    return _retype(p, sorted(storages), _dtype(p, o), changes)


def _set_tensor(p: Program, o: ast.Option, changes: dict) -> Program:
    return _retype(p, [p.tensors[o.name].storage], _dtype(p, o), changes)


def _set_math(p: Program, o: ast.Option) -> Program:
    dtype = _dtype(p, o)
    if p.origin is not None:  # kept when the file is resolved again for a later what-if
        p.origin = dataclasses.replace(p.origin, overrides=dataclasses.replace(p.origin.overrides, math=dtype.name))
    return math_everywhere(p, dtype)


def math_everywhere(p: Program, dtype: Dtype) -> Program:
    for name, n in list(p.nodes.items()):
        p.nodes[name] = dataclasses.replace(n, math_dtype=dtype)
    return p


APPLY = {"symbol": _set_symbol, "hardware": _set_hardware, "fusion": _set_fusion,
          "figure": _set_figure, "peak": _set_peak, "role": _set_role, "tensor": _set_tensor,
          "math": _set_math, "efficiency": _set_efficiency}


# --- evaluating setting values --------------------------------------------------------------

def _expect(p: Program, o: ast.Option, unit) -> sympy.Expr:
    v = _evaluate(p, o.value)
    if v.unit != unit:
        raise UnitError(f"'{o.name}' must be {unit_words(unit)}, not {unit_words(v.unit)}", o.value.span)
    if v.expr.is_number and not v.expr.is_positive and not (o.name == "launch" and v.expr.is_zero):
        raise SemanticError(f"'{o.name}' must be positive, not {v.expr}", o.value.span)
    return v.expr


def _evaluate(p: Program, expr: ast.Expr) -> Value:
    return evaluate(expr, _SettingScope(p))


def evaluate_setting(program: Program, expr: ast.Expr) -> Value:
    """The value of a setting's (or a sweep bound's) expression over the program."""
    return _evaluate(program, expr)


class _SettingScope:
    """Setting values: numbers, symbols, sizes and the selected hardware's current figures."""

    def __init__(self, program: Program):
        self.p = program

    def known_names(self):
        return list(self.p.symbols)

    def name(self, node: ast.Name) -> Value:
        if node.id in self.p.symbols:
            return Value(self.p.symbols[node.id].symbol, DIMENSIONLESS)
        raise CostNameError(f"unknown name '{node.id}'", node.span, did_you_mean(node.id, self.p.symbols))

    def call(self, node: ast.Call) -> Value:
        from costlang.frontend.typecheck import STATIC_FUNCTIONS, ProgramNames, static_call
        if node.func in STATIC_FUNCTIONS:
            return static_call(ProgramNames(self.p), node)
        hw = _selected(self.p, node.span)
        if node.func == "peak" and len(node.args) == 1 and isinstance(node.args[0], ast.Name):
            value = hw.peak(node.args[0].id)
            if value is not None:
                return Value(value, FLOP_PER_S)
        figures = {"bandwidth": (hw.bandwidth, BYTE_PER_S), "capacity": (hw.capacity, BYTE),
                   "launch_overhead": (hw.launch, SECOND)}
        if node.func in figures and not node.args and figures[node.func][0] is not None:
            return Value(*figures[node.func])
        raise SemanticError(f"a setting's value can use numbers, dims, params, sizeof(), and the "
                            f"selected hardware's bandwidth(), capacity(), launch_overhead() and "
                            f"peak(DTYPE); not {node.func}()", node.span)


# --- symbolic hardware and dtype sizes (the general form of a solve) -------------------------

@dataclasses.dataclass(frozen=True)
class Lifted:
    """A number of the program replaced by a symbol: the symbol, what it stands for, its value."""
    symbol: sympy.Symbol
    meaning: str
    value: sympy.Expr


def _fresh(program: Program, name: str, taken: set[str]) -> sympy.Symbol:
    while name in program.symbols or name in taken:
        name += "_"
    taken.add(name)
    return sympy.Symbol(name, positive=True)


def generalize(program: Program, hardware: Hardware) -> tuple[Program, tuple[Lifted, ...]]:
    """Dtype sizes become `b` and the math peaks `Istar·BW`, so results read in b, I* and BW.

    One dtype in the tensors gives `b` (else `b_DTYPE`); one math dtype gives `Istar` (else
    `Istar_DTYPE`); both are stated with their values so a printer can show the substitution.
    """
    out, taken, lifted = for_analysis(program), set(), []
    sizes = sorted({t.dtype.name for t in out.tensors.values()})
    new_dtypes = {}
    for d in sizes:
        sym = _fresh(out, "b" if len(sizes) == 1 else f"b_{d}", taken)
        new_dtypes[d] = dataclasses.replace(program.dtypes.get(d, Dtype(d, sympy.Integer(1))), size=sym)
        lifted.append(Lifted(sym, f"bytes per {d} element", program.dtypes[d].size))
    for name, t in list(out.tensors.items()):
        out.tensors[name] = dataclasses.replace(t, dtype=new_dtypes[t.dtype.name])
    bw = _fresh(out, "BW", taken)
    lifted.append(Lifted(bw, f"bandwidth of {hardware.name}", hardware.bandwidth))
    maths = sorted({n.math_dtype.name for n in out.nodes.values()} & set(dict(hardware.peaks)))
    peaks = dict(hardware.peaks)
    for d in maths:
        istar = _fresh(out, "Istar" if len(maths) == 1 else f"Istar_{d}", taken)
        lifted.append(Lifted(istar, f"critical intensity I* of {d} on {hardware.name}",
                             peaks[d] / hardware.bandwidth))
        peaks[d] = istar * bw
    memories = tuple(dataclasses.replace(m, bandwidth=bw) if m is hardware.main_memory else m
                     for m in hardware.memories)
    _replace_hardware(out, dataclasses.replace(hardware, peaks=tuple(peaks.items()), memories=memories))
    return out, tuple(lifted)


def lift_hardware(program: Program, hardware: Hardware, which: str) -> tuple[Program, sympy.Symbol]:
    """The program on its hardware with the bandwidth (`BW`) or the math peak (`PEAK`) free."""
    out = for_analysis(program)
    sym = _fresh(out, "BW" if which == "bandwidth" else "PEAK", set())
    if which == "bandwidth":
        memories = tuple(dataclasses.replace(m, bandwidth=sym) if m is hardware.main_memory else m
                         for m in hardware.memories)
        hw = dataclasses.replace(hardware, memories=memories)
    else:
        hw = dataclasses.replace(hardware, peaks=tuple((d, sym) for d, _ in hardware.peaks))
    _replace_hardware(out, hw)
    return out, sym
