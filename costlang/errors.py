"""Errors: every problem costlang reports about a `.cost` file, with the span it points at.

Input: a message, a `Span` and an optional hint. Output: text in the form
``file:line:col: error: sentence``, the source line, a caret under the span, and the hint.
All user-facing failures are `CostlangError`s; the CLI prints them and exits with status 2.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Iterable, Optional

__all__ = [
    "Source", "Span", "CostlangError", "CostSyntaxError", "CostNameError", "ShapeError", "UnitError",
    "SemanticError", "SolveError", "CostImportError", "BudgetError", "ErrorGroup", "did_you_mean",
]


@dataclass(frozen=True)
class Source:
    """The text of one file, kept so that errors can quote its lines."""
    name: str
    text: str

    def line(self, number: int) -> str:
        lines = self.text.splitlines()
        return lines[number - 1] if 1 <= number <= len(lines) else ""


@dataclass(frozen=True)
class Span:
    """A region of a source: 1-based line and column; the end column is exclusive."""
    source: Source = field(compare=False, repr=False)
    line: int
    column: int
    end_line: int
    end_column: int

    @property
    def file(self) -> str:
        return self.source.name

    def __str__(self) -> str:
        return f"{self.source.name}:{self.line}:{self.column}"


class CostlangError(Exception):
    """Base of all errors about a `.cost` file. `kind` names the family in messages and JSON."""
    kind = "error"

    def __init__(self, message: str, span: Optional[Span] = None, hint: Optional[str] = None):
        super().__init__(message)
        self.message = message
        self.span = span
        self.hint = hint

    def render(self) -> str:
        where = f"{self.span}: " if self.span else ""
        out = [f"{where}error: {self.message}"]
        if self.span:
            out.extend(_quote(self.span))
        if self.hint:
            out.append(f"  = hint: {self.hint}")
        return "\n".join(out)

    def __str__(self) -> str:
        return self.render()


def _quote(span: Span) -> list[str]:
    text = span.source.line(span.line)
    if not text and span.line > len(span.source.text.splitlines()):
        return []
    gutter = str(span.line)
    pad = " " * len(gutter)
    end = span.end_column if span.end_line == span.line else len(text) + 1
    width = max(1, end - span.column)
    prefix = "".join(ch if ch == "\t" else " " for ch in text[: span.column - 1])
    return [f" {gutter} | {text}", f" {pad} | {prefix}{'^' * width}"]


class CostSyntaxError(CostlangError):
    kind = "syntax"


class CostNameError(CostlangError):
    kind = "name"


class ShapeError(CostlangError):
    kind = "shape"


class UnitError(CostlangError):
    kind = "unit"


class SemanticError(CostlangError):
    kind = "semantic"


class SolveError(CostlangError):
    kind = "solve"


class CostImportError(CostlangError):
    kind = "import"


class BudgetError(CostlangError):
    """A computation (sympy simplify, solve, ...) did not finish within its time budget."""
    kind = "budget"


class ErrorGroup(CostlangError):
    """Several errors of one file, reported together in source order."""

    def __init__(self, errors: Iterable[CostlangError]):
        self.errors = sorted(errors, key=_position)
        super().__init__(self.errors[0].message, self.errors[0].span, self.errors[0].hint)

    def render(self) -> str:
        return "\n".join(e.render() for e in self.errors)


def _position(error: CostlangError):
    s = error.span
    return (s.file, s.line, s.column) if s else ("", 0, 0)


def did_you_mean(name: str, candidates: Iterable[str]) -> Optional[str]:
    """A hint naming the closest known spelling, or None."""
    close = difflib.get_close_matches(name, sorted(set(candidates)), n=1, cutoff=0.6)
    return f"did you mean '{close[0]}'?" if close else None
