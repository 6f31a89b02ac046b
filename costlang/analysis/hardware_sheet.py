"""Hardware sheets: every figure of a hardware description with the source its comment names.

Input: a resolved `Program` and a hardware name. Output: `HardwareSheet`, data only. The sources
are the comments of the `.cost` text itself (the stdlib convention: a block of comments right above
`hardware NAME { ... }` names the datasheets, e.g. `# [DS] NVIDIA H100 datasheet (2023), URL`, and
each figure's line ends with a comment saying which source, and whether the figure is dense or
sparse, matrix or vector, boost or base clock). A figure without a comment is reported as such.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import sympy

from costlang.errors import Span
from costlang.ir.program import Hardware, Program

__all__ = ["Figure", "Definition", "HardwareSheet", "hardware_sheet", "describe", "preset_names"]

@dataclass(frozen=True)
class Figure:
    """One line of a hardware definition: its statement as written and its trailing comment."""
    text: str    # "" for a comment-only line inside the definition
    note: str    # the comment without '#', "" when the line has none
    line: int


@dataclass(frozen=True)
class Definition:
    """One `hardware` statement of the chain (the hardware itself, then the base it extends, ...)."""
    name: str
    base: Optional[str]
    file: str
    line: int
    header: tuple[str, ...]      # the comment block right above the statement
    figures: tuple[Figure, ...]


@dataclass(frozen=True)
class HardwareSheet:
    hardware: Hardware
    chain: tuple[Definition, ...]
    #: (dtype, I* = peak / bandwidth of the main memory level) for each peak
    critical_intensities: tuple[tuple[str, sympy.Expr], ...]


def preset_names(program: Program) -> list[str]:
    """The hardware the program knows, in definition order."""
    return list(program.hardware)


def hardware_sheet(program: Program, name: str) -> HardwareSheet:
    hw = program.hardware[name]
    chain, seen = [], set()
    current: Optional[Hardware] = hw
    while current is not None and current.name not in seen:
        seen.add(current.name)
        chain.append(_definition(current))
        current = program.hardware.get(current.base) if current.base else None
    bw = hw.bandwidth
    return HardwareSheet(hw, tuple(chain), tuple((d, p / bw) for d, p in hw.peaks))


def describe(program: Program, name: str) -> str:
    """A one-line description: the first line of the comment block above the definition."""
    hw = program.hardware[name]
    header = _definition(hw).header if hw.span is not None else ()
    return header[0] if header else ""


def _definition(hw: Hardware) -> Definition:
    span = hw.span
    if span is None:
        return Definition(hw.name, hw.base, "", 0, (), ())
    figures = []
    for number in range(span.line, span.end_line + 1):
        text = span.source.line(number)
        if number == span.end_line:  # the statement's closing brace ends the span
            text = text[:span.end_column - 2] + text[span.end_column - 1:]
        code, note = _split(text)
        if number == span.line:  # `hardware NAME [: BASE] {` (the parser checked it) ends at the first brace
            code = code.partition("{")[2]
        code = code.strip().strip(";").strip()
        if code or note:
            figures.append(Figure(code, note, number))
    return Definition(hw.name, hw.base, span.file, span.line, _header(span), tuple(figures))


def _split(line: str) -> tuple[str, str]:
    """Code and comment of a line (hardware statements hold no strings, so '#' starts the comment)."""
    code, hash_, note = line.partition("#")
    return code, note.strip() if hash_ else ""


def _header(span: Span) -> tuple[str, ...]:
    lines = []
    number = span.line - 1
    while number >= 1:
        text = span.source.line(number).strip()
        if not text.startswith("#"):
            break
        lines.append(text.lstrip("#").strip())
        number -= 1
    return tuple(reversed(lines))
