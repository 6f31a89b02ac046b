"""Operator kinds: how an op's output shape, dtype and FLOPs follow from its inputs.

Input: an `OpSpec` (from the stdlib or the file), the input `Tensor`s and the call's options.
Output: a `KindResult`. One rule per kind in the `RULES` table; the resolver looks the kind up.
Conventions (stated in the README): elementwise ops broadcast NumPy-style and cost `flops` per
output element; matmul costs `flops` (2 in the stdlib: one FMA = 2 FLOP) per multiply-accumulate;
reductions and row-wise ops cost `flops` per input element; views (transpose, reshape) cost
nothing and move no bytes, their consumers read the viewed tensor's storage.
"""
from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Callable, Optional

import sympy

from costlang.budget import time_budget
from costlang.errors import SemanticError, ShapeError, Span
from costlang.ir.program import Dtype, OpSpec, Tensor

__all__ = ["KindResult", "CallContext", "RULES", "KINDS", "same_dim", "shape_text"]


@dataclass(frozen=True)
class CallContext:
    op: OpSpec
    inputs: tuple[Tensor, ...]
    axis: Optional[int]
    result_shape: Optional[tuple[sympy.Expr, ...]]
    bindings: dict
    span: Span
    math: Optional[Dtype] = None  # `{ math = DTYPE }`: the math (and the result) in that dtype


@dataclass(frozen=True)
class KindResult:
    shape: tuple[sympy.Expr, ...]
    dtype: Dtype
    flops: sympy.Expr
    is_view: bool = False


_EQUALITIES: ContextVar[Optional[list]] = ContextVar("equalities", default=None)


@contextmanager
def recording_equalities(into: list):
    """While resolving: every pair of sizes found equal only through the symbols' values (K and
    J, both 5) is appended to `into` as (a, b, span), for the what-ifs that change those values."""
    token = _EQUALITIES.set(into)
    try:
        yield into
    finally:
        _EQUALITIES.reset(token)


def same_dim(a: sympy.Expr, b: sympy.Expr, bindings: dict, span: Optional[Span] = None) -> bool:
    """Whether two dimension expressions are equal once bound symbols take their values."""
    if a == b:
        return True  # the same expression (most comparisons): no expansion needed
    va, vb = _bound_atom(a, bindings), _bound_atom(b, bindings)
    if va is not None and vb is not None:  # two numbers or symbols once bound: equal only if identical
        record = _EQUALITIES.get()
        if va == vb and record is not None:  # a != b, so one is a symbol equal only by its value
            record.append((_basic(a), _basic(b), span))
        return va == vb
    na, nb = _bound_number(a, va, bindings), _bound_number(b, vb, bindings)
    if na is not None and nb is not None:  # all bound (B·S·D, B·H·S·Dh): two exact numbers
        return _recorded(na == nb, a, b, span)
    with time_budget(None, lambda: f"comparing the dimensions {a} and {b}", span):
        diff = sympy.expand((a - b).xreplace(bindings))
        if diff.is_Number or diff.is_polynomial():
            equal = diff == 0  # expanded polynomials are canonical: simplify() cannot make them 0
        else:
            equal = sympy.simplify(diff) == 0
        return _recorded(equal, a, b, span)


def _recorded(equal: bool, a, b, span) -> bool:
    """`equal`, after noting a and b if they are equal only through the symbols' values."""
    record = _EQUALITIES.get()
    if equal and record is not None and _differ_as_written(a, b):
        record.append((_basic(a), _basic(b), span))
    return equal


_DIFFER: dict = {}  # (a, b) → whether a − b expands to something nonzero (it holds for any values)


def _differ_as_written(a, b) -> bool:
    """Whether two sizes are different expressions (B·H·S·Dh and B·S·D), equal at most through
    the symbols' values. Remembered: each scenario of a compare resolves the same shapes again."""
    key = (a, b)
    found = _DIFFER.get(key)
    if found is None:
        found = bool((a - b).free_symbols) and sympy.expand(a - b) != 0
        if len(_DIFFER) >= 50_000:
            _DIFFER.clear()
        _DIFFER[key] = found
    return found


def _bound_atom(x, bindings: dict):
    """A size that is an exact number or a symbol, after the symbols' values replace them (as `xreplace`
    does); None for anything else, which `same_dim` compares by expanding the difference."""
    if isinstance(x, sympy.Symbol):
        x = bindings.get(x, x)
    return x if isinstance(x, (sympy.Symbol, sympy.Rational)) else None


