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

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import networkx as nx

from .analysis.roofline import Analysis, analyze
from .errors import CostSyntaxError, Source, Span
from .frontend.loader import read_text
from .frontend.parser import parse
from .frontend.resolve import resolve
from .ir.graph import operator_graph
from .ir.program import Program

__all__ = ["Model", "load", "load_string"]


@dataclass
class Model:
    """A loaded `.cost` file: its resolved program, ready to analyse under any fusion mode or hardware."""
    program: Program

    @property
    def graph(self) -> nx.DiGraph:
        return operator_graph(self.program)

    def analyze(self, fusion: Optional[str] = None, hardware: Optional[str] = None) -> Analysis:
        return analyze(self.program, fusion=fusion, hardware=hardware)


def load(path, display: Optional[str] = None) -> Model:
    path = Path(path)
    name = display or str(path)
    return _build(read_text(path, display=name), name, path.resolve())


def load_string(text: str, name: str = "<string>") -> Model:
    return _build(text, name, None)


def _build(text: str, name: str, path: Optional[Path]) -> Model:
    module = parse(text, name)
    source = Source(name, text)
    if not module.statements:
        raise CostSyntaxError("the file is empty: there is nothing to analyse", Span(source, 1, 1, 1, 1),
                              "start with `use hardware chapter_gpu` and an `input` declaration")
    program = resolve(module, path)
    first = module.statements[0].span
    program.main_span = Span(first.source, first.line, first.column, first.line, first.column + 1)
    return Model(program)


