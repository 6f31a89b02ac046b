"""Rich display in notebooks: any result of an analysis as Markdown and LaTeX, in English or Korean.

Input: an `Analysis` and one of its results (a `KernelResult`, the `Totals`, a `SolveResult` or
`RegimeMap`, a `QueryResult`, a `MeasuredResult`, a `FusionComparison`, a what-if `Comparison`),
or nothing for the whole derivation. Output: a `Rendered`, which Jupyter shows through
`_repr_markdown_` (and nbconvert's LaTeX export through `_repr_latex_`). `Analysis.show` calls it.

>>> from costlang import load_string
>>> a = load_string("use hardware chapter_gpu\\ndim N = 1000\\ninput x: fp16[N]\\ny = relu(x)").analyze()
>>> r = a.show(a.kernels[0], lang="ko")
>>> r._repr_markdown_().splitlines()[0]
'## 커널 `y` (relu)'
>>> "\\\\subsection*{Kernel \\\\texttt{y} (relu)}" in a.show(a.kernels[0])._repr_latex_()
True
"""
from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Rendered", "render"]


@dataclass(frozen=True)
class Rendered:
    markdown: str
    latex: str

    def _repr_markdown_(self) -> str:
        return self.markdown

    def _repr_latex_(self) -> str:
        return self.latex

    def __str__(self) -> str:
        return self.markdown


def chosen_steps(steps) -> tuple:
    """The derivation's steps to show: None for all, names as a sequence or as one comma-separated
    string (`"intensity,verdict"`), in the recipe's order; an unknown name is a ValueError naming them."""
    from costlang.errors import did_you_mean
    from costlang.printers.derivation.printer import STEPS
    if steps is None:
        return STEPS
    names = [t.strip() for t in steps.split(",") if t.strip()] if isinstance(steps, str) else [str(t) for t in steps]
    unknown = [n for n in names if n not in STEPS]
    if unknown or not names:
        hint = did_you_mean(unknown[0], STEPS) if unknown else None
        raise ValueError(f"steps are among {', '.join(STEPS)}, not {(unknown[0] if unknown else steps)!r}"
                         + (f" ({hint})" if hint else ""))
    return tuple(s for s in STEPS if s in names)


def render(analysis, obj=None, lang: str = "en", steps=None) -> Rendered:
    """`obj` (a result of `analysis`, or the analysis itself when None) in both markups."""
    from costlang.printers.derivation.printer import STEPS
    from costlang.printers.derivation.latex import LatexDocPrinter
    from costlang.printers.derivation.markdown import MarkdownPrinter
    settings = {"lang": lang, "steps": chosen_steps(steps)}
    target = analysis if obj is None else obj
    if type(target).__name__ == "Comparison":   # a what-if table: the text printer's, verbatim
        from costlang.printers.text.whatif import comparison_lines
        text = "\n".join(comparison_lines(target))
        fence = "`" * max(3, 1 + max(map(len, re.findall("`+", text)), default=0))   # longer than any run inside
        verbatim = text.replace("\\end{verbatim}", "\\end {verbatim}")           # which would end it early
        return Rendered(f"{fence}\n{text}\n{fence}\n", "\\begin{verbatim}\n" + verbatim + "\n\\end{verbatim}\n")
    context = {} if obj is None else {"analysis": analysis}
    return Rendered(MarkdownPrinter(**settings).doprint(target, **context),
                    LatexDocPrinter(**settings).doprint(target, **context))
