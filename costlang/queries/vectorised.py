"""Vectorised evaluation: an exact expression compiled once into a straight line of numpy operations.

Input: a sympy expression and the symbols it may contain, in order. Output: a `StraightLine`
(queries.tabulate), a callable that takes one float array per symbol (all of one shape) and
returns the expression's values as a float array of that shape (floats only here: sweeps and plots tabulate with it).

This is what sympy's `lambdify` does, without generating and exec-ing Python source (which
costlang's safety rules forbid): each node of the tree becomes one numpy operation, shared
subtrees one operation in all, numbers one float each. n-ary sums, products, Max and Min are
folded left to right in their argument order. Evaluators are remembered per (expression,
symbols), so the repeated sweeps of one analysed file compile nothing again.
"""
from __future__ import annotations

import numpy as np
import sympy

from costlang.queries.tabulate import StraightLine, SweepError

__all__ = ["evaluator", "SweepError"]


# sympy function → the name of its element-wise numpy counterpart (`tabulate.OPERATIONS`)
_BINARY = ((sympy.Add, "add"), (sympy.Mul, "multiply"), (sympy.Max, "maximum"), (sympy.Min, "minimum"))
_UNARY = ((sympy.floor, "floor"), (sympy.ceiling, "ceil"), (sympy.log, "log"), (sympy.exp, "exp"),
          (sympy.Abs, "abs"))


def _compile(symbols: tuple, e: sympy.Expr) -> StraightLine:
    """e compiled over `symbols`. Slots: the symbols' arrays, then the numbers, then one per step's result."""
    order = _postorder(e, set(symbols))
    slots = {s: i for i, s in enumerate(symbols)}
    leaves = [n for n in order if n not in slots and _is_leaf(n)]
    numbers = [_number(n) for n in leaves]
    for n in leaves:
        slots[n] = len(slots)
    steps: list = []
    base = len(slots)
    for n in order:
        if n not in slots:
            slots[n] = _step(steps, n, [slots[a] for a in n.args], base)
    return StraightLine(len(symbols), tuple(numbers), tuple(steps), slots[e])


def _step(steps: list, e: sympy.Expr, args: list[int], base: int) -> int:
    if e.is_Pow:
        return _append(steps, "power", args, base)
    for cls, op in _UNARY:
        if isinstance(e, cls):
            return _append(steps, op, args, base)
    for cls, op in _BINARY:
        if isinstance(e, cls):
            out = args[0]
            for a in args[1:]:
                out = _append(steps, op, [out, a], base)
            return out
    raise SweepError(f"a sweep cannot tabulate {type(e).__name__}(); tabulate its arguments instead")


def _append(steps: list, op: str, args: list[int], base: int) -> int:
    steps.append((op, tuple(args)))
    return base + len(steps) - 1


def _postorder(e: sympy.Expr, symbols: set) -> list:
    """e's distinct subexpressions, each after its arguments (numbers and symbols are leaves);
    iterative, since trees may be deep."""
    order, seen, stack = [], set(), [(e, False)]
    while stack:
        node, ready = stack.pop()
        if node in seen:
            continue
        if ready or node in symbols or _is_leaf(node):
            seen.add(node)
            order.append(node)
        else:
            stack.append((node, True))
            stack.extend((a, False) for a in reversed(node.args))
    return order


def _is_leaf(e: sympy.Expr) -> bool:
    return e.is_number or not e.args


def _number(e: sympy.Expr) -> float:
    if not e.is_number:
        raise SweepError(f"a sweep cannot tabulate {e}: it is not one of the swept symbols")
    return float(e) if e.is_finite else (np.inf if e.is_extended_positive else -np.inf)


_EVALUATORS: dict = {}


def evaluator(e: sympy.Expr, symbols) -> StraightLine:
    """The compiled `StraightLine` of e over `symbols`, made once per (expression, symbols).

    >>> B = sympy.Symbol("B", positive=True)
    >>> evaluator(sympy.ceiling(B / 3) + sympy.Max(B, 2), [B])([np.array([1.0, 4.0])])
    array([3., 6.])
    """
    key = (e, tuple(symbols))
    found = _EVALUATORS.get(key)
    if found is None:
        if len(_EVALUATORS) >= 4096:
            _EVALUATORS.clear()
        found = _EVALUATORS[key] = _compile(tuple(symbols), e)
    return found
