"""The resolved program: what a `.cost` file means once names, shapes, dtypes and units are known.

Input: built by `frontend.resolve` from the AST. Output: read by `ir.graph` (the operator DAG),
`analysis` (costs and roofline) and the printers. All numbers are sympy expressions in the
program's symbols; `Program.bindings` maps bound symbols to their values.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import sympy

from ..errors import Span
from ..units import Unit
from ..frontend import ast

__all__ = ["Value", "SymbolDef", "Dtype", "OpSpec", "Tensor", "OpNode", "Memory", "Hardware",
           "Measurement", "Program", "FUSION_MODES", "ROLES"]

FUSION_MODES = ("none", "elementwise", "epilogue")
ROLES = ("input", "weight", "intermediate", "output")


@dataclass(frozen=True)
class Value:
    """A quantity: an exact sympy expression and its unit."""
    expr: sympy.Expr
    unit: Unit


@dataclass(frozen=True)
class SymbolDef:
    name: str
    symbol: sympy.Symbol
    kind: str  # "dim" or "param"
    value: Optional[sympy.Expr]
    span: Span


@dataclass(frozen=True)
class Dtype:
    name: str
    size: sympy.Expr  # bytes per element
    span: Optional[Span] = None


@dataclass(frozen=True)
class OpSpec:
    """An operator of the op library: its kind (how shapes and FLOPs follow) and FLOPs per element."""
    name: str
    params: tuple[str, ...]
    kind: str
    flops: sympy.Expr
    span: Optional[Span] = None


@dataclass(frozen=True)
class Tensor:
    name: str
    dtype: Dtype
    shape: tuple[sympy.Expr, ...]
    role: str
    span: Span
    storage: str  # the tensor whose memory this one is (itself unless it is a view)

    @property
    def numel(self) -> sympy.Expr:
        return sympy.Mul(*self.shape) if self.shape else sympy.Integer(1)

    @property
    def bytes(self) -> sympy.Expr:
        return self.numel * self.dtype.size


@dataclass(frozen=True)
class OpNode:
    """One operator application `name = op(inputs)`: a node of the operator graph."""
    name: str
    op: OpSpec
    inputs: tuple[str, ...]
    output: Optional[str]
    flops: sympy.Expr
    math_dtype: Dtype
    span: Span
    reads: Optional[sympy.Expr] = None   # stated bytes, for custom kernels
    writes: Optional[sympy.Expr] = None

    @property
    def kind(self) -> str:
        return self.op.kind


@dataclass(frozen=True)
class Memory:
    name: str
    bandwidth: Optional[sympy.Expr]
    capacity: Optional[sympy.Expr]


@dataclass(frozen=True)
class Hardware:
    name: str
    peaks: tuple[tuple[str, sympy.Expr], ...]
    memories: tuple[Memory, ...]
    launch: sympy.Expr
    span: Optional[Span] = None

    def peak(self, dtype: str) -> Optional[sympy.Expr]:
        return dict(self.peaks).get(dtype)

    @property
    def main_memory(self) -> Memory:
        """The level costs are counted at: the one named HBM, else the first declared."""
        for m in self.memories:
            if m.name.upper() == "HBM":
                return m
        return self.memories[0]

    @property
    def bandwidth(self) -> sympy.Expr:
        return self.main_memory.bandwidth

    @property
    def capacity(self) -> Optional[sympy.Expr]:
        return self.main_memory.capacity


@dataclass(frozen=True)
class Measurement:
    node: str
    time: sympy.Expr
    traffic: Optional[sympy.Expr]
    span: Span


@dataclass
class Program:
    """Everything a file (with its imports and the prelude) defines, in definition order."""
    source_name: str
    symbols: dict[str, SymbolDef] = field(default_factory=dict)
    dtypes: dict[str, Dtype] = field(default_factory=dict)
    ops: dict[str, OpSpec] = field(default_factory=dict)
    tensors: dict[str, Tensor] = field(default_factory=dict)
    nodes: dict[str, OpNode] = field(default_factory=dict)
    outputs: set[str] = field(default_factory=set)
    hardware: dict[str, Hardware] = field(default_factory=dict)
    selected_hardware: Optional[str] = None
    hardware_span: Optional[Span] = None
    lets: dict[str, ast.Let] = field(default_factory=dict)
    queries: list[ast.Query] = field(default_factory=list)
    measurements: dict[str, Measurement] = field(default_factory=dict)
    fusion: Optional[str] = None
    main_span: Optional[Span] = None
    #: bound symbols → their values, each in terms of free symbols only (kept by `add_symbol`)
    bindings: dict[sympy.Symbol, sympy.Expr] = field(default_factory=dict)
    #: what-if statements (answered by analysis.solve and analysis.whatif)
    solves: list[ast.Solve] = field(default_factory=list)
    scenarios: dict[str, ast.Scenario] = field(default_factory=dict)
    compares: list[ast.Compare] = field(default_factory=list)
    #: what-if settings applied to the file as written (`--set`, a scenario), as their text
    settings: tuple[str, ...] = ()

    def add_symbol(self, s: SymbolDef) -> None:
        self.symbols[s.name] = s
        if s.value is not None:
            self.bindings[s.symbol] = s.value.xreplace(self.bindings)

    @property
    def free_symbols(self) -> list[sympy.Symbol]:
        return [s.symbol for s in self.symbols.values() if s.value is None]

    def producer(self, tensor: str) -> Optional[OpNode]:
        for n in self.nodes.values():
            if n.output == tensor:
                return n
        return None
