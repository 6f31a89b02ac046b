"""Derivation printers, solve part: `SolveResult` and `RegimeMap` → the solve's worked example.

Input: a `SolveResult` or `RegimeMap` (`analysis.solve`) and the analysis it belongs to. Output:
blocks of markup built with a `DerivationPrinter`'s methods (headings, paragraphs, math), in its
language: the equation; the root in general form (b, I*, BW), in the file's symbols and exactly
(≈ a 4-digit decimal: a crossing is read against whole numbers, 569.5 and not 570); what the
symbols stand for; the regimes on each side; where an inequality holds; the whole-number answers;
why there is no crossing; limits; large-size approximations. Words come from `phrases`.
"""
from __future__ import annotations

import sympy

from costlang.analysis import derive
from costlang.queries.solve import SolveResult
from costlang.units import BYTE, BYTE_PER_S, INTENSITY
from costlang.printers.derivation.mathtex import number_part, unit_tex, value_chain
from costlang.printers.words.solve import relation_side

__all__ = ["SolveDerivation"]

_TO = r"\to"
_RELATIONS = {"=": "=", "<": "<", "<=": r"\le", ">": ">", ">=": r"\ge"}
#: the unit of each kind of lifted symbol (`frontend.variants.generalize`: b, b_DTYPE, Istar, BW)
_LIFTED_UNITS = {"b": BYTE, "Istar": INTENSITY, "BW": BYTE_PER_S}


def _lifted(expr):
    """A solve's form for display: its lifted symbols (Istar, BW, PEAK) named as the recipe names them,
    and a negative constant written last (`d - 1000`, not sympy's `-1000 + d`)."""
    if not isinstance(expr, sympy.Basic):
        return expr
    names = {"Istar": derive.ISTAR_T, "BW": derive.BW_T, "PEAK": derive.PEAK_T}
    return _constant_last(expr.xreplace({sym: names[sym.name] for sym in expr.free_symbols if sym.name in names}))


def _constant_last(e):
    """`-1000 + d` → `d - 1000` in every sum (unevaluated, so that sympy keeps the order).

    >>> d = sympy.Symbol("d")
    >>> _constant_last(500 * d / (d - 1000)).args[-1].base.args
    (d, -1000)
    """
    if not isinstance(e, sympy.Basic) or e.is_Atom or not e.args:
        return e
    args = [_constant_last(a) for a in e.args]
    if e.is_Add and args[0].is_number and args[0].is_negative and len(args) > 1:
        return sympy.Add(*args[1:], args[0], evaluate=False)
    if args == list(e.args):
        return e
    return e.func(*args, evaluate=False) if (e.is_Add or e.is_Mul or e.is_Pow) else e.func(*args)


def _joined(pairs) -> str:
    """(relation, LaTeX) pairs as one chain, without a leading `=`: `\\frac{1}{6} \\approx 0.1667`."""
    text = " ".join(f"{rel} {tex}" for rel, tex in pairs)
    return text[2:] if text.startswith("= ") else text


