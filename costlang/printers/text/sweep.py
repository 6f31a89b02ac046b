"""A sweep as aligned text columns, without sympy.

Input: a `Sweep` (queries.tabulate) and its crossings already in words: a crossing's value is
exact, so `printers.text.whatif.crossing_lines` words it first; a sweep read back
from its compiled plan (`cli.whatif.cached_sweep`) prints through it with the words its plan kept.
"""
from __future__ import annotations

from costlang.printers.floats import float_cell, float_text
from costlang.printers.words.marks import mark_text

__all__ = ["table_text"]


def table_text(sw, crossings: list[str]) -> str:
    """The sweep as aligned columns, marks at the end of their rows, then the crossings' lines."""
    header = [*sw.symbols, *sw.labels]
    units = sw.units or (None,) * len(sw.columns)
    rows = [[*[float_text(v) for v in point], *[float_cell(col[i], u) for col, u in zip(sw.columns, units)]]
            + ([mark_text(mark)] if mark else []) for i, (point, mark) in enumerate(zip(sw.points, sw.marks))]
    widths = [max(len(r[i]) for r in rows + [header] if i < len(r)) for i in range(len(header))]
    fmt = lambda r: "  ".join(c.ljust(w) for c, w in zip(r, widths + [0])).rstrip()  # noqa: E731
    lines = [fmt(header), fmt(["-" * w for w in widths])] + [fmt(r) for r in rows]
    return "\n".join(lines + list(crossings)) + "\n"
