"""max() and min() in solve equations: branches, the roots each branch allows, and limits.

Input: a sympy expression f(x) that may contain Max/Min (every T_kernel is launch +
max(T_compute, T_memory)). Output: the branches of f (each max()/min() replaced by one of its
arguments, with the choice that made it), the roots of each branch, whether a branch's choice
holds at a root, and limits of f as x → 0⁺ or ∞. sympy's `limit` (Gruntz) cannot expand a
Max/Min in several symbols (it raises NotImplementedError), so `limit` here first replaces each
one by the argument that wins near the point, which it decides by a limit of their difference.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Optional

import sympy

from costlang.errors import SolveError

__all__ = ["Branch", "branches", "branch_roots", "holds_at", "ties_at", "branch_conditions", "limit", "sign_near",
           "MAX_EXTREMA"]

MAX_EXTREMA = 4  # max()/min() terms split into branches; 2^4 branches at most
_ORDERS = 4      # how many powers of x `sign_near` divides out before it gives up


@dataclass(frozen=True)
class Branch:
    """f with each max()/min() term replaced by one of its arguments."""
    expr: sympy.Expr
    choice: tuple[tuple[sympy.Expr, sympy.Expr], ...]  # (the max()/min() term, the argument taken)


def branches(f: sympy.Expr) -> list[Branch]:
    """Every combination of arguments of the max()/min() terms of f (f itself if it has none)."""
    extrema = sorted(f.atoms(sympy.Max, sympy.Min), key=sympy.default_sort_key)
    if len(extrema) > MAX_EXTREMA:
        raise SolveError(f"the equation has {len(extrema)} max()/min() terms; at most "
                         f"{MAX_EXTREMA} can be split into cases")
    out = []
    for args in itertools.product(*[e.args for e in extrema]):
        choice = tuple(zip(extrema, args))
        out.append(Branch(f.xreplace(dict(choice)), choice))
    return out


def branch_roots(f: sympy.Expr, x: sympy.Symbol, through=None) -> list[tuple[sympy.Expr, Branch]]:
    """(root, branch) for the roots of every branch's numerator; a root found twice is kept once.
    `through` = (values, points): only the branches whose numerator, with the other symbols given
    `values` (a function of an expression), is zero at one of the points x = p; a root r of
    another branch cannot have r(values) = p (its numerator is zero at x = r, hence at p)."""
    out: list[tuple[sympy.Expr, Branch]] = []
    for branch in branches(f):
        numer, _ = sympy.fraction(sympy.together(branch.expr))
        numer = sympy.expand(numer)
        if numer.is_zero:
            raise SolveError("the two sides are equal for every value in a range; there is no "
                             "single crossing to report")
        if x not in numer.free_symbols:
            continue
        if through is not None and not any(_may_vanish(through[0](numer), x, p) for p in through[1]):
            continue
        for r in sympy.solve(numer, x):
            if all(r != seen for seen, _ in out):
                out.append((r, branch))
    return out


def _may_vanish(numer: sympy.Expr, x, point) -> bool:
    """False only where the numerator at x = point is exactly a nonzero rational number."""
    value = numer.xreplace({x: point})
    return not (value.is_Rational and value != 0)


def _gaps(branch: Branch, x, root):
    """For each argument not taken: how far the taken one wins at x = root (≥ 0 when it does)."""
    for term, taken in branch.choice:
        for other in term.args:
            if other != taken:
                gap = taken - other if isinstance(term, sympy.Max) else other - taken
                yield sympy.simplify(gap.xreplace({x: root}))


def holds_at(branch: Branch, x, root) -> Optional[bool]:
    """Whether every argument the branch takes is its term's max (min) at x = root; None: unknown."""
    verdict: Optional[bool] = True
    for gap in _gaps(branch, x, root):
        if gap.is_negative:
            return False
        if not gap.is_nonnegative:
            verdict = None
    return verdict


def ties_at(branch: Branch, x, root) -> bool:
    """Whether some argument not taken is equal to the taken one at x = root."""
    return any(gap.is_zero for gap in _gaps(branch, x, root))


def branch_conditions(branch: Branch, x, root) -> tuple[sympy.Basic, ...]:
    """When the branch a closed-form root lies on holds: for each max()/min() argument it takes,
    that it is at least (at most) every other argument at x = root, as conditions on the other
    symbols (`S ≤ 1988`, `T ≤ 64·S − 96`); one that holds for every positive value is left out,
    and of several bounds on one symbol by numbers only the tightest is kept."""
    out = []
    for term, taken in branch.choice:
        for other in term.args:
            if other == taken:
                continue
            gap = sympy.factor(taken - other if isinstance(term, sympy.Max) else other - taken)
            if x in gap.free_symbols:   # x > 0: a factor x^k does not change the sign
                gap = gap / x ** sympy.Poly(sympy.fraction(gap)[0], x).monoms()[-1][0] \
                    if sympy.fraction(gap)[0].is_polynomial(x) else gap
            if x in gap.free_symbols:
                gap = sympy.simplify(gap.xreplace({x: root}))
            if gap.is_nonnegative:
                continue
            out += _nonnegative_when(gap)
    return _tightest(out)


