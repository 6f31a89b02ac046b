"""Roots found numerically where sympy cannot solve exactly: a scan for sign changes, then bisection.

Input: f(x), an expression in x alone (every other symbol bound) whose roots sympy could not
find, or could not prove complete (ceil() of x in a tiling, an exponential in x such as the MoE's
(7/8)^B). Output: a `Scan`: each sign change of f found over the scanned range, bracketed and
narrowed by bisection on the exact expression evaluated by sympy at high precision, and the
range scanned. For a dim the brackets are whole numbers one apart, so the whole numbers on each
side of a change are exact. A sign change is where lhs − rhs changes sign, which a ceil() can do
by a jump as well as through zero; no sign change found means nothing is decided (the scan is a
search, not a proof), and the printers say "found numerically" or "undecided", never a regime.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Optional

import sympy

__all__ = ["Change", "Scan", "scan", "is_solvable", "SCAN_LOW", "SCAN_HIGH"]

SCAN_LOW = sympy.Rational(1, 2 ** 20)   # the scanned range of a positive real X: 2^-20 …
SCAN_HIGH = sympy.Integer(2) ** 50       # … 2^50 (a dim: 1 … 2^50)
_STEPS_PER_OCTAVE = 8
_DIGITS = 60                             # sympy evaluates f to this many significant digits
_BISECTIONS = 80                         # halvings of a real bracket (then 15 digits are shown)


@dataclass(frozen=True)
class Change:
    """A sign change of f: f has sign `below` at `lower` and the other sign at `upper`."""
    lower: sympy.Rational
    upper: sympy.Rational
    value: sympy.Float       # where it changes, to 15 digits
    below: int               # the sign of f just below it


@dataclass(frozen=True)
class Scan:
    changes: tuple[Change, ...]
    low: sympy.Rational      # the range scanned
    high: sympy.Rational
    points: int              # how many points f was evaluated at in the scan
    zeros: tuple[sympy.Rational, ...] = ()   # scanned points where f is exactly 0


def is_solvable(numerators, x) -> bool:
    """Whether sympy's roots are all the roots: every numerator is a polynomial in x."""
    return all(n.is_polynomial(x) for n in numerators)


_EXACT_BELOW = 10 ** 4   # f is evaluated exactly at a point up to this size when its decimal is all noise


def _sign(f, x, point) -> Optional[int]:
    """The sign of f at x = point: from sympy's evaluation at `_DIGITS` digits, which raises its
    own precision where terms cancel; where no digit of the result is significant (an exact zero
    evaluates to `0.e-188`), from the exact value at a small point, else None (not decided)."""
    value = f.evalf(_DIGITS, subs={x: point})
    if value.is_zero:
        return 0
    if not value.is_real or value.is_finite is False:
        return None
    if isinstance(value, sympy.Float) and value._prec < 30:
        if abs(point) > _EXACT_BELOW:
            return None
        exact = sympy.simplify(f.xreplace({x: point}))
        return 0 if exact.is_zero else 1 if exact.is_positive else -1 if exact.is_negative else None
    return 1 if value > 0 else -1


@functools.lru_cache(maxsize=None)
def _grid(whole: bool) -> tuple:
    """Points of the scan: geometric, `_STEPS_PER_OCTAVE` per octave (whole numbers for a dim).
    The same points for every scan, so they are made once per process."""
    if whole:
        # floor(2^(k/8)) exactly: the integer 8th root of 2^k (sympy's floor of the power costs
        # seconds for the 401 of them)
        points = sorted({sympy.Integer(sympy.integer_nthroot(2 ** k, _STEPS_PER_OCTAVE)[0])
                         for k in range(0, 50 * _STEPS_PER_OCTAVE + 1)})
        return tuple(p for p in points if p >= 1)
    # rational points (2^(k/8) rounded to 40 binary places): exact arithmetic stays rational
    return tuple(sorted({sympy.Rational(round(2.0 ** (k / _STEPS_PER_OCTAVE) * 2 ** 40), 2 ** 40)
                         for k in range(-20 * _STEPS_PER_OCTAVE, 50 * _STEPS_PER_OCTAVE + 1)}))


def scan(f, x, whole: bool) -> Scan:
    """Every sign change of f between consecutive scan points, each narrowed by bisection."""
    points = _grid(whole)
    signs = [_sign(f, x, p) for p in points]
    changes, zeros = [], []
    for p, s in zip(points, signs):
        if s == 0:
            zeros.append(p)
    known = [(p, s) for p, s in zip(points, signs) if s]
    for (a, sa), (b, sb) in zip(known, known[1:]):
        if sa != sb:
            changes.append(_narrow(f, x, a, b, sa, whole))
    return Scan(tuple(changes), points[0], points[-1], len(points), tuple(zeros))


def _narrow(f, x, a, b, sa: int, whole: bool) -> Change:
    """Bisect [a, b] (f has sign sa at a, the other at b): to whole numbers one apart for a dim,
    then to 15 digits."""
    if whole:
        while b - a > 1:
            m = (a + b) // 2
            sm = _sign(f, x, m)
            if sm == 0:
                return Change(m, m, sympy.Float(m, 15), sa)
            if sm is None:
                break
            a, b = (m, b) if sm == sa else (a, m)
    lo, hi = sympy.Rational(a), sympy.Rational(b)
    for _ in range(_BISECTIONS):
        m = (lo + hi) / 2
        sm = _sign(f, x, m)
        if sm == 0:
            lo = hi = m
            break
        if sm is None:
            break
        lo, hi = (m, hi) if sm == sa else (lo, m)
        if hi - lo < hi * sympy.Rational(1, 10 ** 18):
            break
    return Change(sympy.Rational(a), sympy.Rational(b), sympy.Float((lo + hi) / 2, 15), sa)
