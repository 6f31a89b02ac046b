"""Number formatting shared by the printers: exact values to human-readable text.

Floats appear only here. Bound values print with SI prefixes and 4 significant digits; short
exact values also show their exact form (``1/6 ≈ 0.1667``, ``2048·2^(33/125) ≈ 2459``); symbolic
values print through `expr_text`: sympy's `StrPrinter` subclassed for readers (``max(…)``, ``·``,
``^``, ``∞``, ``≤``, ``and``; common factors cancelled, never a fraction negated top and bottom).
"""
from __future__ import annotations

import functools
import math
from fractions import Fraction

import mpmath
import sympy
from sympy.printing.precedence import precedence
from sympy.printing.str import StrPrinter

from costlang.units import BYTE, BYTE_PER_S, DIMENSIONLESS, SECOND, Unit
from costlang.printers.floats import (PREFIXED as _PREFIXED, SI as _SI, TIME as _TIME, NumberStyle, _STYLE,
                                      binary as _binary, current_style, number_style, prefixed as _prefixed, sig)

__all__ = ["human", "exact_or_approx", "plain", "percent", "is_bound", "sig", "beyond_floats", "scientific",
           "json_number", "expr_text", "tidy", "ReaderPrinter", "no_empty_equals", "number_style", "NumberStyle",
           "current_style", "units_convention"]



_STAR = "\x01"   # a `*` inside a name (`B*`), kept apart from the `*` of a product until the end
_RELATIONS = {"<": "<", ">": ">", "<=": "≤", ">=": "≥", "==": "=", "!=": "≠"}
_TIDY_OPS = 400
_CLOSED_WIDTH = 30   # an irrational value's closed form is shown beside its decimal up to this length   # a quotient larger than this (in sympy operations) is printed as it stands


class PositiveFirst:
    """A mixin for sympy printers: a sum that would start with a negative term starts with a
    positive one (`2·f - Istar·b`, not `-Istar·b + 2·f`), so that, with `tidy`, no fraction reads
    negated top and bottom."""

    def _as_ordered_terms(self, expr, order=None):
        terms = super()._as_ordered_terms(expr, order=order)
        if terms and terms[0].could_extract_minus_sign():
            plus = [t for t in terms if not t.could_extract_minus_sign()]
            if plus:
                return plus + [t for t in terms if t.could_extract_minus_sign()]
        return terms


class ReaderPrinter(PositiveFirst, StrPrinter):
    """sympy's `str` for a person: `max(a, b)`, `2·N`, `N^2`, `∞`, `B ≤ 4`, `B < 1 and B > 0`.

    >>> N, B = sympy.symbols("N B", positive=True)
    >>> expr_text(sympy.Max(2 * N ** 2, N) / 3), expr_text(sympy.oo), expr_text(sympy.And(B <= 4, B > 1))
    ('max(N, 2·N^2)/3', '∞', 'B ≤ 4 and B > 1')
    """

    def _print_Symbol(self, expr) -> str:
        return super()._print_Symbol(expr).replace("*", _STAR)

    def _print_Function(self, expr) -> str:
        return super()._print_Function(expr).replace("*", _STAR)

    def _print_Mul(self, expr) -> str:
        return super()._print_Mul(expr).replace("*", "·")

    def _print_Pow(self, expr, rational=False) -> str:
        return super()._print_Pow(expr, rational).replace("**", "^")

    def _print_MinMaxBase(self, expr) -> str:
        name = "max" if isinstance(expr, sympy.Max) else "min"
        return f"{name}({', '.join(self._print(a) for a in expr.args)})"

    _print_Max = _print_Min = _print_MinMaxBase

    def _print_ceiling(self, expr) -> str:
        return f"ceil({self._print(expr.args[0])})"

    def _print_Infinity(self, expr) -> str:
        return "∞"

    def _print_NegativeInfinity(self, expr) -> str:
        return "-∞"

    def _print_ComplexInfinity(self, expr) -> str:
        return "∞"

    def _print_BooleanTrue(self, expr) -> str:
        return "always"

    def _print_BooleanFalse(self, expr) -> str:
        return "never"

    def _print_Relational(self, expr) -> str:
        op = _RELATIONS.get(expr.rel_op, expr.rel_op)
        return f"{self._print(expr.lhs)} {op} {self._print(expr.rhs)}"

    def _join(self, expr, word: str) -> str:
        return f" {word} ".join(self.parenthesize(a, precedence(expr)) for a in expr.args)

    def _print_And(self, expr) -> str:
        return self._join(expr, "and")

    def _print_Or(self, expr) -> str:
        return self._join(expr, "or")

    def _print_Not(self, expr) -> str:
        return f"not ({self._print(expr.args[0])})"

    def _print_Piecewise(self, expr) -> str:
        parts = [self._print(e) if c is sympy.true else f"{self._print(e)} if {self._print(c)}"
                 for e, c in expr.args]
        return "(" + "; otherwise ".join(parts) + ")"

    def doprint(self, expr) -> str:
        return super().doprint(expr).replace(_STAR, "*")


