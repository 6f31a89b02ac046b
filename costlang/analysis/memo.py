"""Memoised sympy work: the kernels of a model repeat a few shapes, so their Max/Min are computed once.

`sympy.Max` and `sympy.Min` on symbolic arguments compare them (`_find_localzeros`), which is most
of an analysis's time; a transformer's layers give the same few pairs again and again. `smax` and
`smin` return the same objects as `sympy.Max`/`sympy.Min`, remembered per argument tuple (the
arguments are immutable sympy expressions, so sharing results is safe). The tables are bounded.

Before sympy compares the arguments pairwise (with its assumptions, slowly), a cheap test drops
those another argument dominates term by term: with positive symbols, a - b ≥ 0 when its expanded
terms are positive monomials with non-negative coefficients (`dominates`). sympy would drop the
same arguments (it proves such sums non-negative too), so the result is the same object; it just
has fewer pairs to compare (a footprint's Max over 22 schedule steps keeps 6).
"""
from __future__ import annotations

import sympy

from costlang.analysis.univariate import undominated_in_one
from costlang.passes.costs import grouped_sum

__all__ = ["smax", "smin", "left_max", "unsettled", "settle", "ssum", "remembered", "bound_value", "substitute",
           "dominates", "positive_somewhere", "clear"]

_LIMIT = 8192


def remembered(table: dict, key, compute, limit: int = _LIMIT):
    """`table[key]`, computed by `compute()` the first time: the analysis's tables of results per
    distinct input (a model's kernels repeat a few). A table past `limit` entries starts afresh.

    >>> table = {}
    >>> remembered(table, "k", lambda: 1), remembered(table, "k", lambda: 2)
    (1, 1)
    """
    found = table.get(key)
    if found is None:
        if len(table) >= limit:
            table.clear()
        found = table[key] = compute()
    return found
_TABLES: dict = {sympy.Max: {}, sympy.Min: {}}


def _memo(kind, args):
    table = _TABLES[kind]
    result = table.get(args)
    if result is None:
        if len(table) >= _LIMIT:
            table.clear()
        one = undominated_in_one(args, kind is sympy.Max)   # one symbol: decided exactly, at once
        if one is not None:
            result = table[args] = one[0] if len(one) == 1 else kind(*one, evaluate=False)
            return result
        kept = _undominated(args, kind is sympy.Max)
        # sympy would keep every argument: build the same object without its (slow) comparisons
        result = table[args] = kind(*kept, evaluate=False) if _incomparable(kept) else kind(*kept)
    return result


#: points of the domain, as a power of two per symbol (in name order): positive whole numbers
#: satisfy the assumptions of costlang's dims (positive integers) and params (positive reals).
#: First all alike (1, 2^20, 2^40), then the corners (each symbol 1 or 2^40), where one size's
#: growth against another's shows (D² against Dh·H); corners only up to 6 symbols (64 points)
_ALIKE = (0, 20, 40)
_CORNERS_UP_TO = 6
_PLAIN = (sympy.Symbol("n", positive=True).assumptions0, sympy.Symbol("n", positive=True, integer=True).assumptions0)


def _points(n: int):
    for k in _ALIKE:
        yield (k,) * n
    if n <= _CORNERS_UP_TO:
        for bits in range(1, 2 ** n - 1):
            yield tuple(40 * (bits >> i & 1) for i in range(n))


