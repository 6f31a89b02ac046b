"""A sweep as CSV and as JSON-ready data, without sympy.

Input: a `Sweep` (queries.tabulate) and, for JSON, its crossings as numbers (their values are
exact: `printers.data.whatif.crossing_dict` makes them; a sweep read back from
its compiled plan, `cli.whatif.cached_sweep`, passes those its plan kept). Output: text or data.

CSV: a header row, then one row per point with the symbols' values and each column as the
shortest float that reads back (`repr`), in SI base units, and a last cell with the row's marks;
a sweep of `COMPILED_FROM` points or more is written by polars where it is installed.
"""
from __future__ import annotations

import csv
import io
import json
from typing import Optional

from costlang.printers.safe import Safe, spreadsheet_safe, terminal_safe
from costlang.printers.words.marks import mark_text

__all__ = ["csv_text", "json_data", "json_text", "COMPILED_FROM"]


def json_data(sw, crossings: list[dict]) -> dict:
    """The sweep as JSON-ready data: floats in SI base units, marks per row, the crossings given."""
    return {"symbols": list(sw.symbols), "labels": list(sw.labels), "units": [str(u) for u in sw.units],
            "points": [[float(v) for v in p] for p in sw.points],
            "columns": [[float(v) for v in col] for col in sw.columns],
            "marks": [[{"kernel": m.kernel, "bound": m.bound.value} for m in row] for row in sw.marks],
            "crossings": list(crossings)}


def json_text(sw, crossings: list) -> str:
    """`terminal_safe(dumps(json_data(sw, crossings)))` (printers.data.strict), the same text, with
    the grid's three blocks (points, columns, marks) written a column at a time: each distinct
    number's text made once, the rows joined as json.dumps indents them, and only the words made
    safe (10⁶ points in about a second, not ten)."""
    from costlang.printers.data.strict import json_safe
    data = json_data(_NoGrid(sw), crossings)
    grid = [_json_numbers(g) for g in sw.grid]
    blocks = {"points": _block([_row(texts) for texts in zip(*grid)]),
              "columns": _block(["    [\n      " + ",\n      ".join(_json_numbers(c)) + "\n    ]" for c in sw.columns]),
              "marks": _block([_marks_row(row) for row in sw.marks])}
    parts = [f"  {json.dumps(key)}: " + (blocks[key] if key in blocks else terminal_safe(
        json.dumps(json_safe(value), indent=2, ensure_ascii=False, allow_nan=False).replace("\n", "\n  ")))
             for key, value in data.items()]
    return Safe("{\n" + ",\n".join(parts) + "\n}\n")   # numbers, and words made safe: not scanned again


class _NoGrid:
    """A sweep seen without its grid (its blocks are written apart): what `json_data` reads of it."""

    def __init__(self, sw):
        self.symbols, self.labels, self.units = sw.symbols, sw.labels, sw.units
        self.points, self.columns, self.marks = (), (), ()


def _block(rows: list) -> str:
    """A list one level down the top object, its rows already indented: `[]` when empty."""
    return "[\n" + ",\n".join(rows) + "\n  ]" if rows else "[]"


def _row(texts) -> str:
    return "    [\n      " + ",\n      ".join(texts) + "\n    ]"


def _marks_row(marks) -> str:
    if not marks:
        return "    []"
    return "    [\n" + ",\n".join(
        f"      {{\n        \"kernel\": {terminal_safe(json.dumps(m.kernel, ensure_ascii=False))},\n"
        f"        \"bound\": {json.dumps(m.bound.value)}\n      }}" for m in marks) + "\n    ]"


#: how strict JSON writes a float that is no number (`strict.json_safe`)
_NOT_FINITE = {"nan": "null", "inf": '"inf"', "-inf": '"-inf"'}


