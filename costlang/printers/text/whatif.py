"""Text for what-if results: solves, regime maps, comparisons and a sweep's crossings.

Input: `SolveResult`, `RegimeMap` and `Comparison` (queries.solve, queries.whatif) and a sweep's
`Crossing`s (its table is `printers.text.sweep`'s). Output: lines of text, deterministic (their
JSON and CSV are in `printers.data`).
Exact values print exactly with a 4-digit decimal beside them; expressions print through
`numbers.expr_text` (max(…), ·, ^, ∞: never raw sympy).
"""
from __future__ import annotations

import sympy

from costlang.queries.solve import RegimeMap, SolveResult
from costlang.queries.solve_notes import APPROXIMATION_TOLERANCE
from costlang.analysis.verdict import Verdict
from costlang.printers.words.verdicts import plain_relation, threshold
from costlang.units import DIMENSIONLESS
from costlang.printers.words.phrases import phrase
from costlang.printers.words.comparisons import crossing_text, settings_words
from costlang.printers.words.verdicts import bound_text
from costlang.printers.words.solve import case_words, side_predicate, side_words
from costlang.printers.numbers import exact_or_approx, expr_text, human, is_bound, no_empty_equals, sig

__all__ = ["solve_lines", "comparison_lines", "whatif_lines", "crossing_lines"]



def _expr(e) -> str:
    return expr_text(e)


def _condition(cond) -> str:
    """A condition as a reader checks it: a symbol against a long fraction is a rounded threshold
    that stays true (`T ≤ 1137` for a whole T), any other fraction gets its decimal beside it."""
    return plain_relation(cond) if isinstance(cond, sympy.Rel) else _expr(cond)


def _v(value, unit=DIMENSIONLESS) -> str:
    """An exact value with its unit: `512000/899 ≈ 569.5`, `15.87 TB/s`."""
    if value is None:
        return "?"
    if isinstance(value, str):
        return value
    if not is_bound(value):
        return human(value, unit)
    if unit == DIMENSIONLESS:
        return exact_or_approx(value)
    return human(value, unit)


def whatif_lines(a) -> list[str]:
    """The report's `solves` and `comparisons` sections."""
    out = []
    if a.solves:
        out += ["", "solves"]
        for r in a.solves:
            out += solve_lines(r)
    for c in a.comparisons:
        out += ["", "comparison"] + ["  " + line for line in comparison_lines(c)]
    return out


def solve_lines(r) -> list[str]:
    if isinstance(r, RegimeMap):
        out = [f"  {r.name}: where each kernel turns from one bound to the other"]
        for kernel, result in r.kernels:
            if isinstance(result, SolveResult):
                out += _map_entry(kernel, result)
            else:
                out.append(f"    {kernel}: {bound_text(result)} for every {r.symbol}")
        return out
    return _equation_lines(r)


def _map_entry(kernel: str, r: SolveResult) -> list[str]:
    """One kernel of a regime map: its regimes, its crossing (closed form when symbols are free)."""
    x, text = r.symbol, _regime_text(r)
    crossing = f"{x}* = {_root_text(r)}" if r.roots else ""
    if text and crossing:
        text += f" ({crossing})"
    elif crossing:
        text = f"changes bound at {crossing}"
    lines = [f"    {kernel}: {text or 'no crossing found'}"]
    return lines + [f"      ({t})" for t in _condition_texts(r)]


def _heading(r: SolveResult) -> str:
    """`name: lhs REL rhs, for X`; the name is left out when it is the statement's own text."""
    equation = f"{r.lhs_text} {r.relation} {r.rhs_text}, for {r.symbol}"
    default = "".join(f"{r.lhs_text}{r.relation}{r.rhs_text}for{r.symbol}".split())
    return equation if "".join(r.name.split()) == default else f"{r.name}: {equation}"


def _equation_lines(r: SolveResult) -> list[str]:
    x = r.symbol
    out = [f"  {_heading(r)}"]
    if r.was_bound is not None:
        out.append(f"    ({x} = {_v(r.was_bound, r.unit)} as given is set aside: solved with {x} free)")
    for name, value in r.ties:
        out.append(f"    ({name} = {_v(value)} while {x} varies: the shapes need them equal)")
    out += _root_lines(r)
    if r.legend:
        out.append("    where " + "; ".join(f"{item.symbol} = {_v(item.value)} ({item.meaning})" for item in r.legend))
    out += [f"    {text}" for text in _condition_texts(r)]
    if r.scan is not None:
        out.append(f"    {scan_words(r)}")
    if r.no_crossing is not None:
        out += _no_crossing_lines(r)
    if r.regimes and r.relation == "=" and r.no_crossing is None:
        out.append(f"    {_regime_text(r)}")
    if r.solution is not None:
        out.append(f"    holds for {_set_text(r.solution, x, r.unit)}")
    out += [f"    {whole_words(r, w)}: {whole_answer(r, w)}" for w in r.whole]
    out += [_limit_text(r, lim) for lim in r.limits]
    out += [_approx_text(r, ap) for ap in r.approximations]
    if r.undecided:   # said, never left out silently
        parts = phrase("en", "undecided_parts")
        out.append(f"    sympy could not decide: {', '.join(parts.get(u, u) for u in r.undecided)}")
    return out