def _nonnegative_when(gap: sympy.Expr) -> list:
    """gap ≥ 0 with its positive factors divided out and, when what is left is linear in a symbol,
    solved for it (a symbol with coefficient ±1 first)."""
    numer, denom = sympy.fraction(sympy.factor(gap))
    sign, kept = 1, []
    for f in (*sympy.Mul.make_args(numer), *sympy.Mul.make_args(denom)):
        if isinstance(f, sympy.Add):   # 5·(64·S − T − 96) is kept by sympy as 320·S − 5·T − 480
            f = f.as_content_primitive()[1]
        if f.is_positive:
            continue
        if f.is_negative:
            sign = -sign
        else:
            kept.append(f)
    rest = sympy.Mul(*kept)
    if len(kept) == 1 and isinstance(kept[0], sympy.Add):
        linear = [s for s in sorted(rest.free_symbols, key=str)   # (⌈d²/2^61⌉ is no polynomial in d)
                  if rest.is_polynomial(s) and sympy.Poly(rest, s).degree() == 1
                  and sympy.Poly(rest, s).LC().is_number]
        linear.sort(key=lambda s: abs(sympy.Poly(rest, s).LC()) != 1)
        if linear:
            s = linear[0]
            lead, constant = sympy.Poly(rest, s).all_coeffs()
            threshold = sympy.expand(-constant / lead)
            up = sign * lead > 0
            if s.is_integer and threshold.is_number:   # a dim: S ≥ 525/16 is S ≥ 33
                threshold = sympy.ceiling(threshold) if up else sympy.floor(threshold)
            return [sympy.GreaterThan(s, threshold) if up else sympy.LessThan(s, threshold)]
    if len(rest.free_symbols) == 1 and rest.is_polynomial():
        try:
            bounds = _interval((sign * rest), next(iter(rest.free_symbols)))
        except (NotImplementedError, sympy.PolynomialError, ValueError, TypeError):
            bounds = None   # sympy cannot solve it: the condition is kept as it is
        if bounds is not None:
            return bounds
    return [sympy.GreaterThan(sign * rest, 0)]


def _interval(p: sympy.Expr, s: sympy.Symbol) -> Optional[list]:
    """p(s) ≥ 0 over s > 0 as `s ≥ a`, `s ≤ c` or both, when it is one interval (its ends rounded
    inward for a whole-number s); None when it is not."""
    t = sympy.Symbol("t", positive=True)
    where = sympy.solve_univariate_inequality(p.xreplace({s: t}) >= 0, t, relational=False) \
        .intersect(sympy.Interval.open(0, sympy.oo))
    if not isinstance(where, sympy.Interval):
        return None
    out = []
    if where.start != 0:
        out.append(sympy.GreaterThan(s, sympy.ceiling(where.start) if s.is_integer else where.start))
    if where.end != sympy.oo:
        out.append(sympy.LessThan(s, sympy.floor(where.end) if s.is_integer else where.end))
    return out


def _tightest(conditions) -> tuple[sympy.Basic, ...]:
    """The conditions, each bound of a symbol by a number kept only where it is the tightest."""
    best: dict = {}
    out = []
    for c in conditions:
        if c is sympy.true or c in out:
            continue
        if isinstance(c.lhs, sympy.Symbol) and c.rhs.is_number:
            key = (c.lhs, type(c))
            tighter = (lambda a, b: a > b) if isinstance(c, sympy.GreaterThan) else (lambda a, b: a < b)
            if key in best and not tighter(c.rhs, best[key].rhs):
                continue
            if key in best:
                out.remove(best[key])
            best[key] = c
        out.append(c)
    return tuple(out)


def _sign(value: sympy.Expr) -> int:
    if value.is_extended_positive:
        return 1
    if value.is_extended_negative:
        return -1
    if value.is_zero:
        return 0
    raise NotImplementedError(f"the sign of {value} depends on the values of its symbols")


def sign_near(e: sympy.Expr, x: sympy.Symbol, point) -> int:
    """The sign of e for x just above 0 (point 0) or large enough (point ∞); ±1, or 0 if e ≡ 0."""
    if sympy.simplify(e) == 0:
        return 0
    for k in range(_ORDERS):
        scaled = e / x ** k if point == 0 else e * x ** k
        value = _sign(limit(scaled, x, point))
        if value:
            return value
    raise NotImplementedError(f"cannot tell the sign of {e} as {x} → {point}")


def _winner(term: sympy.Expr, x, point) -> sympy.Expr:
    """The argument of a max()/min() that is its value near the point."""
    best = term.args[0]
    for arg in term.args[1:]:
        larger = sign_near(arg - best, x, point) > 0
        if larger == isinstance(term, sympy.Max):
            best = arg
    return best


def limit(e: sympy.Expr, x: sympy.Symbol, point) -> sympy.Expr:
    """lim e as x → point (0 from above, or ∞), each max()/min() first replaced by its winner there.

    >>> B, c = sympy.symbols("B c", positive=True)
    >>> limit(B / sympy.Max(c, 2 * B), B, sympy.oo)
    1/2
    """
    def winner(term):
        return _winner(term, x, point) if x in term.free_symbols else term
    flat = e.replace(lambda n: isinstance(n, (sympy.Max, sympy.Min)), winner)
    return sympy.limit(flat, x, point, "+") if point == 0 else sympy.limit(flat, x, point)
