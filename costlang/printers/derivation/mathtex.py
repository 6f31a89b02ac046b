"""Math for the derivation printers: sympy's `LatexPrinter`, subclassed for costlang's names and numbers.

Input: sympy expressions from `analysis.derive` (named `Term`s, kernel `Name`s, unit `Literal`s,
the program's symbols, exact numbers). Output: LaTeX math (no `$`), valid for KaTeX, MathJax and
LaTeX. Exact numbers stay exact when they are short (``\\frac{1}{6}``, ``2 \\times 10^{12}``);
long ones are rounded to `digits` significant digits, and the printer records that it rounded so
the caller writes ≈ instead of =. Floats exist only here, at the moment of printing.
"""
from __future__ import annotations

import math
import re

import sympy
from sympy.printing.latex import LatexPrinter

from costlang.units import BYTE, BYTE_PER_S, DIMENSIONLESS, FLOP, FLOP_PER_S, SECOND, Unit
from costlang.printers.numbers import PositiveFirst, log2_form, signs
from costlang.printers.safe import latex_text

__all__ = ["CostLatexPrinter", "unit_tex", "approx_text", "prefixed_tex", "group_digits", "number_part",
           "escape_name"]

TERM_TEX = {
    "FLOP": r"\mathrm{FLOP}", "byte": r"\mathrm{byte}", "I": "I", "I*": "I^{*}",
    "P_peak": r"P_{\mathrm{peak}}", "BW": r"\mathrm{BW}", "P": "P", "P/P_peak": r"P / P_{\mathrm{peak}}",
    "T_compute": r"T_{\mathrm{compute}}", "T_memory": r"T_{\mathrm{memory}}",
    "T_launch": r"T_{\mathrm{launch}}", "T_kernel": r"T_{\mathrm{kernel}}",
    "t_measured": r"t_{\mathrm{measured}}", "traffic": r"\mathrm{traffic}",
    "effective_bandwidth": r"\mathrm{BW}_{\mathrm{effective}}",
    "achieved_throughput": r"\mathrm{BW}_{\mathrm{achieved}}",
    "fraction_of_peak_bandwidth": r"\mathrm{BW}_{\mathrm{achieved}} / \mathrm{BW}",
    "achieved_flops": r"P_{\mathrm{achieved}}", "fraction_of_peak_flops": r"P_{\mathrm{achieved}} / P_{\mathrm{peak}}",
    # memory hierarchy: `NAME@LEVEL` prints NAME with the level as a superscript
    "e": "e", "b": "b", "M": "M", "N": "N", "K": "K", "d": "d", "n": "n", "S": "S",
    "bm": "b_m", "bn": "b_n", "bk": "b_k", "tm": "t_m", "tn": "t_n", "tk": "t_k",
    "I_inf": r"I_{K \to \infty}", "WS": r"\mathrm{working\ set}", "sector": r"\mathrm{sector}",
    "M_sram": "M", "C": "C", "B_c": "B_c", "B_r": "B_r", "T_c": "T_c", "theta": r"\Theta",
    "|Q|": r"\lvert Q \rvert", "|O|": r"\lvert O \rvert", "|K|+|V|": r"(\lvert K \rvert + \lvert V \rvert)",
    "stats": r"16 \cdot \mathrm{rows}",
    # collectives (α–β)
    "p": "p", "sent": r"\mathrm{sent}", "steps": r"\mathrm{steps}", "BW_link": r"\mathrm{BW}_{\mathrm{link}}",
    "alpha": r"\alpha", "links": r"\mathrm{links}", "T_comms": r"T_{\mathrm{comms}}",
    "T_lower": r"T_{\mathrm{lower}}", "T_upper": r"T_{\mathrm{upper}}", "stretch": r"\frac{m + p - 1}{m}",
}
# result functions of the language, as the recipe names them
FUNCTION_TEX = {
    "log2": r"\log_{2}",
    "flops": r"\mathrm{FLOP}", "bytes": r"\mathrm{byte}", "bytes_read": r"\mathrm{byte}_{\mathrm{read}}",
    "bytes_written": r"\mathrm{byte}_{\mathrm{written}}", "intensity": "I", "critical_intensity": "I^{*}",
    "t_compute": r"T_{\mathrm{compute}}", "t_memory": r"T_{\mathrm{memory}}", "t_kernel": r"T_{\mathrm{kernel}}",
    "t_launch": r"T_{\mathrm{launch}}", "attainable": "P", "fraction_of_peak": r"\left(P / P_{\mathrm{peak}}\right)",
    "peak": r"P_{\mathrm{peak}}", "bandwidth": r"\mathrm{BW}", "capacity": r"\mathrm{capacity}",
    "sizeof": r"\mathrm{sizeof}", "launches": r"\mathrm{launches}", "footprint": r"\mathrm{footprint}",
    "effective_bandwidth": r"\mathrm{BW}_{\mathrm{effective}}",
    "achieved_throughput": r"\mathrm{BW}_{\mathrm{achieved}}", "max": r"\max", "min": r"\min",
    "fraction_of_peak_bandwidth": r"\left(\mathrm{BW}_{\mathrm{achieved}} / \mathrm{BW}\right)",
    "fraction_of_peak_flops": r"\left(P_{\mathrm{achieved}} / P_{\mathrm{peak}}\right)",
    "achieved_flops": r"P_{\mathrm{achieved}}", "measured_time": r"t_{\mathrm{measured}}",
    "actual_traffic": r"\mathrm{traffic}",
}
_UNIT_NAMES = {FLOP: "FLOP", BYTE: "B", SECOND: "s", FLOP_PER_S: "FLOP/s", BYTE_PER_S: "B/s"}
_SI = [(12, "T"), (9, "G"), (6, "M"), (3, "k"), (0, "")]
_TIME = [(0, ""), (-3, "m"), (-6, r"\mu "), (-9, "n"), (-12, "p")]
_BINARY = [(40, "Ti"), (30, "Gi"), (20, "Mi"), (10, "Ki"), (0, "")]
# symbols that text mode lacks in pdfLaTeX and KaTeX's strict mode: written as inline math
_TEXT_SYMBOLS = {"·": r"$\cdot$", "×": r"$\times$", "µ": r"$\mu$", "≈": r"$\approx$", "≤": r"$\le$",
                 "≥": r"$\ge$",
                 # brackets in braces: the same glyphs in TeX, but `[l](javascript:...)` in a label is
                 # then no Markdown link (a renderer that leaves the math alone would make it one)
                 "[": "{[}", "]": "{]}"}
