"""Verdicts: memory-, compute-, launch- or comms-bound, or balanced, decided exactly — or as regimes
of a free symbol, or as structured conditions on several.

Input: T_compute, T_memory, the launch overhead (and T_comms) of a kernel or of a program's sums,
bound symbols substituted. Output: a `Verdict` (data; printers make the words).

The rules, at one point (every symbol a number):
- launch-bound when the launch overhead is strictly larger than everything else the kernel waits
  for (max(T_compute, T_memory[, T_comms])); at equality the other verdict stands;
- comms-bound when T_comms > max(T_compute, T_memory); balanced when they are equal;
- else memory-bound when T_memory > T_compute (I < I*), compute-bound when T_memory < T_compute,
  balanced when T_memory = T_compute (I = I*).

With one free symbol x (a size, so x > 0) — or several whose comparison reduces to one (common
positive factors cancel) — the verdict is `regimes`: maximal intervals of x, each with one bound.
The cuts are the exact roots of the comparisons; the bound on each open interval is decided at an
exact rational point inside it and at each root exactly, so a touching root (an even-multiplicity
root of T_memory − T_compute) is a balanced point between two intervals of the same bound, never
a change of bound. With several free symbols the verdict is `conditions`: (bound, relations) in
order, the first whose relations all hold applies. Whatever sympy cannot decide is
`Bound.UNDECIDED`, with the comparisons it could not decide kept as relations.

The regimes are found over x > 0 and then kept to the values the shapes allow (`within`): a free
dim is a whole number ≥ 1, and a size linear in it must be ≥ 1 (`fp16[N - 10]` needs N ≥ 11), so no
verdict speaks of sizes no program can have (`domain_floors`).
"""
from __future__ import annotations

import dataclasses
from typing import Optional

import sympy

from costlang.budget import time_budget
from costlang.errors import Span
from costlang.analysis.bounds import (BALANCED, COMMS, COMPUTE, DEPENDS, LAUNCH, MEMORY, UNDECIDED, Bound, Condition, Interval, Regime,
                     Times, Verdict, bound_at, with_level)
from costlang.analysis.regimes import conditions, one_symbol, regimes
from costlang.analysis.univariate import sign_in_one

__all__ = ["Bound", "Interval", "Regime", "Condition", "Verdict", "decide", "decide_comms",
           "with_level", "clear_caches", "domain_floors", "within", "MEMORY", "COMPUTE", "LAUNCH", "BALANCED", "DEPENDS", "COMMS"]


# --- signs -------------------------------------------------------------------------------------

_SIMPLIFIED: dict = {}
_VERDICTS: dict = {}


def clear_caches() -> None:
    """Forget memoised simplifications and verdicts (for tests that replace sympy functions)."""
    _SIMPLIFIED.clear()
    _VERDICTS.clear()


def _simplified(e: sympy.Expr, span: Optional[Span]) -> sympy.Expr:
    """`simplify`, once per distinct expression: kernels of one program repeat the same few."""
    if e not in _SIMPLIFIED:
        if len(_SIMPLIFIED) > 4096:
            _SIMPLIFIED.clear()
        with time_budget(None, "simplifying a roofline comparison", span):
            _SIMPLIFIED[e] = sympy.simplify(e)
    return _SIMPLIFIED[e]


def _sign(e: sympy.Expr, span: Optional[Span]) -> Optional[int]:
    """+1, −1 or 0 when sympy can tell for every value of the free symbols; None otherwise."""
    decided, sign = sign_in_one(e)     # a Laurent polynomial in one symbol: told exactly, at once
    if decided:
        return sign
    for candidate in (e, None):
        if candidate is None:
            if e.is_number and not e.has(sympy.Max, sympy.Min):
                return None
            candidate = _simplified(e, span)
        if candidate.is_positive:
            return 1
        if candidate.is_negative:
            return -1
        if candidate.is_zero:
            return 0
    return None


# --- the decision --------------------------------------------------------------------------------

