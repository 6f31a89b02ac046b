"""What-if and compare: scenarios of a program analysed side by side, with ratios.

Input: an `Analysis` whose program has `scenario` and `compare` statements, or settings given on
the command line (`--set B=1 --set hardware=h100_sxm`, parsed by the costlang parser, never by
Python). Output: `Comparison`s: for each scenario its totals, footprint, the file's queries and
its solves' first crossings, exact, with each value's ratio to the first scenario and the speed-up
T_kernel(first) / T_kernel(scenario). The settings are documented in `frontend.variants`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

import sympy

from costlang.budget import time_budget
from costlang.errors import Span
from costlang.ir.expr import Option
from costlang.ir.program import Value
from costlang.units import BYTE, FLOP, INTENSITY, SECOND, Unit
from costlang.frontend.edits import apply_settings
from costlang.frontend.variants import setting_text
from costlang.queries.evaluate import analyze_with_queries
from costlang.queries.solve import SolveResult, answer_solves

__all__ = ["ComparisonRow", "Comparison", "Settings", "answer_compares", "compare_analyses", "scenario_analysis",
           "scenario_settings", "baseline_settings", "file_scenarios"]


@dataclass(frozen=True)
class ComparisonRow:
    label: str
    unit: Optional[Unit]     # None: a verdict row (values are words)
    values: tuple            # per scenario: an exact number, an expression, a Verdict, or None (no crossing)
    ratios: tuple            # per scenario: value / first scenario's value (None if not a number)


@dataclass(frozen=True)
class Settings:
    """What a scenario changes: the settings' texts, on top of the file as written (`as_written`:
    the baseline, the file itself under the settings it was run with)."""
    applied: tuple[str, ...] = ()
    as_written: bool = False


@dataclass(frozen=True)
class Comparison:
    scenarios: tuple[str, ...]
    settings: tuple[Settings, ...]
    hardware: tuple[str, ...]
    rows: tuple[ComparisonRow, ...]
    speedups: tuple          # T_kernel(first) / T_kernel(scenario)
    span: Optional[Span]


def scenario_settings(settings: Sequence[Option]) -> Settings:
    return Settings(tuple(setting_text(o) for o in settings))


def baseline_settings(analysis) -> Settings:
    """What a comparison's baseline is: the file as written, with the settings it was run under."""
    return Settings(tuple(analysis.program.settings), as_written=True)


# --- scenarios and comparisons ------------------------------------------------------------------

def scenario_analysis(analysis, settings: Sequence[Option]):
    """The analysis of the same program with settings applied (from its hardware and fusion)."""
    base = analysis.program
    program = apply_settings(_pinned(base, analysis), settings)
    program.compares = []
    scenario = analyze_with_queries(program)
    scenario.solves = answer_solves(scenario, extras=False)   # a column shows roots, not general forms
    return scenario


def _pinned(program, analysis):
    """The program with the analysis's hardware and fusion written in (so settings start there)."""
    import copy
    out = copy.copy(program)
    out.selected_hardware, out.fusion = analysis.hardware.name, analysis.fusion
    return out


def answer_compares(analysis) -> tuple[Comparison, ...]:
    out = []
    for c in analysis.program.compares:
        n = len(c.scenarios)
        with time_budget(None, f"comparing {n} scenario{'s' * (n != 1)}", c.span):  # one budget for all of them
            named = _scenarios(analysis, c)
        out.append(compare_analyses(named, c.span))
    return tuple(out)


def _scenarios(analysis, c) -> list:
    """(name, `Settings`, Analysis) for each scenario of a compare statement."""
    return _named(analysis, [n.id for n in c.scenarios])


def _named(analysis, names) -> list:
    named = []
    for name in names:
        if name == "baseline":
            named.append(("baseline", baseline_settings(analysis), analysis))
        else:
            sc = analysis.program.scenarios[name]
            named.append((name, scenario_settings(sc.settings), scenario_analysis(analysis, sc.settings)))
    return named