_LITERAL_UNIT = {"us": r"\mu s", "µs": r"\mu s"}


def _escape(name: str) -> str:
    return name.replace("\\", r"\backslash ").replace("_", r"\_").replace("&", r"\&").replace(
        "%", r"\%").replace("#", r"\#").replace("$", r"\$").replace("{", r"\{").replace("}", r"\}")


escape_name = _escape   # a dtype, tensor or hardware name inside \\mathrm{} or \\texttt{}


def group_digits(digits: str) -> str:
    """An integer's digits in groups of three, SI style, from five digits on (4096 stays whole).

    >>> group_digits("137438953472"), group_digits("4096"), group_digits("-100663296")
    ('137\\\\,438\\\\,953\\\\,472', '4096', '-100\\\\,663\\\\,296')
    """
    sign, body = ("-", digits[1:]) if digits.startswith("-") else ("", digits)
    if len(body) < 5 or not body.isdigit():
        return digits
    head = len(body) % 3 or 3
    return sign + r"\,".join([body[:head]] + [body[i:i + 3] for i in range(head, len(body), 3)])


def number_part(tex: str) -> str:
    """A printed value without its unit: `137\\,438\\,953\\,472\\,\\mathrm{FLOP}` → the digits."""
    return re.split(r"\\,(?!\d)", tex)[0]


def unit_tex(unit: Unit) -> str:
    """`\\mathrm{FLOP/B}`, `\\mathrm{s}^{-1}`, or '' for a pure number."""
    if unit == DIMENSIONLESS:
        return ""
    if unit.label:  # a query's own unit (`in tokens/s`)
        return r"\mathrm{" + _escape(unit.label) + "}"
    text = str(unit)
    if text.startswith("1/"):
        return r"\mathrm{" + text[2:] + "}^{-1}"
    return r"\mathrm{" + text.replace("·", r"\cdot ") + "}"


def approx_text(x: float, digits: int = 3) -> str:
    """A float to `digits` significant digits as LaTeX; integers of up to 6 digits are kept whole.

    >>> approx_text(1365.333), approx_text(1 / 6), approx_text(1.374e11), approx_text(3.1e-6)
    ('1365', '0.167', '1.37 \\\\times 10^{11}', '3.1 \\\\times 10^{-6}')
    """
    if x == 0:
        return "0"
    exp = math.floor(math.log10(abs(x)))
    if -3 <= exp < 6:
        decimals = max(0, digits - 1 - exp)
        return f"{x:.{decimals}f}".rstrip("0").rstrip(".") if decimals else f"{x:.0f}"
    mant = f"{x / 10.0 ** exp:.{digits - 1}f}".rstrip("0").rstrip(".")
    if mant in ("10", "-10"):
        mant, exp = mant[:-1], exp + 1
    return (r"10^{%d}" % exp) if mant == "1" else rf"{mant} \times 10^{{{exp}}}"


