"""The statements a program answers over its analysis, and the blocks it defined: IR records.

Input: made by `frontend.resolve` (and `frontend.blocks`) from the checked AST statements.
Output: `ir.Program`'s lets, queries, solves, scenarios, compares and blocks, read by
`analysis.queries`, `analysis.solve`, `analysis.whatif`, `analysis.sweep` and the printers. Their
expressions stay unevaluated `ir.expr` trees: they name analysis results (`t_kernel(step)`) that
exist only once the program is analysed, under each fusion mode, hardware and scenario. A block is
kept as its signature; its body was instantiated at each call (the operators are `Program.nodes`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from costlang.errors import Span
from costlang.ir.expr import Expr, Name, Option

__all__ = ["Let", "Query", "Solve", "Scenario", "Compare", "Block", "BlockParam"]


@dataclass(frozen=True)
class Let:
    """`let NAME = expr`: a named value, static or over analysis results."""
    name: str
    value: Expr
    span: Span


@dataclass(frozen=True)
class Query:
    """`query "NAME" = expr [in UNIT]`: a value the analysis reports."""
    name: str
    value: Expr
    span: Span
    #: `in tokens/s`: the count word and the unit it is per (None when not stated), and their span
    unit: Optional[tuple[str, Optional[str]]] = None
    unit_span: Optional[Span] = None


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


@dataclass(frozen=True)
class Explore:
    """`explore [label] { ... }`: a design-space search, kept as the texts the command line takes
    (`costlang explore --choose/--over/--require/--maximize`), each with its span, so that the
    statement and the command run one search engine (`queries.explore`)."""
    label: str
    choices: tuple[tuple[str, Span], ...]        # "NAME=V1,V2"
    axes: tuple[tuple[str, Span], ...]           # "NAME=LO..HI:SPACING[:COUNT]" or "NAME=V1,V2"
    constraints: tuple[tuple[str, Span], ...]    # "fits" or "LEFT <= RIGHT"
    objectives: tuple[tuple[str, str, Span], ...]  # (sense "max"/"min", text, span)
    span: Span


@dataclass(frozen=True)
class BlockParam:
    """A block's parameter: `x: dt[n, d]` (kind "tensor"), `f: dim`, `s: param` or `dt: dtype`."""
    name: str
    kind: str
    span: Span


@dataclass(frozen=True)
class Block:
    """`block NAME(params) { ... }`: its signature (its body became nodes at each call)."""
    name: str
    params: tuple[BlockParam, ...]
    span: Span
