"""Query curves: a query in one free symbol over a range, its reference line and where they cross.

Input: an `Analysis`, the name of a numeric query whose value depends on exactly one free dim or
param, an exact range LO..HI of that symbol and the reference the curve is read against (I* for
an intensity, or another query). Output: a `QueryCurve`: the sample points and the query's values
(and the reference's) as numpy arrays, tabulated by `analysis.sweep` (each exact expression
evaluated once on the whole grid, one numpy operation per node, no code generated), and the
exact crossings of query and reference in the range (sympy). Data only; `printers.plot` draws it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np
import sympy

from costlang.budget import time_budget
from costlang.errors import BudgetError, SemanticError, did_you_mean
from costlang.frontend.expr import unit_words
from costlang.units import INTENSITY
from costlang.queries.sweep import Axis, arg_span, sweep

__all__ = ["QueryCurve", "Trajectory", "query_curve", "kernel_trajectories", "crossings", "CURVE_POINTS",
           "ISTAR"]

CURVE_POINTS = 200
ISTAR = "istar"   # the name `--against` uses for the critical intensity I*


@dataclass(frozen=True)
class QueryCurve:
    symbol: str                      # the swept dim or param
    label: str                       # the query's name
    xs: np.ndarray                   # sample points, geometric from lo to hi
    ys: np.ndarray                   # the query at each point
    reference_label: str             # "I*", the other query's name, or "" (no reference)
    reference: Optional[np.ndarray]  # the reference at each point
    crossings: tuple[tuple[sympy.Expr, sympy.Expr], ...]  # exact (x, value) where they meet


@dataclass(frozen=True)
class Trajectory:
    """A kernel's roofline point as one free symbol moves: (I, attainable) at each sample."""
    kernel: str
    symbol: str
    xs: np.ndarray                        # the symbol's sample values
    intensity: np.ndarray                 # I at each sample (FLOP/B)
    attainable: np.ndarray                # min(peak, BW·I) at each sample (FLOP/s)
    critical_intensity: float             # I* of the kernel (where it changes bound)
    peak: float                           # the kernel's compute ceiling (FLOP/s)
    crossings: tuple[sympy.Expr, ...]     # exact values of the symbol where I = I*, in the range
    changes: tuple[tuple, ...] = ()       # per crossing, (the bound below, the bound above)


def kernel_trajectories(analysis, axis: Axis) -> tuple[Trajectory, ...]:
    """Each kernel's (I, attainable) along `axis`, tabulated by `analysis.sweep` (numpy, one pass per
    expression), with the exact values of the symbol where the kernel crosses I* (within the axis)."""
    names = [k.ops[-1] for k in analysis.kernels]   # an op's name stands for its whole (fused) kernel
    shows = [f"{f}({n})" for n in names for f in ("intensity", "attainable")]
    table = sweep(analysis, [axis], shows)
    lo, hi = min(axis.values), max(axis.values)
    out = []
    for n, k in enumerate(analysis.kernels):
        istar = analysis.value(k.critical_intensity)
        found = [c for c in table.crossings if c.kernel == k.name and lo <= c.value <= hi]
        out.append(Trajectory(k.name, axis.name, np.asarray(axis.values, dtype=float), table.columns[2 * n],
                              table.columns[2 * n + 1], float(istar), float(istar * analysis.hardware.bandwidth),
                              tuple(c.value for c in found), tuple((c.below, c.above) for c in found)))
    return tuple(out)


def query_curve(analysis, name: str, lo: sympy.Rational, hi: sympy.Rational,
                against: Optional[str] = None, points: int = CURVE_POINTS, symbol_name: Optional[str] = None,
                xs=None) -> QueryCurve:
    """The query `name` on `points` geometric steps of its free symbol from `lo` to `hi` (> 0);
    `symbol_name`, when given, must be that free symbol (the command line's `--over NAME=...`), and
    `xs` replaces the geometric steps by the given sample points."""
    query = _numeric_query(analysis, name, "to sweep")
    expr = analysis.value(query.expr)
    symbol = _free_symbol(name, expr)
    if symbol_name is not None and symbol.name != symbol_name:
        raise SemanticError(f"query {name!r} depends on {symbol}, not on {symbol_name}",
                            arg_span("--over", symbol_name),
                            f"sweep it --over {symbol}=LO..HI")
    label, reference = _reference(analysis, name, query, against)
    if reference is not None and not reference.free_symbols <= {symbol}:
        raise SemanticError(f"the reference {label!r} depends on "
                            f"{', '.join(sorted(map(str, reference.free_symbols - {symbol})))}, "
                            f"not only on {symbol}", arg_span("--against", against or label),
                            "give those symbols a value with --set")
    xs = np.geomspace(float(lo), float(hi), points) if xs is None else np.asarray(xs, dtype=float)
    varying = reference is not None and symbol in reference.free_symbols
    table = sweep(analysis, [Axis(symbol.name, tuple(xs))], [name] + ([against] if varying else []))
    ref = None if reference is None else (
        table.columns[1] if varying else np.full_like(xs, float(reference)))
    found = crossings(expr, reference, symbol, lo, hi) if reference is not None else ()
    return QueryCurve(symbol.name, name, xs, table.columns[0], label, ref, found)