def _root_lines(r: SolveResult) -> list[str]:
    """Each root: closed form = exact value (bound symbols; its max() branch), then the general form."""
    out, given = [], _given_text(r)
    for i, root in enumerate(r.roots):
        value = r.values[i] if i < len(r.values) else None
        if i < len(r.numeric) and r.numeric[i]:
            out.append(f"    {r.symbol}* ≈ {sig(float(value), 6)}   ({numeric_words(r, value)})")
            continue
        shown = value is not None and value != root
        case = case_words(r.cases[i], expr=_expr) if i < len(r.cases) else ""
        notes = "; ".join(filter(None, [given if shown else "", case]))
        out.append(f"    {r.symbol}* = {_expr(root)}" + (f" = {_v(value, r.unit)}" if shown else "")
                   + (f"   ({notes})" if notes else ""))
        general = r.general[i] if i < len(r.general) else None
        if general is not None and general != root:
            out.append(f"       = {_expr(general)}   (general form)")
        conds = r.validity[i] if i < len(r.validity) else ()
        if conds:   # the max()/min() branch it was solved on: elsewhere another branch gives X*
            listed = ", ".join(_expr(c) for c in conds[:-1]) + (" and " if len(conds) > 1 else "") + _expr(conds[-1])
            out.append(f"       (this closed form holds only while {listed}; elsewhere another branch of "
                       f"max()/min() gives {r.symbol}*)")
    return out


def numeric_words(r: SolveResult, value) -> str:
    """How a root sympy could not find exactly was found: `found numerically: lhs − rhs changes sign
    between 2395 and 2396 (bisection on the exact expression)`."""
    change = next((c for c in r.scan.changes if c.value == value), None) if r.scan else None
    where = f" between {r.symbol} = {_v(change.lower)} and {_v(change.upper)}" if change is not None else ""
    return f"found numerically, by bisection on the exact expression: {r.lhs_text} - {r.rhs_text} changes sign{where}"


def _power_of_two(v) -> str:
    """`1`, `2^50`, `2^-20`: the ends of a scan."""
    k = sympy.log(v, 2)
    return str(v) if v == 1 or not k.is_integer else f"2^{k}"


def scan_words(r: SolveResult) -> str:
    """What the scan for sign changes tried, where sympy could not solve exactly: with no change
    found nothing is decided (a scan is not a proof)."""
    sc = r.scan
    points = f"{sc.points} points from {r.symbol} = {_power_of_two(sc.low)} to {_power_of_two(sc.high)}"
    if not r.values:
        return (f"undecided: sympy cannot solve this exactly, and {r.lhs_text} - {r.rhs_text} does not change "
                f"sign at any of {points} (a scan, not a proof)")
    return (f"(sympy cannot solve this exactly: the crossings are the sign changes of {r.lhs_text} - {r.rhs_text} "
            f"at {points}; two crossings between neighbouring points would be missed)")


def _given_text(r: SolveResult) -> str:
    return ", ".join(f"{sym} = {_v(value)}" for sym, value in r.given)


def _root_text(r: SolveResult) -> str:
    return ", ".join(_v(v, r.unit) if v is not None else _expr(root) for root, v in zip(r.roots, r.values))


def _condition_texts(r: SolveResult) -> list[str]:
    """When a symbolic root is positive, and which regime holds for every X when it is not."""
    otherwise = ""
    if len(r.roots) == 1 and len(r.regimes) == 2:
        otherwise = f"; otherwise {_side(r, r.regimes[0].side)} for every {r.symbol}"
    return [f"{_expr(root)} is positive only when {_expr(cond)}{otherwise}" for root, cond in r.conditions]