def _bound_number(x, atom, bindings: dict):
    """The exact number a size is once bound symbols take their values, or None."""
    if atom is None and isinstance(x, sympy.Basic):
        atom = x.xreplace(bindings)
    return atom if isinstance(atom, sympy.Rational) else None


def _basic(x) -> sympy.Expr:
    return x if isinstance(x, sympy.Basic) else sympy.Integer(x)


def shape_text(shape) -> str:
    return "[" + ", ".join(str(d) for d in shape) + "]"


def _numel(shape) -> sympy.Expr:
    return sympy.Mul(*shape) if shape else sympy.Integer(1)


def math_dtype(inputs, op: str, span: Optional[Span]) -> Dtype:
    """The dtype an op's math runs in: the widest of its inputs', whatever the operand order
    (weight-only quantization dequantizes int8/fp8/int4 weights to the activation dtype). Two
    dtypes of one size (fp16 and bf16) leave the choice to the file: an error asks for `math =`."""
    best, first = inputs[0].dtype, inputs[0]
    for t in inputs[1:]:
        if t.dtype.name == best.name:
            continue
        wider = t.dtype.size - best.size
        if wider.is_positive:
            best, first = t.dtype, t
        elif not wider.is_negative:
            raise SemanticError(f"{op}: {first.name} is {best.name} and {t.name} is {t.dtype.name}, and neither "
                                "is wider, so the dtype of the math is not clear", span,
                                f"say which with `{{ math = {best.name} }}` after the call")
    return best


def broadcast(ctx: CallContext, explicit_ones: bool = True) -> tuple[sympy.Expr, ...]:
    """NumPy broadcasting over symbolic shapes: dims align from the right; 1 stretches. A size-1
    dimension stretches only when it is written as a literal 1 (`fp16[1, d]`) with
    `explicit_ones`: a size that merely equals 1 (`dim B = 1`) stretching to 32 would multiply
    the FLOPs silently, so it needs `broadcast(x) -> dt[shape]`."""
    ndim = max(len(t.shape) for t in ctx.inputs)
    out = []
    for i in range(1, ndim + 1):
        dims = [t.shape[-i] for t in ctx.inputs if len(t.shape) >= i]
        if all(d == dims[0] for d in dims[1:]):  # one size here (most dims): nothing stretches
            out.append(dims[0])
            continue
        chosen = next((d for d in dims if not same_dim(d, sympy.Integer(1), ctx.bindings, ctx.span)),
                      dims[0])
        for d in dims:
            if not (same_dim(d, chosen, ctx.bindings, ctx.span)
                    or same_dim(d, sympy.Integer(1), ctx.bindings, ctx.span)):
                shapes = " and ".join(f"{t.name}{shape_text(t.shape)}" for t in ctx.inputs)
                raise ShapeError(f"{ctx.op.name}: shapes {shapes} do not broadcast", ctx.span,
                                 f"dimension {d} does not match {chosen} (and neither is 1)")
        for t in ctx.inputs:
            d = t.shape[-i] if len(t.shape) >= i else None
            if d is not None and explicit_ones and d.is_Symbol and d.xreplace(ctx.bindings) == 1 \
                    and not same_dim(chosen, sympy.Integer(1), ctx.bindings, ctx.span):
                raise ShapeError(f"{ctx.op.name}: {t.name}{shape_text(t.shape)} would be stretched from "
                                 f"{d} = 1 to {chosen}, which multiplies the work silently", ctx.span,
                                 f"say so: `{t.name}_b = broadcast({t.name}) -> {t.dtype.name}[...]`, or "
                                 "declare the dimension as a literal 1")
        out.append(chosen)
    return tuple(reversed(out))


def _elementwise(ctx: CallContext) -> KindResult:
    shape = broadcast(ctx)
    return KindResult(shape, _math(ctx), ctx.op.flops * _numel(shape))


