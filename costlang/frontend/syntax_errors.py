"""Syntax errors in words: a Lark `UnexpectedInput` → a `CostSyntaxError` a person can act on.

Input: the exception Lark raised, the `Source` it was parsing and the parser (for its terminals).
Output: a `CostSyntaxError` whose message says what was found ("unexpected name 'B'"), and whose
hint says what could stand there in plain words ("',' or ')'") plus a likely fix (a missing comma,
an unclosed bracket or string). Also the error for expressions nested too deeply.
"""
from __future__ import annotations

import unicodedata
from typing import Iterable, Optional

from lark import Lark, Token
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken

from costlang.errors import CostSyntaxError, Source, Span

__all__ = ["syntax_error", "too_deep", "MAX_NESTING", "NESTING_RULES"]

#: operators and calls may nest this deep in one expression; deeper trees would exhaust Python's
#: recursion in the evaluator and printers, so they are refused with a message instead
MAX_NESTING = 100
NESTING_RULES = frozenset({"add", "sub", "mul", "div", "neg", "pow", "func"})

_WORDS = {
    "NAME": "a name", "NUMBER": "a number", "UNIT": "a unit such as GB or TFLOP/s",
    "STRING": "a quoted string", "_NL": "end of line", "$END": "end of file", "_POW": "'^'",
}
_OPERATORS = ("+", "-", "*", "/", "@", "^")
_COMPARISONS = ("<", "<=", ">", ">=")
_STATEMENT_KEYWORDS = frozenset({
    "import", "dim", "param", "dtype", "input", "weight", "output", "op", "hardware", "use", "let",
    "query", "measure", "fusion", "solve", "scenario", "compare", "block", "cache", "state", "return", "system",
    "shard", "parallel", "grad", "train", "explore", "pool"})
_ORDER = ("'", "a name", "a number", "a unit", "a quoted", "an operator", "a comparison",
          "a statement", "end of line", "end of file")
_CLOSERS = {"(": ")", "[": "]", "{": "}"}
_FOREIGN_SYMBOLS = "@$%&!?~|`.\\"


def syntax_error(e: UnexpectedInput, source: Source, parser: Lark) -> CostSyntaxError:
    """The error to report for one Lark parse failure."""
    words = _Words(parser)
    if isinstance(e, UnexpectedCharacters):
        return _bad_character(e, source, words)
    if isinstance(e, UnexpectedToken) and e.token.type != "$END":
        return _bad_token(e, source, words)
    lines = source.text.split("\n")
    line, column = len(lines), len(lines[-1]) + 1
    expected = getattr(e, "expected", None) or ()
    hint = _unclosed(source, len(source.text)) or (f"expected {words.expected(expected)}" if expected else None)
    return CostSyntaxError("the file ends in the middle of a statement",
                           Span(source, line, column, line, column + 1), hint)


def _bad_token(e: UnexpectedToken, source: Source, words: "_Words") -> CostSyntaxError:
    tok = e.token
    expected = e.accepts or e.expected
    if tok.type == "UNIT" and "UNIT" not in expected and str(tok).isidentifier():
        tok = Token("NAME", str(tok), tok.start_pos, tok.line, tok.column)  # `B` where no unit can be
    line, column = max(tok.line or e.line, 1), max(tok.column or e.column, 1)
    width = 1 if tok.type == "_NL" else max(1, len(str(tok)))
    span = Span(source, line, column, line, column + width)
    hint = f"expected {words.expected(expected)}"
    if tok.type == "_NL":
        unclosed = _unclosed(source, tok.start_pos)
        if unclosed:
            hint = unclosed
    elif tok.type in ("NAME", "NUMBER", "STRING", "UNIT", "LPAR"):
        if "COMMA" in expected:
            hint += f"; is a ',' missing before '{tok}'?"
        elif "STAR" in expected:
            hint += f"; to multiply, write '*' before '{tok}'"
    return CostSyntaxError(f"unexpected {words.found(tok)}", span, hint)


