"""Measured kernel times from a profiler's CSV export, as `measure` facts of a program.

Input: the text of one CSV file in one of three shapes, told apart by its header:
- Nsight Systems' kernel summary (`nsys stats --report cuda_gpu_kern_sum --format csv`): `Name`,
  `Instances` and `Avg (ns)` columns (the mean over the kernel's instances);
- Nsight Compute (`ncu --csv --metrics gpu__time_duration.sum ...`): `Kernel Name`, `Metric Name`,
  `Metric Unit`, `Metric Value`; the rows of `gpu__time_duration.sum`, averaged per kernel name;
- a plain table: `kernel` and `time_s` (seconds), one row per kernel of the .cost file.
and the matches `KERNEL=TEXT` (a costlang kernel, and text found in the profiler's kernel names).
Output: data only: `ProfiledTime`s (profiler name, mean seconds, instances, the row's span) and,
for a program, the `Measurement`s they make: a costlang kernel takes the rows whose name contains
its match (or equals its own name, with no match), their instances weighted together. Numbers are
read exactly (decimal text → Fraction → sympy Rational; nothing is evaluated).
"""
from __future__ import annotations

import csv
from dataclasses import dataclass
from fractions import Fraction

import sympy

from costlang.errors import SemanticError, Source, Span
from costlang.ir.program import Measurement

__all__ = ["ProfiledTime", "read_profile", "measurements"]

_NCU_UNITS = {"nsecond": Fraction(1, 10**9), "ns": Fraction(1, 10**9), "usecond": Fraction(1, 10**6),
              "us": Fraction(1, 10**6), "msecond": Fraction(1, 1000), "ms": Fraction(1, 1000),
              "second": Fraction(1), "s": Fraction(1)}


@dataclass(frozen=True)
class ProfiledTime:
    name: str
    seconds: Fraction       # mean time of one instance
    instances: int
    span: Span


def _span(src: Source, line: int, text: str) -> Span:
    return Span(src, line, 1, line, max(len(text), 1) + 1)


def _number(text: str, src: Source, line: int, raw: str, what: str) -> Fraction:
    try:
        value = Fraction(text.replace(",", "").strip())
    except (ValueError, ZeroDivisionError):
        raise SemanticError(f"cannot read the {what} {text!r} as a number", _span(src, line, raw)) from None
    if value < 0:
        raise SemanticError(f"the {what} cannot be negative, not {text}", _span(src, line, raw))
    return value


def read_profile(text: str, path: str) -> list[ProfiledTime]:
    src = Source(path, text)
    lines = text.split("\n")
    # profilers print notes before the table (`==PROF==`, `Processing [...]`): the table starts at
    # the first line that parses as a known header
    for start, first in enumerate(lines):
        header = next(csv.reader([first]), [])
        header = [h.strip() for h in header]
        if {"Name", "Avg (ns)"} <= set(header) or {"Kernel Name", "Metric Name", "Metric Value"} <= set(header) \
                or {"kernel", "time_s"} <= set(header):
            break
    else:
        raise SemanticError("not a profile this reads: no header of an Nsight Systems kernel summary (Name, "
                            "Avg (ns)), an Nsight Compute export (Kernel Name, Metric Name, Metric Unit, "
                            "Metric Value) or a table (kernel, time_s)", _span(src, 1, lines[0] if lines else ""),
                            "nsys stats --report cuda_gpu_kern_sum --format csv, or ncu --csv --metrics "
                            "gpu__time_duration.sum")
    rows = [(start + 1 + i, ln) for i, ln in enumerate(lines[start + 1:], 1) if ln.strip()]
    records = [(n, ln, dict(zip(header, (v.strip() for v in row))))
               for (n, ln), row in zip(rows, csv.reader([ln for _, ln in rows]))]
    out: list[ProfiledTime] = []
    if "Avg (ns)" in header:
        for n, ln, r in records:
            count = int(_number(r.get("Instances", "1") or "1", src, n, ln, "instance count"))
            out.append(ProfiledTime(r["Name"], _number(r["Avg (ns)"], src, n, ln, "time") / 10**9, max(count, 1),
                                    _span(src, n, ln)))
    elif "Metric Name" in header:
        sums: dict = {}
        for n, ln, r in records:
            if r.get("Metric Name") != "gpu__time_duration.sum":
                continue
            unit = _NCU_UNITS.get(r.get("Metric Unit", "").strip())
            if unit is None:
                raise SemanticError(f"unknown time unit {r.get('Metric Unit')!r}", _span(src, n, ln),
                                    "ncu writes nsecond, usecond, msecond or second")
            total, count, span = sums.get(r["Kernel Name"], (Fraction(0), 0, _span(src, n, ln)))
            sums[r["Kernel Name"]] = (total + _number(r["Metric Value"], src, n, ln, "time") * unit, count + 1, span)
        out = [ProfiledTime(name, total / count, count, span) for name, (total, count, span) in sums.items()]
    else:
        for n, ln, r in records:
            out.append(ProfiledTime(r["kernel"], _number(r["time_s"], src, n, ln, "time"), 1, _span(src, n, ln)))
    if not out:
        raise SemanticError("the profile has no kernel times", _span(src, start + 1, lines[start]))
    return out


def measurements(program, profile: list[ProfiledTime], matches: dict[str, tuple[str, Span]]) -> dict:
    """`measure` facts for the program's kernels: node → Measurement. A kernel named in `matches`
    takes the profile's rows whose name contains the match text; any other kernel, the rows named
    exactly like it. Rows of one kernel are averaged, weighted by their instances."""
    out = {}
    for kernel, (text, span) in matches.items():
        if kernel not in program.nodes:
            from costlang.errors import CostNameError, did_you_mean
            raise CostNameError(f"'{kernel}' is not a kernel of the file", span,
                                did_you_mean(kernel, program.nodes))
    names = set(matches) | {p.name for p in profile if p.name in program.nodes}
    for kernel in sorted(names):
        text = matches.get(kernel, (None,))[0]
        rows = [p for p in profile if (text in p.name if text is not None else p.name == kernel)]
        if not rows:
            raise SemanticError(f"no kernel of the profile matches {text!r} (for '{kernel}')", matches[kernel][1],
                                "the profile's kernels: " + ", ".join(sorted({p.name for p in profile})[:8]))
        count = sum(p.instances for p in rows)
        mean = sum(p.seconds * p.instances for p in rows) / count
        out[kernel] = Measurement(kernel, sympy.Rational(mean.numerator, mean.denominator), None, rows[0].span)
    return out
