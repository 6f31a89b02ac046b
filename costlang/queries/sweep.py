"""Sweep: quantities of a program over one or two symbols, evaluated as numpy arrays.

Input: an `Analysis`, axes (`B=1..1024:pow2`, `d=512..16384:log:6`, `S=1..9:lin:5`, bounds
parsed by the costlang parser) and the quantities to show (query names of the file, or costlang
expressions such as `1 / t_kernel()`). Output: `Sweep`, a table of floats (floats only here):
each exact expression is evaluated once on the whole grid, one numpy operation per node of its
tree (what sympy's `lambdify` does, without generating code), with the rows where a kernel
changes bound marked (`Mark`: a kernel and its bound from that row on; a row exactly at I = I* is
marked balanced, and a balanced point between two rows of one bound, a touching root, is no
change) and, when one symbol is swept, each kernel's exact crossing with the bounds on each side.
With one symbol the marks follow the exact regimes (`analysis.verdict.decide`), so a row at an
exact crossing is balanced whatever the float rounding; with two they follow the float signs.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import sympy

from costlang.errors import SemanticError, Source, Span, did_you_mean
from costlang.frontend import ast
from costlang.ir.expr import Call, Option
from costlang.ir.statements import Query
from costlang.ir.program import Value
from costlang.units import Unit
from costlang.analysis.bounds import BALANCED, COMPUTE, MEMORY, Bound
from costlang.queries.vectorised import SweepError, evaluator
from costlang.analysis.verdict import decide, domain_floors, within
from costlang.queries.evaluate import analyze_with_queries, evaluate_in, stated_unit
from costlang.frontend.edits import unbind
from costlang.frontend.variants import evaluate_setting, for_analysis

__all__ = ["Axis", "Crossing", "Mark", "Sweep", "parse_axis", "sweep", "grid_values", "DEFAULT_POINTS"]

DEFAULT_POINTS = 11
MAX_POINTS = 100_000
MAX_GRID = 1_000_000  # points in all: a 30000 × 30000 grid would need tens of GB


@dataclass(frozen=True)
class Axis:
    name: str
    values: tuple[float, ...]


@dataclass(frozen=True)
class Crossing:
    kernel: str
    symbol: str
    value: sympy.Expr    # exact; printers.words.comparisons.crossing_text says it in words
    below: Bound = MEMORY    # the bound just below the crossing
    above: Bound = COMPUTE   # and just above it


@dataclass(frozen=True)
class Mark:
    """A row where `kernel` changes bound: `bound` from that row on (BALANCED: at that row only)."""
    kernel: str
    bound: Bound


@dataclass(frozen=True)
class Sweep:
    symbols: tuple[str, ...]
    labels: tuple[str, ...]
    grid: tuple[np.ndarray, ...]            # per symbol, its value at every grid point (flat)
    columns: tuple[np.ndarray, ...]         # one column per label
    marks: tuple[tuple[Mark, ...], ...]     # per row: which kernels changed bound since the last row
    crossings: tuple[Crossing, ...]
    units: tuple[Unit, ...] = ()            # one per label (the unit of its column, SI base)
    shape: tuple[int, ...] = ()             # the number of values of each symbol (the grid's axes)

    @functools.cached_property
    def points(self) -> tuple[tuple[float, ...], ...]:
        """One row per grid point (built on first use: a million Python tuples cost more than
        the whole evaluation, and only the printers need them)."""
        return tuple(zip(*(g.tolist() for g in self.grid)))


def arg_span(flag: str, text: str) -> Span:
    """A span over a whole command-line argument, so its errors quote it with a caret."""
    return Span(Source(flag, text), 1, 1, 1, len(text) + 1)


def parse_axis(program, text: str, default: str = "lin") -> Axis:
    """`NAME=LO..HI[:pow2|:lin[:N]|:log[:N]]` or an explicit list `NAME=V1,V2,...`; bounds and
    values are costlang expressions. `default` is the spacing when the range names none."""
    from costlang.frontend.settings import parse_settings
    name, sep, rest = text.partition("=")
    spec, _, mode = rest.partition(":")
    lo_text, dots, hi_text = spec.partition("..")
    listed = not dots and "," in rest
    if not (sep and (dots or listed) and name.strip().isidentifier()):
        raise SweepError(f"expected a range such as B=1..1024:pow2 or a list such as B=1,8,64, not {text!r}",
                         arg_span("--over", text))
    name = name.strip()
    if name not in program.symbols:
        raise SweepError(f"cannot sweep '{name}': it is not a dim or param of this file",
                         arg_span("--over", text), did_you_mean(name, program.symbols))
    if listed:
        values = [_bound(program, parse_settings(f"{name} = {t}", "--over")[0]) for t in rest.split(",")]
        if any(v <= 0 for v in values) or values != sorted(set(values)):
            raise SweepError(f"the listed values of {name} must be positive and increasing", arg_span("--over", text))
    else:
        lo, hi = (_bound(program, parse_settings(f"{name} = {t}", "--over")[0]) for t in (lo_text, hi_text))
        if not 0 < lo <= hi:
            raise SweepError(f"the range of {name} must go from a positive value up, not {lo:g}..{hi:g}",
                             arg_span("--over", text))
        values = _values(mode.strip() or default, lo, hi, arg_span("--over", text))
    if program.symbols[name].kind == "dim":
        if listed and any(v != round(v) for v in values):
            raise SweepError(f"{name} is a dim: its listed values must be whole numbers", arg_span("--over", text))
        values = sorted({float(round(v)) for v in values if round(v) >= 1})
    if not 1 <= len(values) <= MAX_POINTS:
        raise SweepError(f"a sweep has 1 to {MAX_POINTS} points per symbol, not {len(values)}",
                         arg_span("--over", text))
    return Axis(name, tuple(values))


#: sweep values are floats: a bound beyond this is refused (10^400 would be inf, and inf..inf NaN)
MAX_BOUND = 1e300


def _bound(program, option: Option) -> float:
    v = evaluate_setting(program, option.value)
    if not v.unit.dimensionless or not v.expr.is_number:
        raise SweepError(f"a sweep bound must be a plain number, not {v.expr}", option.value.span)
    x = float(v.expr) if v.expr.is_real else math.nan
    if not abs(x) <= MAX_BOUND:
        raise SweepError(f"a sweep bound must be a real number of at most {MAX_BOUND:g}", option.value.span)
    return x


def _values(mode: str, lo: float, hi: float, span: Span) -> list[float]:
    kind, _, count = mode.partition(":")
    if kind == "pow2":
        first, last = math.ceil(math.log2(lo) - 1e-12), math.floor(math.log2(hi) + 1e-12)
        if last - first >= MAX_POINTS:
            raise SweepError(f"a sweep has 1 to {MAX_POINTS} points per symbol, not {last - first + 1}", span)
        return [2.0 ** k for k in range(first, last + 1)]
    if count and not (count.isascii() and count.isdigit()):
        raise SweepError(f"the number of points in {mode!r} must be a whole number", span,
                         "for example lin:100 or log:9")
    n = int(count) if count else DEFAULT_POINTS
    if not 1 <= n <= MAX_POINTS:
        raise SweepError(f"a sweep has 1 to {MAX_POINTS} points per symbol, not {n}", span)
    if kind in ("lin", "log"):  # Python floats from here on (numpy's repr is `np.float64(2.0)`), each once
        spaced = np.linspace(lo, hi, n) if kind == "lin" else np.geomspace(lo, hi, n)
        return sorted({float(v) for v in spaced})  # a degenerate range (lo = hi) is one point
    raise SweepError(f"unknown sweep spacing {mode!r}", span, "use pow2, lin[:N] or log[:N]")


def _shown(analysis, text: str) -> Query:
    """A query of the file by name, or a costlang expression (which may name its unit: `... in tokens/s`)."""
    from costlang.frontend.parser import parse
    for q in analysis.program.queries:
        if q.name == text:
            return q
    module = parse(f"query {text}", "--show")
    if len(module.statements) != 1 or not isinstance(module.statements[0], ast.Query):
        raise SweepError(f"--show takes a query name or one expression, not {text!r}", arg_span("--show", text))
    q = module.statements[0]
    return Query(q.name, q.value, q.span, q.unit, q.unit_span)


def sweep(analysis, axes: Sequence[Axis], shows: Sequence[str]) -> Sweep:
    """Evaluate the shown quantities on the grid of the axes (one or two)."""
    if not 1 <= len(axes) <= 2:
        raise SweepError("a sweep takes one or two symbols")
    if math.prod(len(a.values) for a in axes) > MAX_GRID:  # memory grows with the grid, not the axes
        raise SweepError(f"a sweep has at most {MAX_GRID} points in all, not "
                         f"{' × '.join(str(len(a.values)) for a in axes)}", None,
                         "use fewer points per symbol (e.g. :log:100)")
    plan = _plan(analysis, tuple(a.name for a in axes), tuple(shows))
    syms = plan.symbols
    grid = np.meshgrid(*[np.asarray(a.values, dtype=float) for a in axes], indexing="ij")
    flat = [g.ravel() for g in grid]
    _check_sizes(plan.program, syms, flat)
    columns = tuple(_evaluate(syms, v.expr, flat) for v in plan.values)
    verdicts = plan.verdicts() if len(axes) == 1 else {}
    # one kernel's bounds at a time, so memory stays O(points × outputs) however many kernels
    codes = ((name, _row_bounds(syms, gap, flat, verdicts.get(name))) for name, gap in plan.gaps())
    marks = _marks(codes, len(flat[0]), len(axes[-1].values))
    crossings = _crossings(verdicts)
    return Sweep(tuple(a.name for a in axes), tuple(shows), tuple(flat), columns, marks, crossings,
                 tuple(v.unit for v in plan.values), tuple(len(a.values) for a in axes))


def grid_values(analysis, axes: Sequence[Axis], shows: Sequence[str]):
    """The shown quantities on the grid of the axes (none: at the file's own values), without the
    sweep's marks and crossings: (symbols, grid, exact `Value`s in the symbols, float columns). The
    exact values let a caller decide a point exactly where the floats are too close to tell."""
    if not axes:
        values = tuple(_expression(analysis, _shown(analysis, s), s, ()) for s in shows)
        return (), (), values, tuple(np.asarray([float(v.expr) if v.expr.is_real else math.nan])
                                     for v in values)
    plan = _plan(analysis, tuple(a.name for a in axes), tuple(shows))
    grid = np.meshgrid(*[np.asarray(a.values, dtype=float) for a in axes], indexing="ij")
    flat = tuple(g.ravel() for g in grid)
    _check_sizes(plan.program, plan.symbols, flat)
    return plan.symbols, flat, plan.values, tuple(_evaluate(plan.symbols, v.expr, flat) for v in plan.values)


class _Plan:
    """What every sweep of one analysis over the same symbols and shown quantities shares: the
    program with those symbols free, analysed once, and the shown quantities and each kernel's
    T_memory − T_compute as exact expressions in them (compiled once each: `evaluator`). Kept on
    the analysis (`Analysis.sweep_plans`), so sweeping it again re-runs no part of the pipeline."""

    def __init__(self, analysis, names: tuple, shows: tuple):
        self.program = unbind(for_analysis(analysis.program), list(names))
        # the sweep decides its own verdicts (`verdicts`), exactly, over its first symbol
        self.an = analyze_with_queries(self.program, fusion=analysis.fusion, hardware=analysis.hardware.name,
                                       decide=False)
        self.symbols = tuple(self.program.symbols[n].symbol for n in names)
        self.values = tuple(_expression(self.an, _shown(analysis, s), s, self.symbols) for s in shows)
        self._gaps = self._verdicts = None

    def gaps(self) -> tuple:
        """(kernel, T_memory − T_compute) per kernel (raises, every time, when one is not closed)."""
        if self._gaps is None:
            self._gaps = tuple((k.name, _closed(self.an, k.t_memory - k.t_compute, self.symbols))
                               for k in self.an.kernels)
        return self._gaps

    def verdicts(self) -> dict:
        """Each kernel's exact roofline verdict over the first symbol, where it is regimes of it."""
        if self._verdicts is None:
            self._verdicts = _verdicts(self.an, self.symbols[0])
        return self._verdicts


def _plan(analysis, names: tuple, shows: tuple) -> _Plan:
    plans = analysis.sweep_plans
    found = plans.get((names, shows))
    if found is None:
        if len(plans) >= 64:
            plans.clear()
        found = plans[names, shows] = _Plan(analysis, names, shows)
    return found


def _closed(an, e: sympy.Expr, syms) -> sympy.Expr:
    e = an.value(e)  # remembered across the sweeps of one file
    extra = e.free_symbols - set(syms)
    if extra:
        names = sorted(str(s) for s in extra)
        declared = an.program.symbols.get(names[0])   # point at where the first one is declared
        raise SemanticError(f"this depends on {', '.join(names)}, which the sweep does not set",
                            declared.span if declared is not None else None,
                            f"give {', '.join(names)} a value with --set or sweep it too")
    return e


def _expression(an, query: Query, text: str, syms) -> Value:
    """The shown quantity as an exact expression in the swept symbols, with its unit."""
    expr = query.value
    if isinstance(expr, Call) and expr.func == "bound":
        raise SweepError(f"{text!r} is a verdict; a sweep marks where kernels change bound by itself",
                         expr.span)
    value = stated_unit(query, evaluate_in(an, expr))
    return Value(_closed(an, value.expr, syms), value.unit)


def _check_sizes(program, syms, flat) -> None:
    """Every size is a positive whole number at every point (`fp16[N - M]` at N = 5 is not)."""
    for size, span in program.sizes:
        if not size.free_symbols <= set(syms):
            continue  # it depends on symbols left free: an assumption the report states
        values = _evaluate(syms, size, flat)
        bad = np.nonzero(~((values >= 1) & (np.abs(values - np.round(values)) <= 1e-9 * np.abs(values))))[0]
        if bad.size:
            i = int(bad[0])
            at = ", ".join(f"{s} = {f[i]:.10g}" for s, f in zip(syms, flat))
            raise SweepError(f"at {at}, the size {size} is {values[i]:.10g}: a dimension must be a positive "
                             "whole number", span, "sweep over values where every size is one")


def _evaluate(syms, e: sympy.Expr, flat) -> np.ndarray:
    return evaluator(e, syms)(flat)


#: a row's bound as a number: the sign of T_memory − T_compute (0 balanced; NaN not decided)
_CODES = {MEMORY: 1.0, COMPUTE: -1.0, BALANCED: 0.0}
_BOUNDS = {1.0: MEMORY, -1.0: COMPUTE, 0.0: BALANCED}


def _verdicts(an, sym) -> dict:
    """Each kernel's roofline verdict over `sym`, where it is regimes of `sym` (exact)."""
    out, floors = {}, domain_floors(an.program)
    for k in an.kernels:
        v = within(decide(*(e.xreplace(an.bindings) for e in (k.t_compute, k.t_memory)), sympy.Integer(0), None),
                   floors)
        if v.symbol == sym and v.regimes and all(r.bound in _CODES for r in v.regimes):
            out[k.name] = v
    return out


def _row_bounds(syms, gap, flat, verdict) -> np.ndarray:
    """The kernel's bound at each row as a code of `_CODES`: from the exact regimes when known
    (a row exactly at a crossing is balanced), else from the sign of T_memory − T_compute."""
    if verdict is None:
        return np.sign(_evaluate(syms, gap, flat))
    x, codes = flat[0], np.full(flat[0].shape, np.nan)
    for r in verdict.regimes:
        iv = r.interval
        lo, hi = float(iv.lower), float(iv.upper)
        inside = ((x >= lo) if iv.lower_closed else (x > lo)) & ((x <= hi) if iv.upper_closed else (x < hi))
        codes[inside] = _CODES[r.bound]
    return codes


def _marks(codes, n: int, row_length: int) -> tuple[tuple[Mark, ...], ...]:
    """Per row, the kernels whose bound differs from that of the last row before it (within one
    sweep line) that was not balanced, and the rows where a kernel turns balanced; `codes` yields
    (kernel, the bound code of each row). Vectorised: a million rows cost a few array passes."""
    marks: list = [()] * n
    for name, code in codes:
        c = code.reshape(-1, row_length)
        cols = np.broadcast_to(np.arange(row_length), c.shape)
        valid = (c != 0) & ~np.isnan(c)
        last = np.maximum.accumulate(np.where(valid, cols, -1), axis=1)   # last valid row so far
        before = np.concatenate([np.full((c.shape[0], 1), -1), last[:, :-1]], axis=1)
        prior = np.take_along_axis(c, np.maximum(before, 0), axis=1)
        changed = valid & (before >= 0) & (c != prior)
        previous = np.concatenate([np.full((c.shape[0], 1), 0.0), c[:, :-1]], axis=1)
        balanced = (c == 0) & (previous != 0)   # turns balanced here (never the first row of a line)
        for i in np.nonzero((changed | balanced).ravel())[0].tolist():
            marks[i] = (*marks[i], Mark(name, _BOUNDS[float(code[i])]))
    return tuple(marks)


def _crossings(verdicts: dict) -> tuple[Crossing, ...]:
    """Where each kernel's verdict changes as the symbol varies: the ends between two regimes of
    different bounds (a balanced point between two regimes of one bound is no crossing)."""
    out = []
    for name, v in verdicts.items():
        spans = [r for r in v.regimes if not r.interval.is_point]
        for below, above in zip(spans, spans[1:]):
            if below.bound != above.bound:
                out.append(Crossing(name, v.symbol.name, below.interval.upper, below.bound, above.bound))
    return tuple(out)
