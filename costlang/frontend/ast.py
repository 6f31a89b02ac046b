"""The AST of a `.cost` file: small frozen dataclasses, each with the `Span` it came from.

Input: built by `frontend.parser` from the Lark tree. Output: read by `frontend.resolve`.
Expressions are trees of `Num`, `Quantity`, `Name`, `Call`, `BinOp` and `Neg`; nothing here
is ever evaluated as Python text.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Union

import sympy

from ..errors import Span
from ..units import Unit


# --- expressions -----------------------------------------------------------------------------

@dataclass(frozen=True)
class Num:
    value: sympy.Rational
    text: str
    span: Span


@dataclass(frozen=True)
class Quantity:
    value: sympy.Rational
    unit: Unit
    text: str
    span: Span


@dataclass(frozen=True)
class Name:
    id: str
    span: Span


@dataclass(frozen=True)
class Call:
    func: str
    args: tuple["Expr", ...]
    span: Span
    func_span: Span


@dataclass(frozen=True)
class BinOp:
    op: str  # one of + - * / ^
    left: "Expr"
    right: "Expr"
    span: Span


@dataclass(frozen=True)
class Neg:
    operand: "Expr"
    span: Span


Expr = Union[Num, Quantity, Name, Call, BinOp, Neg]


# --- statements ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Option:
    """`name = expr` inside a block, an op definition or a call's keyword arguments."""
    name: str
    value: Expr
    span: Span


@dataclass(frozen=True)
class Import:
    target: str
    is_path: bool
    span: Span


@dataclass(frozen=True)
class Binding:
    """A `dim` or `param`: a positive symbol, free or bound to a value."""
    kind: str  # "dim" (a positive integer count) or "param" (a positive real)
    name: str
    value: Optional[Expr]
    span: Span


@dataclass(frozen=True)
class DtypeDef:
    name: str
    size: Expr
    span: Span


@dataclass(frozen=True)
class TensorType:
    dtype: str
    dims: tuple[Expr, ...]
    span: Span
    dtype_span: Span


@dataclass(frozen=True)
class TensorDecl:
    role: str  # "input" or "weight"
    name: str
    type: TensorType
    span: Span


@dataclass(frozen=True)
class OpCall:
    op: str
    args: tuple[Expr, ...]
    kwargs: tuple[Option, ...]
    as_dtype: Optional[Name]
    result_type: Optional[TensorType]
    body: tuple[Option, ...]
    span: Span
    op_span: Span


@dataclass(frozen=True)
class Assign:
    name: str
    call: OpCall
    is_output: bool
    span: Span
    name_span: Span


@dataclass(frozen=True)
class OutputMark:
    names: tuple[Name, ...]
    span: Span


@dataclass(frozen=True)
class OpDef:
    name: str
    params: tuple[str, ...]
    kind: Name
    options: tuple[Option, ...]
    span: Span


@dataclass(frozen=True)
class PeakDef:
    dtype: Name
    value: Expr
    span: Span
    unit: Optional[Name] = None   # `matrix` or `vector`; None: a plain peak (the matrix peak)


@dataclass(frozen=True)
class MemoryDef:
    name: str
    options: tuple[Option, ...]
    span: Span
    per: Optional[Name] = None    # `per SM`: bandwidth and capacity are per SM


@dataclass(frozen=True)
class EfficiencyDef:
    """`efficiency KEY = FRACTION ["source"]`: an achievable fraction of a peak."""
    key: Name
    value: Expr
    source: Optional[str]
    span: Span


@dataclass(frozen=True)
class HardwareDef:
    name: str
    base: Optional[Name]
    peaks: tuple[PeakDef, ...]
    memories: tuple[MemoryDef, ...]
    options: tuple[Option, ...]
    span: Span
    efficiencies: tuple[EfficiencyDef, ...] = ()


@dataclass(frozen=True)
class Use:
    hardware: Name
    span: Span


@dataclass(frozen=True)
class Let:
    name: str
    value: Expr
    span: Span


@dataclass(frozen=True)
class Query:
    name: str
    value: Expr
    span: Span


@dataclass(frozen=True)
class Measure:
    target: Name
    options: tuple[Option, ...]
    span: Span


@dataclass(frozen=True)
class FusionMode:
    mode: Name
    span: Span


@dataclass(frozen=True)
class Solve:
    """`solve [label:] lhs REL rhs for X`, or `solve regimes for X` (lhs and rhs None)."""
    name: str
    lhs: Optional[Expr]
    relation: str  # one of = < <= > >=, or "regimes"
    rhs: Optional[Expr]
    target: Name
    span: Span


@dataclass(frozen=True)
class Scenario:
    """`scenario NAME { setting = value ... }`: the same program with substitutions."""
    name: str
    settings: tuple[Option, ...]
    span: Span


@dataclass(frozen=True)
class Compare:
    """`compare A, B, ...`: scenarios side by side (`baseline` is the file as written)."""
    scenarios: tuple[Name, ...]
    span: Span


Statement = Union[Import, Binding, DtypeDef, TensorDecl, Assign, OutputMark, OpDef, HardwareDef,
                  Use, Let, Query, Measure, FusionMode, Solve, Scenario, Compare]


@dataclass(frozen=True)
class Module:
    """One parsed file: its statements in source order."""
    source_name: str
    statements: tuple[Statement, ...]
