"""The language's keywords, read off the grammar: one list for every editor integration.

Input: `grammar/costlang.lark`. Output: the sorted words that appear there as quoted literals
(`"solve"`, `"for"`, ...). The Pygments lexer and the TextMate grammar are both built from this
list, so neither can miss a keyword the grammar gains.

>>> {"use", "solve", "for", "scenario", "compare", "regimes"} <= set(grammar_keywords())
True
"""
from __future__ import annotations

import functools
import re

from costlang import _resources

__all__ = ["grammar_keywords", "UNIT_PATTERN", "NUMBER_PATTERN", "OPERATOR_PATTERN"]

#: the grammar's UNIT and NUMBER terminals, as editors' regular expressions
UNIT_PATTERN = r"(?:(?:[kMGTPE]i?)?(?:FLOP|B)(?:/s)?|(?:m|u|µ|n)?s)(?![A-Za-z0-9_])"
NUMBER_PATTERN = r"(?:\d+(?:_\d+)*(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
OPERATOR_PATTERN = r"\*\*|->|<=|>=|[-+*/^=<>@]"

_LITERAL = re.compile(r'"([A-Za-z_][A-Za-z0-9_]*)"')


@functools.lru_cache(maxsize=1)
def grammar_keywords() -> tuple[str, ...]:
    text = _resources.grammar_file().read_text(encoding="utf-8")
    code = "\n".join(line.split("//", 1)[0] for line in text.splitlines())  # comments are not grammar
    return tuple(sorted(set(_LITERAL.findall(code))))
