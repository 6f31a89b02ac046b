"""The Markdown derivation printer: analysis results → Markdown with KaTeX/MathJax math.

Input: an `Analysis` (see `printers.derivation`). Output: Markdown text; inline math is `$...$`,
display math is a `$$` block holding an `aligned` environment (both render in KaTeX, MathJax,
GitHub and Jupyter). Names are code spans, fenced by more backticks than they hold, so `_`, `*` and
`<` in names need no escaping; other text from the file (`label`) has its punctuation escaped.
"""
from __future__ import annotations

from costlang.printers.derivation.printer import DerivationPrinter
from costlang.printers.safe import markdown_code, markdown_text

__all__ = ["MarkdownPrinter"]


class MarkdownPrinter(DerivationPrinter):
    def heading(self, text: str, level: int) -> str:
        return "#" * level + " " + text

    def paragraph(self, text: str) -> str:
        return text

    def items(self, texts: list[str]) -> str:
        return "\n".join(f"- {t}" for t in texts)

    def math(self, tex: str) -> str:
        return f"${tex}$"

    def display(self, rows: list[str]) -> str:
        body = " \\\\\n".join(rows)
        return f"$$\n\\begin{{aligned}}\n{body}\n\\end{{aligned}}\n$$"

    def code(self, name: str) -> str:
        return markdown_code(name)

    def text(self, s: str) -> str:
        return s

    def label(self, s: str) -> str:
        return markdown_text(s)

    def bold(self, s: str) -> str:
        return f"**{s}**"

    def document(self, blocks: list[str], title: str) -> str:
        return "\n\n".join([self.heading(title, 1)] + [b for b in blocks if b]) + "\n"
