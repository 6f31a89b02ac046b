"""Solve: where two quantities meet, for a dim, a param, the bandwidth or the peak.

Input: an `Analysis` and an IR `Solve` (`solve [label:] lhs REL rhs for X`, or `solve regimes
for X`). Output: a `SolveResult` (a `RegimeMap` for regimes): the closed form in the program's
symbols, the general form in b (bytes per element), Istar (I*) and BW, exact values with the
bindings, whole-number answers for dims, the regimes on each side of each crossing, limits as
X → ∞, approximations, and the derivation steps. Data only; `printers.whatif` formats it.

Method: X is made a plain positive real (so sympy keeps non-integer roots of a dim); each max()
or min() in lhs − rhs (T_kernel's max(T_compute, T_memory)) is split into its branches
(`extrema`) and each branch's numerator solved for X. With every other symbol bound, a root is
kept when lhs − rhs is exactly zero there, and regimes come from the sign of lhs − rhs at exact
rational points between the roots; with other symbols free, a root is kept unless its branch
provably does not hold there, and the regimes come from the sign of lhs − rhs as X → 0⁺ and ∞.
A dim or param the file binds is freed for the solve. The notes beside the answer (no-crossing
reasons, limits, approximations) are in `solve_notes`.
"""
from __future__ import annotations

import dataclasses

from costlang.budget import running

import itertools
from dataclasses import dataclass, field, replace
from typing import Optional

import sympy
from sympy.core.function import PoleError

from costlang.budget import time_budget
from costlang.errors import BudgetError, SolveError, Span, UnitError, did_you_mean
from costlang.ir.expr import BinOp, Call, Expr, Name, Neg
from costlang.ir.statements import Solve
from costlang.frontend.expr import unit_words
from costlang.ir.program import Value
from costlang.units import BYTE_PER_S, DIMENSIONLESS, FLOP_PER_S, SECOND, Unit
from costlang.analysis.bounds import COMPUTE, MEMORY
from costlang.analysis.regimes import SYMPY_FAILURES
from costlang.queries.solve_terms import Case, Side, StepKind, Taken, Undecided, sides_of
from costlang.queries.extrema import Branch, branch_conditions, branch_roots, branches, holds_at, sign_near, ties_at
from costlang.queries.numeric_roots import Scan, is_solvable, scan
from costlang.analysis.roofline import analyze_roofline
from costlang.analysis.memo import settle, substitute
from costlang.queries.evaluate import analyze_with_queries, evaluate_in
from costlang.queries.solve_notes import (Approximation, Limit, NoCrossing, approximations, conditions, limits, no_crossing,
                          sign_at, tidy)
from costlang.frontend.edits import unbind
from costlang.frontend.variants import HARDWARE_TARGETS, Lifted, for_analysis, generalize, lift_hardware

__all__ = ["Regime", "NoCrossing", "Limit", "Approximation", "WholeAnswer", "Step", "SolveResult",
           "RegimeMap", "Side", "Case", "Taken", "StepKind", "Undecided", "solve", "answer_solves",
           "HARDWARE_TARGETS"]

@dataclass(frozen=True)
class Regime:
    """An open interval of X (None: the domain's end) where lhs − rhs has one sign."""
    lower: Optional[sympy.Expr]
    upper: Optional[sympy.Expr]
    sign: int
    side: Side


@dataclass(frozen=True)
class WholeAnswer:
    """The largest whole X below a crossing X* (or the smallest above it) in the regime `side`."""
    largest: bool
    side: Side            # the regime on that side of X*
    crossing: sympy.Expr  # X*, exact
    rounding: str         # how `value` follows from X*: "floor", "ceil", "minus_one", "plus_one"
    value: Optional[sympy.Integer]  # None: no whole number tried on that side is accepted by the file
    #: whole numbers nearer X* that the file itself rejects (a shard that does not divide, …),
    #: each with the first sentence of its error; `value` is the first one it accepts
    rejected: tuple[tuple[sympy.Integer, str], ...] = ()