def tidy(e):
    """Every quotient with a symbolic denominator in lowest terms, its sign on top only when both
    parts would be negated: `2·K·M·N/(2·K·M + 2·K·N + 2·M·N)` → `K·M·N/(K·M + K·N + M·N)`.

    >>> K, M, N, d, s = sympy.symbols("K M N d s", positive=True)
    >>> tidy(2 * K * M * N / (2 * K * M + 2 * K * N + 2 * M * N))
    K*M*N/(K*M + K*N + M*N)
    >>> tidy(s * d / (2 * (d - s)))
    d*s/(2*d - 2*s)
    """
    if not isinstance(e, sympy.Basic) or not e.free_symbols:
        return e
    return _bottom_up(e, _symbolic_quotient, _lowest_terms, {})


def _bottom_up(e, query, value, seen: dict):
    """`e.replace(query, value)`, except that a max() or min() whose arguments changed is rebuilt as
    it stands: its arguments were compared when it was made, and comparing them again (sympy's
    Max.__new__, pairwise under assumptions) took seconds per bound at model scale."""
    if e in seen:
        return seen[e]
    out = e
    if e.args and not e.is_Atom:
        args = tuple(_bottom_up(a, query, value, seen) for a in e.args)
        if args != e.args:
            out = e.func(*args, evaluate=False) if isinstance(e, (sympy.Max, sympy.Min)) else e.func(*args)
    if isinstance(out, sympy.Basic) and query(out):
        out = value(out)
    seen[e] = out
    return out


def _symbolic_quotient(x) -> bool:
    return x.is_Mul and any(f.is_Pow and f.exp.is_negative and f.base.free_symbols for f in x.args)


@functools.lru_cache(maxsize=4096)   # a model's report tidies its stage bounds and general forms more than once
def _lowest_terms(m):
    if sympy.count_ops(m) > _TIDY_OPS or not m.is_rational_function():  # cancel would turn (3/4)^B to 3^B/4^B
        return m
    try:
        top, bottom = sympy.fraction(sympy.cancel(m))
    except (sympy.PolynomialError, TypeError, ValueError, NotImplementedError):
        return m
    negated_top, negated_bottom = -top, sympy.Add(*[-t for t in sympy.Add.make_args(bottom)])
    if _minus_signs(negated_top, negated_bottom) < _minus_signs(top, bottom):
        # both parts negated when that leaves fewer minus signs, the denominator's first:
        # −d/(−B − 1) = d/(B + 1), never (a − c)/(−b − d) for (c − a)/(b + d)
        top, bottom = negated_top, negated_bottom
    return top / bottom


def _minus_signs(top, bottom) -> tuple[int, int]:
    """(negative terms of the denominator, of the numerator): fewer reads better."""
    count = lambda e: sum(t.could_extract_minus_sign() for t in sympy.Add.make_args(e))  # noqa: E731
    return count(bottom), count(top)


#: log2 as the language writes it: sympy holds log2(x) as log(x)/log(2); printing only
LOG2 = sympy.Function("log2")


def log2_form(e):
    """log(x)/log(2) as log2(x), the language's function (for printing: `log2(3)`, not `log(3)/log(2)`).

    >>> log2_form(5 * sympy.log(3) / sympy.log(2))
    5*log2(3)
    """
    if not isinstance(e, sympy.Basic) or not e.has(sympy.log):
        return e
    return e.replace(_over_log2, _as_log2)