class SolveDerivation:
    """The `_print_` methods of a `DerivationPrinter` for solve results (a mixin)."""

    def _print_SolveResult(self, r, analysis, level: int = 2, **_) -> str:
        blocks = [self.heading(self._say("solve", name=self.code(r.name)), level), self._equation(r)]
        if r.was_bound is not None:
            value = self.math(f"{self._x(r)} {self._is(r.was_bound, r.unit)}")
            blocks.append(self.paragraph(self._say("set_aside", x=self.math(self._x(r)), value=value)))
        for name, tied in r.ties:  # J = K: a size that must equal X follows it
            eq = self.math(f"{self._tex(_lifted(sympy.Symbol(name)))[0]} = {self._tex(_lifted(tied))[0]}")
            blocks.append(self.paragraph(self._say("tied", x=self.math(self._x(r)), eq=eq)))
        blocks += [self._roots(r), self._legend(r)]
        blocks += [self.paragraph(self._say(
            "validity", root=self.math(f"{self._star(r, i)} = {self._tex(_lifted(root))[0]}"),
            x=self.math(self._star(r, i)),
            conditions=", ".join(self.math(self._tex(_lifted(c))[0]) for c in conds)))
            for i, (root, conds) in enumerate(zip(r.roots, r.validity)) if conds]
        blocks += [self.paragraph(self._say("condition", expr=self.math(self._tex(_lifted(e))[0]),
                                            condition=self.math(self._tex(_lifted(c))[0])))
                   for e, c in r.conditions]
        if r.scan is not None:   # roots sympy could not find exactly: found numerically, or undecided
            sc = r.scan
            fields = dict(points=str(sc.points), low=self.math(self._tex(sc.low)[0]),
                          high=self.math(self._tex(sc.high)[0]))
            blocks.append(self.paragraph(self._say("scanned", x=self.math(self._x(r) + "^{*}"), **fields)
                                         if r.values else self._say("scan_none", **fields)))
        if r.no_crossing is not None:
            blocks.append(self._no_crossing(r))
        elif r.regimes and r.relation == "=":
            blocks.append(self._regimes(r))
        if r.solution is not None:
            blocks.append(self.paragraph(self._solution(r)))
        blocks += [self._whole(r), self._limits(r), self._approximations(r)]
        if r.undecided:   # what sympy could not decide is said, never left out silently
            parts = self._p("undecided_parts")
            blocks.append(self.paragraph(self._say("undecided_solve", items=", ".join(
                self.text(parts.get(u, u)) for u in r.undecided))))
        return "\n\n".join(b for b in blocks if b)

    def _print_RegimeMap(self, m, analysis, **_) -> str:
        x = self.math(self._tex(_lifted(m.symbol))[0])
        parts = [self.heading(self._say("solve", name=self.code(m.name)), 2),
                 self.paragraph(self._say("regime_map", x=x))]
        for kernel, result in m.kernels:
            if not isinstance(result, SolveResult):  # the kernel does not depend on X: its verdict stands
                parts.append(self.items([self._say("map_fixed", kernel=self.code(kernel), x=x,
                                                   verdict=self._verdict_words(result))]))
            else:
                parts.append(self._print(result, analysis=analysis, level=3))
        return "\n\n".join(parts)

    # --- pieces ------------------------------------------------------------------------------
    def _x(self, r) -> str:
        return self._tex(_lifted(r.symbol))[0]

    def _star(self, r, i: int) -> str:
        """X^{*}, or X^{*}_{i} when the equation has several roots."""
        x = self._x(r)
        base = x if x.isalnum() else "{" + x + "}"
        return base + "^{*}" + (f"_{{{i + 1}}}" if len(r.roots) > 1 else "")

    def _chain4(self, value, unit) -> list[tuple[str, str]]:
        """(relation, LaTeX) pairs: exact (with its unit), then ≈ a 4-digit decimal or SI-prefixed."""
        return value_chain(value, unit, self._settings["digits"] + 1)

    def _amount(self, value, unit) -> str:
        """`\\frac{512000}{899} \\approx 569.5`: the chain without its leading `=`."""
        return _joined(self._chain4(value, unit))

    def _is(self, value, unit) -> str:
        """`= \\frac{512000}{899} \\approx 569.5`, or `\\approx 16.38\\,\\mathrm{ns}` for a rounded value."""
        return " ".join(f"{rel} {tex}" for rel, tex in self._chain4(value, unit))

    def _forms(self, forms, value, unit) -> list[tuple[str, str]]:
        """(relation, LaTeX) for each distinct form, then the value in one row (`= 1/6 ≈ 0.1667`)."""
        out: list[tuple[str, str]] = []
        for form in forms:
            tex = self._tex(_lifted(form))[0] if form is not None else None
            if tex is not None and tex not in [t for _, t in out]:
                out.append(("=", tex))
        if value is not None and value.is_number and value.is_finite:
            chain = self._chain4(value, unit)
            out = [(rel, t) for rel, t in out if t != number_part(chain[0][1])]
            out.append((chain[0][0], " ".join([chain[0][1]] + [f"{rel} {t}" for rel, t in chain[1:]])))
        return out

    def _equation(self, r) -> str:
        return self.paragraph(self._say("equation", lhs=self.code(r.lhs_text), rel=self.math(_RELATIONS[r.relation]),
                                        rhs=self.code(r.rhs_text), x=self.math(self._x(r))))

    def _roots(self, r) -> str:
        """X* = general form = closed form = exact value ≈ decimal, one block of rows per root."""
        rows = []
        for i, root in enumerate(r.roots):
            general = r.general[i] if i < len(r.general) else None
            value = r.values[i] if i < len(r.values) else None
            forms = self._forms((general, root), value, r.unit)   # general form first, as the recipe
            rows += [f"{self._star(r, i)} &{forms[0][0]} {forms[0][1]}"] + [f"&{rel} {t}" for rel, t in forms[1:]]
        return self.display(rows) if rows else ""

    def _legend(self, r) -> str:
        """What the symbols of the forms stand for: b = 2 (bytes per element), I* = 500, d = 8192."""
        words = self._p("lifted")
        items = []
        for item in r.legend:
            kind = item.symbol.name.split("_")[0]   # b, b_fp16, Istar, Istar_fp16, BW
            meaning = f" ({self.text(words[kind])})" if kind in words else ""
            unit = rf"\,{unit_tex(_LIFTED_UNITS[kind])}" if kind in _LIFTED_UNITS else ""
            value = self._tex(item.value)[0] + unit
            items.append(self.math(f"{self._tex(_lifted(item.symbol))[0]} = {value}") + meaning)
        items += [self.math(f"{self._tex(sym)[0]} = {self._tex(value)[0]}") for sym, value in r.given]
        return self.paragraph(self._say("where", items=", ".join(items))) if items else ""

    def _bound_tex(self, r, value) -> str:
        """A regime's end: X^{*} when it is a root, else the value."""
        for i, v in enumerate(r.values):
            if v is not None and v == value:
                return self._star(r, i)
        return self._amount(value, r.unit)

    def _regime_words(self, r, side) -> str:
        relation = relation_side(side, r.lhs_text, r.rhs_text)
        return self.code(relation) if relation else self.text(self._p("regime_words")[side.value])

    def _regimes(self, r) -> str:
        """One item per interval of one sign: `B < B^{*}`: memory-bound."""
        x, items = self._x(r), []
        for g in r.regimes:
            lo = self._bound_tex(r, g.lower) if g.lower is not None else None
            hi = self._bound_tex(r, g.upper) if g.upper is not None else None
            span = f"{lo} < {x} < {hi}" if lo and hi else f"{x} > {lo}" if lo else f"{x} < {hi}" if hi else None
            where = self.math(span) if span else self._say("every", x=self.math(x))
            items.append(where + ": " + self._regime_words(r, g.side))
        return self.paragraph(self._say("regimes")) + "\n\n" + self.items(items)

    def _solution(self, r) -> str:
        """Where an inequality holds: a union of intervals, their ends named X^{*} where they are roots."""
        x, s = self._x(r), r.solution
        if s is sympy.EmptySet:
            return self._say("holds_nowhere", x=self.math(x))
        parts = []
        for iv in (s.args if isinstance(s, sympy.Union) else (s,)):
            if isinstance(iv, sympy.FiniteSet):  # isolated points (a relation met at a root only)
                parts += [self.math(f"{x} = {self._bound_tex(r, point)}") for point in iv.args]
                continue
            lo = None if iv.start == 0 else self._bound_tex(r, iv.start)
            hi = None if iv.end == sympy.oo else self._bound_tex(r, iv.end)
            lo_op, hi_op = ("<" if iv.left_open else r"\le"), ("<" if iv.right_open else r"\le")
            flip = {"<": ">", r"\le": r"\ge"}
            parts.append(self.math(f"{lo} {lo_op} {x} {hi_op} {hi}" if lo and hi else
                                   f"{x} {flip[lo_op]} {lo}" if lo else f"{x} {hi_op} {hi}" if hi else
                                   f"{x} > 0"))
        return self._say("holds", where=self._say("or").join(parts))

    def _whole(self, r) -> str:
        """The last whole X below each change of regime and the first above it (analysis.solve's
        answers), with ⌊X*⌋, ⌈X*⌉, X* − 1 or X* + 1."""
        items = []
        for w in r.whole:
            i = next((i for i, v in enumerate(r.values) if v is not None and v == w.crossing), 0)
            star = self._star(r, i)
            form = {"floor": rf"\left\lfloor {star} \right\rfloor", "ceil": rf"\left\lceil {star} \right\rceil",
                    "minus_one": f"{star} - 1", "plus_one": f"{star} + 1"}[w.rounding]
            items.append(self._whole_item("whole_largest" if w.largest else "whole_smallest", r, w.side, form,
                                          w.value, w.rejected))
        if not items:
            return ""
        return self.paragraph(self._say("whole", x=self.math(self._x(r)))) + "\n\n" + self.items(items)

    def _whole_item(self, key: str, r, side, form: str, value, rejected=()) -> str:
        relation = relation_side(side, r.lhs_text, r.rhs_text)
        predicate = self._say("satisfies", condition=self.code(relation)) if relation else \
            self.text(self._p("regime_is")[side.value])
        if not rejected:
            shown = self.math(f"{form} = {self._tex(value)[0]}")
        else:   # the nearest whole numbers make the file an error (a shard that does not divide)
            first, reason = rejected[0]
            values = [v for v, _ in rejected]
            listed = ", ".join(str(v) for v in values) if len(values) <= 3 else \
                f"{values[0]}, {values[1]}, \\ldots, {values[-1]}"
            fields = dict(form=self.math(f"{form} = {first}"), rejected=self.math(f"{self._x(r)} = {listed}"),
                          reason=self.text(reason))
            shown = self._say("whole_none", count=str(len(values)), **fields) if value is None else \
                self._say("whole_accepted", value=self.math(self._tex(value)[0]), **fields)
        return self._say(key, x=self.math(self._x(r)), predicate=predicate, value=shown)

    def _no_crossing(self, r) -> str:
        """The side that never reaches the other: its sup (inf), where, and what a crossing needs."""
        n, x = r.no_crossing, self._x(r)
        where = f"{x} {_TO if n.approached else '='} {self._tex(n.at)[0]}"
        general = "" if n.general is None or n.general == n.value else \
            f"; \\; = {self._tex(_lifted(n.general))[0]}"
        op = r"\le" if n.extremum == "sup" else r"\ge"
        text = self._say("no_crossing", extremum=self.math(rf"\{n.extremum}_{{{x}}}"), side=self.code(n.side),
                         value=self.math(f"{self._is(n.value, r.side_unit)} \\quad ({where}{general})"),
                         op=self.math(op), other=self.code(n.other),
                         other_value=self.math(self._is(n.other_value, r.side_unit)))
        if len(r.regimes) == 1:
            text += " " + self._say("so_every", x=self.math(x), words=self._regime_words(r, r.regimes[0].side))
        needs = [self._say("crossing_needs", root=self.math(f"{self._star(r, 0)} = {self._tex(_lifted(root))[0]}"),
                           condition=self.math(self._tex(_lifted(cond))[0])) for root, cond in n.conditions]
        return "\n\n".join([self.paragraph(text)] + ([self.items(needs)] if needs else []))

    def _limits(self, r) -> str:
        blocks = []
        for lim in r.limits:
            value = _joined(self._forms((lim.general, lim.closed), lim.value, r.side_unit))
            blocks.append(self.paragraph(self._say("limit", x=self.math(rf"{self._x(r)} \to \infty"),
                                                   side=self.code(lim.side), value=self.math(r"\to " + value))))
        return "\n\n".join(blocks)

    def _approximations(self, r) -> str:
        blocks = []
        for ap in r.approximations:
            i = next((n for n, v in enumerate(r.values) if v is not None and v == ap.exact), 0)
            value = "" if ap.value is None or ap.value == ap.expr else " " + self._is(ap.value, r.unit)
            exact = "" if ap.exact is None else self._say("exact", value=self.math(self._amount(ap.exact, r.unit)))
            blocks.append(self.paragraph(self._say(
                "approximation", symbol=self.math(", ".join(self._tex(g)[0] for g in ap.growing)), exact=exact,
                expr=self.math(f"{self._star(r, i)} \\approx {self._amount(ap.expr, r.unit)}" if ap.expr.is_number
                               else f"{self._star(r, i)} \\approx {self._tex(_lifted(ap.expr))[0]}{value}"))))
        return "\n\n".join(blocks)