@dataclass(frozen=True)
class Step:
    kind: StepKind
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
    #: per root, the max()/min() branch it lies on (y is memory-bound there; not certain when that
    #: depends on free symbols; None when the equation has no max() or the root is at a tie)
    cases: tuple[Optional[Case], ...] = field(default=())
    #: what sympy could not decide: the printers say so instead of leaving a line out
    undecided: tuple[Undecided, ...] = field(default=())
    #: sizes that must equal X (K and J of a matmul) and follow it while X is free: (name, value)
    ties: tuple[tuple[str, sympy.Expr], ...] = field(default=())
    #: per closed-form root, the conditions on the program's symbols under which it holds: its
    #: max()/min() branch is the one taken (another branch gives X* elsewhere); () when none
    validity: tuple[tuple[sympy.Basic, ...], ...] = field(default=())
    #: where sympy cannot find every root exactly (ceil() or an exponential of X): the sign changes
    #: of lhs − rhs found by a scan and bisection on the exact expression; `numeric` marks, per
    #: root, the ones found that way (a decimal, not a closed form)
    scan: Optional[Scan] = None
    numeric: tuple[bool, ...] = field(default=())


@dataclass(frozen=True)
class RegimeMap:
    """`solve regimes for X`: each kernel's crossing T_memory = T_compute and its regimes."""
    name: str
    symbol: sympy.Symbol
    kernels: tuple[tuple[str, object], ...]  # (kernel, SolveResult, or its Verdict if X is not in it)
    span: Span


def answer_solves(analysis, extras: bool = True) -> tuple:
    """Every solve of the program. `extras=False` (a what-if scenario's column, which shows the
    roots only) leaves out the general form in hardware symbols, the
    limits, approximations, conditions, why a solve has no crossing and the whole-number answers
    (each of which the file is rebuilt to accept): each costs another analysis or sympy's limits."""
    setups: dict = {}   # solves for the same X share its analysis (and its general form)
    if not extras:
        setups["no extras"] = True
    answers: dict = {}  # a solve stated again (same sides, relation and X) is answered once
    out = []
    for s in analysis.program.solves:
        key = (s.relation, s.target.id) + ((_text(s.lhs), _text(s.rhs)) if s.relation != "regimes" else ())
        if "…" in key or key not in answers:
            with running("answering this solve", s.span):
                answers[key] = solve(analysis, s, setups)
        out.append(replace(answers[key], name=s.name, span=s.span))
    return tuple(out)


def solve(analysis, s: Solve, setups: Optional[dict] = None):
    """Answer one solve statement over an analysis (`setups`: X → its setup, filled as they are made)."""
    setups = {} if setups is None else setups
    if s.target.id not in setups:
        setups[s.target.id] = dataclasses.replace(_setup(analysis, s.target),
                                                  extras=not setups.get("no extras", False))
    setup = setups[s.target.id]
    if s.relation == "regimes":   # one budget for the whole map, however many kernels it has
        with time_budget(None, lambda: f"the regimes of {s.name!r} ({_count(setup.an.kernels, 'kernel')})",
                         s.span):
            return _regime_map(analysis, setup, s)
    lhs, rhs = evaluate_in(setup.an, s.lhs), evaluate_in(setup.an, s.rhs)
    if lhs.unit != rhs.unit and not _plain_number(lhs) and not _plain_number(rhs):
        raise UnitError(f"the two sides of the solve differ: {unit_words(lhs.unit)} and "
                        f"{unit_words(rhs.unit)}", s.span)
    texts = (_text(s.lhs), _text(s.rhs))
    if _plain_number(lhs):
        lhs = Value(lhs.expr, rhs.unit)
    return _solve_sides(analysis, setup, s, (lhs, rhs), texts, _sides(s),
                        lambda an: (evaluate_in(an, s.lhs).expr, evaluate_in(an, s.rhs).expr))


#: what sympy (and the time budget, and a max()/min() split) raise when they cannot compute an
#: extra of a solve: `limit`'s NotImplementedError and PoleError, the polynomial errors, …
EXTRA_FAILURES = (BudgetError, SolveError, PoleError, ZeroDivisionError, *SYMPY_FAILURES)


def _best_effort(compute, default, span, what: str, undecided: list):
    """An extra (general form, limits, approximations, …): left out, never an error, when it
    exceeds the time budget or sympy cannot compute it; `what` is then added to `undecided`, so
    that the printers say what could not be decided instead of leaving a line out silently."""
    try:
        with time_budget(None, "an extra of a solve", span):
            return compute()
    except EXTRA_FAILURES:
        undecided.append(what)
        return default


