"""Solve: where two quantities meet, for a dim, a param, the bandwidth or the peak.

Input: an `Analysis` and an `ast.Solve` (`solve [label:] lhs REL rhs for X`, or `solve regimes
for X`). Output: a `SolveResult` (a `RegimeMap` for regimes): the closed form in the program's
symbols, the general form in b (bytes per element), Istar (I*) and BW, exact values with the
bindings, whole-number answers for dims, the regimes on each side of each crossing, limits as
X → ∞, approximations, and the derivation steps. Data only; `printers.whatif` formats it.

Method: X is made a plain positive real (so sympy keeps non-integer roots of a dim); each max()
or min() in lhs − rhs is split into its branches and each branch's numerator solved for X; a
root is kept when lhs − rhs is exactly zero there. Regimes come from the sign of lhs − rhs at
exact rational points between the roots. A dim or param the file binds is freed for the solve.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Optional

import sympy

from ..budget import time_budget
from ..errors import BudgetError, SolveError, Span, UnitError, did_you_mean
from ..frontend import ast
from ..ir.expr import unit_words
from ..ir.program import Value
from ..units import BYTE_PER_S, DIMENSIONLESS, FLOP_PER_S, SECOND, Unit
from .queries import evaluate_in
from .variants import Lifted, for_analysis, generalize, lift_hardware, unbind

__all__ = ["Regime", "NoCrossing", "Limit", "Approximation", "WholeAnswer", "Step", "SolveResult",
           "RegimeMap", "solve", "answer_solves", "HARDWARE_TARGETS"]

HARDWARE_TARGETS = ("bandwidth", "peak")
_MAX_EXTREMA = 4  # max()/min() terms split into branches; 2^4 branches at most
# (lhs function, rhs function) → (words where lhs < rhs, where lhs > rhs, lhs = rhs counts as below)
_PAIRS = {("intensity", "critical_intensity"): ("memory-bound", "compute-bound", False),
          ("t_memory", "t_compute"): ("compute-bound", "memory-bound", False),
          ("footprint", "capacity"): ("fits in memory", "does not fit in memory", True)}


@dataclass(frozen=True)
class Regime:
    """An open interval of X (None: the domain's end) where lhs − rhs has one sign."""
    lower: Optional[sympy.Expr]
    upper: Optional[sympy.Expr]
    sign: int
    words: str


@dataclass(frozen=True)
class NoCrossing:
    """Why no X makes the sides meet: the bound one side approaches and the other side's value."""
    side: str                     # the text of the side (or "lhs − rhs") that stays on one side
    extremum: str                 # "sup" or "inf"
    value: sympy.Expr
    where: str                    # e.g. "B → ∞"
    general: Optional[sympy.Expr]  # the same bound in b, Istar, BW, when known
    other: str
    other_value: sympy.Expr
    conditions: tuple[tuple[sympy.Expr, sympy.Basic], ...] = ()  # (closed-form root, when it is > 0)


@dataclass(frozen=True)
class Limit:
    side: str
    closed: sympy.Expr
    general: Optional[sympy.Expr]
    value: Optional[sympy.Expr]


@dataclass(frozen=True)
class Approximation:
    """X* when another symbol grows without bound (e.g. d ≫ B* gives B* ≈ Istar·b/2)."""
    symbol: sympy.Symbol
    expr: sympy.Expr
    value: Optional[sympy.Expr]
    exact: Optional[sympy.Expr]


@dataclass(frozen=True)
class WholeAnswer:
    words: str     # e.g. "smallest whole B that is compute-bound"
    formula: str   # e.g. "ceil(B*)"
    value: sympy.Integer


@dataclass(frozen=True)
class Step:
    text: str
    expr: sympy.Basic


@dataclass(frozen=True)
class SolveResult:
    name: str
    symbol: sympy.Symbol
    unit: Unit
    relation: str
    lhs_text: str
    rhs_text: str
    roots: tuple[sympy.Expr, ...]            # closed forms, in the program's symbols
    general: tuple[Optional[sympy.Expr], ...]  # the same roots in the lifted symbols (or None)
    values: tuple[Optional[sympy.Expr], ...]   # exact values with the bindings (None: symbols free)
    legend: tuple[Lifted, ...]
    regimes: tuple[Regime, ...]
    solution: Optional[sympy.Set]            # for < <= > >=: the X where the relation holds
    whole: tuple[WholeAnswer, ...]
    no_crossing: Optional[NoCrossing]
    limits: tuple[Limit, ...]
    approximations: tuple[Approximation, ...]
    steps: tuple[Step, ...]
    was_bound: Optional[sympy.Expr]          # the value the file gives X (ignored by the solve)
    span: Span
    conditions: tuple[tuple[sympy.Expr, sympy.Basic], ...] = field(default=())
    given: tuple[tuple[sympy.Symbol, sympy.Expr], ...] = field(default=())  # bound symbols in the forms
    side_unit: Unit = DIMENSIONLESS   # the unit of lhs and rhs


@dataclass(frozen=True)
class RegimeMap:
    """`solve regimes for X`: each kernel's crossing T_memory = T_compute and its regimes."""
    name: str
    symbol: sympy.Symbol
    kernels: tuple[tuple[str, object], ...]  # (kernel, SolveResult, or its verdict if X is not in it)
    span: Span


def answer_solves(analysis) -> tuple:
    return tuple(solve(analysis, s) for s in analysis.program.solves)


def solve(analysis, s: ast.Solve):
    """Answer one solve statement over an analysis."""
    setup = _setup(analysis, s.target)
    if s.relation == "regimes":
        return _regime_map(analysis, setup, s)
    lhs, rhs = evaluate_in(setup.an, s.lhs), evaluate_in(setup.an, s.rhs)
    if lhs.unit != rhs.unit and not _plain_number(lhs) and not _plain_number(rhs):
        raise UnitError(f"the two sides of the solve differ: {unit_words(lhs.unit)} and "
                        f"{unit_words(rhs.unit)}", s.span)
    texts = (_text(s.lhs), _text(s.rhs))
    if _plain_number(lhs):
        lhs = Value(lhs.expr, rhs.unit)
    return _solve_sides(analysis, setup, s, (lhs, rhs), texts, _words(s, texts),
                        lambda an: (evaluate_in(an, s.lhs).expr, evaluate_in(an, s.rhs).expr))


def _best_effort(compute, default, span):
    """An extra (general form, limits): left out, not an error, when it exceeds the time budget."""
    try:
        with time_budget(None, "an extra of a solve", span):
            return compute()
    except BudgetError:
        return default


# --- what X is -------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Setup:
    symbol: sympy.Symbol
    kind: str         # dim, param, bandwidth or peak
    unit: Unit
    an: object        # the analysis with X free
    was_bound: Optional[sympy.Expr]


def _setup(analysis, target: ast.Name) -> _Setup:
    from .roofline import analyze
    p, name = analysis.program, target.id
    again = lambda prog: analyze(prog, fusion=analysis.fusion, hardware=analysis.hardware.name)  # noqa: E731
    if name in p.symbols:
        sdef = p.symbols[name]
        if sdef.value is None:  # already free: the analysis itself has X in every figure
            return _Setup(sdef.symbol, sdef.kind, DIMENSIONLESS, analysis, None)
        return _Setup(sdef.symbol, sdef.kind, DIMENSIONLESS, again(unbind(for_analysis(p), [name])),
                      analysis.value(sdef.symbol))
    if name in HARDWARE_TARGETS:
        variant, sym = lift_hardware(p, analysis.hardware, name)
        unit = BYTE_PER_S if name == "bandwidth" else FLOP_PER_S
        current = analysis.hardware.bandwidth if name == "bandwidth" else _single_peak(analysis)
        return _Setup(sym, name, unit, again(variant), analysis.value(current) if current is not None else None)
    raise SolveError(f"cannot solve for '{name}': it is not a dim or param of this file", target.span,
                     did_you_mean(name, [*p.symbols, *HARDWARE_TARGETS])
                     or "solve for a dim, a param, `bandwidth` or `peak`")


def _plain_number(v: Value) -> bool:
    """A bare number on one side stands in the other side's unit (`intensity(y) = 500`)."""
    return v.unit == DIMENSIONLESS and v.expr.is_number


def _single_peak(analysis):
    peaks = {k.peak for k in analysis.kernels}
    return peaks.pop() if len(peaks) == 1 else None


# --- the solve proper -------------------------------------------------------------------------

def _solve_sides(analysis, st: _Setup, s, sides, texts, words, general_sides) -> SolveResult:
    an, var = st.an, st.symbol
    x = sympy.Symbol(var.name, positive=True)  # real, so a dim's non-integer crossing is kept
    dep = {k: v for k, v in an.bindings.items() if var in v.free_symbols}
    closed = [e.xreplace(dep).xreplace({var: x}) for e in (sides[0].expr, sides[1].expr)]
    exact = [e.xreplace(an.bindings).xreplace({var: x}) for e in (sides[0].expr, sides[1].expr)]
    f_num = exact[0] - exact[1]
    if x not in f_num.free_symbols and x not in (closed[0] - closed[1]).free_symbols:
        raise SolveError(f"neither side depends on {var.name}, so there is nothing to solve", s.span,
                         "solve for a dim or param that the two sides use")
    numeric = f_num.free_symbols <= {x}
    with time_budget(None, f"solving {s.name!r}", s.span):
        found = _roots(f_num, x) if numeric else []
        roots = _match_closed(closed[0] - closed[1], x, found, an.bindings) if numeric else \
            tuple(r for r, _ in _branch_roots(closed[0] - closed[1], x))
        regimes = _regimes(f_num, x, [r for r, _ in found], words) if numeric else ()
    values = tuple(r for r, _ in found) if numeric else tuple(None for _ in roots)
    general, legend, g_sides = _best_effort(lambda: _general(analysis, st, x, found, general_sides),
                                            ((), (), None), s.span)
    with time_budget(None, f"explaining why {s.name!r} has no solution", s.span):
        none = _no_crossing(closed, exact, g_sides, x, texts, st.kind == "dim") if numeric and not found else None
    return SolveResult(
        s.name, x, st.unit, s.relation, texts[0], texts[1],
        roots, general, values, legend, regimes, _solution(s, regimes, values, x),
        _whole(st, values, regimes, words), none,
        _best_effort(lambda: _limits(closed, g_sides, exact, x, texts), (), s.span),
        _best_effort(lambda: _approximations(general or roots, x, legend, an.bindings, values), (), s.span),
        _steps(closed, g_sides, x, roots, general, values), st.was_bound, s.span,
        _conditions(roots, x) if not numeric else (), _given(roots, none, an.bindings, x), sides[0].unit)


def _given(roots, none, bindings, x) -> tuple:
    """The bound symbols that the closed forms (or the no-crossing conditions) are written in."""
    exprs = [*roots, *(r for r, _ in (none.conditions if none else ()))]
    used = set().union(*[e.free_symbols for e in exprs]) if exprs else set()
    return tuple((sym, bindings[sym]) for sym in sorted(used - {x}, key=str) if sym in bindings)


def _branches(f: sympy.Expr):
    """f with each max()/min() replaced by one of its arguments (every combination)."""
    extrema = sorted(f.atoms(sympy.Max, sympy.Min), key=sympy.default_sort_key)
    if len(extrema) > _MAX_EXTREMA:
        raise SolveError(f"the equation has {len(extrema)} max()/min() terms; at most "
                         f"{_MAX_EXTREMA} can be split into cases")
    if not extrema:
        return [f]
    return [f.xreplace(dict(zip(extrema, choice))) for choice in itertools.product(*[e.args for e in extrema])]


def _branch_roots(f: sympy.Expr, x: sympy.Symbol):
    """(root, branch index) of every branch's numerator; symbolic roots are not checked."""
    out = []
    for i, g in enumerate(_branches(f)):
        numer, _ = sympy.fraction(sympy.together(g))
        numer = sympy.expand(numer)
        if numer.is_zero:
            raise SolveError("the two sides are equal for every value in a range; there is no "
                             "single crossing to report")
        if x not in numer.free_symbols:
            continue
        for r in sympy.solve(numer, x):
            if all(r != seen for seen, _ in out):
                out.append((r, i))
    return out


def _roots(f: sympy.Expr, x: sympy.Symbol):
    """Exact positive real roots of f (one free symbol x), ascending, with their branch."""
    found = []
    for r, i in _branch_roots(f, x):
        if r.is_real and r.is_positive and sympy.simplify(f.xreplace({x: r})) == 0:
            found.append((sympy.nsimplify(r) if r.is_Float else r, i))
    return sorted(found, key=lambda ri: sympy.N(ri[0], 30))


def _match_closed(f_closed, x, found, bindings) -> tuple:
    """For each exact root, the closed-form root (program symbols kept) that evaluates to it."""
    if not found or f_closed.free_symbols <= {x}:
        return tuple(r for r, _ in found)
    candidates = _branch_roots(f_closed, x)
    out = []
    for r, _ in found:
        match = next((c for c, _ in candidates if sympy.simplify(c.xreplace(bindings) - r) == 0), r)
        out.append(_tidy(match))
    return tuple(out)


def _tidy(e: sympy.Expr) -> sympy.Expr:
    """A root as a factored fraction whose numerator has no leading minus sign."""
    if not e.is_rational_function():
        return e
    numer, denom = sympy.fraction(sympy.factor(e))
    if numer.could_extract_minus_sign():
        numer, denom = -numer, sympy.factor_terms(sympy.expand(-denom))
    if numer.could_extract_minus_sign() or denom.could_extract_minus_sign():
        numer, denom = sympy.expand(numer if not denom.could_extract_minus_sign() else -numer), \
            denom if not denom.could_extract_minus_sign() else -denom
    return numer / denom


def _general(analysis, st: _Setup, x, found, general_sides):
    """The roots in b, Istar and BW (dtype sizes and hardware made symbolic), matched to `found`."""
    from .roofline import analyze
    if st.kind in HARDWARE_TARGETS:
        return (), (), None
    program, legend = generalize(st.an.program, st.an.hardware)
    an = analyze(program, fusion=analysis.fusion, hardware=st.an.hardware.name)
    dep = {k: v for k, v in an.bindings.items() if st.symbol in v.free_symbols}
    sides = [e.xreplace(dep).xreplace({st.symbol: x}) for e in general_sides(an)]
    values = {item.symbol: item.value for item in legend}
    candidates = _branch_roots(sides[0] - sides[1], x) if found else []
    general = []
    for r, _ in found:
        match = next((c for c, _ in candidates
                      if sympy.simplify(c.xreplace(values).xreplace(st.an.bindings) - r) == 0), None)
        general.append(_tidy(match) if match is not None else None)
    used = set().union(*[g.free_symbols for g in general if g is not None], *[e.free_symbols for e in sides])
    return tuple(general), tuple(item for item in legend if item.symbol in used), sides


# --- regimes, whole numbers, solution sets -----------------------------------------------------

def _sign_at(f, x, point) -> int:
    value = sympy.nsimplify(f.xreplace({x: point}))
    return 1 if value.is_positive else -1 if value.is_negative else 0


def _regimes(f, x, roots, words) -> tuple[Regime, ...]:
    """Maximal intervals of one sign of f, cut at the roots."""
    cuts = [None, *roots, None]
    out: list[Regime] = []
    for lo, hi in zip(cuts, cuts[1:]):
        point = _between(lo, hi)
        sign = _sign_at(f, x, point)
        if out and out[-1].sign == sign:
            out[-1] = Regime(out[-1].lower, hi, sign, out[-1].words)
            continue
        out.append(Regime(lo, hi, sign, words[0] if sign < 0 else words[1] if sign > 0 else "equal"))
    return tuple(out)


def _between(lo, hi) -> sympy.Expr:
    """An exact rational point strictly inside (lo, hi); None is 0 below and ∞ above."""
    lo_f = sympy.Rational(0) if lo is None else sympy.nsimplify(sympy.N(lo, 30), rational=True)
    if hi is None:
        return 2 * lo_f + 1
    hi_f = sympy.nsimplify(sympy.N(hi, 30), rational=True)
    return (lo_f + hi_f) / 2


def _whole(st: _Setup, values, regimes, words) -> tuple[WholeAnswer, ...]:
    """For a dim: the last whole number below and the first above each crossing."""
    if st.kind != "dim" or not values or None in values:
        return ()
    out, name = [], st.symbol.name
    for r, (below, above) in zip(values, zip(regimes, regimes[1:])):
        integer = r.is_integer
        inclusive = words[2] and below.sign < 0
        last = sympy.floor(r) if (inclusive or not integer) else r - 1
        first = sympy.ceiling(r) if not integer else r + 1
        if last >= 1:
            formula = f"floor({name}*)" if (inclusive or not integer) else f"{name}* - 1"
            out.append(WholeAnswer(f"largest whole {name} that {_is(below.words)}", formula, last))
        out.append(WholeAnswer(f"smallest whole {name} that {_is(above.words)}",
                               f"ceil({name}*)" if not integer else f"{name}* + 1", first))
    return tuple(out)


def _is(words: str) -> str:
    """'is memory-bound', but 'fits in memory' (regime words used as a predicate)."""
    return words if words.split()[0] in ("fits", "does") else f"is {words}"


def _solution(s, regimes, values, x) -> Optional[sympy.Set]:
    """Where an inequality holds, as a union of intervals of X > 0 (exact)."""
    rel = s.relation
    if rel == "=" or not regimes:
        return None
    want = -1 if rel in ("<", "<=") else 1
    closed = rel in ("<=", ">=")
    parts = [sympy.Interval(r.lower if r.lower is not None else 0, r.upper if r.upper is not None else sympy.oo,
                            left_open=not (closed and r.lower is not None), right_open=not closed)
             for r in regimes if r.sign == want]
    return sympy.Union(*parts) if parts else sympy.EmptySet


# --- no crossing, limits, approximations ------------------------------------------------------

def _extremes(e, x, whole: bool):
    """Candidates for sup/inf of e over the domain (x ≥ 1 for a dim, x > 0 else): its ends
    (costs are monotone in a size)."""
    low = (e.xreplace({x: 1}), f"{x} = 1") if whole else (sympy.limit(e, x, 0, "+"), f"{x} → 0")
    return [low, (sympy.limit(e, x, sympy.oo), f"{x} → ∞")]


def _no_crossing(closed, exact, g_sides, x, texts, whole: bool) -> NoCrossing:
    """Which side stays below or above, its sup or inf, and when a crossing would exist."""
    lhs, rhs = exact
    varies_rhs = x in rhs.free_symbols
    side, text, other_text = (lhs - rhs, f"{texts[0]} − {texts[1]}", "0") if varies_rhs else (lhs, texts[0], texts[1])
    other = sympy.Integer(0) if varies_rhs else rhs
    below = _sign_at(lhs - rhs, x, sympy.Integer(1)) < 0
    cands = [(v, w) for v, w in _extremes(side, x, whole) if v.is_real or v in (sympy.oo, -sympy.oo)]
    value, where = (max if below else min)(cands, key=lambda vw: sympy.N(vw[0], 30))
    general = None
    if g_sides is not None and not varies_rhs and where.endswith("∞"):
        general = sympy.factor(sympy.limit(g_sides[0], x, sympy.oo))
    conditions = _conditions(tuple(r for r, _ in _branch_roots(closed[0] - closed[1], x)), x)
    if g_sides is not None:
        lifted = (g_sides[0] - g_sides[1]).free_symbols - (closed[0] - closed[1]).free_symbols
        conditions += _conditions(tuple(r for r, _ in _branch_roots(g_sides[0] - g_sides[1], x)), x, lifted)
    return NoCrossing(text, "sup" if below else "inf", value, where, general, other_text, other, conditions)


def _conditions(roots, x, lifted=()) -> tuple:
    """For each symbolic root not known to be positive: when it is (a condition on one symbol)."""
    out = []
    for r in roots:
        if r.is_positive:
            continue
        cond = _positive_when(r, x, set(lifted))
        if cond is not None:
            out.append((_tidy(r), cond))
    return tuple(out)


def _positive_when(r, x, lifted) -> Optional[sympy.Basic]:
    """r > 0 as a condition on one program symbol, when a single factor of r has an unknown sign
    and is linear in that symbol (d − Istar·b > 0 ⇔ d > Istar·b)."""
    numer, denom = sympy.fraction(sympy.factor(r))
    factors = [*sympy.Mul.make_args(sympy.factor(numer)), *sympy.Mul.make_args(sympy.factor(denom))]
    unknown = [f for f in factors if f.is_positive is None and f.is_negative is None]
    if len(unknown) != 1 or not isinstance(unknown[0], sympy.Add):
        return None
    rest = sympy.Mul(*[f for f in factors if f is not unknown[0]])
    sign = 1 if rest.is_positive else -1 if rest.is_negative else 0
    for s in sorted(unknown[0].free_symbols - {x}, key=lambda v: (v in lifted, str(v))):
        poly = sympy.Poly(unknown[0], s)
        if sign and poly.degree() == 1 and poly.LC().is_nonzero:
            threshold = _tidy(sympy.solve(unknown[0], s)[0])
            above = (poly.LC().is_positive and sign > 0) or (poly.LC().is_negative and sign < 0)
            return sympy.StrictGreaterThan(s, threshold) if above else sympy.StrictLessThan(s, threshold)
    return None


def _limits(closed, g_sides, exact, x, texts) -> tuple[Limit, ...]:
    out = []
    for i in (0, 1):
        if x not in exact[i].free_symbols:
            continue
        value = sympy.limit(exact[i], x, sympy.oo)
        general = sympy.factor(sympy.limit(g_sides[i], x, sympy.oo)) if g_sides is not None else None
        out.append(Limit(texts[i], sympy.factor(sympy.limit(closed[i], x, sympy.oo)), general,
                         value if value.is_number else None))
    return tuple(out)


def _approximations(roots, x, legend, bindings, values) -> tuple[Approximation, ...]:
    """X* as each program symbol in it grows without bound (the large-size approximation)."""
    lifted = {item.symbol: item.value for item in legend}
    out = []
    for r, exact in zip(roots, values):
        if r is None:
            continue
        for s in sorted(r.free_symbols - set(lifted) - {x}, key=str):
            approx = sympy.limit(r, s, sympy.oo)
            if approx.is_finite and not approx.is_zero and approx.free_symbols != r.free_symbols:
                value = approx.xreplace(lifted).xreplace(bindings)
                out.append(Approximation(s, approx, value if value.is_number else None, exact))
    return tuple(out)


def _steps(closed, g_sides, x, roots, general, values) -> tuple[Step, ...]:
    steps = [Step("the equation, in the program's symbols", sympy.Eq(closed[0], closed[1]))]
    if g_sides is not None:
        steps.append(Step("in b (bytes per element), Istar (I*) and BW", sympy.Eq(g_sides[0], g_sides[1])))
    numer, _ = sympy.fraction(sympy.together(closed[0] - closed[1]))
    if not numer.atoms(sympy.Max, sympy.Min):
        steps.append(Step("clear the denominators", sympy.Eq(sympy.expand(numer), 0)))
    for r, g, v in itertools.zip_longest(roots, general, values):
        if g is not None:
            steps.append(Step(f"solve for {x}, in general", sympy.Eq(x, g)))
        if r is not None:
            steps.append(Step(f"solve for {x}", sympy.Eq(x, r)))
        if v is not None and v != r:
            steps.append(Step("with the bound values", sympy.Eq(x, v)))
    return tuple(steps)


# --- regime map ---------------------------------------------------------------------------------

def _regime_map(analysis, st: _Setup, s: ast.Solve) -> RegimeMap:
    out = []
    for k in st.an.kernels:
        if st.symbol not in (k.t_memory - k.t_compute).xreplace(st.an.bindings).free_symbols:
            out.append((k.name, str(k.bound)))
            continue

        def sides(an, name=k.name):
            kr = next(kk for kk in an.kernels if kk.name == name)
            return kr.t_memory, kr.t_compute
        texts = (f"t_memory({k.name})", f"t_compute({k.name})")
        solve_k = ast.Solve(f"{s.name}: {k.name}", None, "=", None, s.target, s.span)
        out.append((k.name, _solve_sides(analysis, st, solve_k, (Value(k.t_memory, SECOND),
                    Value(k.t_compute, SECOND)), texts, _PAIRS[("t_memory", "t_compute")], sides)))
    return RegimeMap(s.name, st.symbol, tuple(out), s.span)


# --- words -------------------------------------------------------------------------------------

def _text(expr: ast.Expr) -> str:
    s = expr.span
    if s.line != s.end_line:
        return "…"
    return s.source.line(s.line)[s.column - 1: s.end_column - 1]


def _words(s: ast.Solve, texts) -> tuple[str, str, bool]:
    """Regime names for lhs < rhs and lhs > rhs: the roofline's words where they apply."""
    funcs = tuple(e.func if isinstance(e, ast.Call) else None for e in (s.lhs, s.rhs))
    if funcs in _PAIRS:
        return _PAIRS[funcs]
    if funcs[::-1] in _PAIRS:
        below, above, inclusive = _PAIRS[funcs[::-1]]
        return above, below, False
    return f"{texts[0]} < {texts[1]}", f"{texts[0]} > {texts[1]}", False