def _matmul(ctx: CallContext) -> KindResult:
    a, b = ctx.inputs
    for t in (a, b):
        if len(t.shape) < 2:
            raise ShapeError(f"matmul needs tensors of at least two dimensions; "
                             f"{t.name} has shape {shape_text(t.shape)}", ctx.span)
    (m, k), (k2, n) = a.shape[-2:], b.shape[-2:]
    if not same_dim(k, k2, ctx.bindings, ctx.span):
        raise ShapeError(f"matmul: inner dimensions differ: {a.name}{shape_text(a.shape)} · "
                         f"{b.name}{shape_text(b.shape)}", ctx.span,
                         f"the last dimension of {a.name} ({_valued(k, ctx.bindings)}) must equal the "
                         f"first matrix dimension of {b.name} ({_valued(k2, ctx.bindings)})")
    batch_ctx = CallContext(ctx.op, tuple(_batch_view(t) for t in (a, b)), None, None,
                            ctx.bindings, ctx.span)
    batch = broadcast(batch_ctx, explicit_ones=False) if any(len(t.shape) > 2 for t in (a, b)) else ()
    shape = tuple(batch) + (m, n)
    return KindResult(shape, _math(ctx), ctx.op.flops * _numel(batch) * m * n * k)


def _valued(d: sympy.Expr, bindings: dict) -> str:
    """A size and, when symbols give it a number, that number: `K = 7`."""
    value = d.xreplace(bindings)
    return f"{d} = {value}" if value != d and value.is_number else str(d)


def _batch_view(t: Tensor) -> Tensor:
    return Tensor(t.name, t.dtype, t.shape[:-2], t.role, t.span, t.storage)


def _axis(ctx: CallContext) -> int:
    (x,) = ctx.inputs
    axis = -1 if ctx.axis is None else ctx.axis
    if not -len(x.shape) <= axis < len(x.shape):
        raise ShapeError(f"{ctx.op.name}: axis {axis} is out of range for "
                         f"{x.name}{shape_text(x.shape)}", ctx.span)
    return axis % len(x.shape)


def _reduce(ctx: CallContext) -> KindResult:
    (x,) = ctx.inputs
    if not x.shape:
        raise ShapeError(f"{ctx.op.name}: cannot reduce the scalar {x.name}", ctx.span)
    axis = _axis(ctx)
    shape = x.shape[:axis] + x.shape[axis + 1:]
    return KindResult(shape, _math(ctx), ctx.op.flops * x.numel)


def _rowwise(ctx: CallContext) -> KindResult:
    """One kernel over rows; several operands (a gradient's y and dy) have the first one's shape."""
    x = ctx.inputs[0]
    for other in ctx.inputs[1:]:
        if len(other.shape) != len(x.shape) or not all(same_dim(a, b, ctx.bindings, ctx.span)
                                                       for a, b in zip(other.shape, x.shape)):
            raise ShapeError(f"{ctx.op.name}: a row-wise op's operands have one shape; {x.name}"
                             f"{shape_text(x.shape)} and {other.name}{shape_text(other.shape)} differ", ctx.span)
    return KindResult(x.shape, _math(ctx), ctx.op.flops * x.numel)


def _math(ctx: CallContext) -> Dtype:
    return ctx.math if ctx.math is not None else math_dtype(ctx.inputs, ctx.op.name, ctx.span)


def _view(ctx: CallContext) -> KindResult:
    (x,) = ctx.inputs
    if ctx.result_shape is not None:
        shape = ctx.result_shape
        if not same_dim(_numel(shape), x.numel, ctx.bindings, ctx.span):
            raise ShapeError(f"{ctx.op.name}: {x.name}{shape_text(x.shape)} has {x.numel} elements, "
                             f"the result shape {shape_text(shape)} has {_numel(shape)}", ctx.span)
    elif len(x.shape) >= 2:
        shape = x.shape[:-2] + (x.shape[-1], x.shape[-2])
    else:
        shape = x.shape
    return KindResult(shape, x.dtype, sympy.Integer(0), is_view=True)


RULES: dict[str, Callable[[CallContext], KindResult]] = {
    "elementwise": _elementwise,
    "matmul": _matmul,
    "reduce": _reduce,
    "rowwise": _rowwise,
    "view": _view,
}
KINDS = tuple(RULES) + ("custom", "collective")
ARITY = {"matmul": 2, "reduce": 1, "view": 1}  # rowwise: one operand or more of one shape


def check_arity(op: OpSpec, span: Span) -> None:
    want = ARITY.get(op.kind)
    if want is not None and len(op.params) != want:
        raise SemanticError(f"a {op.kind} op takes {want} operand{'s' * (want > 1)}; "
                            f"'{op.name}' declares {len(op.params)}", span)


__all__ += ["broadcast", "check_arity", "ARITY", "math_dtype", "recording_equalities"]