def _bad_character(e: UnexpectedCharacters, source: Source, words: "_Words") -> CostSyntaxError:
    line, column = max(e.line, 1), max(e.column, 1)
    char = source.text[e.pos_in_stream] if 0 <= e.pos_in_stream < len(source.text) else "?"
    span = Span(source, line, column, line, column + 1)
    if char == '"':
        return CostSyntaxError("this string is not closed on its line", span,
                               "a quoted string ends with '\"' on the line where it starts")
    hint = f"expected {words.expected(e.allowed)}" if e.allowed and len(e.allowed) <= 6 else None
    if char == "'":
        hint = "quoted strings use double quotes: \"...\""
    elif char in _FOREIGN_SYMBOLS:
        hint = f"costlang has no '{char}': its operators are + - * / @ ^ and comments start with #"
    elif unicodedata.category(char) in ("Zs", "Cf") or char == "\ufeff":
        hint = f"{unicodedata.name(char, 'an invisible character').lower()} is not a space costlang " \
               "accepts; replace it with an ordinary space"
    return CostSyntaxError(f"unexpected character {_show_char(char)}", span, hint)


def _show_char(char: str) -> str:
    if char.isprintable() and not unicodedata.category(char).startswith("Z"):
        return repr(char)
    return f"U+{ord(char):04X}"


def _unclosed(source: Source, upto: int) -> Optional[str]:
    """A hint naming the innermost bracket opened before `upto` and not closed, if any."""
    stack: list[tuple[str, int]] = []
    text, i = source.text, 0
    while i < min(upto, len(text)):
        ch = text[i]
        if ch == "#" or ch == '"':  # comments and strings hold no brackets
            end = text.find("\n" if ch == "#" else '"', i + 1)
            i = len(text) if end < 0 else (end if ch == "#" else end + 1)
            continue
        if ch in _CLOSERS:
            stack.append((ch, i))
        elif ch in _CLOSERS.values() and stack and _CLOSERS[stack[-1][0]] == ch:
            stack.pop()
        i += 1
    if not stack:
        return None
    ch, pos = stack[-1]
    line = text.count("\n", 0, pos) + 1
    column = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return f"the '{ch}' at line {line}, column {column} is never closed with '{_CLOSERS[ch]}'"


class _Words:
    """Terminal names of the grammar → the words an error message uses for them."""

    def __init__(self, parser: Lark):
        self.patterns = {t.name: t.pattern for t in parser.terminals}

    def word(self, terminal: str) -> str:
        if terminal in _WORDS:
            return _WORDS[terminal]
        pattern = self.patterns.get(terminal)
        if pattern is not None and pattern.type == "str":
            return f"'{pattern.value}'"
        return terminal.lower()

    def found(self, tok: Token) -> str:
        if tok.type == "_NL":
            return "end of line"
        kind = {"NAME": "name ", "NUMBER": "number ", "UNIT": "unit ", "STRING": "string "}.get(tok.type)
        if kind is None and str(tok).isalpha():
            kind = "keyword "
        quoted = str(tok) if tok.type == "STRING" else f"'{tok}'"
        return f"{kind or ''}{quoted}"

    def expected(self, terminals: Iterable[str]) -> str:
        words = {self.word(t) for t in terminals}
        statement_words = {w for w in words if w.strip("'") in _STATEMENT_KEYWORDS}
        if len(statement_words) >= 5:
            words -= statement_words | {"a name"}
            words.add("a statement (a keyword such as 'dim', 'input' or 'let', or a name)")
        words = _group(words, _OPERATORS, "an operator")
        words = _group(words, _COMPARISONS, "a comparison")
        return _or_list(sorted(words, key=_rank))


def _group(words: set, symbols: tuple, label: str) -> set:
    present = [s for s in symbols if f"'{s}'" in words]
    if len(present) < 3:
        return words
    return (words - {f"'{s}'" for s in present}) | {f"{label} ({' '.join(present)})"}


def _rank(word: str):
    position = next((i for i, prefix in enumerate(_ORDER) if word.startswith(prefix)), len(_ORDER))
    return position, word


def _or_list(words: list[str]) -> str:
    if len(words) <= 1:
        return "".join(words) or "nothing"
    return ", ".join(words[:-1]) + " or " + words[-1]


def too_deep(span: Span) -> CostSyntaxError:
    """The error for an expression nesting operators or calls deeper than `MAX_NESTING`, at the
    start of the outermost expression that is too deep (`frontend.reductions` finds it)."""
    return CostSyntaxError(f"this expression nests operators or calls more than {MAX_NESTING} deep",
                           span, "split it into named parts with `let`")