# --- what X is -------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Setup:
    symbol: sympy.Symbol
    kind: str         # dim, param, bandwidth or peak
    unit: Unit
    an: object        # the analysis with X free
    was_bound: Optional[sympy.Expr]
    #: the analysis in b, I* and BW with its legend, made once (`solve regimes` asks for every kernel)
    general: list = field(default_factory=list, compare=False, repr=False)
    #: whole values of X already checked against the file: value → None (accepted) or the reason
    checked: dict = field(default_factory=dict, compare=False, repr=False)
    #: the extras (general form, limits, approximations, conditions); off in a scenario's column
    extras: bool = field(default=True, compare=False)


def _setup(analysis, target: Name) -> _Setup:
    p, name = analysis.program, target.id
    # a solve's sides read times, never verdicts: only a regime map decides each kernel's bound;
    # and the pipeline's stages are timed apart only where a side or a let reads the bounds
    decide = any(s.relation == "regimes" and s.target.id == name for s in p.solves)
    stages = bool(_calls(p) & {"t_overlap", "t_serial", "t_estimate"})
    again = lambda prog: analyze_with_queries(prog, fusion=analysis.fusion, hardware=analysis.hardware.name,  # noqa: E731
                                              decide=decide, stages=stages)
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


#: the functions that read only the program's memory (its tensors and the hardware's capacity)
MEMORY_CALLS = frozenset({"footprint", "weight_bytes", "cache_bytes", "parameters", "capacity"})


def _memory_only(program) -> bool:
    """Whether every solve and let of the file reads only memory (`MEMORY_CALLS`) and no solve maps
    regimes: then a solve's general form needs no kernel's figures."""
    return _calls(program) <= MEMORY_CALLS and not any(s.relation == "regimes" for s in program.solves)


#: the functions whose value is a time or a count of the kernels: none reads the footprint
TIME_CALLS = frozenset({"t_compute", "t_memory", "t_comms", "t_kernel", "flops", "bytes", "intensity",
                        "critical_intensity", "peak", "bandwidth"})


def _reads_memory(program) -> bool:
    """Whether a solve's general form may read the footprint: unless every function the solves
    and lets call is in `TIME_CALLS`, and no pool answers a call elsewhere."""
    return bool(program.placements) or not _calls(program) <= TIME_CALLS


def _calls(program) -> set:
    """The functions the file's solves and lets call (the sides of a solve may read a let), keyword
    arguments included."""
    found, todo = set(), [e for x in program.solves for e in (x.lhs, x.rhs) if e is not None]
    todo += [let.value for let in program.lets.values()]
    while todo:
        e = todo.pop()
        if isinstance(e, Call):
            found.add(e.func)
            todo += [*e.args, *(o.value for o in e.kwargs)]
        elif isinstance(e, BinOp):
            todo += [e.left, e.right]
        elif isinstance(e, Neg):
            todo.append(e.operand)
    return found


def _plain_number(v: Value) -> bool:
    """A bare number on one side stands in the other side's unit (`intensity(y) = 500`)."""
    return v.unit == DIMENSIONLESS and v.expr.is_number


def _single_peak(analysis):
    peaks = {k.peak for k in analysis.kernels}
    return peaks.pop() if len(peaks) == 1 else None


# --- the solve proper -------------------------------------------------------------------------

@dataclass(frozen=True)
class _Equation:
    """lhs and rhs with X as a positive real: closed (program symbols kept) and exact (bound)."""
    x: sympy.Symbol
    closed: tuple[sympy.Expr, sympy.Expr]
    exact: tuple[sympy.Expr, sympy.Expr]
    names: dict   # a kernel's T_compute / T_memory (as in max()) → (kernel, its bound when that wins)

    @property
    def f_closed(self) -> sympy.Expr:
        return self.closed[0] - self.closed[1]

    @property
    def f_exact(self) -> sympy.Expr:
        return self.exact[0] - self.exact[1]

    @property
    def numeric(self) -> bool:
        return self.f_exact.free_symbols <= {self.x}


