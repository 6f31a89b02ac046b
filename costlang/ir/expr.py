"""Expressions: unevaluated trees over names, numbers and calls, shared by the AST and the IR.

Input: built by `frontend.parser` (the AST's expressions are these nodes) and by the front end's
substitutions (`Const`). Output: read by `frontend.expr.evaluate` (static values while resolving)
and by `analysis.queries` (lets, queries, solves and scenario settings over analysis results,
which the IR keeps unevaluated: `ir.statements`). Trees of `Num`, `Quantity`, `Name`, `Call`,
`BinOp`, `Neg` and `Const`; `Option` is `name = expr` (a keyword argument, a setting). Nothing
here is ever evaluated as Python text.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Union

import sympy

from costlang.errors import Span
from costlang.units import Unit

__all__ = ["Num", "Quantity", "Name", "Call", "Const", "BinOp", "Neg", "Expr", "Option"]


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
    kwargs: tuple["Option", ...] = ()  # `axis = 0` in a nested op call


@dataclass(frozen=True)
class Const:
    """A value standing where a name was: a block's size parameter, substituted into its body."""
    value: sympy.Expr
    unit: Unit
    span: Span


@dataclass(frozen=True)
class BinOp:
    op: str  # one of + - * / ^ @
    left: "Expr"
    right: "Expr"
    span: Span


@dataclass(frozen=True)
class Neg:
    operand: "Expr"
    span: Span


Expr = Union[Num, Quantity, Name, Call, BinOp, Neg, Const]



@dataclass(frozen=True)
class Option:
    """`name = expr` inside a block, an op definition or a call's keyword arguments."""
    name: str
    value: Expr
    span: Span
