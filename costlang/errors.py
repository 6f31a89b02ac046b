"""Errors: every problem costlang reports about a `.cost` file, with the span it points at.

Input: a message, a `Span` and an optional hint. Output: text in the form
``file:line:col: error: sentence``, the source line, a caret under the span, and the hint.
All user-facing failures are `CostlangError`s; the CLI prints them and exits with status 2.
"""
from __future__ import annotations

import difflib
import heapq
import unicodedata
from dataclasses import dataclass, field
from typing import Iterable, Optional

__all__ = [
    "Source", "Span", "CostlangError", "CostSyntaxError", "CostNameError", "ShapeError", "UnitError",
    "SemanticError", "SolveError", "CostImportError", "BudgetError", "ErrorGroup", "did_you_mean", "hardware_hint",
    "too_large",
]


def too_large(e: BaseException) -> Optional[tuple[str, str]]:
    """(message, hint) when an exception says the values given are too large to work with exactly
    (sympy's evalf out of precision placing a floor or ceil; Python's 4,300-digit limit on writing an
    integer): bad input, not a bug. None for any other exception. The command line and the
    playground say the same."""
    if type(e).__name__ == "PrecisionExhausted":
        return ("the values given are too large to compare exactly (sympy ran out of precision)",
                "give the dims and params smaller values")
    if isinstance(e, ValueError) and "integer string conversion" in str(e):
        return ("the values given make an exact number of over 4,300 digits, too long to write out",
                "give the dims and params smaller values")
    return None


@dataclass(frozen=True)
class Source:
    """The text of one file, kept so that errors can quote its lines."""
    name: str
    text: str

    def line(self, number: int) -> str:
        """Line `number` (1-based) without its end; lines end at "\n" only, as the lexer counts them."""
        lines = self.text.split("\n")
        return lines[number - 1].rstrip("\r") if 1 <= number <= len(lines) else ""

    @property
    def line_count(self) -> int:
        return self.text.count("\n") + 1


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

    @property
    def text(self) -> str:
        """The source text under the span (its first line only, for a span over several lines)."""
        line = self.source.line(self.line)
        end = self.end_column if self.end_line == self.line else len(line) + 1
        return line[self.column - 1: end - 1]


class CostlangError(Exception):
    """Base of all errors about a `.cost` file. `kind` names the family in messages and JSON."""
    kind = "error"

    def __init__(self, message: str, span: Optional[Span] = None, hint: Optional[str] = None):
        super().__init__(message)
        self.message = message
        self.span = span
        self.hint = hint

    @property
    def hint(self) -> Optional[str]:
        """The hint; one given as a function (a did-you-mean search over thousands of names) is
        computed when first read, so errors that are never shown cost nothing."""
        if callable(self._hint):
            self._hint = self._hint()
        return self._hint

    @hint.setter
    def hint(self, value) -> None:
        self._hint = value

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


QUOTE_WIDTH = 100  # longer source lines are quoted as a window around the span


def _quote(span: Span) -> list[str]:
    """The source line and a caret line under the span (control characters shown as '?')."""
    if not span.source.text or not 1 <= span.line <= span.source.line_count:
        return []  # nothing to quote (e.g. a file that could not be read)
    text = "".join(ch if ch == "\t" or ch.isprintable() else "?" for ch in span.source.line(span.line))
    start = min(max(span.column, 1), len(text) + 1)
    end = span.end_column if span.end_line == span.line else len(text) + 1
    text, start, width = _window(text, start, max(1, min(end, len(text) + 1) - start))
    gutter = str(span.line)
    prefix = "".join(ch if ch == "\t" else " " * _columns(ch) for ch in text[: start - 1])
    carets = sum(_columns(ch) for ch in text[start - 1: start - 1 + width]) or 1
    return [f" {gutter} | {text}", f" {' ' * len(gutter)} | {prefix}{'^' * max(carets, 1)}"]