def _then(table: dict, var, x) -> dict:
    """One substitution doing `xreplace(table)` then `xreplace({var: x})` (each max() in an
    expression is rebuilt once, not twice: rebuilding one compares its arguments pairwise)."""
    out = {k: v.xreplace({var: x}) for k, v in table.items() if k != var}
    out[var] = table[var].xreplace({var: x}) if var in table else x
    return out


def _equation(st: _Setup, s, sides) -> _Equation:
    an, var = st.an, st.symbol
    x = sympy.Symbol(var.name, positive=True)  # real, so a dim's non-integer crossing is kept
    dep = {k: v for k, v in an.bindings.items() if var in v.free_symbols}
    closed, exact = _then(dep, var, x), _then(an.bindings, var, x)
    # `xreplace`, each max() and min() rebuilt through the analysis's memo (`memo.substitute`): the
    # same expressions, without sympy's pairwise comparisons of a footprint's peak over its steps
    forms = (lambda e: substitute(e, closed), lambda e: substitute(e, exact))
    names = {form(t): (k.name, bound) for k in an.kernels for form in forms
             for t, bound in ((k.t_compute, COMPUTE), (k.t_memory, MEMORY))}
    eq = _Equation(x, tuple(forms[0](v.expr) for v in sides), tuple(forms[1](v.expr) for v in sides), names)
    if x not in eq.f_exact.free_symbols and x not in eq.f_closed.free_symbols:
        raise SolveError(f"neither side depends on {var.name}, so there is nothing to solve", s.span,
                         "solve for a dim or param that the two sides use")
    return eq


def _solve_sides(analysis, st: _Setup, s, both, texts, sides, general_sides) -> SolveResult:
    """`both`: the two sides as `Value`s; `sides`: the `Side` of each sign (`solve_terms.sides_of`)."""
    eq, bindings = _equation(st, s, both), st.an.bindings
    x, closed, exact = eq.x, eq.closed, eq.exact
    whole, scanned = st.kind == "dim", None
    with time_budget(None, f"solving {s.name!r}", s.span):
        try:
            found, roots, regimes, cases, validity = _numeric_answer(eq, bindings, sides, whole) if eq.numeric \
                else _symbolic_answer(eq, sides)
        except NotImplementedError:   # sympy has no method (floor, ceil and log of X together)
            if eq.numeric:            # every other symbol bound: sign changes found numerically
                found, roots, regimes, cases, validity = _scanned_answer(eq, [], sides, whole)
            else:
                raise SolveError(f"cannot solve {texts[0]} {s.relation} {texts[1]} for {st.symbol.name} exactly: "
                                 "sympy has no method for this mix of functions", s.span,
                                 f"bind the other symbols to solve numerically, or take the solve out and sweep "
                                 f"{st.symbol.name} instead (`costlang sweep FILE --over {st.symbol.name}=1..4096:pow2`) "
                                 "and read the crossing off the table") from None
    if isinstance(found, _Scanned):
        scanned, found = found.scan, found.found
    values = tuple(r for r, _ in found) if eq.numeric else tuple(None for _ in roots)
    numeric = tuple(isinstance(v, sympy.Float) for v in values)
    undecided: list = [] if regimes or not roots and eq.numeric and scanned is None else [Undecided.REGIMES]
    general, legend, g_sides = _best_effort(lambda: _general(analysis, st, x, found, general_sides),
                                            ((), (), None), s.span, Undecided.GENERAL, undecided) \
        if st.extras else ((), (), None)
    with time_budget(None, f"explaining why {s.name!r} has no solution", s.span):
        none = _explain(eq, g_sides, texts, st.kind == "dim", undecided) \
            if eq.numeric and not found and scanned is None and st.extras else None
    return SolveResult(
        s.name, x, st.unit, s.relation, texts[0], texts[1],
        roots, general, values, legend, regimes, _solution(s, regimes, values, x),
        _whole(st, values, regimes, sides, analysis.program, scanned) if st.extras else (), none,
        _best_effort(lambda: limits(closed, g_sides, exact, x, texts), (), s.span, Undecided.LIMITS, undecided)
        if st.extras else (),
        _best_effort(lambda: approximations(general or roots, x, legend, bindings, values), (), s.span,
                     Undecided.APPROXIMATIONS, undecided) if st.extras else (),
        _steps(closed, g_sides, x, roots, general, values), st.was_bound, s.span,
        _best_effort(lambda: conditions(roots, x), (), s.span, Undecided.CONDITIONS, undecided)
        if not eq.numeric and st.extras else (),
        _given(roots, none, bindings, x), both[0].unit,
        cases, tuple(undecided), st.an.program.ties, validity, scanned, numeric)


