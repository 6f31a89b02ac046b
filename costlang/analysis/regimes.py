"""Regimes of a verdict: where, as a free symbol varies, each bound holds.

Input: the differences a verdict compares (`verdict._Times`: T_memory − T_compute, launch − …)
whose signs sympy could not decide for every value. Output: `Regime`s (maximal intervals of the
one symbol they reduce to, each with its bound) or, with several symbols, a `Verdict` of
structured `Condition`s. Used by `verdict`; data only.

A difference is first reduced to its *core*: common factors known to be positive (sizes, the
hardware's rates) are dropped, so `B·H·N·T/1025e8 − B·H·N·T²/4925e10` reduces to `961 − 2·T`,
which has the same sign wherever the difference is defined. Cuts are the exact positive real roots
of the cores (and, for a max()/min(), the points where its winner changes); the bound is decided
exactly at each cut and at a rational point strictly inside each interval between cuts.
"""
from __future__ import annotations

from typing import Optional

import sympy

from costlang.budget import time_budget
from costlang.analysis.bounds import Bound, Condition, Interval, Regime, Verdict, bound_at

__all__ = ["core", "one_symbol", "regimes", "conditions", "relation"]

#: what sympy raises when it cannot factor, solve or order an expression (then: undecided)
SYMPY_FAILURES = (NotImplementedError, sympy.PolynomialError, sympy.polys.polyerrors.GeneratorsNeeded,
                  ValueError, TypeError)
_DIGITS = 50


def core(e: sympy.Expr) -> sympy.Expr:
    """An expression with the sign of `e` wherever `e` is defined, positive factors dropped.

    >>> T, B = sympy.symbols("T B", positive=True)
    >>> core(B * T / 1025 - B * T**2 / 492500)
    19700/41 - T
    """
    if e.has(sympy.Max, sympy.Min):
        return e
    numer, denom = sympy.fraction(sympy.together(e))
    sign, kept = 1, []
    for part in (numer, denom):
        try:
            if _huge_numbers(part):  # sympy's factoring hunts primes past them: minutes for 10^400
                raise ValueError("too large to factor")
            coeff, factors = sympy.factor_list(part)
        except (ValueError, *SYMPY_FAILURES):
            coeff, factors = 1, [(f, 1) for f in sympy.Mul.make_args(sympy.factor_terms(part))]
        coeff = sympy.Integer(coeff) if isinstance(coeff, int) else coeff
        if coeff.has(sympy.nan):   # a NaN in the expression (a value that overflowed): no core to find
            return e
        sign *= -1 if coeff.is_extended_negative else 1
        for f, m in factors:
            if f.is_positive:
                continue
            if f.is_negative:
                sign *= (-1) ** m
                continue
            kept.append(f ** m)
    out = sign * sympy.Mul(*kept)
    return _monic(out)


def _huge_numbers(e: sympy.Expr) -> bool:
    """Whether a number in `e` has more than 512 bits (about 154 digits)."""
    return any(max(abs(r.p), r.q).bit_length() > 512 for r in e.atoms(sympy.Rational))


def _monic(e: sympy.Expr) -> sympy.Expr:
    """A one-symbol linear core as x − a or a − x (so its relation reads T < 480.5)."""
    syms = e.free_symbols
    if len(syms) == 1 and e.is_polynomial(*syms):
        (x,) = syms
        p = sympy.Poly(e, x)
        if p.degree() == 1:
            lead = p.LC()
            return sympy.expand(e / abs(lead)) if lead.is_number else e
    return e


def one_symbol(diffs) -> tuple[Optional[sympy.Symbol], dict]:
    """The one symbol every difference's core depends on, and the cores (None: not one symbol)."""
    cores = {e: core(e) for e in diffs}
    free = set().union(*[c.free_symbols for c in cores.values()]) if cores else set()
    return (free.pop() if len(free) == 1 else None), cores


# --- roots -----------------------------------------------------------------------------------------

class _Undecidable(Exception):
    """sympy could not find the roots (or order them): the verdict stays undecided."""


def _num(e, digits=_DIGITS):
    return sympy.N(e, digits)


