"""The LaTeX derivation printer: analysis results → a LaTeX fragment or a standalone document.

Input: an `Analysis` (see `printers.derivation`). Output: LaTeX. The fragment is for `\\input`
into a document that loads `amsmath` (display math is `\\[ \\begin{aligned} ... \\end{aligned} \\]`);
Korean text needs `kotex` (or xeCJK) in that document. `standalone=True` wraps the fragment
in a compilable `article`: English with pdfLaTeX, XeLaTeX or LuaLaTeX; Korean loads `kotex`
(compile with XeLaTeX, or pdfLaTeX with ko.TeX's fonts).
"""
from __future__ import annotations

import re

from costlang.printers.derivation.printer import DerivationPrinter
from costlang.printers.safe import latex_text

__all__ = ["LatexDocPrinter", "breakable", "wrap_rows"]

#: display rows longer than this (in characters of visible math, roughly) are continued on a new row
ROW_WIDTH = 90
_COMMANDS = re.compile(r"\\(?:mathrm|mathtt|text|texttt|left|right|frac|cdot|quad|,)\b|[{}^_]")

# symbols that pdfLaTeX's utf8 input does not know (names and phrases use them): as math
_TEXT_SYMBOLS = {"→": r"\ensuremath{\to}", "−": "-", "∞": r"\ensuremath{\infty}", "≤": r"\ensuremath{\le}",
                 "≥": r"\ensuremath{\ge}", "≈": r"\ensuremath{\approx}", "≫": r"\ensuremath{\gg}"}
_SECTIONS = {1: "section", 2: "subsection", 3: "subsubsection"}
_CIRCLED = r"\textcircled{\scriptsize %d}"


def _width(tex: str) -> int:
    """About how many characters wide `tex` prints (commands and braces take no room)."""
    return len(_COMMANDS.sub("", tex).replace(" ", ""))


def breakable(tex: str) -> str:
    """Inline math TeX may break across lines: plain parentheses instead of `\\left(`…`\\right)`,
    whose group TeX can never break, so a long max(…) or sum wraps after a `+` or a relation.

    >>> breakable(r"\\max\\left(a, b + c\\right)")
    '\\\\max(a, b + c)'
    """
    for big, small in ((r"\left(", "("), (r"\right)", ")"), (r"\left[", "["), (r"\right]", "]")):
        tex = tex.replace(big, small)
    return tex


def _top_level_splits(row: str, token: str) -> list[int]:
    """Positions of ` token ` outside braces and `\\left`…`\\right` pairs."""
    depth, out, i = 0, [], 0
    while i < len(row):
        if row.startswith(r"\left", i) or row[i] == "{":
            depth += 1
        elif row.startswith(r"\right", i) or row[i] == "}":
            depth -= 1
        elif depth == 0 and row.startswith(token, i):
            out.append(i)
        i += 1
    return out


def wrap_rows(rows: list[str]) -> list[str]:
    """Rows of an `aligned` display, each long one continued at top-level `+` signs on new rows
    (`&\\quad + …`), so no row runs past the margin.

    >>> rows = wrap_rows(["x &= " + " + ".join(["a_{%d}" % i for i in range(60)])])
    >>> len(rows), rows[1][:12], max(_width(r) for r in rows) <= ROW_WIDTH
    (3, '&\\\\quad + a_{', True)
    """
    out = []
    for row in rows:
        while _width(row) > ROW_WIDTH:
            cuts = [c for c in _top_level_splits(row, " + ") if _width(row[:c]) <= ROW_WIDTH]
            if not cuts or _width(row[:cuts[-1]]) < 12:
                break
            out.append(row[:cuts[-1]])
            row = r"&\quad" + row[cuts[-1]:]
        out.append(row)
    return out


def _escape(s: str) -> str:
    """Text for LaTeX: TeX's special characters printed as themselves (`safe.latex_text`), and the
    symbols pdfLaTeX lacks as math."""
    return "".join(_TEXT_SYMBOLS.get(c) or latex_text(c) for c in s)


class LatexDocPrinter(DerivationPrinter):
    def heading(self, text: str, level: int) -> str:
        return f"\\{_SECTIONS[level]}*{{{text}}}"

    def paragraph(self, text: str) -> str:
        return text

    def items(self, texts: list[str]) -> str:
        body = "\n".join(f"  \\item {t}" for t in texts)
        return f"\\begin{{itemize}}\n{body}\n\\end{{itemize}}"

    def math(self, tex: str) -> str:
        return f"\\({breakable(tex)}\\)"

    def display(self, rows: list[str]) -> str:
        body = " \\\\\n".join(wrap_rows(rows))
        return f"\\[\n\\begin{{aligned}}\n{body}\n\\end{{aligned}}\n\\]"

    def code(self, name: str) -> str:
        return f"\\texttt{{{_escape(name)}}}"

    def text(self, s: str) -> str:
        return _escape(s)

    def bold(self, s: str) -> str:
        return f"\\textbf{{{s}}}"

    def _circled(self, n: int) -> str:
        return _CIRCLED % n

    def document(self, blocks: list[str], title: str) -> str:
        body = "\n\n".join([self.heading(title, 1)] + [b for b in blocks if b]) + "\n"
        if not self._settings["standalone"]:
            return body
        korean = self._settings["lang"] == "ko"
        preamble = ["\\documentclass[11pt]{article}", "\\usepackage{iftex}",
                    "\\ifPDFTeX\\usepackage[utf8]{inputenc}\\usepackage[T1]{fontenc}\\fi",
                    "\\usepackage{amsmath}", "\\usepackage[margin=25mm]{geometry}",
                    # long formulas and code names: let TeX stretch spaces before it overfills a line
                    "\\allowdisplaybreaks", "\\setlength{\\emergencystretch}{3em}"] + (
                        ["\\usepackage{kotex}"] if korean else [])
        return "\n".join(preamble + ["\\begin{document}", "", body, "\\end{document}"]) + "\n"
