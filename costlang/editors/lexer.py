"""A Pygments lexer for `.cost` files, so Sphinx, MkDocs and Jupyter highlight ```cost blocks.

Input: the text of a `.cost` file. Output: Pygments tokens. Registered through the
`pygments.lexers` entry point in pyproject.toml (`costlang = "costlang.editors.lexer:CostLexer"`); it
follows grammar/costlang.lark: keywords (read off the grammar itself), unit literals, numbers, strings, comments, operators.
"""
from __future__ import annotations

from pygments.lexer import RegexLexer, bygroups, words
from pygments.token import Comment, Keyword, Name, Number, Operator, Punctuation, String, Text, Whitespace

from costlang.frontend.keywords import NUMBER_PATTERN, OPERATOR_PATTERN, UNIT_PATTERN, grammar_keywords

__all__ = ["CostLexer"]

KEYWORDS = grammar_keywords()  # every quoted word of grammar/costlang.lark
_UNIT, _NUMBER = UNIT_PATTERN, NUMBER_PATTERN


class CostLexer(RegexLexer):
    name = "costlang"
    aliases = ["cost", "costlang"]
    filenames = ["*.cost"]
    mimetypes = ["text/x-costlang"]

    tokens = {
        "root": [
            (r"[ \t\f]+", Whitespace),
            (r"\\\r?\n", Whitespace),
            (r"\r?\n", Whitespace),
            (r"#[^\n]*", Comment.Single),
            (r'"[^"\n]*"', String.Double),
            (words(KEYWORDS, suffix=r"\b"), Keyword),
            (rf"({_NUMBER})(\s*)({_UNIT})", bygroups(Number, Whitespace, Keyword.Type)),
            (_NUMBER, Number),
            (r"[A-Za-z_][A-Za-z0-9_]*(?=\s*\()", Name.Function),
            (r"[A-Za-z_][A-Za-z0-9_]*", Name),
            (OPERATOR_PATTERN, Operator),
            (r"[()\[\]{},:;.]", Punctuation),
            (r".", Text),
        ],
    }