def _plain_roots(p: sympy.Expr, x: sympy.Symbol) -> list:
    """The positive real roots of a Max-free expression's numerator and denominator."""
    out = []
    for part in sympy.fraction(sympy.together(p)):
        if x not in part.free_symbols:
            continue
        try:
            if part.is_polynomial(x):
                poly = sympy.Poly(part, x)
                found = sympy.roots(poly)
                rs = list(found) if sum(found.values()) == poly.degree() else poly.real_roots()
            elif _two_generators(part, x):
                raise NotImplementedError(f"{part} mixes {x} with a power of a fraction in {x}")
            else:
                rs = sympy.solve(part, x)
        except SYMPY_FAILURES as err:
            raise _Undecidable(str(err)) from err
        out += [r for r in rs if _positive_real(r)]
    return out


def _two_generators(part: sympy.Expr, x: sympy.Symbol) -> bool:
    """A power (p/q)^f(x) with p, q ≠ 1 beside x itself: sympy splits it into p^x and q^x and
    finds no algorithm for the three generators (MoE's expected experts, E·(1 − (1 − k/E)^B),
    against a linear cost), after half a second of trying; said at once instead."""
    fractions = [a for a in part.atoms(sympy.Pow) if x in a.exp.free_symbols and a.base.is_Rational
                 and not a.base.is_Integer and a.base.p != 1]
    return bool(fractions) and x in part.xreplace({a: sympy.Dummy() for a in fractions}).free_symbols


