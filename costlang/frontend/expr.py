"""Expression evaluation: an AST expression → an exact sympy expression with its unit.

Input: `ast.Expr` nodes and a scope that says what names and calls mean. Output: `Value`.
Expressions are built node by node from the parse tree; no text is ever handed to Python or
sympy to interpret. Units are checked as the tree is walked (adding bytes to seconds is an error).
"""
from __future__ import annotations

import math
from typing import Callable, Optional, Protocol

import sympy

from costlang.errors import CostNameError, SemanticError, UnitError, did_you_mean
from costlang.frontend import ast
from costlang.units import DIMENSIONLESS, Unit
from costlang.ir.program import Value

__all__ = ["Scope", "evaluate", "unit_words", "check_substitution", "MATH_FUNCTIONS", "MAX_RESULT_BITS"]

#: a value whose exact numerator or denominator needs more bits than this is refused; it also keeps
#: every integer printable (Python refuses to print integers of more than 4,300 digits)
MAX_RESULT_BITS = 12_000


class Scope(Protocol):
    def name(self, node: ast.Name) -> Value: ...
    def call(self, node: ast.Call) -> Value: ...
    def known_names(self) -> list[str]: ...


def evaluate(node: ast.Expr, scope: Scope) -> Value:
    """The exact value of an expression.

    >>> from costlang.frontend.parser import parse
    >>> q = parse("query 1 / (6 B)").statements[0].value
    >>> v = evaluate(q, _NoNames())
    >>> v.expr, str(v.unit)
    (1/6, '1/B')
    """
    try:
        return _EVAL[type(node)](node, scope)
    except RecursionError:
        raise SemanticError("the expression is nested too deeply to evaluate", node.span) from None


def _num(node: ast.Num, scope) -> Value:
    return Value(node.value, DIMENSIONLESS)


def _quantity(node: ast.Quantity, scope) -> Value:
    return Value(node.value, node.unit)


def _name(node: ast.Name, scope) -> Value:
    return scope.name(node)


def _const(node: ast.Const, scope) -> Value:
    return Value(node.value, node.unit)


def _neg(node: ast.Neg, scope) -> Value:
    v = evaluate(node.operand, scope)
    return Value(-v.expr, v.unit)


def _binop(node: ast.BinOp, scope) -> Value:
    if node.op == "@":
        raise SemanticError("'@' multiplies matrices (tensors); numbers multiply with '*'", node.span,
                            "write `a * b`")
    left, right = evaluate(node.left, scope), evaluate(node.right, scope)
    check_growth(node, node.op, left.expr, right.expr)
    if node.op == "^":  # the size guard needs the values of bound symbols (`2^(2^N)`, N = 100)
        return _pow(node, left, right, getattr(scope, "bindings", None) or {})
    result = _BINOPS[node.op](node, left, right)
    if node.op in "*/":
        _check_magnitude(node, result.expr)
    return result


#: an expression may have at most this many nodes ...
MAX_NODES = 20_000
#: ... and a degree of at most this, counting powers of sums: `x1 = x0 * x0 + M`, ..., `x9` has
#: degree 256 and only a few dozen nodes, yet sympy's assumptions on it (real roots of a
#: polynomial of degree 2^k) would run for minutes. Cost models have degrees below 10.
MAX_DEGREE = 64


def check_growth(node, op: str, a: sympy.Expr, b: sympy.Expr) -> None:
    """Refuse `a op b` before sympy builds it, when its size or degree passes the limits."""
    (na, da), (nb, db) = _growth(a), _growth(b)
    nodes = na + nb + 1
    if op in "+-":
        degree = max(da, db)
    elif op in "*/":
        degree = da + db
    elif b.is_Number and a.is_Add:  # a power of a sum: its degree multiplies
        degree = da * abs(float(b)) if math.isfinite(float(b)) else math.inf
    else:
        degree = max(da, db)
    if nodes > MAX_NODES or degree > MAX_DEGREE:
        what = f"{nodes} nodes" if nodes > MAX_NODES else f"a polynomial of degree {degree:g}"
        raise SemanticError(f"'{_short(node.span.text)}' makes an expression too large to analyse ({what})",
                            node.span, f"expressions are limited to {MAX_NODES} nodes and degree {MAX_DEGREE}")


def _short(text: str, width: int = 60) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


_GROWTH: dict = {}


