"""Operands of a call: an argument (`ast.Expr`) → the `Tensor` it stands for, or None for a number.

Input: the argument and the resolver. Output: a declared or computed tensor; a nested op
expression becomes a node of its own through `r.subexpression` (the resolver hands it to
`blocks.py`, which sits above the calls and built-ins that use this module).
"""
from __future__ import annotations

from costlang.errors import SemanticError
from costlang.units import DIMENSIONLESS
from costlang.frontend import ast

__all__ = ["tensor_arg"]


def tensor_arg(r, arg: ast.Expr, base: str, numbers_ok: bool = False):
    """The tensor an argument stands for: a name, or a nested op expression (a node of its own,
    named `<base>.<op>`). A number is None where `numbers_ok` (an elementwise op's constant
    operand, held in a register: `x * 0.5`), else an error."""
    if not isinstance(arg, ast.Name):
        t = r.subexpression(arg, base)
        if t is not None:
            return t
        if numbers_ok:
            r.expect(arg, DIMENSIONLESS, "a constant operand")
            return None
        raise SemanticError(f"'{arg.span.text}' is a number, not a tensor", arg.span,
                            "only elementwise ops take a number as an operand (`x * 0.5`)")
    if arg.id not in r.program.tensors:
        if arg.id in r.program.symbols or arg.id in r.program.lets:
            if numbers_ok:
                return None
            raise SemanticError(f"'{arg.id}' is a number, not a tensor", arg.span,
                                "operators take tensors declared with `input`, `weight` or computed by an op")
        raise r.unknown(arg, "tensor", r.program.tensors)
    return r.program.tensors[arg.id]