def file_scenarios(analysis) -> Optional[Comparison]:
    """The baseline beside every `scenario` of the file, in order (None: the file has none)."""
    names = [n for n in analysis.program.scenarios if n != "baseline"]
    if not names:
        return None
    with time_budget(None, f"comparing {len(names)} scenario{'s' * (len(names) != 1)}", None):
        return compare_analyses(_named(analysis, ["baseline", *names]))


def compare_analyses(named, span: Optional[Span] = None) -> Comparison:
    """Side by side: (name, `Settings`, Analysis) triples; ratios are to the first."""
    analyses = [a for _, _, a in named]
    rows = [_row(label, unit, [getter(a) for a in analyses]) for label, unit, getter in _FIGURES]
    rows.append(ComparisonRow("bound", None, tuple(a.totals.bound for a in analyses),
                              tuple(None for _ in analyses)))
    rows += _query_rows(analyses) + _solve_rows(analyses)
    t = [a.value(a.totals.t_kernel) for a in analyses]
    speedups = tuple(_ratio(ti, t[0]) for ti in t)
    return Comparison(tuple(n for n, _, _ in named), tuple(s for _, s, _ in named),
                      tuple(a.hardware.name for a in analyses), tuple(rows), speedups, span)


_FIGURES = (
    ("T_kernel", SECOND, lambda a: a.value(a.totals.t_kernel)),
    ("T_memory", SECOND, lambda a: a.value(a.totals.t_memory)),
    ("T_compute", SECOND, lambda a: a.value(a.totals.t_compute)),
    ("bytes", BYTE, lambda a: a.value(a.totals.bytes)),
    ("FLOPs", FLOP, lambda a: a.value(a.totals.flops)),
    ("I", INTENSITY, lambda a: a.value(a.totals.intensity)),
    ("I*", INTENSITY, lambda a: a.value(a.totals.critical_intensity)),
    ("footprint", BYTE, lambda a: a.value(a.footprint.bytes)),
)


def _ratio(base, value):
    """value / base, exact; None for words or a base that may be zero."""
    if not (isinstance(base, sympy.Basic) and isinstance(value, sympy.Basic)) or base.is_zero is not False:
        return None
    if value == base:
        return sympy.Integer(1)
    ratio = value / base
    if not ratio.free_symbols:
        return ratio
    if ratio.has(sympy.Max, sympy.Min):
        # sympy's simplify of a quotient of two sums of max() takes seconds a row at model scale
        # and finds no constant ratio there; the quotient is printed as it stands
        return ratio
    return sympy.cancel(ratio)


def _row(label, unit, values) -> ComparisonRow:
    return ComparisonRow(label, unit, tuple(values), tuple(_ratio(values[0], v) for v in values))


def _query_rows(analyses) -> list[ComparisonRow]:
    rows = []
    for i, q in enumerate(analyses[0].queries):
        values = [a.queries[i].value for a in analyses]
        if isinstance(q.value, Value):
            rows.append(_row(q.name, q.value.unit, [a.value(v.expr) for a, v in zip(analyses, values)]))
        else:
            rows.append(ComparisonRow(q.name, None, tuple(values), tuple(None for _ in values)))
    return rows


def _solve_rows(analyses) -> list[ComparisonRow]:
    """The first crossing of each solve (in scenarios that keep the solves)."""
    rows = []
    for i, s in enumerate(analyses[0].solves):
        if not isinstance(s, SolveResult) or any(len(a.solves) <= i for a in analyses):
            continue
        values = []
        for a in analyses:
            r = a.solves[i]
            # the exact value; the closed form when symbols are free (T* = 2·D); None: no crossing
            values.append(r.values[0] if r.values and r.values[0] is not None
                          else r.roots[0] if r.roots else None)
        rows.append(_row(f"{s.name} ({s.symbol}*)", s.unit, values))
    return rows