def _growth(e: sympy.Expr) -> tuple[int, float]:
    """(nodes, degree) of an expression: degree counts symbols, multiplies through powers of sums,
    adds over products. Walked without recursion and remembered (lets are used many times)."""
    if not isinstance(e, sympy.Basic):
        return 1, 0
    if e in _GROWTH:
        return _GROWTH[e]
    stack = [(e, False)]
    while stack:
        x, ready = stack.pop()
        if x in _GROWTH:
            continue
        if not x.args:
            _GROWTH[x] = (1, 1 if x.is_Symbol else 0)
            continue
        if not ready:
            stack.append((x, True))
            stack.extend((arg, False) for arg in x.args if arg not in _GROWTH)
            continue
        parts = [_GROWTH[arg] for arg in x.args]
        nodes = 1 + sum(p[0] for p in parts)
        if x.is_Mul:
            degree = sum(p[1] for p in parts)
        elif x.is_Pow and x.exp.is_Number and x.base.is_Add:
            degree = parts[0][1] * abs(float(x.exp)) if math.isfinite(float(x.exp)) else math.inf
        else:
            degree = max(p[1] for p in parts)
        _GROWTH[x] = (nodes, degree)
    if len(_GROWTH) > 200_000:  # a bounded memo: start afresh (the entries are cheap to recompute)
        result = _GROWTH[e]
        _GROWTH.clear()
        return result
    return _GROWTH[e]


def check_substitution(expr: sympy.Expr, bindings: dict, span, what: str) -> None:
    """Refuse giving symbols values that would make `expr` too large to compute exactly.

    The check runs in floating point (`evalf`), so `2^(2^N)` with N = 100 is measured, not built.
    """
    if not expr.free_symbols or not (expr.free_symbols & set(bindings)):
        return
    approx = expr.evalf(15, subs=bindings)
    mpf = getattr(approx, "_mpf_", None)
    if mpf is not None and mpf[1] and abs(mpf[1].bit_length() + mpf[2]) > MAX_RESULT_BITS:
        raise SemanticError(f"{what} would be too large to compute exactly", span,
                            f"exact results are limited to about {MAX_RESULT_BITS} bits")


def _check_magnitude(node, expr: sympy.Expr) -> None:
    """Refuse products whose exact numbers outgrow MAX_RESULT_BITS (1e400 · 1e400 · ...)."""
    for r in expr.atoms(sympy.Rational):
        if max(int(r.p).bit_length(), int(r.q).bit_length()) > MAX_RESULT_BITS:
            raise SemanticError(f"'{node.span.text}' is too large to compute exactly", node.span,
                                f"exact results are limited to about {MAX_RESULT_BITS} bits")


def _add_sub(sign: int):
    def combine(node, a: Value, b: Value) -> Value:
        if a.unit != b.unit and not (_is_zero(a.expr) or _is_zero(b.expr)):
            word = "add" if sign > 0 else "subtract"
            raise UnitError(f"cannot {word} {_unit_words(b.unit)} {'to' if sign > 0 else 'from'} "
                            f"{_unit_words(a.unit)}", node.span,
                            "both sides of + and - must have the same unit")
        unit = a.unit if not _is_zero(a.expr) else b.unit
        return Value(a.expr + sign * b.expr, unit)
    return combine


def _mul(node, a: Value, b: Value) -> Value:
    return Value(a.expr * b.expr, a.unit * b.unit)


def _div(node, a: Value, b: Value) -> Value:
    if _is_zero(b.expr):
        if isinstance(node.right, (ast.Num, ast.Quantity)):
            raise SemanticError("cannot divide by zero", node.right.span)
        raise SemanticError(f"cannot divide by '{node.right.span.text}', which is 0", node.right.span)
    return Value(a.expr / b.expr, a.unit / b.unit)


def _pow(node, a: Value, b: Value, bindings: Optional[dict] = None) -> Value:
    if not b.unit.dimensionless:
        raise UnitError(f"an exponent must be a plain number, not {_unit_words(b.unit)}", node.right.span)
    unit = DIMENSIONLESS
    if not a.unit.dimensionless:
        if not (b.expr.is_Integer):
            raise UnitError(f"{_unit_words(a.unit)} can only be raised to a whole-number power",
                            node.right.span)
        unit = a.unit ** int(b.expr)
    base, exponent = a.expr.xreplace(bindings or {}), b.expr.xreplace(bindings or {})
    _check_size(node, base, exponent)
    if _is_zero(base) and exponent.is_number and exponent.is_negative:
        raise SemanticError(f"cannot raise 0 to the negative power {exponent}: that divides by zero",
                            node.span)
    return Value(a.expr ** b.expr, unit)


