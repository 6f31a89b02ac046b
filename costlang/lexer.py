"""A Pygments lexer for `.cost` files, so Sphinx, MkDocs and Jupyter highlight ```cost blocks.

Input: the text of a `.cost` file. Output: Pygments tokens. Registered through the
`pygments.lexers` entry point in pyproject.toml (`costlang = "costlang.lexer:CostLexer"`); it
follows grammar/costlang.lark: keywords, unit literals, numbers, strings, comments, operators.
"""
from __future__ import annotations

from pygments.lexer import RegexLexer, bygroups, words
from pygments.token import Comment, Keyword, Name, Number, Operator, Punctuation, String, Text, Whitespace

__all__ = ["CostLexer"]

KEYWORDS = ("import", "dim", "param", "dtype", "input", "weight", "output", "op", "hardware", "use",
            "let", "query", "measure", "fusion", "peak", "memory", "as")
_UNIT = r"(?:(?:[kMGTPE]i?)?(?:FLOP|B)(?:/s)?|(?:m|u|µ|n)?s)(?![A-Za-z0-9_])"
_NUMBER = r"(?:\d+(?:_\d+)*(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"


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
            (r"\*\*|->|[-+*/^=]", Operator),
            (r"[()\[\]{},:;]", Punctuation),
            (r".", Text),
        ],
    }