def _scientific_tex(value, digits: int) -> str:
    r"""A value beyond float range as `m \times 10^{e}` (`numbers.scientific`, never a float).

    >>> print(_scientific_tex(sympy.Integer(10) ** 400 * 3, 3))
    3.00 \times 10^{400}
    """
    from costlang.printers.numbers import scientific
    mantissa, _, exponent = scientific(value, digits).partition("e")
    return rf"{mantissa} \times 10^{{{int(exponent)}}}"


def prefixed_tex(x: float, unit: Unit, digits: int = 3):
    """(`333\\,\\mathrm{GFLOP/s}`, exact?) with an SI prefix, or None when the unit takes none."""
    from costlang.printers.numbers import current_style
    radix = 10.0
    if unit == SECOND:
        table, base = _TIME, "s"
    elif unit in (BYTE, BYTE_PER_S) and current_style().binary:  # `--units binary`: 2^30 B = 1 GiB
        table, base, radix = _BINARY, _UNIT_NAMES[unit], 2.0
    elif unit in _UNIT_NAMES:
        table, base = _SI, _UNIT_NAMES[unit]
    else:
        return None
    if x == 0:
        return None
    for power, prefix in table:
        if abs(x) >= radix ** power * (1 - 1e-12):
            break
    scaled = x / radix ** power
    text = approx_text(scaled, digits)
    exact = text == approx_text(scaled, 12)
    if prefix.startswith("\\"):
        return rf"{text}\,{prefix}\mathrm{{{base}}}", exact
    return rf"{text}\,\mathrm{{{prefix}{base}}}", exact


def _terminating(value) -> bool:
    """A rational number whose decimal expansion ends (its denominator has only 2s and 5s)."""
    if not isinstance(value, (sympy.Integer, sympy.Rational)):
        return False
    q = int(value.q)
    for f in (2, 5):
        while q % f == 0:
            q //= f
    return q == 1


def _decimal_exponent(n: int):
    """(m, k) with n = m·10^k and m not divisible by 10."""
    k = 0
    while n and n % 10 == 0:
        n //= 10
        k += 1
    return n, k


class CostLatexPrinter(PositiveFirst, LatexPrinter):
    """sympy's LaTeX printer with the recipe's names (I^*, T_{compute}) and short exact numbers;
    a quotient's sign where it reads best (`numbers.signs`: never negated top and bottom), a sum with
    a positive term first; the expression's structure is kept (a derivation's substituted rows).

    `exact_digits`: integers up to this many digits print whole; longer ones are rounded (and
    `rounded` is set, so the caller writes ≈).
    """

    _default_settings = {**LatexPrinter._default_settings, "order": "none", "mul_symbol": "dot",
                         "digits": 3, "exact_digits": 15}

    def __init__(self, settings=None):
        super().__init__(settings)
        self.rounded = False

    def doprint(self, expr) -> str:
        return super().doprint(log2_form(signs(expr)))

    def _approx(self, value) -> str:
        self.rounded = True
        x = float(sympy.N(value, 20))
        if not math.isfinite(x) or (x == 0 and value != 0):
            return _scientific_tex(value, self._settings["digits"])
        return approx_text(x, self._settings["digits"])

    def _print_Integer(self, expr) -> str:
        n = int(expr)
        m, k = _decimal_exponent(abs(n))
        sign = "-" if n < 0 else ""
        if k >= 4 and m < 10_000:
            digits = len(str(m))
            mantissa = str(m) if digits == 1 else f"{str(m)[0]}.{str(m)[1:]}"
            exp = k + digits - 1
            return sign + (rf"10^{{{exp}}}" if mantissa == "1" else rf"{mantissa} \times 10^{{{exp}}}")
        from costlang.printers.numbers import current_style
        if len(str(abs(n))) <= self._settings["exact_digits"] or current_style().exact:  # `--exact`: in full
            return group_digits(str(n))
        return self._approx(expr)

    def _print_Rational(self, expr) -> str:
        if expr.q == 1:
            return self._print_Integer(expr)
        p, q = int(expr.p), int(expr.q)
        if _is_terminating(q):
            text = _short_decimal(expr)
            if text is not None:
                return text
        if q < 10 ** 4:
            before = self.rounded
            numerator = self._print_Integer(sympy.Integer(abs(p)))
            if self.rounded == before:
                return ("-" if p < 0 else "") + rf"\frac{{{numerator}}}{{{q}}}"
            self.rounded = before
        return self._approx(expr)

    def _print_Mul(self, expr) -> str:
        """Unevaluated quotients of numbers as fractions (sympy would write 1/b · a)."""
        num = [f for f in expr.args if not (f.is_Pow and f.exp == -1)]
        den = [f.base for f in expr.args if f.is_Pow and f.exp == -1]
        if not den or not any(f.is_number for f in den):
            return super()._print_Mul(expr)
        top = self._print(sympy.Mul(*num, evaluate=False)) if len(num) > 1 else (
            self._print(num[0]) if num else "1")
        bottom = self._print(sympy.Mul(*den, evaluate=False)) if len(den) > 1 else self._print(den[0])
        return rf"\frac{{{top}}}{{{bottom}}}"

    def _print_Float(self, expr) -> str:
        return self._approx(expr)

    def _print_Term(self, expr) -> str:
        name, _, where = expr.name.partition("@")
        base = TERM_TEX.get(name, r"\mathrm{" + _escape(name) + "}")
        return base + (r"^{(\mathrm{" + _escape(where) + "})}" if where else "")

    def _print_Name(self, expr) -> str:
        if expr.name.replace("_", "").isalnum():
            return r"\mathtt{" + _escape(expr.name) + "}"
        text = "".join(_TEXT_SYMBOLS.get(c) or latex_text(c) for c in expr.name)  # a label: text mode
        return r"\text{\texttt{" + text + "}}"

    def _print_Literal(self, expr) -> str:
        number, _, unit = expr.name.partition(" ")
        unit = _LITERAL_UNIT.get(unit, unit)
        return number + r"\,\mathrm{" + unit.replace("µ", r"\mu ") + "}"

    def _print_Function(self, expr, exp=None) -> str:
        name = type(expr).__name__
        args = ", ".join(self._print(a) for a in expr.args)
        head = FUNCTION_TEX.get(name, r"\mathrm{" + _escape(name) + "}")
        return head + (r"\left(" + args + r"\right)" if args else "")

    def _print_StrictLessThan(self, expr) -> str:
        return f"{self._print(expr.lhs)} < {self._print(expr.rhs)}"

    def _print_StrictGreaterThan(self, expr) -> str:
        return f"{self._print(expr.lhs)} > {self._print(expr.rhs)}"