def _over_log2(x) -> bool:
    return x.is_Mul and sympy.Pow(sympy.log(2), -1) in x.args and any(isinstance(f, sympy.log) for f in x.args)


def _as_log2(m):
    rest = list(m.args)
    rest.remove(sympy.Pow(sympy.log(2), -1))
    first = next(f for f in rest if isinstance(f, sympy.log))
    rest.remove(first)
    return sympy.Mul(*rest, LOG2(first.args[0]))


def signs(e):
    """Each quotient's sign where it reads best, its structure otherwise kept (no cancelling):
    `-b·f·I/(b·I - 2·f)` → `b·f·I/(2·f - b·I)`, `(2 - D)/(3 - D)` → `(D - 2)/(D - 3)`.

    >>> b, f, D = sympy.symbols("b f D", positive=True)
    >>> signs(-b * f / (b - 2 * f)), signs((2 - D) / (3 - D))
    (b*f/(-b + 2*f), (D - 2)/(D - 3))
    """
    if not isinstance(e, sympy.Basic) or not e.free_symbols:
        return e
    return e.replace(_symbolic_quotient, _signed)


def _signed(m):
    top, bottom = sympy.fraction(m, exact=True)
    sums = [f for f in sympy.Mul.make_args(bottom) if f.is_Add]
    if len(sums) != 1:   # the sign goes into the bottom's one sum: -D/(2·(3 - D)) → D/(2·(D - 3))
        return m
    (total,) = sums
    negate = (top.could_extract_minus_sign() and any(t.could_extract_minus_sign() for t in total.args)) \
        or (top.is_Add and top.could_extract_minus_sign() and total.could_extract_minus_sign())
    if not negate:
        return m
    rest = [f for f in sympy.Mul.make_args(bottom) if f is not total]
    return sympy.Mul(_negated(top), sympy.Pow(sympy.Mul(*rest, _negated(total)), -1))


def _negated(e):
    return sympy.Add(*[-t for t in e.args]) if e.is_Add else -e


def _into_extrema(e):
    """c·max(a, b) as max(c·a, c·b) for a positive number c (a percentage of a min reads min(100, B/5))."""
    coeff, rest = e.as_coeff_Mul() if isinstance(e, sympy.Expr) else (1, e)
    if coeff.is_positive and isinstance(rest, (sympy.Max, sympy.Min)):
        return type(rest)(*[coeff * a for a in rest.args])
    return e


def expr_text(e) -> str:
    """An expression as a person reads it (`ReaderPrinter`, after `tidy`)."""
    if isinstance(e, sympy.Basic):
        return ReaderPrinter({"order": None}).doprint(log2_form(tidy(e)))
    return str(e)


def count_text(n) -> str:
    """A count as a person reads it: `3`, or `18·L` when a repeat count is a symbol."""
    return str(n) if isinstance(n, int) or (isinstance(n, sympy.Basic) and n.is_Integer) else expr_text(n)


def no_empty_equals(text: str) -> str:
    """`I* = ≈ 292` → `I* ≈ 292`: a value known only approximately is not written `= ≈`."""
    return text.replace("= ≈ ", "≈ ")


def is_bound(e) -> bool:
    return isinstance(e, (int, float)) or (isinstance(e, sympy.Basic) and e.is_number)


def _float(e) -> float:
    if isinstance(e, sympy.Rational):  # int / int is correctly rounded, and much faster than N()
        try:
            return e.p / e.q
        except OverflowError:
            return math.inf if e.p > 0 else -math.inf
    return float(sympy.N(e, 20)) if isinstance(e, sympy.Basic) else float(e)


def beyond_floats(e) -> bool:
    """Whether a bound, nonzero value is too large or too small for a float (1e400, 2^-2000)."""
    if not isinstance(e, sympy.Basic) or e == 0 or not e.is_real:
        return False
    x = _float(e)
    return math.isinf(x) or x == 0


