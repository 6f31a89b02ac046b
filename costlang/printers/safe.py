"""Text that is safe to show on a terminal or write to a file: no control characters from user input.

Input: text from a `.cost` file (labels, import strings, file names). Output: the same text,
inert where it is shown.

Terminals. Labels, import strings and names come from `.cost` files; written raw, an escape sequence in them
would drive the terminal (colours, cursor moves, OSC 52 clipboard writes), a NUL would cut the
text short and a right-to-left override would show text in another order than it is read. Every
such character becomes a visible `\\uXXXX` escape, which is also a valid escape inside a JSON
string, so JSON output stays valid (and its strings decode to the original text). Line ends and
tabs are kept.

>>> terminal_safe("a\\x1b]52;c;aGk=\\x07b\\u202ec\\x00\\n")
'a\\\\u001b]52;c;aGk=\\\\u0007b\\\\u202ec\\\\u0000\\n'

Markup. In LaTeX (`latex_text`) every character TeX treats specially becomes a command that prints
it, so `\\input{...}`, `\\write18`, `^^5c` (TeX's way of writing a backslash) and unbalanced braces
are only letters; the same commands work inside KaTeX's `\\text{}`. In Markdown, text
(`markdown_text`) has its punctuation backslash-escaped, so `<script>`, `$x$`, `*` and `[a](b)` are
shown as written, and a code span (`markdown_code`) is fenced by more backticks than it holds.

Spreadsheets. A CSV cell that starts with `=`, `+`, `-` or `@` is a formula to a spreadsheet
(`=HYPERLINK(...)`, `=cmd|...`); `spreadsheet_safe` quotes such a cell with a leading `'`, unless
it is a number (`-1.5` stays a number).
"""
from __future__ import annotations

import re

__all__ = ["terminal_safe", "Safe", "UNSAFE", "latex_text", "markdown_text", "markdown_code", "spreadsheet_safe"]

#: C0 controls but tab and newline, DEL, C1 controls, and the invisible direction marks and overrides
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


class Safe(str):
    """Text made safe where it was built (numbers, and words passed through `terminal_safe`):
    `terminal_safe` returns it as it is, without scanning it again (a million-row CSV)."""
    __slots__ = ()


def terminal_safe(text: str) -> str:
    """`text` with every unsafe character written as `\\uXXXX`."""
    if isinstance(text, Safe):
        return text
    return UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


#: TeX's special characters (and those the OT1 font encoding prints as other glyphs) as commands
#: that print them, in LaTeX text mode and in KaTeX's `\\text{}` alike
LATEX_TEXT = {"\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "$": r"\$", "%": r"\%", "&": r"\&",
              "#": r"\#", "_": r"\_", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
              "<": r"\textless{}", ">": r"\textgreater{}", "|": r"\textbar{}"}
#: the punctuation that can start markup in Markdown (and in the math of KaTeX, MathJax, GitHub)
_MARKDOWN = re.compile(r"([\\`*_\[\]<>#+\-!|$~&])")


def latex_text(text: str) -> str:
    r"""`text` for LaTeX text mode: nothing in it is a command, a group or math.

    >>> print(latex_text(r"\input{x} ^^5c $a$ 50%"))
    \textbackslash{}input\{x\} \textasciicircum{}\textasciicircum{}5c \$a\$ 50\%
    """
    return "".join(LATEX_TEXT.get(c, c) for c in _lines(text))


def markdown_text(text: str) -> str:
    r"""`text` for Markdown prose: no tag, link, emphasis, math or entity can start in it.

    >>> print(markdown_text("<script>alert(1)</script> $x$ *a*"))
    \<script\>alert(1)\</script\> \$x\$ \*a\*
    """
    return _MARKDOWN.sub(r"\\\1", _lines(text))


def markdown_code(text: str) -> str:
    """`text` as a Markdown code span: fenced by one backtick more than its longest run of them, and
    padded with a space where it starts or ends with one (CommonMark strips one space each side).

    >>> print(markdown_code("x"), markdown_code("a`b"), markdown_code("`"))
    `x` ``a`b`` `` ` ``
    """
    text = _lines(text)
    fence = "`" * (max((len(run) for run in re.findall("`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _lines(text: str) -> str:
    """One line: a line break inside a label would end a heading, a list item or a paragraph."""
    return re.sub(r"[\r\n]+", " ", text)


_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def spreadsheet_safe(cell: str) -> str:
    """A CSV cell a spreadsheet shows as text, never runs as a formula.

    >>> spreadsheet_safe("=HYPERLINK(\\"x\\")"), spreadsheet_safe("-1.5e-09"), spreadsheet_safe("-N + 4")
    ('\\'=HYPERLINK("x")', '-1.5e-09', "'-N + 4")
    """
    if cell[:1] in ("=", "+", "-", "@", "\t", "\r") and not _NUMBER.fullmatch(cell):
        return "'" + cell
    return cell