def _columns(ch: str) -> int:
    """Terminal columns a character takes: 2 for wide ones (Hangul, CJK), 0 for combining marks."""
    if unicodedata.combining(ch):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in "WF" else 1


def _window(text: str, start: int, width: int) -> tuple[str, int, int]:
    """A long line cut to `QUOTE_WIDTH` characters around the span, with '…' where it was cut."""
    if len(text) <= QUOTE_WIDTH:
        return text, start, width
    left = max(0, min(start - 1 - QUOTE_WIDTH // 4, len(text) - QUOTE_WIDTH))
    head = "…" if left else ""
    tail = "…" if left + QUOTE_WIDTH < len(text) else ""
    width = max(1, min(width, left + QUOTE_WIDTH - (start - 1)))
    return head + text[left: left + QUOTE_WIDTH] + tail, start - left + len(head), width


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

    #: a file with very many errors shows the first ones: the rest are usually their echoes
    MAX_RENDERED = 50

    def __init__(self, errors: Iterable[CostlangError]):
        unique = list({(str(e.span), e.message): e for e in errors}.values())
        files: dict[str, int] = {}  # files in the order their first error was found
        self.errors = sorted(unique, key=lambda e: _position(e, files))
        first = self.errors[0]
        super().__init__(first.message, first.span, lambda: first.hint)

    def render(self) -> str:
        shown = [e.render() for e in self.errors[: self.MAX_RENDERED]]
        hidden = len(self.errors) - len(shown)
        if hidden:
            shown.append(f"... and {hidden} more error{'s' * (hidden > 1)}")
        return "\n".join(shown)


_UNPLACED = 1 << 30  # errors without a place come after all the placed ones


def _position(error: CostlangError, files: dict):
    s = error.span
    if s is None:
        return (_UNPLACED, 0, 0)
    return (files.setdefault(s.file, len(files)), s.line, s.column)


_FULL_SEARCH = 50  # candidates compared in full; more are first ranked by difflib's quick bound


def hardware_hint(name: str, hardware: Iterable[str], systems: Iterable[str] = ()) -> Optional[str]:
    """A hint for an unknown chip name: a system of that name says so; otherwise every preset of the
    same name in another case or of the same family (`h100` → h100_sxm, h100_pcie; `H100_SXM` →
    h100_sxm; `h200_sxm` → h200), all listed; else the closest spelling."""
    pool, systems = sorted(set(hardware)), set(systems)
    if name in systems:
        return f"'{name}' is a system (several chips on a mesh): select it with `use system {name}`"
    low = name.lower()
    family = low.split("_")[0]
    found = [c for c in pool if c.lower() == low]
    found = found or [c for c in pool if c.lower().startswith(low) or (len(family) >= 3 and c.lower().split("_")[0] == family)]
    if found:
        return ("did you mean " + " or ".join(f"'{c}'" for c in found[:6]) + "?"
                + (f" ({len(found) - 6} more: `costlang hardware` lists them)" if len(found) > 6 else ""))
    return did_you_mean(name, pool)


def did_you_mean(name: str, candidates: Iterable[str]) -> Optional[str]:
    """A hint naming the closest known spelling, or None."""
    pool = sorted(set(candidates))
    if len(pool) > _FULL_SEARCH:  # thousands of similar names: rank by the cheap bound first
        matcher = difflib.SequenceMatcher()
        matcher.set_seq2(name)
        ranked = []
        for c in pool:
            matcher.set_seq1(c)
            if matcher.real_quick_ratio() >= 0.6 and matcher.quick_ratio() >= 0.6:
                ranked.append((matcher.quick_ratio(), c))
        pool = sorted(c for _, c in heapq.nlargest(_FULL_SEARCH, ranked))
    close = difflib.get_close_matches(name, pool, n=1, cutoff=0.6)
    return f"did you mean '{close[0]}'?" if close else None