def _no_crossing_lines(r: SolveResult) -> list[str]:
    n = r.no_crossing
    general = f"; = {_expr(n.general)}" if n.general is not None and n.general != n.value else ""
    cmp = "≤" if n.extremum == "sup" else "≥"
    words = _side(r, r.regimes[0].side) if len(r.regimes) == 1 else None
    where = f"as {r.symbol} → {_expr(n.at)}" if n.approached else f"at {r.symbol} = {_expr(n.at)}"
    out = [f"    no crossing: {n.extremum} over {r.symbol} of {n.side} = {_v(n.value, r.side_unit)} "
           f"({where}{general}) {cmp} {n.other} = {_v(n.other_value, r.side_unit)}"]
    if words:
        out.append(f"    so for every {r.symbol}: {words}")
    given = f" (here {_given_text(r)})" if r.given else ""
    out += [f"    a crossing {r.symbol}* = {_expr(root)} needs {_condition(cond)}{given}" for root, cond in n.conditions]
    return out


def whole_words(r, w) -> str:
    """'largest whole B that is memory-bound', 'smallest whole B that does not fit in memory';
    with several crossings, which one ('(below n* = 400)')."""
    side = side_predicate(w.side, r.lhs_text, r.rhs_text)
    text = f"{'largest' if w.largest else 'smallest'} whole {r.symbol} that {side}"
    if len({v for v in r.values if v is not None}) > 1:
        text += f" ({'below' if w.largest else 'above'} {r.symbol}* = {_v(w.crossing)})"
    return text


def whole_answer(r, w) -> str:
    """`floor(B*) = 79`; when the file rejects the nearest whole numbers (`--set n=3` is an error),
    the first one it accepts, with the ones it rejects and why."""
    if not w.rejected:
        return f"{whole_formula(r, w)} = {w.value}"
    first, reason = w.rejected[0]
    rejected = _values_text([v for v, _ in w.rejected])
    because = f"{whole_formula(r, w)} = {first}, but the file rejects {r.symbol} = {rejected}: {reason}"
    if w.value is None:
        return f"none accepted within {len(w.rejected)} whole values   ({because})"
    return f"{w.value}   ({because})"


def _values_text(values) -> str:
    """`3`, `3, 5`, or `3, 5, …, 255 (128 values)`."""
    if len(values) <= 3:
        return ", ".join(str(v) for v in values)
    return f"{values[0]}, {values[1]}, …, {values[-1]} ({len(values)} values)"


def whole_formula(r, w) -> str:
    """floor(B*), ceil(B*), B* - 1 or B* + 1."""
    star = f"{r.symbol}*"
    return {"floor": f"floor({star})", "ceil": f"ceil({star})", "minus_one": f"{star} - 1",
            "plus_one": f"{star} + 1"}[w.rounding]


def _range(x, lo: str, lo_op: str, hi: str, hi_op: str) -> str:
    if lo and hi:
        return f"{lo} {lo_op} {x} {hi_op} {hi}"
    if lo:
        return f"{x} {'>' if lo_op == '<' else '≥'} {lo}"
    return f"{x} {hi_op} {hi}" if hi else f"every {x}"


def _regime_text(r: SolveResult) -> str:
    parts = []
    for g in r.regimes:
        lo = _cut_text(r, g.lower, +1) if g.lower is not None else ""
        hi = _cut_text(r, g.upper, -1) if g.upper is not None else ""
        parts.append(f"{_side(r, g.side)} for {_range(r.symbol, lo, '<', hi, '<')}")
    return ", ".join(parts)


def _side(r: SolveResult, side) -> str:
    return side_words(side, r.lhs_text, r.rhs_text)


def _cut_text(r: SolveResult, cut, side: int) -> str:
    """A regime's end: its value, or `B*` when it is a closed form in free symbols (stated apart);
    a value known only approximately is `B* ≈ 145.5` when it is the one root, else rounded inward
    (`side` +1 for a lower end, −1 for an upper one) so the range stated stays true: never `B < ≈ 145.5`."""
    one_root = len(r.roots) == 1 and cut == r.roots[0]
    if not is_bound(cut) and one_root:
        return f"{r.symbol}*"
    text = _v(cut, r.unit)
    if text.startswith("≈"):
        return f"{r.symbol}* {text}" if one_root else _end_text(cut, r.unit, side)
    return text