def _positive_real(r) -> bool:
    if r.is_real is False or r.is_positive is False:
        return False
    value = _num(r)
    if r.is_real is None and abs(sympy.im(value)) > sympy.Float(10) ** (-_DIGITS // 2):
        return False
    return sympy.re(value) > 0


def _roots(c: sympy.Expr, x: sympy.Symbol) -> list:
    """Cuts for one core: its roots, and with max()/min() also where a winner changes."""
    extrema = [m for m in c.atoms(sympy.Max, sympy.Min) if x in m.free_symbols]
    if not extrema:
        return _plain_roots(c, x)
    switches = []
    for m in extrema:
        for i, a in enumerate(m.args):
            for b in m.args[i + 1:]:
                switches += _roots(a - b, x)
    cuts = _sorted(switches)
    out = list(cuts)
    for lo, hi in zip([sympy.Integer(0), *cuts], [*cuts, sympy.oo]):
        point = _between(lo, hi)
        flat = c.replace(lambda n: isinstance(n, (sympy.Max, sympy.Min)), lambda n: _winner(n, x, point))
        out += [r for r in _roots(flat, x) if _num(r) > _num(lo) and (hi == sympy.oo or _num(r) < _num(hi))]
    return out


def _winner(m, x, point):
    values = [_num(a.xreplace({x: point})) for a in m.args]
    pick = max if isinstance(m, sympy.Max) else min
    return m.args[values.index(pick(values))]


def _sorted(roots) -> list:
    """Ascending, each value once (equal forms of one root are merged)."""
    out: list = []
    for r in sorted(roots, key=lambda r: sympy.re(_num(r))):
        if out and abs(_num(r) - _num(out[-1])) < sympy.Float(10) ** (-_DIGITS // 2) and \
                sympy.simplify(r - out[-1]) == 0:
            continue
        out.append(r)
    return out


def _rational(e) -> sympy.Rational:
    if e.is_Rational:   # itself: nsimplify would look for a simple fraction near its decimal (pslq)
        return e
    return sympy.nsimplify(sympy.re(_num(e)), rational=True)


def _between(lo, hi) -> sympy.Rational:
    """An exact rational point strictly inside (lo, hi), hi possibly ∞."""
    if hi == sympy.oo:
        return 2 * _rational(lo) + 1
    mid = (_rational(lo) + _rational(hi)) / 2
    if not (sympy.simplify(mid - lo).is_positive and sympy.simplify(hi - mid).is_positive):
        raise _Undecidable(f"no rational point could be placed between {lo} and {hi}")
    return mid


# --- the regimes -----------------------------------------------------------------------------------

def _point_sign(value) -> Optional[int]:
    for candidate in (value, None):
        if candidate is None:
            candidate = sympy.simplify(value)
        if candidate.is_zero:
            return 0
        if candidate.is_positive:
            return 1
        if candidate.is_negative:
            return -1
    return None


def regimes(t, signs: dict, cores: dict, x: sympy.Symbol, span) -> Optional[tuple]:
    """The regimes of x > 0, or None when sympy cannot find or order the cuts."""
    try:
        with time_budget(None, "solving when a kernel's verdict changes", span):
            cuts = _sorted([r for c in cores.values() for r in _roots(c, x)])
            pieces = []
            for lo, hi in zip([sympy.Integer(0), *cuts], [*cuts, sympy.oo]):
                pieces.append((Interval(lo, hi), _bound_at(t, signs, cores, x, _between(lo, hi))))
                if hi != sympy.oo:
                    pieces.append((Interval(hi, hi, True, True), _bound_at(t, signs, cores, x, hi)))
    except _Undecidable:
        return None
    merged: list = []
    for interval, bound in pieces:
        bound = bound or Bound.UNDECIDED
        if merged and merged[-1].bound == bound:
            last = merged[-1].interval
            merged[-1] = Regime(Interval(last.lower, interval.upper, last.lower_closed, interval.upper_closed),
                                bound)
        else:
            merged.append(Regime(interval, bound))
    return tuple(merged)


def _bound_at(t, signs, cores, x, point):
    here = dict(signs)
    for e, c in cores.items():
        here[e] = _point_sign(c.xreplace({x: point}))
    return bound_at(here, t)


# --- several free symbols: structured conditions ------------------------------------------------------

def relation(e: sympy.Expr) -> sympy.Basic:
    """e > 0 as a relation between its positive and negative terms (2·D > T), solved for the
    symbol when only one is left and the comparison is linear in it (T < 961/2)."""
    c = core(e)
    if len(c.free_symbols) == 1:
        (x,) = c.free_symbols
        try:
            poly = sympy.Poly(c, x)
        except SYMPY_FAILURES:
            poly = None
        if poly is not None and poly.degree() == 1 and all(k.is_Rational for k in poly.all_coeffs()):
            a, b = poly.all_coeffs()
            return sympy.StrictGreaterThan(x, -b / a) if a > 0 else sympy.StrictLessThan(x, -b / a)
    terms = sympy.Add.make_args(sympy.expand(c)) if c.is_Add else (c,)
    plus = [a for a in terms if not a.could_extract_minus_sign()]
    minus = [-a for a in terms if a.could_extract_minus_sign()]
    lhs, rhs = sympy.Add(*plus), sympy.Add(*minus)
    if not plus:
        return sympy.StrictLessThan(rhs, 0)
    return sympy.StrictGreaterThan(lhs, rhs)


def _pieces(e: sympy.Expr) -> list:
    """launch − max(a, b) > 0 holds exactly when launch − a > 0 and launch − b > 0."""
    for term in sympy.Add.make_args(e):
        if isinstance(-term, sympy.Max):
            return [e - term - arg for arg in (-term).args]
    return [e]


def _condition(bound: Bound, diffs) -> Optional[Condition]:
    """`bound` where every diff is positive; None when that can never hold (a relation sympy
    reduces to false, such as T = 961/2 for a whole-number T); relations always true are dropped."""
    rels = [relation(p) for e in diffs for p in _pieces(e)]
    if any(r == sympy.false for r in rels):
        return None
    return Condition(bound, tuple(r for r in rels if r != sympy.true))


def conditions(t, signs: dict):
    """A verdict of conditions, in order: launch, comms, then the roofline's memory/balanced/compute."""
    out = []
    if t.launch and not any(s is not None and s <= 0 for s in (signs[e] for e in t.launch)):
        if not all(signs[e] == 1 for e in t.launch):
            out.append(_condition(Bound.LAUNCH, [e for e in t.launch if signs[e] is None]))
    if t.comms:
        out.append(_condition(Bound.COMMS, [e for e in t.comms if signs[e] is None]))
    r = signs[t.roofline]
    if r is None:
        memory = relation(t.roofline)
        balanced = sympy.Eq(*memory.args)
        out += [Condition(Bound.MEMORY, (memory,)),
                None if balanced == sympy.false else Condition(Bound.BALANCED, (balanced,)),
                Condition(Bound.COMPUTE)]
    else:
        out.append(Condition({1: Bound.MEMORY, -1: Bound.COMPUTE, 0: Bound.BALANCED}[r]))
    return Verdict(Bound.DEPENDS, None, (), tuple(c for c in out if c is not None))
