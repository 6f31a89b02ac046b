"""Built-in tensor ops that are not one kind of the op library: concat, split, slice, gather, broadcast.

Input: an `ast.Assign` whose op is one of `BUILTINS` (unless the file defines an op of that name)
and the resolver. Output: op nodes and tensors. `concat` and `gather` are kernels of their own
(0 FLOPs; a gather reads only the rows it gathers); `slice` and `split` are views of part of a
tensor (no kernel, and a reader reads only that part); `broadcast(x) -> dt[shape]` is a view that
stretches size-1 dimensions explicitly (a reader reads x). Axes are numbers (negative from the
end) or the name of the dimension (`axis = d`).
"""
from __future__ import annotations

import dataclasses

import sympy

from costlang.errors import SemanticError, ShapeError
from costlang.ir.kinds import same_dim, shape_text
from costlang.ir.program import OpNode, OpSpec, Tensor
from costlang.units import DIMENSIONLESS
from costlang.frontend import ast
from costlang.frontend.operands import tensor_arg

__all__ = ["BUILTINS", "resolve_builtin", "split", "axis_of"]

BUILTINS = ("concat", "slice", "split", "gather", "embedding", "broadcast")


def axis_of(r, value: ast.Expr, x: Tensor, default: int = -1, op: str = "") -> int:
    """An axis of x: a whole number (negative counts from the end) or the name of its dimension."""
    if value is None:
        n = default
    else:
        v = r.expect(value, DIMENSIONLESS, "an axis").expr
        if v.is_Integer:
            n = int(v)
        else:
            found = [i for i, d in enumerate(x.shape) if same_dim(d, v, r.program.bindings, value.span)]
            if len(found) != 1:
                raise ShapeError(f"{op + ': ' if op else ''}{x.name}{shape_text(x.shape)} has "
                                 f"{'no' if not found else 'several'} "
                                 f"dimension{'s' * bool(found)} equal to {value.span.text}", value.span,
                                 "give the axis by its number, e.g. `axis = -1`")
            return found[0]
    if not -len(x.shape) <= n < len(x.shape):
        raise ShapeError(f"{op + ': ' if op else ''}axis {n} is out of range for {x.name}{shape_text(x.shape)}",
                         value.span if value is not None else x.span)
    return n % len(x.shape)


def _kwargs(call: ast.OpCall, allowed: tuple) -> dict:
    out = {}
    for kw in call.kwargs:
        if kw.name not in allowed:
            raise SemanticError(f"'{call.op}' takes no option '{kw.name}'", kw.span,
                                f"it takes: {', '.join(allowed)}" if allowed else None)
        out[kw.name] = kw.value
    return out


def _tensors(r, s, args):
    return [tensor_arg(r, a, s.name) for a in args]


def _node(r, s, name, kind, inputs, tensor, flops=sympy.Integer(0), partial=()):
    spec = OpSpec(s.call.op, tuple(t.name for t in inputs), kind, sympy.Integer(0))
    return OpNode(name, spec, tuple(t.name for t in inputs), tensor.name, flops, inputs[0].dtype, s.call.span,
                  scope=r.scope_path, repeat=r.repeat_path, partial_reads=partial)


def resolve_builtin(r, s: ast.Assign):
    call = s.call
    if call.as_dtype is not None or call.body:
        raise SemanticError(f"'{call.op}' takes no `as` or {{ ... }}", call.span)
    if call.result_type is not None and call.op != "broadcast":
        raise SemanticError(f"'{call.op}' infers its result type", call.result_type.span)
    return {"concat": _concat, "slice": _slice, "gather": _gather, "embedding": _gather,
            "broadcast": _broadcast, "split": _split_one}[call.op](r, s)


def _concat(r, s):
    kw = _kwargs(s.call, ("axis",))
    xs = _tensors(r, s, s.call.args)
    if len(xs) < 2:
        raise SemanticError("concat joins two or more tensors", s.call.span)
    first = xs[0]
    axis = axis_of(r, kw.get("axis"), first, op="concat")
    for t in xs[1:]:
        same = t.dtype.name == first.dtype.name and len(t.shape) == len(first.shape) and all(
            i == axis or same_dim(a, b, r.program.bindings, s.call.span)
            for i, (a, b) in enumerate(zip(t.shape, first.shape)))
        if not same:
            raise ShapeError(f"concat: {t.name} is {t.dtype.name}{shape_text(t.shape)} and {first.name} is "
                             f"{first.dtype.name}{shape_text(first.shape)}; they must agree but along axis "
                             f"{axis}", s.call.span)
    shape = list(first.shape)
    shape[axis] = sympy.Add(*[t.shape[axis] for t in xs])
    tensor = Tensor(s.name, first.dtype, tuple(shape), "intermediate", s.name_span, s.name, r.repeat_path)
    return _node(r, s, s.name, "concat", xs, tensor), tensor