def _incomparable(args: tuple) -> bool:
    """Whether every two arguments evidently have no fixed order: at one point of the domain the
    first is larger, at another the second. sympy's Max and Min drop an argument only when they
    prove it ≤ (≥) another everywhere, and they rewrite nested Max/Min only, so with such arguments
    (none a Max or Min, all distinct) `Max(*args)` is `Max(*args, evaluate=False)`: the same
    arguments, in the same canonical order.

    >>> B = sympy.Symbol("B", positive=True, integer=True)
    >>> _incomparable((B, 64 - B)), _incomparable((B, 2 * B)), sympy.Max(B, 64 - B) == sympy.Max(B, 64 - B, evaluate=False)
    (True, False, True)

    A real symbol is tried below 1 too: 6/BW against 1/(BW·I) changes order at I = 1/6

    >>> BW, I = sympy.symbols("BW I", positive=True)
    >>> _incomparable((6 / BW, 1 / (BW * I))), sympy.Max(6 / BW, 1 / (BW * I)) == sympy.Max(6 / BW, 1 / (BW * I), evaluate=False)
    (True, True)

    A symbol in an exponent is not tried at all (its values at the points would be huge exact
    numbers: the Mixtral example's expected experts 8·(1 − (3/4)^B) took 25 s at B = 2^40):

    >>> _incomparable((B, 8 * (1 - sympy.Rational(3, 4) ** B)))
    False
    """
    if len(args) < 2 or len(set(args)) != len(args) or \
            any(not isinstance(a, sympy.Expr) or isinstance(a, (sympy.Max, sympy.Min)) for a in args):
        return False
    symbols = set().union(*(a.free_symbols for a in args))
    if not symbols or any(s.assumptions0 not in _PLAIN for s in symbols):
        return False
    if _symbolic_exponent(args):
        return False  # (3/4)^B at B = 2^40 is an exact rational of 10^12 bits: never tried
    ordered = sorted(symbols, key=str)
    pairs = {(i, j): set() for i in range(len(args)) for j in range(i + 1, len(args))}  # signs seen
    # a real symbol (a hardware figure made symbolic) may also be below 1: those points come after
    shifts = (0, -40) if any(not s.is_integer for s in ordered) else (0,)
    for shift, exponents in ((h, e) for h in shifts for e in _points(len(ordered))):
        at = {s: sympy.Integer(2) ** (k + (0 if s.is_integer else shift)) for s, k in zip(ordered, exponents)}
        row = [a.xreplace(at) for a in args]
        if not all(v.is_Rational for v in row):
            return False
        for (i, j), seen in pairs.items():
            seen.add(int(bool(row[i] > row[j])) - int(bool(row[i] < row[j])))
        if all({1, -1} <= seen for seen in pairs.values()):
            return True
    return False


def _symbolic_exponent(args) -> bool:
    """Whether a symbol appears in an exponent of any of the expressions: their values at the
    points of the domain could then be exact numbers too large to compute."""
    return any(p.exp.free_symbols for a in args for p in a.atoms(sympy.Pow))


def positive_somewhere(e: sympy.Expr) -> bool:
    """Whether `e` is evidently positive at one point of the domain (the points of `_incomparable`):
    then no simplification can show it ≤ 0 everywhere. False means "not shown", not "no".

    >>> B, S = sympy.symbols("B S", positive=True, integer=True)
    >>> positive_somewhere(B - 2 * S), positive_somewhere(-B - S), positive_somewhere(sympy.Integer(3))
    (True, False, False)
    """
    symbols = e.free_symbols
    if not symbols or any(s.assumptions0 not in _PLAIN for s in symbols) or \
            _symbolic_exponent((e,)):
        return False
    ordered = sorted(symbols, key=str)
    for exponents in _points(len(ordered)):
        at = e.xreplace({s: sympy.Integer(2) ** k for s, k in zip(ordered, exponents)})
        if at.is_Rational and at > 0:
            return True
    return False


def dominates(a: sympy.Expr, b: sympy.Expr) -> bool:
    """Whether a > b is evident: a - b, expanded, is a sum of positive terms (positive monomials
    times positive coefficients). False means "not shown", not "no".

    >>> B, S = sympy.symbols("B S", positive=True)
    >>> dominates(4*B*S + 2*S, 2*B*S + 2*S), dominates(B, S), dominates(B, B)
    (True, False, False)
    """
    a, b = (sympy.Integer(v) if isinstance(v, int) else v for v in (a, b))
    symbols = a.free_symbols | b.free_symbols
    if symbols and all(s.is_positive for s in symbols):
        # a cheap disproof first: a sum of positive terms is positive at every positive point, so a
        # point where a − b ≤ 0 settles it (exact numbers, each side's once; neither a − b of two
        # model-scale sums nor its expansion is built); a = b is 0 there
        for point in (2, 1000):
            at = _at_point(a, point) - _at_point(b, point)
            if at.is_Rational and at <= 0:
                return False
    diff = a - b
    if diff == 0:
        return False
    if diff.is_Rational:
        return bool(diff > 0)
    # a − b expanded is a's expanded terms less b's: each side is expanded once, for all its pairs
    ta, tb = _terms(a), _terms(b)
    diff = {t: ta.get(t, 0) - tb.get(t, 0) for t in ta.keys() | tb.keys()}
    diff = {t: c for t, c in diff.items() if c != 0}
    if not diff:
        return False
    return all(c.is_Rational and c > 0 and (t == 1 or _positive(t)) for t, c in diff.items())


