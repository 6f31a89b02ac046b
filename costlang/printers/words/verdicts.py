"""Verdicts in words: a `Verdict` (a bound, regimes of a free symbol, or conditions) as a phrase.

Input: an `analysis.verdict.Verdict`, a language, and how the caller writes a threshold and a
relation (plain text for the report, LaTeX for derivations). Output: a string such as
"memory-bound when T < 480.5, balanced at T = 480.5, else compute-bound", from the phrase tables.

A threshold is printed exactly when it can be (an integer, a short decimal, a short fraction);
otherwise it is rounded in the direction that keeps the statement true (x < 160.32… reads
x < 160.3, x > 160.32… reads x > 160.4), and each regime is then stated on its own: "else" is
said only when every threshold before it is exact. For a whole-number symbol (a dim) a fractional
threshold becomes the whole number that says the same thing (B < 160.32 reads B ≤ 160), and a
regime holding no whole number is left out.
"""
from __future__ import annotations

import math
from fractions import Fraction
from dataclasses import dataclass
from typing import Callable, Optional

import sympy

from costlang.analysis.verdict import Bound, Condition, Interval, Regime, Verdict
from costlang.printers.words.korean import fill as korean_fill
from costlang.printers.words.phrases import phrase
from costlang.printers.numbers import expr_text

__all__ = ["verdict_words", "bound_words", "threshold", "plain_relation", "to_dict", "bound_text", "Style", "PLAIN"]

_DIGITS = 4


def bound_words(bound: Bound, lang: str = "en", level: Optional[str] = None) -> str:
    """One bound's words; a memory-bound verdict names its binding level ("HBM-bound")."""
    if bound == Bound.MEMORY and level:
        return phrase(lang, "level_bound").format(level=level)
    return phrase(lang, "verdict_words")[bound.value]


def threshold(value: sympy.Expr, direction: int = 0) -> tuple[str, bool]:
    """A threshold as text and whether it is exact; `direction` is −1 to round down (an upper
    end), +1 to round up (a lower end), 0 for a point (printed with ≈ when inexact).

    >>> threshold(sympy.Rational(961, 2)), threshold(sympy.Rational(4008, 25))
    (('480.5', True), ('160.32', True))
    >>> threshold(sympy.Rational(1, 3), 1), threshold(sympy.Rational(10000001, 3), -1)
    (('1/3', True), ('3.333e+06', False))
    """
    if value.is_Integer:
        return str(value), True
    if value.is_Rational:
        text = _decimal(value)
        if text is not None:
            return text, True
        if value.q <= 10000 and abs(value.p) < 10 ** 7:
            return f"{value.p}/{value.q}", True
    if not value.is_number:
        return str(value), True
    x = sympy.N(value, 30)
    if not x.is_real:
        return str(value), True
    f = float(x)
    # beyond the float range either way (10^400, or 10^-389, which a float rounds to 0): exact digits
    text = _directed(f, direction) if math.isfinite(f) and (f != 0 or x == 0) else _directed_huge(x, direction)
    return (f"≈ {text}" if direction == 0 else text), False


def _decimal(r: sympy.Rational) -> Optional[str]:
    """A rational's terminating decimal with at most 8 significant digits (None: none)."""
    q = int(r.q)
    twos = fives = 0
    while q % 2 == 0:
        q //= 2
        twos += 1
    while q % 5 == 0:
        q //= 5
        fives += 1
    if q != 1:
        return None
    places = max(twos, fives)
    text = f"{Fraction(int(r.p), int(r.q)) * 10 ** places // 1 / 10 ** places:.{places}f}" if places else str(r.p)
    digits = len(text.replace("-", "").replace(".", "").lstrip("0"))
    if digits > 8 or Fraction(text) != Fraction(int(r.p), int(r.q)):
        return None
    return text


def _directed(x: float, direction: int) -> str:
    """x to 4 significant digits, rounded down (−1), up (+1) or to nearest (0)."""
    if x == 0:
        return "0"
    exp = math.floor(math.log10(abs(x))) - (_DIGITS - 1)
    scaled = x / 10 ** exp
    n = math.floor(scaled) if direction < 0 else math.ceil(scaled) if direction > 0 else round(scaled)
    out = n * Fraction(10) ** exp
    text = f"{float(out):.{_DIGITS}g}"
    return text


def _directed_huge(x: sympy.Float, direction: int) -> str:
    """`_directed` for a value beyond the float range (a threshold of 10^400 or 10^-400): the same
    4 significant digits, from exact integer arithmetic on the 30-digit value.

    >>> _directed_huge(sympy.N(sympy.Rational(13, 3) * 10 ** 400, 30), -1)
    '4.333e+400'
    >>> _directed_huge(sympy.N(sympy.Rational(1, 2) / 10 ** 388, 30), -1)
    '5e-389'
    """
    exp = int(sympy.floor(sympy.log(abs(x), 10))) - (_DIGITS - 1)
    scaled = x / sympy.Integer(10) ** exp
    n = int(sympy.floor(scaled) if direction < 0 else sympy.ceiling(scaled) if direction > 0 else sympy.Integer(round(scaled)))
    digits = str(abs(n))
    exp += len(digits) - 1
    mantissa = (digits[0] + "." + digits[1:]).rstrip("0").rstrip(".")
    return f"{'-' if n < 0 else ''}{mantissa}e{'+' if exp >= 0 else '-'}{abs(exp):02d}"