@dataclass(frozen=True)
class _Scanned:
    """The roots of a scanned answer (as `found`) with the scan that found them."""
    found: list
    scan: Scan


def _numeric_answer(eq: _Equation, bindings, sides, whole: bool = False):
    """Every symbol but X bound: exact roots, their closed forms, the regimes between them; when
    sympy's roots may not be all of them (ceil() or an exponential of X), the sign changes of
    lhs − rhs are found numerically instead (`_scanned_answer`)."""
    found = _roots(eq.f_exact, eq.x)
    numerators = [sympy.fraction(sympy.together(b.expr))[0] for b in branches(eq.f_exact)]
    if not is_solvable(numerators, eq.x):
        return _scanned_answer(eq, found, sides, whole)
    matched = _match_closed(eq.f_closed, eq.x, found, bindings)
    roots = tuple(r for r, _ in matched)
    regimes = _regimes(eq.f_exact, eq.x, [r for r, _ in found], sides)
    cases = tuple(None if ties_at(b, eq.x, r) else _case(b, eq, True) or (_case(c, eq, True) if c else None)
                  for (r, b), (_, c) in zip(found, matched))
    validity = tuple(branch_conditions(c, eq.x, r) if c is not None else () for r, c in matched)
    return found, roots, regimes, cases, validity


def _scanned_answer(eq: _Equation, found, sides, whole: bool):
    """lhs − rhs scanned for sign changes over X (`numeric_roots.scan`): each change is a root
    sympy found exactly when one lies in its bracket, else its value found by bisection (a Float);
    exact roots with no change of sign (touching) are kept. No change found and no exact root:
    no regime is given (undecided), since a scan proves nothing beyond its points."""
    sc = scan(eq.f_exact, eq.x, whole)
    exact = [r for r, _ in found]
    values: list = []
    for c in sc.changes:
        inside = next((r for r in exact if c.lower <= sympy.N(r, 30) <= c.upper), None)
        values.append(inside if inside is not None else c.lower if c.lower == c.upper else c.value)
    values += [r for r in [*exact, *sc.zeros] if r not in values]
    values.sort(key=lambda v: sympy.N(v, 30))
    regimes = _regimes(eq.f_exact, eq.x, values, sides) if values else ()
    return _Scanned([(v, None) for v in values], sc), tuple(values), regimes, tuple(None for _ in values), \
        tuple(() for _ in values)


def _symbolic_answer(eq: _Equation, sides):
    """Other symbols free: the closed-form roots whose max()/min() branch can hold there."""
    roots, cases, validity = [], [], []
    for r, branch in branch_roots(eq.f_closed, eq.x):
        holds = holds_at(branch, eq.x, r)
        if holds is not False:
            roots.append(r)
            cases.append(_case(branch, eq, holds))
            validity.append(branch_conditions(branch, eq.x, r) if holds is None else ())
    numerators = [sympy.fraction(sympy.together(b.expr))[0] for b in branches(eq.f_closed)]
    regimes = _symbolic_regimes(eq.f_closed, eq.x, roots, sides) if is_solvable(numerators, eq.x) else ()
    return [], tuple(roots), regimes, tuple(cases), tuple(validity)


def _case(branch: Branch, eq: _Equation, holds: Optional[bool]) -> Optional[Case]:
    """Which max()/min() arguments a root's branch takes (y is memory-bound there); None: no max()."""
    parts = [Taken(*eq.names[taken]) if taken in eq.names else
             Taken(term=taken, larger=isinstance(term, sympy.Max))
             for term, taken in branch.choice if eq.x in term.free_symbols]
    return Case(tuple(parts), bool(holds)) if parts else None


def _explain(eq: _Equation, g_sides, texts, whole: bool, undecided: list) -> Optional[NoCrossing]:
    """Why there is no crossing; None when sympy cannot say (the regimes still do, and
    `undecided` records that the explanation is missing)."""
    try:
        return no_crossing(eq.closed, eq.exact, g_sides, eq.x, texts, whole)
    except EXTRA_FAILURES:
        undecided.append(Undecided.EXPLANATION)
        return None