def decide(t_compute: sympy.Expr, t_memory: sympy.Expr, launch: sympy.Expr,
           span: Optional[Span] = None, busy: Optional[sympy.Expr] = None) -> Verdict:
    """The bound of a kernel (or of a program's sums) from its bound times; `span` is what a
    time-budget error points at; `busy` (default max(T_compute, T_memory)) is what the launch
    overhead must exceed (a program's Σ max(T_compute, T_memory) over its kernels).

    >>> decide(sympy.Rational(1, 200000), sympy.Rational(3, 2500), 0).bound
    <Bound.MEMORY: 'memory-bound'>
    """
    if launch == 0:
        launch_diffs: tuple = ()
    elif busy is not None:
        launch_diffs = (launch - busy,)
    else:
        launch_diffs = (launch - t_compute, launch - t_memory)
    return _decided(Times(t_memory - t_compute, launch_diffs, ()), span)


def decide_comms(t_compute, t_memory, t_comms, launch, bindings, span: Optional[Span] = None) -> Verdict:
    """As `decide`, with collectives: comms-bound when T_comms exceeds both T_compute and T_memory."""
    tc, tm, tx, lo = (e.xreplace(bindings) for e in (t_compute, t_memory, t_comms, launch))
    launch_diffs = () if lo == 0 else (lo - tc, lo - tm, lo - tx)
    return _decided(Times(tm - tc, launch_diffs, (tx - tc, tx - tm)), span)


def _decided(t: Times, span) -> Verdict:
    key = t
    found = _VERDICTS.get(key)
    if found is None:
        if len(_VERDICTS) > 4096:
            _VERDICTS.clear()
        found = _VERDICTS[key] = _classify(t, span)
    return found


def _classify(t: Times, span) -> Verdict:
    if any(e.has(sympy.nan) for e in t.all()):   # a time that is not a number (an overflowed size): undecided
        return Verdict(UNDECIDED)
    signs = {e: _sign(e, span) for e in t.all()}
    bound = bound_at(signs, t)
    if bound is not None:
        return Verdict(bound)
    undecided = [e for e in t.all() if signs[e] is None]
    x, cores = one_symbol(undecided)
    if x is not None:
        found = regimes(t, signs, cores, x, span)
        if found is not None:
            if len({r.bound for r in found}) == 1:
                return Verdict(found[0].bound)
            return Verdict(DEPENDS, x, found)
    return conditions(t, signs)


# --- the domain the shapes allow -------------------------------------------------------------------

def domain_floors(program) -> dict:
    """The least value each free symbol can take: 1 for a free dim, and for a size linear in one
    symbol a·x + c (a > 0) that must be ≥ 1, x ≥ (1 − c)/a (rounded up for a dim).

    >>> from costlang import load_string
    >>> floors = domain_floors(load_string("dim N\\ninput x: fp16[N - 10]\\n").program)
    >>> {str(s): v for s, v in floors.items()}
    {'N': 11}
    """
    floors = {d.symbol: sympy.Integer(1) for d in program.symbols.values() if d.kind == "dim" and d.value is None}
    for size, _ in program.sizes:
        e = size.xreplace(program.bindings)
        if len(e.free_symbols) != 1:
            continue
        (x,) = e.free_symbols
        poly = sympy.Poly(e, x) if e.is_polynomial(x) else None
        if poly is None or poly.degree() != 1 or not all(k.is_Rational for k in poly.all_coeffs()):
            continue
        a, c = poly.all_coeffs()
        if a > 0:
            least = (1 - c) / a
            least = sympy.ceiling(least) if x.is_integer else least
            floors[x] = max(floors.get(x, least), least)
    return floors


def within(v: Verdict, floors: dict) -> Verdict:
    """The verdict kept to the symbol's allowed values (≥ its floor): regimes below the floor are
    dropped and the first kept one starts at it."""
    least = floors.get(v.symbol) if v.regimes else None
    if least is None:
        return v
    kept = [r for r in v.regimes if _holds_a_value(r.interval, least)]
    if len(kept) == len(v.regimes) or not kept:
        return v
    first = kept[0].interval
    if first.lower < least and not (least == 1 and v.symbol.is_integer):   # a dim's own floor goes unsaid
        kept[0] = Regime(Interval(least, first.upper, True, first.upper_closed), kept[0].bound)
    if len({r.bound for r in kept}) == 1:
        return Verdict(kept[0].bound, level=v.level)
    return dataclasses.replace(v, regimes=tuple(kept))


def _holds_a_value(iv: Interval, least) -> bool:
    """Whether the interval reaches the floor: its upper end is above it (or at it, closed). A
    regime above the floor that holds no whole number stays (the printers leave it unsaid)."""
    return bool(iv.upper == sympy.oo or iv.upper > least or (iv.upper == least and iv.upper_closed))
