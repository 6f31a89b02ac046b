"""The notes beside a solve's answer: why there is no crossing, when a symbolic root is positive,
limits as X → ∞, and large-size approximations.

Input: the two sides of a solve's equation (closed form in the program's symbols, exact with the
bindings, general in b, Istar and BW) and its roots. Output: `NoCrossing`, conditions, `Limit`s
and `Approximation`s (data; `printers.whatif` formats them). Limits go through
`extrema.limit`, which handles the max() in every T_kernel.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import sympy

from costlang.queries.extrema import branch_roots, limit

__all__ = ["NoCrossing", "Limit", "Approximation", "APPROXIMATION_TOLERANCE", "no_crossing",
           "conditions", "limits", "approximations", "tidy", "sign_at"]

#: an approximation is shown when, at the given sizes, it is within this relative error of the
#: exact answer (or when the sizes are free, so there is nothing to compare)
APPROXIMATION_TOLERANCE = sympy.Rational(1, 4)


@dataclass(frozen=True)
class NoCrossing:
    """Why no X makes the sides meet: the bound one side approaches and the other side's value."""
    side: str                     # the text of the side (or "lhs − rhs") that stays on one side
    extremum: str                 # "sup" or "inf"
    value: sympy.Expr
    at: sympy.Expr                # where: X → `at` (0 or ∞) when `approached`, else X = `at` (1)
    general: Optional[sympy.Expr]  # the same bound in b, Istar, BW, when known
    other: str
    other_value: sympy.Expr
    conditions: tuple[tuple[sympy.Expr, sympy.Basic], ...] = ()  # (closed-form root, when it is > 0)
    approached: bool = True


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
    error: Optional[sympy.Expr] = None  # (value − exact) / exact, exact; None when unbound
    #: the symbols that grow (several: all of them together, e.g. D and F of a [B,D]·[D,F] matmul)
    symbols: tuple = ()

    @property
    def growing(self) -> tuple:
        return self.symbols or (self.symbol,)


def tidy(e: sympy.Expr) -> sympy.Expr:
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


def sign_at(f, x, point) -> int:
    value = f.xreplace({x: point})
    if not value.is_Rational:   # an exact fraction has its sign already; nsimplify would only search it
        value = sympy.nsimplify(value)
    return 1 if value.is_positive else -1 if value.is_negative else 0


# --- no crossing ---------------------------------------------------------------------------------

def _extremes(e, x, whole: bool):
    """Candidates for sup/inf of e over the domain (x ≥ 1 for a dim, x > 0 else): its ends
    (costs are monotone in a size)."""
    low = (e.xreplace({x: 1}), sympy.Integer(1)) if whole else (limit(e, x, 0), sympy.Integer(0))
    return [low, (limit(e, x, sympy.oo), sympy.oo)]


def no_crossing(closed, exact, g_sides, x, texts, whole: bool) -> NoCrossing:
    """Which side stays below or above, its sup or inf, and when a crossing would exist."""
    lhs, rhs = exact
    varies_rhs = x in rhs.free_symbols
    side, text, other_text = (lhs - rhs, f"{texts[0]} − {texts[1]}", "0") if varies_rhs else (lhs, texts[0], texts[1])
    other = sympy.Integer(0) if varies_rhs else rhs
    below = sign_at(lhs - rhs, x, sympy.Integer(1)) < 0
    cands = [(v, w) for v, w in _extremes(side, x, whole) if v.is_real or v in (sympy.oo, -sympy.oo)]
    value, where = (max if below else min)(cands, key=lambda vw: sympy.N(vw[0], 30))
    general = None
    if g_sides is not None and not varies_rhs and where == sympy.oo:
        general = sympy.factor(limit(g_sides[0], x, sympy.oo))
    found = conditions(tuple(r for r, _ in branch_roots(closed[0] - closed[1], x)), x)
    if g_sides is not None:
        lifted = (g_sides[0] - g_sides[1]).free_symbols - (closed[0] - closed[1]).free_symbols
        found += conditions(tuple(r for r, _ in branch_roots(g_sides[0] - g_sides[1], x)), x, lifted)
    return NoCrossing(text, "sup" if below else "inf", value, where, general, other_text, other, found,
                      approached=not (whole and where == 1))


def conditions(roots, x, lifted=()) -> tuple:
    """For each symbolic root not known to be positive: when it is (a condition on one symbol)."""
    out = []
    for r in roots:
        if r.is_positive:
            continue
        cond = _positive_when(r, x, set(lifted))
        if cond is not None:
            out.append((tidy(r), cond))
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
            lead, constant = poly.all_coeffs()
            threshold = tidy(-constant / lead)  # a plain division: sympy.solve would drop a threshold ≤ 0
            above = (poly.LC().is_positive and sign > 0) or (poly.LC().is_negative and sign < 0)
            return sympy.StrictGreaterThan(s, threshold) if above else sympy.StrictLessThan(s, threshold)
    return None


# --- limits and approximations -------------------------------------------------------------------

def limits(closed, g_sides, exact, x, texts) -> tuple[Limit, ...]:
    out = []
    for i in (0, 1):
        if x not in exact[i].free_symbols:
            continue
        value = limit(exact[i], x, sympy.oo)
        general = sympy.factor(limit(g_sides[i], x, sympy.oo)) if g_sides is not None else None
        out.append(Limit(texts[i], sympy.factor(limit(closed[i], x, sympy.oo)), general,
                         value if value.is_number else None))
    return tuple(out)


def approximations(roots, x, legend, bindings, values) -> tuple[Approximation, ...]:
    """X* as each program symbol in it grows without bound (the large-size approximation), and as
    all of them grow together when there are several, kept when it is within
    `APPROXIMATION_TOLERANCE` of the exact answer at the given sizes."""
    lifted = {item.symbol: item.value for item in legend}
    out = []
    for r, exact in zip(roots, values):
        if r is None:
            continue
        grow = sorted(r.free_symbols - set(lifted) - {x}, key=str)
        cases = [((s,), limit(r, s, sympy.oo)) for s in grow]
        if len(grow) > 1:
            joint = r
            for s in grow:
                joint = limit(joint, s, sympy.oo)
            cases.append((tuple(grow), joint))
        for symbols, approx in cases:
            if _unbounded(approx) or approx.is_zero or approx.free_symbols == r.free_symbols:
                continue
            value = approx.xreplace(lifted).xreplace(bindings)
            value = value if value.is_number else None
            error = (value - exact) / exact if value is not None and exact is not None and exact != 0 else None
            if error is None or abs(error) <= APPROXIMATION_TOLERANCE:
                out.append(Approximation(symbols[0], tidy(approx), value, exact, error,
                                         symbols if len(symbols) > 1 else ()))
    return tuple(out)


def _unbounded(e) -> bool:
    """Infinite or undefined (a limit that does not give a finite approximation)."""
    return e.is_finite is False or e.has(sympy.oo, -sympy.oo, sympy.zoo, sympy.nan)