def _given(roots, none, bindings, x) -> tuple:
    """The bound symbols that the closed forms (or the no-crossing conditions) are written in."""
    exprs = [*roots, *(r for r, _ in (none.conditions if none else ()))]
    used = set().union(*[e.free_symbols for e in exprs]) if exprs else set()
    return tuple((sym, bindings[sym]) for sym in sorted(used - {x}, key=str) if sym in bindings)


def _roots(f: sympy.Expr, x: sympy.Symbol):
    """Exact positive real roots of f (one free symbol x), ascending, with their branch."""
    found = []
    for r, branch in branch_roots(f, x):
        if r.is_real and r.is_positive and sympy.simplify(f.xreplace({x: r})) == 0:
            found.append((sympy.nsimplify(r) if r.is_Float else r, branch))
    return sorted(found, key=lambda rb: sympy.N(rb[0], 30))


def _match_closed(f_closed, x, found, bindings) -> tuple:
    """For each exact root, the closed-form root (program symbols kept) that evaluates to it, with
    the max()/min() branch of the closed form it lies on (None: the closed form has none)."""
    if not found or f_closed.free_symbols <= {x}:
        return tuple((r, None) for r, _ in found)
    candidates = branch_roots(f_closed, x, (lambda e: e.xreplace(bindings), [r for r, _ in found]))
    out = []
    for r, _ in found:
        match = next(((c, b) for c, b in candidates if sympy.simplify(c.xreplace(bindings) - r) == 0), (r, None))
        out.append((tidy(match[0]), match[1] if match[1] is not None and match[1].choice else None))
    return tuple(out)


def _general(analysis, st: _Setup, x, found, general_sides):
    """The roots in b, Istar and BW (dtype sizes and hardware made symbolic), matched to `found`."""
    if st.kind in HARDWARE_TARGETS:
        return (), (), None
    if not st.general:
        program, legend = generalize(st.an.program, st.an.hardware)
        chosen = {k.name: k.level or st.an.hardware.main_memory.name for k in st.an.kernels}
        st.general.append((legend, analyze_roofline(program, fusion=analysis.fusion, hardware=st.an.hardware.name,
                                                    levels=chosen, figures=not _memory_only(analysis.program),
                                                    memory=_reads_memory(analysis.program))))
    legend, an = st.general[0]
    dep = {k: v for k, v in an.bindings.items() if st.symbol in v.free_symbols}
    once = _then(dep, st.symbol, x)
    sides = [settle(e, once) for e in general_sides(an)]   # its max() and min() compared only here
    values = {item.symbol: item.value for item in legend}
    exact = [r for r, _ in found if not isinstance(r, sympy.Float)]   # a root found numerically has none
    candidates = branch_roots(sides[0] - sides[1], x,
                              (lambda e: e.xreplace(values).xreplace(st.an.bindings), exact)) if exact else []
    general = []
    for r, _ in found:
        match = next((c for c, _ in candidates
                      if sympy.simplify(c.xreplace(values).xreplace(st.an.bindings) - r) == 0), None)
        general.append(tidy(match) if match is not None else None)
    used = set().union(*[g.free_symbols for g in general if g is not None], *[e.free_symbols for e in sides])
    return tuple(general), tuple(item for item in legend if item.symbol in used), sides


# --- regimes, whole numbers, solution sets -----------------------------------------------------

def _regimes(f, x, roots, sides) -> tuple[Regime, ...]:
    """Maximal intervals of one sign of f, cut at the roots."""
    cuts = [None, *roots, None]
    out: list[Regime] = []
    for lo, hi in zip(cuts, cuts[1:]):
        point = _between(lo, hi)
        sign = sign_at(f, x, point)
        if out and out[-1].sign == sign:
            out[-1] = Regime(out[-1].lower, hi, sign, out[-1].side)
            continue
        out.append(Regime(lo, hi, sign, _side(sign, sides)))
    return tuple(out)


def _side(sign: int, sides) -> Side:
    return sides[0] if sign < 0 else sides[1] if sign > 0 else Side.EQUAL


