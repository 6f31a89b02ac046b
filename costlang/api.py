"""The Python API: load a `.cost` file or string, get its program, graph and analysis.

>>> from costlang import load_string
>>> m = load_string('''
... use hardware chapter_gpu
... dim N = 1000
... input A: fp16[N]
... input B: fp16[N]
... output C = add(A, B)
... ''')
>>> m.analyze().kernels[0].intensity
1/6
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Mapping, Optional

import networkx as nx
import sympy

from costlang.analysis import roofline
from costlang.frontend.loader import read_text
from costlang.ir.graph import operator_graph
from costlang.ir.program import Program

__all__ = ["Analysis", "Model", "load", "load_string"]


class Analysis(roofline.Analysis):
    """What `Model.analyze` returns: the data of `analysis.roofline.Analysis`, and how a notebook
    shows it (the printers sit above the analysis, so these methods live here, not there)."""

    def show(self, result=None, lang: str = "en", steps=None):
        """A result of this analysis (a kernel, the totals, a solve, a comparison…; None: all of it)
        for a notebook: Markdown and LaTeX, English or Korean (`printers.display`)."""
        from costlang.printers.display import render
        return render(self, result, lang, steps)

    # Jupyter shows the Markdown derivation; nbconvert's LaTeX/PDF export takes the LaTeX fragment.
    def _repr_markdown_(self) -> str:
        from costlang.printers.derivation.markdown import MarkdownPrinter
        return MarkdownPrinter().doprint(self)

    def _repr_latex_(self) -> str:
        from costlang.printers.derivation.latex import LatexDocPrinter
        return LatexDocPrinter().doprint(self)

    def query(self, name: str):
        """The value of the file's query `name` (its label), exact with the bound symbols put in (a
        verdict for `bound(...)`); a KeyError lists the queries there are."""
        for q in self.queries:
            if q.name == name:
                return self.value(q.value)
        raise KeyError(f"no query named {name!r}; the queries are: "
                       + (", ".join(repr(q.name) for q in self.queries) or "none"))

    @classmethod
    def of(cls, analysis: roofline.Analysis) -> "Analysis":
        """The same analysis (its fields shared, not copied) with these methods."""
        if not isinstance(analysis, roofline.Analysis):
            raise TypeError(f"Analysis.of wraps an analysis (what Model.analyze returns), not {analysis!r}; "
                            "a query's value is `analysis.query(NAME)`")
        return cls(**{f.name: getattr(analysis, f.name) for f in dataclasses.fields(analysis)})


@dataclass(repr=False)
class Model:
    """A loaded `.cost` file: its resolved program, ready to analyse under any fusion mode, hardware
    or what-if settings. Loading never changes; each `analyze` call is independent.

    >>> m = load_string('dim N\\ninput x: fp16[N]\\ny = relu(x)\\nuse hardware chapter_gpu')
    >>> m
    <costlang.Model '<string>': 1 op, 2 tensors, free symbols N, hardware chapter_gpu>
    >>> sorted(m.graph.nodes)
    ['y']
    """
    program: Program

    @property
    def graph(self) -> nx.DiGraph:
        """The operator DAG (networkx): one node per op, an edge per tensor a consumer reads."""
        return operator_graph(self.program)

    def analyze(self, fusion: Optional[str] = None, hardware: Optional[str] = None,
                settings: Optional[Mapping[str, object]] = None) -> Analysis:
        """Costs, the roofline verdicts and the file's queries, solves and comparisons.

        `fusion` is `none`, `elementwise` or `epilogue` (default: the file's); `hardware` a preset
        or hardware of the file; `settings` what-if settings, as `--set` takes them on the command
        line: a symbol's value (an int, a `fractions.Fraction` or a costlang expression as text), a
        tensor's or role's dtype, a hardware figure. Values are parsed by costlang, never by Python.

        >>> m = load_string('use hardware chapter_gpu\\ndim N\\ninput x: fp16[N]\\ny = relu(x)')
        >>> a = m.analyze(settings={"N": 1000})
        >>> k = a.kernels[0]
        >>> k.flops, a.value(k.flops), a.value(k.bytes)   # relu: 1 FLOP and 2 + 2 B per element
        (N, 1000, 4000)
        >>> b = m.analyze(settings={"N": 10, "x": "fp32", "hw": "h100_sxm"})  # relu and y in fp32 too
        >>> b.value(b.kernels[0].bytes)                   # 10·(4 + 4) B: as if x were declared fp32,
        80
        """
        program = self.program
        if settings:
            from costlang.frontend.edits import apply_settings
            from costlang.frontend.settings import parse_settings
            text = "; ".join(f"{name} = {_setting_text(value)}" for name, value in settings.items())
            program = apply_settings(program, parse_settings(text, "settings"))
        from costlang.queries.pipeline import analyze  # queries, solves, scenarios: loaded when first needed
        return Analysis.of(analyze(program, fusion=fusion, hardware=hardware))

    def interact(self, hardware: Optional[str] = None):
        """In Jupyter: a slider per free size (powers of two, 1 to 65,536) and, below them, each kernel's
        intensity and bound at the sliders' values, evaluated from one analysis (no new analysis as a
        slider moves). Needs ipywidgets (`pip install "costlang[notebook]"`)."""
        try:
            import ipywidgets as w
        except ImportError:
            raise ImportError('Model.interact needs ipywidgets: pip install "costlang[notebook]" '
                              "(or pip install ipywidgets)") from None
        from costlang.queries.points import kernels_at
        a = self.analyze(hardware=hardware)
        names = sorted(str(s) for s in a.program.free_symbols)
        sliders = [w.IntSlider(value=3, min=0, max=16, description=f"log2 {n}") for n in names]
        shown = w.HTML()

        def update(change=None):
            values = {n: 2 ** s.value for n, s in zip(names, sliders)}
            import html
            rows = [f"{html.escape(k.name)}: I = {k.intensity:.4g} FLOP/B, {k.bound}" for k in kernels_at(a, values)]
            head = ", ".join(f"{n} = {v}" for n, v in values.items()) or "no free sizes"
            shown.value = "<pre>" + html.escape(head) + "\n" + "\n".join(rows) + "</pre>"

        for s in sliders:
            s.observe(update, names="value")
        update()
        return w.VBox([*sliders, shown])

    def __repr__(self) -> str:
        p = self.program
        name = p.main_span.source.name if p.main_span else "<program>"
        free = ", ".join(sorted(str(s) for s in p.free_symbols)) or "none"
        ops = len(p.nodes)
        return (f"<costlang.Model {name!r}: {ops} op{'s' * (ops != 1)}, {len(p.tensors)} tensors, "
                f"free symbols {free}, hardware {p.selected_hardware or 'none'}>")


def _setting_text(value: object) -> str:
    """A Python value as costlang setting text: exact numbers stay exact; text is costlang's."""
    if isinstance(value, bool) or not isinstance(value, (int, Fraction, sympy.Rational, str)):
        raise TypeError(f"a setting's value is an int, a Fraction or costlang text, not {value!r}")
    if isinstance(value, (Fraction, sympy.Rational)):
        return f"({value.numerator}) / ({value.denominator})"
    return str(value)