def plain_relation(rel) -> str:
    """A relation in plain text with ·, ≤, ≥; a symbol against a number is a threshold that stays
    true when rounded (T < 961/2 for a whole-number T reads T ≤ 480)."""
    ops = {sympy.StrictLessThan: "<", sympy.StrictGreaterThan: ">", sympy.LessThan: "≤",
           sympy.GreaterThan: "≥", sympy.Equality: "="}
    op = ops.get(type(rel))
    if op is None:
        return _plain(rel)
    lhs, rhs = rel.lhs, rel.rhs
    if isinstance(lhs, sympy.Symbol) and rhs.is_number and op in "<>":
        if lhs.is_integer and rhs.is_Rational and not rhs.is_Integer:
            return f"{lhs} {'≤' if op == '<' else '≥'} {sympy.floor(rhs) if op == '<' else sympy.ceiling(rhs)}"
        text, _ = threshold(rhs, -1 if op == "<" else 1)
        return f"{lhs} {op} {text}"
    return f"{_plain(lhs)} {op} {_plain(rhs)}{_beside(rhs)}"


def _beside(value) -> str:
    """` ≈ 0.000323` after a fraction that has no short exact decimal (a reader cannot size
    `6994757730304/21656425048828125` at a glance); nothing otherwise."""
    if not (isinstance(value, sympy.Rational) and not value.is_Integer):
        return ""
    text, exact = threshold(value)
    return "" if exact else f" {text}"


def _plain(e) -> str:
    return expr_text(e)


@dataclass(frozen=True)
class Style:
    """How a verdict's pieces are written: plain text by default; derivations pass LaTeX ones."""
    symbol: Callable = str                       # the free symbol
    op: Callable = lambda op: op                 # "<", "≤", ">", "≥", "=", "≈"
    wrap: Callable = lambda text: text           # a whole condition (math mode in derivations)
    relation: Callable = None                    # a structured relation (several free symbols)
    fill: Callable = None                        # fill(template, **fields): a phrase


PLAIN = Style()


def verdict_words(v: Verdict, lang: str = "en", style: Style = PLAIN) -> str:
    """The verdict as a phrase in `lang`, its conditions written in `style`."""
    fill = style.fill or (lambda template, **f: korean_fill(template, **{k: str(x) for k, x in f.items()}))
    words = lambda b: bound_words(b, lang, v.level)  # noqa: E731
    if v.regimes:
        parts = _regime_parts(v, lang, style, words, fill)
    elif v.conditions:
        relation = style.relation or (lambda r: style.wrap(plain_relation(r)))
        parts = _condition_parts(v.conditions, lang, relation, words, fill)
    else:
        return words(v.bound)
    return phrase(lang, "regime_join").join(parts)


def _regime_parts(v: Verdict, lang, style, words, fill) -> list[str]:
    whole = bool(v.symbol.is_integer)
    shown = [(r, _interval(r, whole), notes) for r, notes in _folded(v.regimes)]
    shown = [(r, c, notes) for r, c, notes in shown if c is not None]
    parts, exact = [], True
    for i, (r, (kind, lo, hi, ok), notes) in enumerate(shown):
        last = i == len(shown) - 1
        aside = _aside(notes, v.symbol, whole, lang, style, words, fill)
        if last and exact and ok and len(shown) > 1 and kind != "point":
            parts.append(fill(phrase(lang, "else"), bound=_bound(words, r.bound, lang)) + aside)
            continue
        exact = exact and ok
        cond = style.wrap(_condition_text(kind, lo, hi, style.symbol(v.symbol), style.op))
        key = "at" if kind == "point" else "when"
        parts.append(fill(phrase(lang, key), bound=_bound(words, r.bound, lang), condition=cond) + aside)
    return parts


def _folded(regimes) -> list[tuple[Regime, list[Regime]]]:
    """Regimes with each touching root folded in: a point between two intervals of one bound (a
    balanced point where the bound does not change) joins them into one interval that notes the
    point; after such a fold, the point that ends the interval is noted there too (memory-bound
    when n < 400 (balanced at n = 100 and n = 400), else compute-bound)."""
    out: list[tuple[Regime, list[Regime]]] = []
    for r in regimes:
        if not r.interval.is_point and len(out) >= 2 and out[-1][0].interval.is_point \
                and not out[-2][0].interval.is_point and out[-2][0].bound == r.bound:
            point, _ = out.pop()
            first, notes = out.pop()
            merged = Interval(first.interval.lower, r.interval.upper, first.interval.lower_closed,
                              r.interval.upper_closed)
            out.append((Regime(merged, r.bound), [*notes, point]))
        else:
            out.append((r, []))
    for i in range(len(out) - 1, 0, -1):   # the point that ends a folded interval is noted there
        if out[i][0].interval.is_point and out[i - 1][1]:
            out[i - 1][1].append(out.pop(i)[0])
    return out