def _symbolic_regimes(f, x, roots, sides) -> tuple[Regime, ...]:
    """With other symbols free: one regime when f has no root, or two around a single root, from
    the sign of f as x → 0⁺ (and → ∞, when that sign does not depend on the other symbols)."""
    if len(roots) > 1:
        return ()
    try:
        low = sign_near(f, x, 0)
    except SYMPY_FAILURES:   # the sign depends on the symbols, or sympy cannot tell: undecided
        return ()
    if not roots:
        return (Regime(None, None, low, _side(low, sides)),)
    try:
        high = sign_near(f, x, sympy.oo)
    except SYMPY_FAILURES:   # e.g. sign(1000 − d): f changes sign at the root when the root is > 0
        high = -low          # (the conditions beside the answer say when it is)
    if high != -low:
        return ()
    return (Regime(None, roots[0], low, _side(low, sides)),
            Regime(roots[0], None, high, _side(high, sides)))


def _between(lo, hi) -> sympy.Expr:
    """An exact rational point strictly inside (lo, hi); None is 0 below and ∞ above."""
    lo_f = sympy.Rational(0) if lo is None else _near(lo)
    if hi is None:
        return 2 * lo_f + 1
    hi_f = _near(hi)
    return (lo_f + hi_f) / 2


def _near(e) -> sympy.Rational:
    """e itself when it is a rational number, else a rational number near it (nsimplify of its
    30-digit value, which looks for a simple fraction: slow, so not for a rational)."""
    return e if e.is_Rational else sympy.nsimplify(sympy.N(e, 30), rational=True)


def _whole(st: _Setup, values, regimes, sides, program=None, scanned=None) -> tuple[WholeAnswer, ...]:
    """For a dim: the last whole number below and the first above each change of regime (a
    touching root, where the regime is the same on both sides, is no change), each one that the
    file accepts: a value the file rejects when X is set to it (`--set X=v` is an error: a shard
    that does not divide, a repeat that does not split into stages) is stepped past."""
    if st.kind != "dim" or not values or None in values:
        return ()
    out, equal = [], sides[2]
    for below, above in zip(regimes, regimes[1:]):
        r = below.upper
        change = next((c for c in scanned.changes if c.value == r), None) if scanned is not None else None
        if change is not None and change.upper - change.lower == 1:   # found numerically: the whole
            (last, down), (first, up) = (change.lower, "floor"), (change.upper, "ceil")   # numbers it lies between
        elif r.is_integer:
            last, down = (r, "floor") if equal == below.sign else (r - 1, "minus_one")
            first, up = (r, "ceil") if equal == above.sign else (r + 1, "plus_one")
        else:
            (last, down), (first, up) = (sympy.floor(r), "floor"), (sympy.ceiling(r), "ceil")
        if last >= 1:
            value, rejected = _accepted(program, st, last, -1, below.lower)
            out.append(WholeAnswer(True, below.side, r, down, value, rejected))
        value, rejected = _accepted(program, st, first, 1, above.upper)
        out.append(WholeAnswer(False, above.side, r, up, value, rejected))
    return tuple(out)


#: how many whole numbers `_accepted` tries on one side of a crossing before it gives up
WHOLE_TRIES = 256


def _accepted(program, st: _Setup, start, step: int, end):
    """The first whole number from `start` (going by `step`, staying inside the regime, whose far
    end is `end`, None: unbounded) that the file accepts with X set to it, and the ones before it
    that it rejects (value, reason). (None, rejected) when none of `WHOLE_TRIES` is accepted."""
    if program is None or program.origin is None or program.origin.source is None:
        return start, ()
    from costlang.errors import CostlangError
    from costlang.frontend.edits import apply_settings
    from costlang.frontend.settings import parse_settings
    from costlang.passes.shard import split_errors
    rejected: list = []
    value = sympy.Integer(start)
    for _ in range(WHOLE_TRIES):
        if value < 1 or (end is not None and (value >= end if step > 0 else value <= end)):
            break
        if value not in st.checked:   # each value is resolved once for all the solves for X
            # a split the value does not divide rejects it at once (the message sharding gives)
            split = split_errors(st.an.program, {**{k: e.xreplace({st.symbol: value}) for k, e in
                                                    st.an.program.bindings.items()}, st.symbol: value})
            if split is not None:
                st.checked[value] = split.message
        if value not in st.checked:
            try:
                apply_settings(program, parse_settings(f"{st.symbol.name}={value}"))
                st.checked[value] = None
            except CostlangError as e:
                st.checked[value] = e.message
        if st.checked[value] is None:
            return value, tuple(rejected)
        rejected.append((value, st.checked[value]))
        value += step
    return None, tuple(rejected)


