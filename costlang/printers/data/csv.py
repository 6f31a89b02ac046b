"""CSV for spreadsheets: the kernels of `costlang run --csv`, the table of `costlang compare --csv` and
the configurations of `costlang explore --csv` (a sweep's points: `printers.data.sweep`).

Input: an `Analysis`, a what-if `Comparison` or an exploration. Output: CSV text (RFC 4180, via the csv module).
Numbers are machine-readable: an exact integer in full, any other bound value as the shortest
float that round-trips, in SI base units (FLOP, B, s, FLOP/B) named in the header; a value that
still depends on a free symbol is its expression; verdicts are their words. A cell a spreadsheet
would run as a formula (a label `=HYPERLINK(...)`, an expression `-N`) starts with `'`.

>>> from costlang import load_string
>>> a = load_string("use hardware chapter_gpu\\ndim N = 1000\\ninput x: fp16[N]\\ny = relu(x)").analyze()
>>> print(run_csv(a).splitlines()[1])
y,relu,1,1000,4000,0.25,500,1e-12,2e-09,2e-09,memory-bound
"""
from __future__ import annotations

import csv
import io

import sympy

from costlang.analysis.bounds import Verdict
from costlang.printers.safe import spreadsheet_safe, terminal_safe
from costlang.printers.words.comparisons import settings_words
from costlang.printers.words.verdicts import bound_text

__all__ = ["run_csv", "comparison_csv", "exploration_csv", "csv_number"]

RUN_HEADER = ("kernel", "ops", "count", "FLOP", "B", "I (FLOP/B)", "I* (FLOP/B)", "T_compute (s)",
              "T_memory (s)", "T_kernel (s)", "bound")


def csv_number(value) -> str:
    """An exact integer in full, another number as its shortest round-tripping float, else the text."""
    if isinstance(value, (int, sympy.Integer)):
        return str(int(value))
    if isinstance(value, sympy.Basic) and value.is_number and value.is_finite:
        return repr(float(sympy.N(value, 17)))
    return str(value)


def _write(rows) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    for row in rows:
        writer.writerow([spreadsheet_safe(terminal_safe(str(c))) for c in row])
    return out.getvalue()


def run_csv(a) -> str:
    v = a.value
    rows = [RUN_HEADER]
    for k in a.kernels:
        rows.append((k.name, "+".join(k.op_names), csv_number(v(k.count)),
                     *(csv_number(v(e)) for e in (k.flops, k.bytes, k.intensity, k.critical_intensity,
                                                  k.t_compute, k.t_memory, k.t_kernel)),
                     bound_text(k.bound, k.level)))
    return _write(rows)


def _cell(value, unit) -> str:
    """A number in machine-readable form; a verdict in words (never its dataclass repr)."""
    if unit is not None:
        return csv_number(value)
    return bound_text(value) if isinstance(value, Verdict) else str(value)


def comparison_csv(c) -> str:
    rows = [("quantity", "unit", *c.scenarios), ("settings", "", *map(settings_words, c.settings)),
            ("hardware", "", *c.hardware)]
    for row in c.rows:
        unit = "" if row.unit is None or row.unit.dimensionless else str(row.unit)
        rows.append((row.label, unit, *(_cell(x, row.unit) for x in row.values)))
    rows.append((f"speed-up vs {c.scenarios[0]}", "", *("" if s is None else csv_number(s) for s in c.speedups)))
    return _write(rows)


def exploration_csv(x) -> str:
    """Every configuration of an exploration: its structural settings, numeric values, objectives (SI
    base units, NaN where not evaluated), whether it is feasible and, if not, why."""
    from costlang.printers.text.explore import rejection_text
    s = x.search
    names = [c.name for c in s.choices]
    symbols = _symbols(x)
    rows = [["structure", *names, *symbols, *(o.text for o in s.objectives), "feasible", "rejected by"]]
    for c in x.configs():
        values = dict(c.values)
        rows.append([c.structure, *(v for _, v in c.settings),
                     *(repr(values[n]) if n in values else "" for n in symbols),
                     *(repr(v) for v in c.objectives), "yes" if c.feasible else "no",
                     "" if c.reason is None else rejection_text(c.reason)])
    return _write(rows)


def _symbols(x) -> list:
    for r in x.results:
        if r.status == "ok":
            return list(r.symbols)
    return []