def _part(r, s, name, span, x, axis, start, stop):
    """A view of x[start:stop] along axis: no kernel; a reader reads only this part."""
    dim = x.shape[axis]
    size = stop - start
    b = r.program.bindings
    checks = [(start, "a start"), (size, "a size")]
    for value, what in checks:
        v = value.xreplace(b)
        if v.is_number and (v.is_negative or (what == "a size" and not v.is_positive) or not v.is_integer):
            raise ShapeError(f"{s.call.op}: {what} of {v} along axis {axis} of {x.name}{shape_text(x.shape)}",
                             s.call.span, "starts and sizes are whole numbers of elements" if not v.is_integer
                             else None)
    bound = size.xreplace(b)
    if not bound.is_number and not (bound.is_integer and bound.is_positive) \
            and all(bound != known for known, _ in r.program.sizes):
        r.program.sizes.append((bound, s.call.span))  # N/3 with N free: an assumption
    over = (stop - dim).xreplace(b)
    if over.is_number and over.is_positive:
        raise ShapeError(f"{s.call.op}: {x.name}{shape_text(x.shape)} has {dim} along axis {axis}, "
                         f"not {stop}", s.call.span)
    shape = list(x.shape)
    shape[axis] = size
    tensor = Tensor(name, x.dtype, tuple(shape), "intermediate", span, x.storage, r.repeat_path, True)
    return _node(r, s, name, "view", [x], tensor), tensor


def _slice(r, s):
    kw = _kwargs(s.call, ("axis",))
    if len(s.call.args) != 3:
        raise SemanticError("slice takes a tensor, a start and a stop: `slice(x, 0, 128, axis = -1)`",
                            s.call.span)
    (x,) = _tensors(r, s, s.call.args[:1])
    start, stop = (r.expect(a, DIMENSIONLESS, "a slice bound").expr for a in s.call.args[1:])
    return _part(r, s, s.name, s.name_span, x, axis_of(r, kw.get("axis"), x, 0, "slice"), start, stop)


def _split_one(r, s):
    raise SemanticError("split gives several tensors: name each part", s.call.span,
                        "e.g. `q, k, v = split(qkv, axis = -1)`")


def split(r, s: ast.Assign, targets: tuple[str, ...]) -> None:
    """`a, b, c = split(x[, sizes...], axis = N)`: equal parts, one per target, or the sizes given."""
    kw = _kwargs(s.call, ("axis",))
    (x,) = _tensors(r, s, s.call.args[:1])
    axis = axis_of(r, kw.get("axis"), x, op="split")
    sizes = [r.expect(a, DIMENSIONLESS, "a part's size").expr for a in s.call.args[1:]]
    if sizes and len(sizes) != len(targets):
        raise SemanticError(f"split gives {len(sizes)} parts but {len(targets)} names", s.span)
    if not sizes:
        sizes = [x.shape[axis] / len(targets)] * len(targets)
    if not same_dim(sympy.Add(*sizes), x.shape[axis], r.program.bindings, s.call.span):
        raise ShapeError(f"split: the parts ({' + '.join(map(str, sizes))}) do not add up to "
                         f"{x.shape[axis]}, axis {axis} of {x.name}{shape_text(x.shape)}", s.call.span)
    start = sympy.Integer(0)
    for name, size, t in zip(targets, sizes, s.target_names):
        r.define("value", name, t.span)
        node, tensor = _part(r, s, name, t.span, x, axis, start, start + size)
        r.program.tensors[name] = tensor
        kernel = r.kernel_names.pop(name, None)  # a block's returned part keeps its own name
        if kernel is not None:
            node = dataclasses.replace(node, name=kernel)
        r.program.nodes[node.name] = node
        start = start + size


def _gather(r, s):
    _kwargs(s.call, ())
    if len(s.call.args) != 2:
        raise SemanticError(f"{s.call.op} takes a table and indices: `{s.call.op}(table, ids)`", s.call.span)
    table, idx = _tensors(r, s, s.call.args)
    if not table.shape:
        raise ShapeError(f"{s.call.op}: the table {table.name} has no rows", s.call.span)
    shape = tuple(idx.shape) + tuple(table.shape[1:])
    tensor = Tensor(s.name, table.dtype, shape, "intermediate", s.name_span, s.name, r.repeat_path)
    rows = sympy.Mul(*shape) * table.dtype.size  # only the gathered rows are read
    node = _node(r, s, s.name, "gather", [table, idx], tensor, partial=((table.name, rows),))
    return node, tensor


def _broadcast(r, s):
    _kwargs(s.call, ())
    if len(s.call.args) != 1 or s.call.result_type is None:
        raise SemanticError("broadcast takes one tensor and its result type: `broadcast(x) -> fp16[B, d]`",
                            s.call.span)
    (x,) = _tensors(r, s, s.call.args)
    shape = r.shape(s.call.result_type)
    dtype = r.dtype(s.call.result_type.dtype, s.call.result_type.dtype_span)
    b = r.program.bindings
    ok = dtype.name == x.dtype.name and len(shape) >= len(x.shape) and all(
        same_dim(d, 1, b) or same_dim(d, o, b) for d, o in zip(reversed(x.shape), reversed(shape)))
    if not ok:
        raise ShapeError(f"broadcast: {x.name} is {x.dtype.name}{shape_text(x.shape)}, which does not stretch "
                         f"to {dtype.name}{shape_text(shape)}", s.call.span,
                         "only dimensions of size 1 (and missing leading ones) stretch")
    tensor = Tensor(s.name, dtype, shape, "intermediate", s.name_span, x.storage, r.repeat_path)
    return _node(r, s, s.name, "view", [x], tensor), tensor