def _is_terminating(q: int) -> bool:
    for f in (2, 5):
        while q % f == 0:
            q //= f
    return q == 1


def _short_decimal(x):
    """A terminating fraction with at most 4 significant digits, written exactly; else None."""
    if not math.isfinite(float(x)) or float(x) == 0:
        return None
    exp = math.floor(math.log10(abs(float(x))))
    mantissa = sympy.Rational(x) / sympy.Integer(10) ** exp
    for decimals in range(0, 4):
        if (mantissa * 10 ** decimals).is_Integer:
            return approx_text(float(x), decimals + 1)
    return None


def value_chain(value, unit: Unit, digits: int = 3, percent: bool = False) -> list[tuple[str, str]]:
    """The result of a step as (relation, LaTeX) pairs: exact, then ≈ rounded, then SI-prefixed.

    >>> value_chain(sympy.Rational(1, 6), Unit(flop=1, byte=-1))
    [('=', '\\\\frac{1}{6}\\\\,\\\\mathrm{FLOP/B}'), ('\\\\approx', '0.167\\\\,\\\\mathrm{FLOP/B}')]
    """
    from costlang.printers.numbers import tidy
    value = tidy(value)  # a symbolic quotient in lowest terms: 16384·B/(5·B + 16384), not 134217728·B/(…)
    sep = lambda: (r"\," + unit_tex(unit)) if unit_tex(unit) else ""  # noqa: E731
    p = CostLatexPrinter({"digits": digits})
    exact = p.doprint(value)
    if isinstance(value, sympy.Add) and unit_tex(unit):
        exact = r"\left(" + exact + r"\right)"
    chain = [(r"\approx" if p.rounded else "=", exact + sep())]
    if not (isinstance(value, sympy.Basic) and value.is_number) or value in (sympy.oo, sympy.nan):
        return chain
    x = float(sympy.N(value, 20))
    if not math.isfinite(x) or (x == 0 and value != 0):  # beyond floats (1e400): exact digits only
        return chain + [(r"\approx", _scientific_tex(value * 100 if percent else value, digits)
                         + (r"\,\%" if percent else sep()))]
    approx = approx_text(x, digits)
    if not percent and not p.rounded and abs(x) >= 1e6 and _terminating(value):
        readable = prefixed_tex(x, unit, 5)
        if readable is not None and readable[1]:   # 989.5 TFLOP/s, exactly: the one figure worth reading
            return [("=", readable[0])]
    if percent:
        return chain + [(r"\approx" if approx_text(x * 100, digits + 2) != approx_text(x * 100, digits)
                         else "=", approx_text(x * 100, digits) + r"\,\%")]
    prefixed = prefixed_tex(x, unit, digits)
    if prefixed is not None and prefixed[0] != approx + sep():
        exact_prefix = prefixed[1] and chain[0][0] == "="
        chain.append(("=" if exact_prefix else r"\approx", prefixed[0]))
    elif prefixed is None and not p.rounded and r"\frac" in exact:
        chain.append((r"\approx", approx + sep()))
    return chain
