"""max() and min() in one positive symbol, decided exactly without sympy's comparisons.

A model's times as functions of one count (the data-parallel replicas q of a training step) are
sums a + b/q: a stage's time is a max() of them, the step's a max() over the stages. sympy's
`Max` proves each argument ≤ another with its assumptions, pair by pair (a second for a dozen).
Here each argument is a Laurent polynomial in the symbol x > 0 (Σ c_k·x^k, k whole), or a positive
number times a max()/min() of such: where every two of them differ by c_a·x^a + c_b·x^b at most,
their crossings are rational (x^(b−a) = −c_a/c_b with b − a = 1), and between two neighbouring
crossings every comparison keeps its sign. One rational point in each gap then decides exactly
which argument is below another everywhere (continuity carries it over the crossings), with
Python's exact fractions. A whole-number symbol (a dim: 1, 2, 3, …) is tried at 1 and at the whole
numbers at and just above each crossing, which meet every gap that holds a whole number. The arguments left are each above the others somewhere, so sympy could
drop none of them: `Max(*kept, evaluate=False)` is the object it would build.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Optional

import sympy

__all__ = ["undominated_in_one", "sign_in_one"]

_LEAVES: dict = {}

#: the largest power (of the symbol or of a sum) a Laurent polynomial here may hold
MAX_POWER = 8


def _laurent(e: sympy.Expr, x: sympy.Symbol) -> Optional[dict]:
    """{k: c_k} with e = Σ c_k·x^k (c_k exact fractions), or None when e is not of that form."""
    found = _LEAVES.get((e, x), False)
    if found is not False:
        return found
    out: Optional[dict] = {}
    # small whole powers only: expanding (x + 1)^1000, or x^(10^6) at a point, would take seconds
    if any(not p.exp.is_Integer or abs(p.exp) > MAX_POWER for p in e.atoms(sympy.Pow)):
        return None
    for term in sympy.Add.make_args(sympy.expand(e)):
        c, rest = term.as_coeff_Mul()
        if not c.is_Rational:
            out = None
            break
        if rest == 1:
            k = 0
        elif rest == x:
            k = 1
        elif rest.is_Pow and rest.base == x and rest.exp.is_Integer:
            k = int(rest.exp)
        else:
            out = None
            break
        out[k] = out.get(k, 0) + Fraction(int(c.p), int(c.q))
    if len(_LEAVES) > 8192:
        _LEAVES.clear()
    _LEAVES[(e, x)] = out
    return out


def _tree(e: sympy.Expr, x: sympy.Symbol, scale: Fraction, leaves: list):
    """e as a tree to evaluate at a point: ("leaf", {k: c}) or ("max"/"min", scale, children);
    each leaf, times the product of the scales above it, is appended to `leaves`. None: another form."""
    if isinstance(e, (sympy.Max, sympy.Min)):
        kids = [_tree(a, x, scale, leaves) for a in e.args]
        return None if None in kids else ("max" if isinstance(e, sympy.Max) else "min", Fraction(1), kids)
    c, rest = e.as_coeff_Mul()
    if c.is_Rational and c > 0 and isinstance(rest, (sympy.Max, sympy.Min)):
        inner = _tree(rest, x, scale * Fraction(int(c.p), int(c.q)), leaves)
        return None if inner is None else (inner[0], Fraction(int(c.p), int(c.q)), inner[2])
    poly = _laurent(e, x)
    if poly is None:
        return None
    leaves.append({k: scale * v for k, v in poly.items()})
    return ("leaf", poly)


def _at(tree, v: Fraction) -> Fraction:
    if tree[0] == "leaf":
        return sum((c * v ** k for k, c in tree[1].items()), Fraction(0))
    values = [_at(t, v) for t in tree[2]]
    return tree[1] * (max(values) if tree[0] == "max" else min(values))


def _crossings(leaves: list) -> Optional[set]:
    """The positive points where two leaves cross; None when some two differ by more than two
    neighbouring powers of x (a crossing that need not be rational)."""
    out = set()
    for i, a in enumerate(leaves):
        for b in leaves[i + 1:]:
            diff = {k: a.get(k, 0) - b.get(k, 0) for k in a.keys() | b.keys()}
            powers = sorted(k for k, c in diff.items() if c != 0)
            if len(powers) <= 1:
                continue          # equal, or one sign on x > 0
            if len(powers) > 2 or powers[1] - powers[0] != 1:
                return None
            root = -diff[powers[0]] / diff[powers[1]]
            if root > 0:
                out.add(root)
    return out


def undominated_in_one(args: tuple, largest: bool) -> Optional[tuple]:
    """For `Max(*args)` (`largest`) or `Min(*args)` with one free symbol x > 0 in all: the
    arguments (nested max()es of the same kind taken apart) less those another one is ≥ (for max;
    ≤ for min) at every x > 0, each pair of those left crossing; None when the arguments are not of
    the form this decides (then sympy decides).

    >>> q = sympy.Symbol("q", positive=True, integer=True)
    >>> undominated_in_one((2 / q, 1 + 1 / q, 3 / q), True)    # 2/q ≤ 3/q everywhere; 3/q and 1 + 1/q cross at q = 2
    (3/q, 1 + 1/q)
    >>> undominated_in_one((q, sympy.sqrt(q)), True) is None
    True
    """
    kind = sympy.Max if largest else sympy.Min
    if not all(isinstance(a, sympy.Expr) for a in args):
        return None
    flat: list = []
    for a in args:
        for b in (a.args if isinstance(a, kind) else (a,)):
            if b not in flat:
                flat.append(b)
    if len(flat) < 2 or any(isinstance(a, sympy.Min if largest else sympy.Max) for a in flat):
        return None       # sympy rewrites a max() of min()s (and the reverse): leave it to sympy
    symbols = set().union(*(a.free_symbols for a in flat))
    if len(symbols) != 1:
        return None
    x = symbols.pop()
    if x.is_positive is not True:
        return None
    leaves: list = []
    trees = [_tree(a, x, Fraction(1), leaves) for a in flat]
    if None in trees:
        return None
    cuts = _crossings(leaves)
    if cuts is None:
        return None
    if x.is_integer:   # x = 1, 2, 3, …: 1, and each whole number at or next above a crossing
        points = sorted({Fraction(1)} | {Fraction(c.numerator // c.denominator + k) for c in cuts
                                         for k in (0, 1) if c >= 1})
    else:              # x > 0: a point below the first crossing, between each two, above the last
        cuts = sorted(cuts)
        points = [Fraction(1)] if not cuts else \
            [cuts[0] / 2] + [(lo + hi) / 2 for lo, hi in zip(cuts, cuts[1:])] + [cuts[-1] + 1]
    values = [[_at(t, p) for p in points] for t in trees]
    ordered = list(sympy.ordered(flat))
    index = {a: i for i, a in enumerate(ordered)}
    at = {a: values[i] for i, a in enumerate(flat)}

    def covers(a, b):   # a ≥ b (max; a ≤ b for min) at every x > 0
        return all((u >= w) if largest else (u <= w) for u, w in zip(at[a], at[b]))

    kept = [b for b in ordered
            if not any(a is not b and covers(a, b) and (not covers(b, a) or index[a] < index[b]) for a in ordered)]
    return tuple(kept)


def sign_in_one(e: sympy.Expr):
    """The sign of `e` for every value of its one free symbol x > 0 (x = 1, 2, … for a whole
    number), when e is a Laurent polynomial in x: (True, +1, −1 or 0) where one sign holds
    everywhere, (True, None) where it changes or touches zero, (False, None) where this cannot tell
    (another form: sympy decides). Every coefficient of one sign gives that sign; two neighbouring
    powers c_k·x^k + c_(k+1)·x^(k+1) of opposite signs are zero at x = −c_k/c_(k+1) only.

    >>> q = sympy.Symbol("q", positive=True, integer=True)
    >>> sign_in_one(3 + 2 / q), sign_in_one(1 - 1 / q), sign_in_one(1 - 2 / q), sign_in_one(1 - q / 2)
    ((True, 1), (True, None), (True, None), (True, None))
    >>> sign_in_one(2 - 1 / q), sign_in_one(q - 1 / q)
    ((True, 1), (False, None))
    """
    if not isinstance(e, sympy.Expr):
        return False, None
    symbols = e.free_symbols
    if len(symbols) != 1:
        return False, None
    x = next(iter(symbols))
    if x.is_positive is not True:
        return False, None
    poly = _laurent(e, x)
    if poly is None:
        return False, None
    powers = sorted(k for k, c in poly.items() if c != 0)
    if not powers:
        return True, 0
    signs = {poly[k] > 0 for k in powers}
    if len(signs) == 1:
        return True, 1 if signs.pop() else -1
    if len(powers) != 2 or powers[1] - powers[0] != 1:
        return False, None
    low, high = poly[powers[0]], poly[powers[1]]
    root = -low / high                   # > 0: the two signs differ
    if x.is_integer and root < 1:        # no whole number reaches it: the sign at x ≥ 1 is the high power's
        return True, 1 if high > 0 else -1
    return True, None
