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
What needs no sympy (the data, the axes' syntax, the marks) is `queries.tabulate`'s.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import sympy

from costlang.errors import SemanticError
from costlang.frontend import ast
from costlang.ir.expr import Call, Option
from costlang.ir.statements import Query
from costlang.ir.program import Value
from costlang.queries.tabulate import (CODES as _CODES, DEFAULT_POINTS, MAX_BOUND, MAX_GRID, MAX_POINTS, Axis,
                                       CompiledPlan, Crossing, Mark, Sweep, SweepError, arg_span, axis_from_text,
                                       first_bad_size, grid as _grid)
from costlang.queries.vectorised import evaluator
from costlang.analysis.verdict import decide, domain_floors, within
from costlang.queries.evaluate import analyze_with_queries, evaluate_in, stated_unit
from costlang.frontend.edits import unbind
from costlang.frontend.variants import evaluate_setting, for_analysis

__all__ = ["Axis", "Crossing", "Mark", "Sweep", "SweepError", "parse_axis", "sweep", "grid_values", "arg_span",
           "compiled_plan", "DEFAULT_POINTS", "MAX_POINTS", "MAX_GRID"]


def parse_axis(program, text: str, default: str = "lin") -> Axis:
    """`NAME=LO..HI[:pow2|:lin[:N]|:log[:N]]` or an explicit list `NAME=V1,V2,...`; bounds and
    values are costlang expressions. `default` is the spacing when the range names none."""
    from costlang.frontend.settings import parse_settings
    kinds = {n: d.kind for n, d in program.symbols.items()}
    return axis_from_text(text, default, kinds,
                          lambda name, t: _bound(program, parse_settings(f"{name} = {t}", "--over")[0]))


def _bound(program, option: Option) -> float:
    v = evaluate_setting(program, option.value)
    if not v.unit.dimensionless or not v.expr.is_number:
        raise SweepError(f"a sweep bound must be a plain number, not {v.expr}", option.value.span)
    x = float(v.expr) if v.expr.is_real else math.nan
    if not abs(x) <= MAX_BOUND:
        raise SweepError(f"a sweep bound must be a real number of at most {MAX_BOUND:g}", option.value.span)
    return x


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
    flat = _grid(axes)
    _check_sizes(plan.program, plan.symbols, flat)
    return plan.compiled().tabulate(axes, flat)


def grid_values(analysis, axes: Sequence[Axis], shows: Sequence[str]):
    """The shown quantities on the grid of the axes (none: at the file's own values), without the
    sweep's marks and crossings: (symbols, grid, exact `Value`s in the symbols, float columns). The
    exact values let a caller decide a point exactly where the floats are too close to tell."""
    if not axes:
        values = tuple(_expression(analysis, _shown(analysis, s), s, ()) for s in shows)
        return (), (), values, tuple(np.asarray([float(v.expr) if v.expr.is_real else math.nan])
                                     for v in values)
    plan = _plan(analysis, tuple(a.name for a in axes), tuple(shows))
    flat = tuple(_grid(axes))
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
        self.names, self.shows = names, shows
        self.values = tuple(_expression(self.an, _shown(analysis, s), s, self.symbols) for s in shows)
        self._gaps = self._verdicts = self._compiled = None

    def gaps(self) -> tuple:
        """(kernel, T_memory − T_compute) per kernel (raises, every time, when one is not closed)."""
        if self._gaps is None:
            self._gaps = tuple((k.name, _closed(self.an, k.t_memory - k.t_compute, self.symbols))
                               for k in self.an.kernels)
        return self._gaps

    def compiled(self) -> CompiledPlan:
        """The plan compiled (`tabulate.CompiledPlan`): the shown quantities, the sizes in the swept
        symbols, and each kernel's exact regimes over the first symbol when one symbol is swept and
        they are regimes of it, else its T_memory − T_compute; the crossings of those regimes."""
        if self._compiled is None:
            syms = self.symbols
            values = tuple(evaluator(v.expr, syms) for v in self.values)
            verdicts = self.verdicts() if len(syms) == 1 else {}
            kernels = tuple((name, _float_regimes(verdicts[name]) if name in verdicts else evaluator(gap, syms))
                            for name, gap in self.gaps())
            sizes = tuple(evaluator(size, syms) for size, _ in self.program.sizes if size.free_symbols <= set(syms))
            self._compiled = CompiledPlan(self.names, self.shows, values,
                                          tuple(v.unit for v in self.values), sizes, kernels, _crossings(verdicts))
        return self._compiled

    def verdicts(self) -> dict:
        """Each kernel's exact roofline verdict over the first symbol, where it is regimes of it."""
        if self._verdicts is None:
            self._verdicts = _verdicts(self.an, self.symbols[0])
        return self._verdicts


def compiled_plan(analysis, names: tuple, shows: tuple) -> CompiledPlan:
    """The compiled plan of the sweeps of `analysis` over `names` showing `shows` (made once)."""
    return _plan(analysis, tuple(names), tuple(shows)).compiled()


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
        i = first_bad_size(values)
        if i is not None:
            at = ", ".join(f"{s} = {f[i]:.10g}" for s, f in zip(syms, flat))
            raise SweepError(f"at {at}, the size {size} is {values[i]:.10g}: a dimension must be a positive "
                             "whole number", span, "sweep over values where every size is one")


def _evaluate(syms, e: sympy.Expr, flat) -> np.ndarray:
    return evaluator(e, syms)(flat)


def _verdicts(an, sym) -> dict:
    """Each kernel's roofline verdict over `sym`, where it is regimes of `sym` (exact)."""
    out, floors = {}, domain_floors(an.program)
    for k in an.kernels:
        v = within(decide(*(e.xreplace(an.bindings) for e in (k.t_compute, k.t_memory)), sympy.Integer(0), None),
                   floors)
        if v.symbol == sym and v.regimes and all(r.bound in _CODES for r in v.regimes):
            out[k.name] = v
    return out


def _float_regimes(verdict) -> tuple:
    """A verdict's regimes as `regime_codes` takes them: float ends, closed or not, bound code."""
    return tuple((float(r.interval.lower), float(r.interval.upper), r.interval.lower_closed,
                  r.interval.upper_closed, _CODES[r.bound]) for r in verdict.regimes)


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