_TERMS: dict = {}
_POINTS: dict = {}
_POSITIVE: dict = {}


def _terms(e: sympy.Expr) -> dict:
    """{monomial: coefficient} of e expanded (sympy's `as_coefficients_dict`), once per e."""
    return remembered(_TERMS, e, lambda: dict(sympy.expand(e).as_coefficients_dict()))


def _at_point(e: sympy.Expr, point: int) -> sympy.Expr:
    """e with every symbol set to `point`, once per (e, point)."""
    return remembered(_POINTS, (e, point), lambda: e.xreplace({s: sympy.Integer(point) for s in e.free_symbols}))


def _positive(term: sympy.Expr) -> bool:
    found = _POSITIVE.get(term)
    if found is None:
        if len(_POSITIVE) >= _LIMIT:
            _POSITIVE.clear()
        found = _POSITIVE[term] = term.is_positive is True
    return found


def _undominated(args: tuple, largest: bool) -> tuple:
    """The arguments, less those another one strictly dominates (for Max; for Min, strictly exceeds)."""
    if len(args) < 2 or not all(isinstance(a, sympy.Expr) for a in args):
        return args
    numbers = [a for a in args if a.is_Rational]
    if len(numbers) == len(args):  # all exact numbers: sympy compares them directly
        return args
    order = _likeliest_first(args, largest)
    keep = [a for a in args
            if not any(b is not a and (dominates(b, a) if largest else dominates(a, b)) for b in order)]
    return tuple(keep) if keep else args


def _likeliest_first(args: tuple, largest: bool) -> tuple:
    """The arguments in the order to try them as another's dominator: by their value at a point
    of the domain (`dominates` evaluates them there anyway), largest first for Max, smallest for
    Min, so that an argument another dominates finds it at once (the footprint's peak over a
    model's schedule: 43 arguments, 4 kept). Only the order of the tries; the same ones are kept."""
    if _symbolic_exponent(args):
        return args   # its value at the point may be a huge exact number
    try:
        values = [float(_at_point(a, 1000)) for a in args]
    except (TypeError, ValueError, OverflowError):   # a symbol left (not a number) or too large
        return args
    ranked = sorted(range(len(args)), key=values.__getitem__, reverse=largest)
    return tuple(args[i] for i in ranked)


def smax(*args) -> sympy.Expr:
    """`sympy.Max(*args)`, computed once per distinct argument tuple.

    >>> B = sympy.Symbol("B", positive=True)
    >>> smax(2 * B, B) is smax(2 * B, B)
    True
    """
    return _memo(sympy.Max, args)


def left_max(*args) -> sympy.Expr:
    """max() of the arguments: compared where they are all numbers (`smax`); else left as it stands.
    A program's sums are symbolic in every size (bound only when a value is asked for), and sympy
    would compare them term by term for seconds; a value substitutes the sizes and compares numbers.

    >>> B = sympy.Symbol("B", positive=True)
    >>> left_max(sympy.Integer(2), sympy.Integer(3)), left_max(2 * B, B).args == (B, 2 * B)
    (3, True)
    """
    if not any(a.free_symbols for a in args):
        return smax(*args)
    return sympy.Max(*args, evaluate=False)


def smin(*args) -> sympy.Expr:
    """`sympy.Min(*args)`, computed once per distinct argument tuple."""
    return _memo(sympy.Min, args)


def unsettled(kind, args) -> sympy.Expr:
    """`kind(*args)` (sympy.Max or sympy.Min) with no argument compared: for an analysis only a few
    of whose values are ever read (a solve's general form), `settle` compares those.

    >>> B = sympy.Symbol("B", positive=True)
    >>> unsettled(sympy.Max, (2 * B, B)).args, settle(unsettled(sympy.Max, (2 * B, B)), {})
    ((B, 2*B), 2*B)
    """
    return kind(*args, evaluate=False)