def _set_text(s: sympy.Set, x, unit) -> str:
    if s is sympy.EmptySet:
        return f"no {x}"
    parts = []
    for iv in (s.args if isinstance(s, sympy.Union) else (s,)):
        if isinstance(iv, sympy.FiniteSet):  # isolated points (a relation met at a root only)
            texts = [_v(point, unit) for point in iv.args]
            parts += [f"{x} {t}" if t.startswith("≈") else f"{x} = {t}" for t in texts]
            continue
        lo = "" if iv.start == 0 else _end_text(iv.start, unit, +1)
        hi = "" if iv.end == sympy.oo else _end_text(iv.end, unit, -1)
        parts.append(_range(x, lo, "<" if iv.left_open else "≤", hi, "<" if iv.right_open else "≤"))
    return " or ".join(parts)


def _end_text(value, unit, side: int) -> str:
    """An end of a solution set; one with no short exact form is rounded inward (down for an
    upper end, up for a lower one), so that the set stated stays true: `B ≤ 79.14`, not `B ≤ ≈ 79.14`."""
    text = _v(value, unit)
    if text.startswith("≈") and value.is_number:
        return threshold(value, side)[0]
    return text


def _limit_text(r: SolveResult, lim) -> str:
    forms = [_expr(lim.closed)]
    if lim.general is not None and lim.general != lim.closed:
        forms.insert(0, _expr(lim.general))
    value = f" = {_v(lim.value)}" if lim.value is not None and lim.value != lim.closed else ""
    return f"    as {r.symbol} → ∞: {lim.side} → {' = '.join(forms)}{value}"


def _approx_text(r: SolveResult, ap) -> str:
    x = r.symbol
    names = ", ".join(str(s) for s in ap.growing)
    when = f"{names} ≫ {x}* ({names} → ∞)" if r.unit == DIMENSIONLESS else f"{names} → ∞"
    istar = next((i.symbol for i in r.legend if i.symbol.name == "Istar" and i.value == ap.expr), None)
    shown = f"{istar} = {_v(ap.expr, r.unit)}" if istar is not None else \
        _v(ap.expr, r.unit) if ap.expr.is_number else _expr(ap.expr)
    text = f"    approximation for {when}: {x}* ≈ {shown}"
    if ap.value is not None and ap.value != ap.expr:
        text += f" = {_v(ap.value, r.unit)}"
    if ap.error is not None:
        error = float(ap.error) * 100
        text += (f" (exact {_v(ap.exact, r.unit)}; {sig(abs(error), 3)} % {'low' if error < 0 else 'high'}; "
                 f"shown when within {sig(float(APPROXIMATION_TOLERANCE) * 100)} %)")
    return text


# --- comparisons ----------------------------------------------------------------------------

def _cell(value, ratio, unit) -> str:
    if isinstance(value, Verdict):
        return bound_text(value)
    if value is None:
        return "no crossing"
    text = _v(value, unit if unit is not None else DIMENSIONLESS)
    if ratio is not None and ratio != 1 and is_bound(ratio):
        text += f" (×{sig(float(ratio), 4)})"
    return text


LEGEND_WIDTH = 40   # a comparison cell longer than this moves to a legend under the table


def comparison_lines(c) -> list[str]:
    """The scenarios side by side; a cell longer than `LEGEND_WIDTH` is named [1], [2], … in the
    table and written out in a legend below it (the same text keeps the same name)."""
    header = ["", *c.scenarios]
    rows = [["settings", *map(settings_words, c.settings)], ["hardware", *c.hardware]]
    rows += [[row.label, *[_cell(v, q, row.unit) for v, q in zip(row.values, row.ratios)]] for row in c.rows]
    rows.append([f"speed-up vs {c.scenarios[0]}", *[_v(s) if s is not None else "?" for s in c.speedups]])
    rows, legend = _legend(rows)
    widths = [max(len(r[i]) for r in rows + [header]) for i in range(len(header))]
    fmt = lambda r: "  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip()  # noqa: E731
    lines = [fmt(header)] + [fmt(r) for r in rows] + ["(×k: the value is k times the first column's)"]
    return [no_empty_equals(line) for line in lines + legend]


def _legend(rows):
    """Rows with long cells replaced by [n], and the legend lines `[n] text`."""
    names: dict[str, str] = {}
    out = []
    for row in rows:
        cells = [row[0]]
        for cell in row[1:]:
            if len(cell) > LEGEND_WIDTH and row[0] not in ("settings", "hardware"):
                cell = names.setdefault(cell, f"[{len(names) + 1}]")
            cells.append(cell)
        out.append(cells)
    return out, [f"{name} {text}" for text, name in names.items()]


# --- sweeps -----------------------------------------------------------------------------------

def crossing_lines(crossings) -> list[str]:
    """A sweep's exact crossings in words, the lines under its table (`printers.text.sweep.table_text`)."""
    return [no_empty_equals(crossing_text(c)) for c in crossings]