def load(path, display: Optional[str] = None, train: Optional[str] = None) -> Model:
    """Load a `.cost` file (and what it imports) and resolve it.

    Errors are `costlang.errors.CostlangError`s whose `render()` is the `file:line:col` message
    the command line prints.

    >>> from pathlib import Path
    >>> m = load(Path(__file__).parent.parent / "examples" / "roofline" / "gemm_4096.cost")
    >>> a = m.analyze()
    >>> a.value(a.kernels[0].intensity)          # 2·4096³ / (3·4096²·2) FLOP/B
    4096/3

    `train`: the settings of a `train { ... }` statement to add (`""` for none, as `--train`): the
    file's forward becomes one training step.
    """
    path = Path(path)
    name = display or str(path)
    return _build(read_text(path, display=name), name, path.resolve(), train)


def load_string(text: str, name: str = "<string>") -> Model:
    """Load a program from text; `name` is the file name its error messages show.

    >>> load_string("dim N = ", name="typo.cost")
    Traceback (most recent call last):
    ...
    costlang.errors.CostSyntaxError: typo.cost:1:9: error: ...
    """
    return _build(text, name, None)


def _build(text: str, name: str, path: Optional[Path], train: Optional[str] = None) -> Model:
    from costlang.queries.pipeline import build
    return Model(build(text, name, path, train))