def settle(expr: sympy.Basic, bindings: dict) -> sympy.Basic:
    """`expr.xreplace(bindings)` with every Max and Min in it made again through `smax`/`smin`,
    innermost first: the value building it with `smax`/`smin` in the first place would have given
    (each node is rebuilt from its settled arguments, so sums and products take their canonical
    form again), computing only the comparisons of the values read.

    >>> B, q = sympy.symbols("B q", positive=True)
    >>> lazy = 1 + unsettled(sympy.Max, (B / q, 2 * B / q))
    >>> settle(lazy, {B: 4}) == 1 + smax(4 / q, 8 / q) == 1 + 8 / q
    True
    """
    done: dict = {}

    def walk(e):
        found = done.get(e)
        if found is not None:
            return found
        if e in bindings:
            out = bindings[e]
        elif not e.args:
            out = e
        elif not e.has(sympy.Max, sympy.Min):
            out = e.xreplace(bindings)
        else:
            args = tuple(walk(a) if isinstance(a, sympy.Basic) else a for a in e.args)
            kind = type(e)
            if kind in _TABLES:
                out = _memo(kind, args)
            else:
                out = e if all(n is o for n, o in zip(args, e.args)) else e.func(*args)
        done[e] = out
        return out

    return walk(expr)


_SUMS: dict = {}


def ssum(terms) -> sympy.Expr:
    """Σ count·expr over (count, expr) pairs, computed once per distinct sequence of pairs: the
    scenarios of a `compare` keep the kernels' expressions, so their totals are the same sums.

    >>> B = sympy.Symbol("B", positive=True)
    >>> ssum([(2, B), (1, 3 * B)]), ssum([(2, B), (1, 3 * B)]) is ssum([(2, B), (1, 3 * B)])
    (5*B, True)
    """
    key = tuple(terms)
    return remembered(_SUMS, key, lambda: _grouped_pairs(key), 1024)


def _grouped_pairs(pairs: tuple) -> sympy.Expr:
    """Σ count·expr with equal (count, expr) pairs counted first, as `grouped_sum` counts equal
    terms: a model's kernels repeat a few pairs, so the few products are built once each (the
    same canonical sum: sympy collects m·(c·e) and c·e + … + c·e alike)."""
    counts: dict = {}
    for pair in pairs:
        counts[pair] = counts.get(pair, 0) + 1
    return grouped_sum((c * m) * e for (c, e), m in counts.items())


_BOUND: dict = {}


def bound_value(expr: sympy.Basic, bindings: dict, key) -> sympy.Basic:
    """`expr.xreplace(bindings)`, computed once per (expression, bindings) across analyses: the
    repeated sweeps of one file re-analyse it with the same bindings, and substituting into a
    Max re-runs sympy's comparisons. `key` stands for the bindings (`shared.bindings_key`)."""
    return remembered(_BOUND, (expr, key), lambda: substitute(expr, bindings))


def substitute(expr: sympy.Basic, bindings: dict) -> sympy.Basic:
    """`expr.xreplace(bindings)`, with each Max and Min it rebuilds made through `smax`/`smin`
    (remembered, and without sympy's comparisons where they can drop nothing).

    >>> B, D = sympy.symbols("B D", positive=True, integer=True)
    >>> e = 1 + sympy.Max(B * D, 4096 - B)
    >>> substitute(e, {D: 2}) == e.xreplace({D: 2})
    True
    """
    if not expr.has(sympy.Max, sympy.Min):
        return expr.xreplace(bindings)
    return _substituted(expr, bindings)[0]


def _substituted(expr, bindings) -> tuple:
    """(expr with bindings substituted, whether it changed): sympy's `_xreplace`, Max/Min memoised."""
    if expr in bindings:
        return bindings[expr], True
    args, changed = [], False
    for a in expr.args:
        new, moved = _substituted(a, bindings) if isinstance(a, sympy.Basic) else (a, False)
        args.append(new)
        changed |= moved
    if not changed:
        return expr, False
    kind = type(expr)
    return (_memo(kind, tuple(args)) if kind in _TABLES else expr.func(*args)), True


def clear() -> None:
    for table in _TABLES.values():
        table.clear()
    _SUMS.clear()
    _BOUND.clear()
    _TERMS.clear()
    _POINTS.clear()
    _POSITIVE.clear()