def _check_size(node, base: sympy.Expr, exponent: sympy.Expr) -> None:
    """Refuse powers whose exact value would not fit in memory (e.g. 2^(2^100)).

    A number to a symbolic power is measured by each term's coefficient: sympy's `powsimp` (inside
    `simplify`) rewrites (3/4)^(10^400·B) as ((3/4)^(10^400))^B, and computing that power exactly
    is one uninterruptible big-integer operation that ends in MemoryError, not in a time budget.
    """
    if base.is_number and not exponent.is_number and base not in (0, 1, -1):
        coefficients = [abs(term.as_coeff_Mul()[0]) for term in sympy.Add.make_args(exponent)]
        exponent = max(coefficients, key=lambda c: float(c) if c.is_finite else math.inf)
    if not (base.is_number and exponent.is_number) or exponent.is_zero:
        return
    try:
        magnitude = abs(float(sympy.log(abs(base), 2))) if base != 0 else 0.0
        exp = abs(float(exponent))
    except (TypeError, OverflowError, ValueError):
        magnitude, exp = math.inf, math.inf
    if magnitude * exp > MAX_RESULT_BITS or exp > MAX_RESULT_BITS:
        raise SemanticError(f"'{node.span.text}' is too large to compute exactly", node.span,
                            f"exact results are limited to about {MAX_RESULT_BITS} bits")


_BINOPS: dict[str, Callable] = {"+": _add_sub(1), "-": _add_sub(-1), "*": _mul, "/": _div, "^": _pow}


def _call(node: ast.Call, scope) -> Value:
    if node.kwargs:
        raise SemanticError(f"{node.func}() takes no keyword arguments here", node.kwargs[0].span,
                            "`name = value` arguments are for operators and blocks applied to tensors")
    if node.func in MATH_FUNCTIONS:
        args = [evaluate(a, scope) for a in node.args]
        value = MATH_FUNCTIONS[node.func](node, args)
        bound = value.expr.xreplace(getattr(scope, "bindings", None) or {})
        if bound.has(sympy.I, sympy.zoo, sympy.oo, -sympy.oo, sympy.nan):
            need = "a positive" if node.func == "log2" else "a non-negative"
            raise SemanticError(f"'{node.span.text}' is not a finite real number", node.span,
                                f"{node.func}() needs {need} argument")
        return value
    return scope.call(node)


def _same_units(node, args: list[Value], least: int) -> Unit:
    if len(args) < least:
        raise SemanticError(f"{node.func}() takes at least {least} argument{'s' * (least > 1)}",
                            node.span)
    for a in args[1:]:
        if a.unit != args[0].unit:
            raise UnitError(f"{node.func}() mixes {_unit_words(args[0].unit)} and "
                            f"{_unit_words(a.unit)}", node.span)
    return args[0].unit


#: max()/min() of more arguments would take sympy minutes to simplify (200 symbols: about a minute)
MAX_EXTREMUM_ARGS = 32


def _extremum(fn):
    def apply(node, args):
        unit = _same_units(node, args, 1)
        if len(args) > MAX_EXTREMUM_ARGS:
            raise SemanticError(f"{node.func}() takes at most {MAX_EXTREMUM_ARGS} arguments, not {len(args)}",
                                node.span, "sympy compares every pair of them; keep the terms that can win")
        return Value(fn(*[a.expr for a in args]), unit)
    return apply


def _unary(fn, need_plain: bool = True):
    def apply(node, args):
        if len(args) != 1:
            raise SemanticError(f"{node.func}() takes exactly one argument", node.span)
        if need_plain and not args[0].unit.dimensionless:
            raise UnitError(f"{node.func}() needs a plain number, not {_unit_words(args[0].unit)}",
                            node.args[0].span)
        return Value(fn(args[0].expr), args[0].unit)
    return apply


def _log2(x):
    return sympy.log(x, 2)


MATH_FUNCTIONS: dict[str, Callable] = {
    "min": _extremum(sympy.Min), "max": _extremum(sympy.Max),
    "ceil": _unary(sympy.ceiling), "floor": _unary(sympy.floor),
    "sqrt": _unary(sympy.sqrt), "log2": _unary(_log2), "abs": _unary(sympy.Abs, need_plain=False),
}

_EVAL = {ast.Num: _num, ast.Quantity: _quantity, ast.Name: _name, ast.Neg: _neg,
         ast.BinOp: _binop, ast.Call: _call, ast.Const: _const}


def _is_zero(e: sympy.Expr) -> bool:
    return e.is_zero is True


_UNIT_WORDS = {"B": "bytes", "s": "seconds", "FLOP": "FLOPs", "1": "a plain number",
               "B/s": "a bandwidth (B/s)", "FLOP/s": "a compute rate (FLOP/s)",
               "FLOP/B": "an intensity (FLOP/B)"}


def _unit_words(unit: Unit) -> str:
    return _UNIT_WORDS.get(str(unit), f"a quantity in {unit}")


def unit_words(unit: Unit) -> str:
    """How a unit is named in messages: 'bytes', 'seconds', 'a bandwidth (B/s)', ..."""
    return _unit_words(unit)


class _NoNames:
    def name(self, node):
        raise CostNameError(f"unknown name '{node.id}'", node.span)

    def call(self, node):
        raise CostNameError(f"unknown function '{node.func}'", node.func_span,
                            did_you_mean(node.func, MATH_FUNCTIONS))

    def known_names(self):
        return []