def scientific(e, digits: int = 4) -> str:
    """A value beyond float range as `m.mmme+NNN`, from a 30-digit evaluation (never by factoring).

    >>> scientific(sympy.Integer(10) ** 400 * 3 + 1), scientific(-sympy.Rational(1, 7) / 10 ** 400)
    ('3.000e+400', '-1.429e-401')
    """
    x = mpmath.mpf(sympy.N(e, 30)._mpf_) if isinstance(e, sympy.Basic) else mpmath.mpf(e)
    with mpmath.workdps(30):
        exponent = int(mpmath.floor(mpmath.log10(abs(x))))
        mantissa = round(float(x / mpmath.mpf(10) ** exponent), digits - 1)
    if abs(mantissa) >= 10:  # 9.9996 rounds to 10.00: one power up
        mantissa, exponent = mantissa / 10, exponent + 1
    elif abs(mantissa) < 1:  # log10 a hair above the exponent
        mantissa, exponent = mantissa * 10, exponent - 1
    return f"{mantissa:.{digits - 1}f}e{'+' if exponent >= 0 else '-'}{abs(exponent):02d}"


def json_number(e):
    """A JSON-ready number (printers/json.py), or the expression's text when it is not bound."""
    if isinstance(e, int):
        return e
    if e == sympy.oo:
        return "inf"
    if e == -sympy.oo:
        return "-inf"
    if e.has(sympy.zoo, sympy.nan):
        return None  # undefined (a division by zero): JSON has no number for it
    if e.is_number and e.is_real and beyond_floats(e):
        return scientific(e, 17)  # no JSON number holds it (and Python prints no int over 4300 digits)
    if e.is_Integer:
        return int(e)
    if e.is_number and e.is_real:
        return float(sympy.N(e, 17))
    return str(e)


def units_convention() -> str:
    """The report's sentence on byte units, in the current style."""
    if _STYLE.get().binary:
        return "binary byte units (1 GiB = 2^30 B, 1 GiB/s = 2^30 B/s), SI for FLOP and s"
    return "SI decimal units (1 TB/s = 10^12 B/s, 1 GB = 10^9 B)"


def _remembered(fn):
    """`fn` once per distinct arguments (a model's kernels repeat the same few expressions, and
    printing a sympy expression is slow); bounded, and the results are immutable strings."""
    table: dict = {}

    @functools.wraps(fn)
    def wrapper(*args):
        key = (_STYLE.get(), *((type(a), a) for a in args))  # 1 and Integer(1) are equal but print apart
        try:
            return table[key]
        except KeyError:
            pass
        except TypeError:  # an unhashable argument
            return fn(*args)
        if len(table) >= 4096:
            table.clear()
        result = table[key] = fn(*args)
        return result
    return wrapper


@_remembered
def human(e, unit: Unit) -> str:
    """A value with its unit, SI-prefixed when the unit allows it.

    >>> human(sympy.Integer(1200000000), BYTE), human(sympy.Rational(3, 2500), SECOND)
    ('1.2 GB', '1.2 ms')
    """
    if not is_bound(e):
        text = expr_text(e)
        if unit == DIMENSIONLESS:
            return text
        unit_text = _unit_beside(e, unit)
        return f"({text}) {unit_text}" if isinstance(e, sympy.Add) else f"{text} {unit_text}"
    if e == sympy.oo:
        return "∞"
    if beyond_floats(e):
        return f"≈ {scientific(e)}" + ("" if unit == DIMENSIONLESS else f" {_PREFIXED.get(unit, unit)}")
    style = _STYLE.get()
    if style.exact and isinstance(e, sympy.Rational) and unit != DIMENSIONLESS:
        return _exact_with_unit(e, unit)
    x = _float(e)
    if style.binary and unit in (BYTE, BYTE_PER_S):
        return _irrational(e, unit, _binary(x, _PREFIXED[unit]))
    if unit in _PREFIXED:
        return _irrational(e, unit, _prefixed(x, _SI, _PREFIXED[unit]))
    if unit == SECOND:
        return _irrational(e, unit, _prefixed(x, _TIME, ""))
    return exact_or_approx(e) + ("" if unit == DIMENSIONLESS else f" {unit}")


def _unit_beside(e, unit: Unit) -> str:
    """The unit written after a symbolic value: spelled out (`bytes`, `bytes/s`) when a symbol of the
    value has the unit's own name (a batch B: `8192·B bytes`, not `8192·B B`)."""
    if unit in (BYTE, BYTE_PER_S) and any(str(s) == str(BYTE) for s in e.free_symbols):
        return "bytes" if unit == BYTE else "bytes/s"
    return str(unit)