def _json_numbers(column) -> list:
    """Each float of a column as JSON writes it (repr; NaN as null, ±inf as "inf" and "-inf")."""
    import numpy as np
    texts = _reprs(column)
    if not np.isfinite(np.asarray(column, dtype=float)).all():
        texts = [_NOT_FINITE.get(t, t) for t in texts]
    return texts


def csv_text(sw) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow([spreadsheet_safe(x) for x in (*sw.symbols, *sw.labels, "crossing")])  # labels come from the file
    columns = (*sw.grid, *sw.columns)
    marks = [(i, _mark_cell(m)) for i, m in enumerate(sw.marks) if m]
    if columns and len(columns[0]) >= COMPILED_FROM:
        body = _compiled_body(columns, [(i, terminal_safe(t)) for i, t in marks], getattr(sw, "shape", ()))
        if body is not None:   # numbers, and the words made safe here: not scanned again on output
            return Safe(terminal_safe(buf.getvalue()) + body)
    # Numbers need no quoting, so the rows are joined directly (the csv module is kept for the header and
    # the few rows that carry a crossing's words)
    cells = [_reprs(c) for c in columns]
    lines = list(map(",".join, zip(*cells))) if cells else []
    tails = ["," for _ in lines]
    for i, text in marks:
        tails[i] = "," + text
    return buf.getvalue() + "".join(f"{line}{tail}\n" for line, tail in zip(lines, tails))


def _mark_cell(mark) -> str:
    one = io.StringIO()
    csv.writer(one, lineterminator="").writerow([spreadsheet_safe(mark_text(mark))])
    return one.getvalue()


#: a sweep of at least this many points is written by polars where it is installed (the `fast` extra)
COMPILED_FROM = 65536


def _reprs(column) -> list:
    """repr of every float of a column (the shortest text that reads back as the same float), each
    distinct value formatted once: a grid's columns repeat a few values a million times."""
    import numpy as np  # only sweeps need numpy: `costlang run` never imports it
    values = np.asarray(column, dtype=float)
    distinct, index = np.unique(values, return_inverse=True)
    if len(distinct) * 4 > len(values):
        return list(map(repr, values.tolist()))
    texts = np.asarray(list(map(repr, distinct.tolist())), dtype=object)
    return texts[index.ravel()].tolist()


def _compiled_body(columns, marks, shape=()) -> Optional[str]:
    """The rows as `csv_text` writes them, a million in well under a second: polars writes the
    shortest digits that read back (as repr does) but spells two ranges otherwise (0.00001 for
    1e-05, 1.5e-7 for 1.5e-07, NaN for nan), so those cells are written by repr. A grid column
    (the first `len(shape)`, one per swept symbol) repeats its symbol's values: each is written
    once and gathered. None: no polars."""
    try:
        import polars
    except ImportError:
        return None
    import numpy as np

    def text(values):
        out = polars.Series(values).cast(polars.String)
        magnitude = np.abs(values)
        odd = np.flatnonzero(np.isnan(values) | ((magnitude < 1e-4) & (magnitude > 0)))
        return out.scatter(odd, [repr(v) for v in values[odd].tolist()]) if len(odd) else out

    series = []
    for k, column in enumerate(columns):
        values = np.asarray(column, dtype=float)
        if k < len(shape) and len(values) == int(np.prod(shape)):   # a meshgrid's column, raveled
            stride = int(np.prod(shape[k + 1:]))
            index = (np.arange(len(values)) // stride) % shape[k]
            series.append(text(values[::stride][:shape[k]]).gather(index))
        else:
            series.append(text(values))
    crossing = polars.repeat("", len(columns[0]), eager=True)
    if marks:
        crossing = crossing.scatter([i for i, _ in marks], [t for _, t in marks])
    frame = polars.DataFrame({str(i): s for i, s in enumerate([*series, crossing])})
    # every cell is text already (the marks quoted as CSV where they need it): written as it stands
    return frame.write_csv(None, include_header=False, quote_style="never", line_terminator="\n")