def _aside(notes, symbol, whole: bool, lang, style, words, fill) -> str:
    """The points noted beside an interval, by bound: ' (balanced at n = 100 and n = 400)'."""
    if not notes:
        return ""
    groups: dict = {}
    for r in notes:
        shown = _interval(r, whole)
        if shown is not None:
            kind, lo, _, _ = shown
            groups.setdefault(r.bound, []).append(style.wrap(_condition_text(kind, lo, None, style.symbol(symbol),
                                                                             style.op)))
    said = [fill(phrase(lang, "at"), bound=_bound(words, b, lang), condition=phrase(lang, "and").join(conds))
            for b, conds in groups.items()]
    return fill(phrase(lang, "aside"), notes=phrase(lang, "regime_join").join(said)) if said else ""


def _bound(words, bound: Bound, lang: str) -> str:
    return phrase(lang, "undecided") if bound == Bound.UNDECIDED else words(bound)


def _interval(r: Regime, whole: bool):
    """(kind, lower text, upper text, exact) for a regime; None when it holds no whole number."""
    iv = r.interval
    if iv.is_point:
        if whole and not iv.lower.is_integer:
            return None
        text, ok = threshold(iv.lower, 0)
        return "point", text, None, ok
    lo = hi = None
    ok = True
    if iv.lower != 0 or iv.lower_closed:
        lo, ok_lo, lo_op = _end(iv.lower, iv.lower_closed, whole, +1)
        ok = ok and ok_lo
        lo = (lo, lo_op)
    if iv.upper != sympy.oo:
        hi, ok_hi, hi_op = _end(iv.upper, iv.upper_closed, whole, -1)
        ok = ok and ok_hi
        hi = (hi, hi_op)
    if whole and _no_whole_number(iv):
        return None
    return "interval", lo, hi, ok


def _no_whole_number(iv) -> bool:
    if iv.upper == sympy.oo or not (iv.lower.is_number and iv.upper.is_number):
        return False
    low = iv.lower + 1 if iv.lower.is_integer and not iv.lower_closed else sympy.ceiling(iv.lower)
    high = iv.upper - 1 if iv.upper.is_integer and not iv.upper_closed else sympy.floor(iv.upper)
    return bool(low > high) or high < 1


def _end(value, closed: bool, whole: bool, side: int):
    """One end of an interval: (text, exact, operator) — side +1 a lower end, −1 an upper end."""
    if whole and not value.is_integer and value.is_number:
        n = sympy.ceiling(value) if side > 0 else sympy.floor(value)
        return str(n), True, "≥" if side > 0 else "≤"
    text, ok = threshold(value, side)
    if side > 0:
        return text, ok, "≥" if closed else ">"
    return text, ok, "≤" if closed else "<"


def _condition_text(kind, lo, hi, x: str, op) -> str:
    if kind == "point":
        return f"{x} {op('≈')} {lo[2:]}" if lo.startswith("≈") else f"{x} {op('=')} {lo}"
    if lo and hi:
        flip = {">": "<", "≥": "≤"}
        return f"{lo[0]} {op(flip[lo[1]])} {x} {op(hi[1])} {hi[0]}"
    if lo:
        return f"{x} {op(lo[1])} {lo[0]}"
    return f"{x} {op(hi[1])} {hi[0]}"


def _condition_parts(conditions: tuple[Condition, ...], lang, relation, words, fill) -> list[str]:
    parts = []
    for c in conditions:
        if not c.relations:
            parts.append(fill(phrase(lang, "else"), bound=_bound(words, c.bound, lang)))
            continue
        cond = phrase(lang, "and").join(relation(r) for r in c.relations)
        parts.append(fill(phrase(lang, "when"), bound=_bound(words, c.bound, lang), condition=cond))
    return parts


# --- JSON: the structure, no words -------------------------------------------------------------------

def to_dict(v: Verdict, number: Callable) -> dict:
    """A verdict as JSON data: the bound, and regimes (intervals with exact ends) or conditions."""
    out = {"bound": v.bound.value}
    if v.level:
        out["level"] = v.level
    if v.regimes:
        out["symbol"] = str(v.symbol)
        out["regimes"] = [{"lower": number(r.interval.lower), "upper": number(r.interval.upper),
                           "lower_closed": r.interval.lower_closed, "upper_closed": r.interval.upper_closed,
                           "bound": r.bound.value} for r in v.regimes]
    if v.conditions:
        out["conditions"] = [{"bound": c.bound.value, "relations": [
            {"lhs": str(r.lhs), "op": _OPS.get(type(r), str(type(r).__name__)), "rhs": str(r.rhs)}
            for r in c.relations]} for c in v.conditions]
    return out


_OPS = {sympy.StrictLessThan: "<", sympy.StrictGreaterThan: ">", sympy.LessThan: "<=",
        sympy.GreaterThan: ">=", sympy.Equality: "=="}


def bound_text(verdict, level=None) -> str:
    """The verdict's words with the binding memory level named: "HBM-bound", "L2-bound"."""
    from costlang.analysis.verdict import with_level
    return verdict_words(with_level(verdict, level))
