"""The LaTeX derivation printer: analysis results → a LaTeX fragment or a standalone document.

Input: an `Analysis` (see `printers.derivation`). Output: LaTeX. The fragment is for `\\input`
into a document that loads `amsmath` (display math is `\\[ \\begin{aligned} ... \\end{aligned} \\]`);
Korean text needs `kotex` (or xeCJK) in that document. `standalone=True` wraps the fragment
in a compilable `article`: English with pdfLaTeX, XeLaTeX or LuaLaTeX; Korean loads `kotex`
(compile with XeLaTeX, or pdfLaTeX with ko.TeX's fonts).
"""
from __future__ import annotations

from .derivation import DerivationPrinter

__all__ = ["LatexDocPrinter"]

_TEXT_ESCAPES = {"\\": r"\textbackslash{}", "_": r"\_", "%": r"\%", "&": r"\&", "#": r"\#",
                 "$": r"\$", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
                 # symbols that pdfLaTeX's utf8 input does not know (names and phrases use them): as math
                 "→": r"\ensuremath{\to}", "−": "-", "∞": r"\ensuremath{\infty}", "≤": r"\ensuremath{\le}",
                 "≥": r"\ensuremath{\ge}", "≈": r"\ensuremath{\approx}", "≫": r"\ensuremath{\gg}"}
_SECTIONS = {1: "section", 2: "subsection", 3: "subsubsection"}
_CIRCLED = r"\textcircled{\scriptsize %d}"


def _escape(s: str, braces: bool = False) -> str:
    """Text for LaTeX; `braces` also escapes { and } (names; phrase templates keep their fields)."""
    table = {**_TEXT_ESCAPES, "{": r"\{", "}": r"\}"} if braces else _TEXT_ESCAPES
    return "".join(table.get(c, c) for c in s)


class LatexDocPrinter(DerivationPrinter):
    def heading(self, text: str, level: int) -> str:
        return f"\\{_SECTIONS[level]}*{{{text}}}"

    def paragraph(self, text: str) -> str:
        return text

    def items(self, texts: list[str]) -> str:
        body = "\n".join(f"  \\item {t}" for t in texts)
        return f"\\begin{{itemize}}\n{body}\n\\end{{itemize}}"

    def math(self, tex: str) -> str:
        return f"\\({tex}\\)"

    def display(self, rows: list[str]) -> str:
        body = " \\\\\n".join(rows)
        return f"\\[\n\\begin{{aligned}}\n{body}\n\\end{{aligned}}\n\\]"

    def code(self, name: str) -> str:
        return f"\\texttt{{{_escape(name, braces=True)}}}"

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
                    "\\usepackage{amsmath}"] + (["\\usepackage{kotex}"] if korean else [])
        return "\n".join(preamble + ["\\begin{document}", "", body, "\\end{document}"]) + "\n"