def _solution(s, regimes, values, x) -> Optional[sympy.Set]:
    """Where an inequality holds, as a union of intervals of X > 0 (exact)."""
    rel = s.relation
    if rel == "=" or not regimes:
        return None
    want = -1 if rel in ("<", "<=") else 1
    closed = rel in ("<=", ">=")
    points = [v for v in values if v is not None]
    if points:  # exact roots: a root inside a regime (a touching one) holds only for <= and >=
        parts = [sympy.Interval.open(r.lower if r.lower is not None else 0, r.upper if r.upper is not None
                                     else sympy.oo) for r in regimes if r.sign == want]
        inside = sympy.Union(*parts) if parts else sympy.EmptySet
        roots = sympy.FiniteSet(*points)
        return sympy.Union(inside, roots) if closed else sympy.Complement(inside, roots)
    parts = [sympy.Interval(r.lower if r.lower is not None else 0, r.upper if r.upper is not None else sympy.oo,
                            left_open=not (closed and r.lower is not None), right_open=not closed)
             for r in regimes if r.sign == want]
    return sympy.Union(*parts) if parts else sympy.EmptySet


def _steps(closed, g_sides, x, roots, general, values) -> tuple[Step, ...]:
    steps = [Step(StepKind.EQUATION, sympy.Eq(closed[0], closed[1]))]
    if g_sides is not None:
        steps.append(Step(StepKind.GENERAL_EQUATION, sympy.Eq(g_sides[0], g_sides[1])))
    numer, _ = sympy.fraction(sympy.together(closed[0] - closed[1]))
    if not numer.atoms(sympy.Max, sympy.Min):
        steps.append(Step(StepKind.CLEARED, sympy.Eq(sympy.expand(numer), 0)))
    for r, g, v in itertools.zip_longest(roots, general, values):
        if g is not None:
            steps.append(Step(StepKind.ROOT_GENERAL, sympy.Eq(x, g)))
        if r is not None:
            steps.append(Step(StepKind.ROOT, sympy.Eq(x, r)))
        if v is not None and v != r:
            steps.append(Step(StepKind.BOUND_VALUES, sympy.Eq(x, v)))
    return tuple(steps)


# --- regime map ---------------------------------------------------------------------------------

def _regime_map(analysis, st: _Setup, s: Solve) -> RegimeMap:
    out = []
    for k in st.an.kernels:
        if st.symbol not in (k.t_memory - k.t_compute).xreplace(st.an.bindings).free_symbols:
            out.append((k.name, k.bound))
            continue

        def sides(an, name=k.name):
            kr = next(kk for kk in an.kernels if kk.name == name)
            return kr.t_memory, kr.t_compute
        texts = (f"t_memory({k.name})", f"t_compute({k.name})")
        solve_k = Solve(f"{s.name}: {k.name}", None, "=", None, s.target, s.span)
        out.append((k.name, _solve_sides(analysis, st, solve_k, (Value(k.t_memory, SECOND),
                    Value(k.t_compute, SECOND)), texts, sides_of(("t_memory", "t_compute")), sides)))
    return RegimeMap(s.name, st.symbol, tuple(out), s.span)


# --- texts -------------------------------------------------------------------------------------

def _count(items, noun: str) -> str:
    return f"{len(items)} {noun}{'' if len(items) == 1 else 's'}"


def _text(expr: Expr) -> str:
    s = expr.span
    if s.line != s.end_line:
        return "…"
    return s.source.line(s.line)[s.column - 1: s.end_column - 1]


def _sides(s: Solve) -> tuple[Side, Side, int]:
    """The sides of lhs < rhs and lhs > rhs: the roofline's and the footprint's where they apply."""
    return sides_of(tuple(e.func if isinstance(e, Call) else None for e in (s.lhs, s.rhs)))