def _irrational(e, unit: Unit, rounded: str) -> str:
    """An irrational value keeps its short closed form beside the rounded one, as plain numbers do:
    `log2(3) s ≈ 1.585 s`; a rational or float value is the rounded one alone."""
    if isinstance(e, (sympy.Rational, sympy.Float)) or not isinstance(e, sympy.Basic) or e.is_Float:
        return rounded
    closed = expr_text(e)
    if len(closed) > _CLOSED_WIDTH or any(c.is_Float for c in sympy.preorder_traversal(e)):
        return rounded
    return f"({closed}) {_PREFIXED.get(unit, unit)} ≈ {rounded}" if isinstance(e, sympy.Add) else \
        f"{closed} {_PREFIXED.get(unit, unit)} ≈ {rounded}"


def _exact_with_unit(e, unit: Unit) -> str:
    """`--exact`: an integer in full (`137438953472 FLOP`); a fraction exactly, its rounded,
    prefixed value beside it (`4096/30517578125 s ≈ 134.2 ns`)."""
    name = _PREFIXED.get(unit, unit)
    if e.is_Integer:
        return f"{e} {name}"
    if unit not in _PREFIXED and unit != SECOND:  # FLOP/B, tokens/s: the plain form is exact already
        return f"{exact_or_approx(e)} {unit}"
    with number_style(binary=_STYLE.get().binary):
        rounded = human(e, unit)
    return f"{e.p}/{e.q} {name} ≈ {rounded}"


@_remembered
def exact_or_approx(e) -> str:
    """Integers and short fractions exactly (with ≈ decimal for fractions), others to 4 digits
    (`≈ 0.25`: the caller writes `x ≈ 0.25`, never `x = ≈ 0.25`; see `no_empty_equals`).

    >>> exact_or_approx(sympy.Rational(1, 6)), exact_or_approx(sympy.Rational(4096, 3))
    ('1/6 ≈ 0.1667', '4096/3 ≈ 1365')
    >>> exact_or_approx(sympy.Rational(262144, 1048577)), exact_or_approx(sympy.Rational(1, 80000))
    ('≈ 0.25', '1.25e-05')

    An irrational value keeps its closed form beside the decimal when that is short:
    2^(33/125) = e^(0.264·ln 2) ≈ 1.2008, so 2048·2^(33/125) ≈ 2459.2.

    >>> exact_or_approx(2048 * sympy.Integer(2) ** sympy.Rational(33, 125))
    '2048·2^(33/125) ≈ 2459'

    """
    if not is_bound(e):
        return expr_text(e)
    if e == sympy.oo:
        return "∞"
    if isinstance(e, sympy.Float):   # a value found numerically (a solve's bisection): a decimal only
        return f"≈ {sig(float(e))}"
    if isinstance(e, sympy.Integer) and abs(e) < 10 ** 15:
        return str(e)
    short = e.q <= 10000 and abs(e.p) < 10 ** 7 if isinstance(e, sympy.Rational) else False
    if isinstance(e, sympy.Rational) and not isinstance(e, sympy.Integer) and (short or _STYLE.get().exact):
        return f"{e.p}/{e.q} ≈ {sig(_float(e))}"
    if isinstance(e, sympy.Integer) and _STYLE.get().exact:
        return str(e)
    if beyond_floats(e):
        return f"≈ {scientific(e)}"
    text = sig(_float(e))
    exact = isinstance(e, sympy.Rational) and Fraction(text) == Fraction(int(e.p), int(e.q))
    if exact:
        return text
    if isinstance(e, sympy.Rational):   # a long fraction: its decimal only (its digits may be thousands)
        return f"≈ {text}"
    closed = expr_text(e)
    return f"{closed} ≈ {text}" if len(closed) <= _CLOSED_WIDTH else f"≈ {text}"


def plain(e) -> str:
    """A bound value to 4 significant digits, or the expression."""
    if is_bound(e) and beyond_floats(e):
        return scientific(e)
    return sig(_float(e)) if is_bound(e) and e != sympy.oo else expr_text(e)


@_remembered
def percent(e) -> str:
    if not is_bound(e):
        return f"{expr_text(_into_extrema(100 * e))} %"
    if beyond_floats(e):
        return f"{scientific(e * 100, 3)} %"
    x = _float(e) * 100
    return f"{sig(x, 3)} %"