def _numeric_query(analysis, name: str, purpose: str, flag: str = "--sweep"):
    by_name = {q.name: q for q in analysis.queries}
    value = by_name[name].value if name in by_name else None
    if not hasattr(value, "expr"):
        numeric = sorted(n for n, q in by_name.items() if hasattr(q.value, "expr"))
        raise SemanticError(f"there is no numeric query named {name!r} {purpose}", arg_span(flag, name),
                            did_you_mean(name, numeric) or
                            ("queries: " + ", ".join(numeric) if numeric else "the file has no numeric query"))
    return value


def _free_symbol(name: str, expr) -> sympy.Symbol:
    free = sorted(getattr(expr, "free_symbols", ()), key=str)
    if len(free) != 1:
        names = f" ({', '.join(map(str, free))})" if free else ""
        raise SemanticError(f"query {name!r} must depend on exactly one free symbol to be swept, "
                            f"not {len(free)}{names}", arg_span("--sweep", name),
                            "leave one `dim` or `param` without a value, or set the others with --set")
    return free[0]


def _reference(analysis, name: str, query, against: Optional[str]):
    """(label, exact reference) for `against`: I* by default for an intensity, else none."""
    if against is None and query.unit != INTENSITY:
        return "", None
    if against in (None, ISTAR):
        if query.unit != INTENSITY:
            raise SemanticError(f"I* is an intensity, but query {name!r} is in {unit_words(query.unit)}",
                                arg_span("--sweep", name), "sweep an intensity, or pass --against another query")
        kernel = _one_kernel_intensity(analysis, name)
        if kernel is not None:    # intensity(y): y's own I*, as solve and sweep compare it with
            return f"I* of {kernel.name}", analysis.value(kernel.critical_intensity)
        return "I*", analysis.value(analysis.totals.critical_intensity)
    other = _numeric_query(analysis, against, "to sweep against", "--against")
    if other.unit != query.unit:
        raise SemanticError(f"query {name!r} is in {unit_words(query.unit)} but {against!r} is in "
                            f"{unit_words(other.unit)}: they cannot cross", arg_span("--against", against))
    return against, analysis.value(other.expr)


def _one_kernel_intensity(analysis, name: str):
    """The kernel whose intensity the query `name` is, when the file wrote it `intensity(X)` of
    one kernel or tensor; None for anything else (the whole program's, an instance's, a formula)."""
    from costlang.ir.expr import Call, Name
    from costlang.analysis.roofline import KernelResult
    from costlang.queries.evaluate import target_of
    source = next((q for q in analysis.program.queries if q.name == name), None)
    node = getattr(source, "value", None)
    if not (isinstance(node, Call) and node.func == "intensity" and len(node.args) == 1
            and isinstance(node.args[0], Name)):
        return None
    target = target_of(analysis, node)
    return target if isinstance(target, KernelResult) else None


def crossings(expr, reference, symbol, lo, hi) -> tuple[tuple[sympy.Expr, sympy.Expr], ...]:
    """(x, value) where `expr` equals `reference` for `symbol` in [lo, hi], exact, ascending.

    The symbol is taken as a positive real, so a dim's crossing between two whole numbers counts.
    Equations sympy cannot solve within the time budget give no crossings (the curve stands).

    >>> n = sympy.Symbol("n", positive=True, integer=True)
    >>> crossings(n / 3, sympy.Integer(500), n, 1, 10**4)
    ((1500, 500),)
    >>> crossings(2 * n, sympy.Integer(899), n, 1, 10**4)
    ((899/2, 899),)
    """
    x = sympy.Symbol(symbol.name, positive=True)
    f = (expr - reference).xreplace({symbol: x})
    try:
        with time_budget(None, f"finding where the sweep of {symbol} crosses its reference"):
            roots = sympy.solve(f, x)
    except (NotImplementedError, BudgetError):
        return ()
    found = sorted({r for r in roots if r.is_real and lo <= r <= hi}, key=lambda r: sympy.N(r, 30))
    return tuple((r, expr.xreplace({symbol: r})) for r in found)
