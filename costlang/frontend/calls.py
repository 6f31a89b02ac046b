"""Operator calls: `name = op(args) [as dtype] [-> type] [{ options }]` → an `OpNode` and its output.

Input: an `ast.Assign` and the resolver. Output: the node of the operator graph and the tensor it
produces (None for a custom kernel without a result type). Shapes follow the op's kind
(`ir.kinds`); custom kernels state their FLOPs and, optionally, the bytes they read and write.
The math of a kernel runs in the widest of its inputs' dtypes, whatever the operand order
(`ir.kinds.math_dtype`), or in `{ math = DTYPE }`; the result is stored in the math dtype, and
`as DTYPE` changes only the dtype the result is stored in.
"""
from __future__ import annotations

import dataclasses

import sympy

from costlang.errors import SemanticError, ShapeError
from costlang.ir.kinds import RULES, CallContext, math_dtype
from costlang.ir.program import OpNode, OpSpec, Tensor
from costlang.units import BYTE, DIMENSIONLESS, FLOP
from costlang.frontend import ast
from costlang.frontend.builtins import BUILTINS, resolve_builtin
from costlang.frontend.expr import evaluate
from costlang.frontend.hardware import check_fraction
from costlang.frontend.operands import tensor_arg

__all__ = ["resolve_call"]

CUSTOM = OpSpec("custom", (), "custom", sympy.Integer(0))
_CUSTOM_OPTIONS = {"flops": FLOP, "reads": BYTE, "writes": BYTE,
                   # a mixture of experts (passes.parallelism): `parallel expert` splits its experts
                   "experts": DIMENSIONLESS, "top_k": DIMENSIONLESS,
                   # a gather of rows from a weight with this many rows (an embedding table):
                   # `parallel tensor` splits that weight over its rows (vocabulary-parallel)
                   "gathers": DIMENSIONLESS,
                   # its backward, for a training step (frontend.backward)
                   "backward_flops": FLOP, "backward_reads": BYTE, "backward_writes": BYTE}


def resolve_call(r, s: ast.Assign):
    call = s.call
    if call.op in BUILTINS and call.op not in r.program.ops:
        return resolve_builtin(r, s)
    spec = _op(r, call)
    args = [tensor_arg(r, a, s.name, numbers_ok=spec.kind == "elementwise") for a in call.args]
    inputs = tuple(a for a in args if a is not None)
    if spec.kind == "collective":
        from costlang.frontend.collectives import collective_call
        return collective_call(r, s, spec, inputs)
    if spec.kind != "custom":
        _check_arity(spec, call, args)
        if not inputs:
            raise SemanticError(f"'{spec.name}' needs at least one tensor", call.span,
                                "numbers are computed with `let`")
        math = _math_option(r, spec, call.body)
        node, tensor = _library_call(r, s, spec, inputs, math)
        if len(inputs) < len(args):  # a number operand: its position and value, for the backward
            node = dataclasses.replace(node, constants=tuple(
                (i, evaluate(a, r.static).expr) for i, (a, t) in enumerate(zip(call.args, args)) if t is None))
        options = _kernel_options(r, spec, [o for o in call.body if o.name != "math"])
        density = dict(options).get("density")
        if density is None and options == node.options:
            return node, tensor  # most calls: nothing to change, so no copy
        flops = node.flops if density is None else node.flops * density
        return dataclasses.replace(node, options=options, flops=flops), tensor
    return _custom_call(r, s, inputs)


def _kernel_options(r, spec: OpSpec, body) -> tuple:
    """A library call's `{ ... }`: a matmul's tiling (`bm bn bk`, or `tile` for all three) and
    `density` (the fraction of its multiply-adds a masked kernel does, e.g. causal attention),
    an access pattern (`stride`, in elements) and efficiency factors (`efficiency_KEY`)."""
    allowed = ("tile", "bm", "bn", "bk", "stride") if spec.kind == "matmul" else ("stride",)
    out: dict = {}
    for o in body:
        if o.name in out:
            raise SemanticError(f"'{o.name}' is given twice", o.span)
        if o.name.startswith("efficiency_"):
            out[o.name] = check_fraction(r, o.value, o.name.replace("_", " ", 1))
        elif o.name == "density" and spec.kind == "matmul":
            out[o.name] = _density(r, o)
        elif o.name in allowed:
            out[o.name] = _whole_positive(r, o)
        elif o.name in _CUSTOM_OPTIONS:
            article = "an" if spec.kind[0] in "aeiou" else "a"
            raise SemanticError(f"only custom kernels take a {{ ... }} block; '{spec.name}' is {article} "
                                f"{spec.kind} op", o.span)
        else:
            hint = "a matmul takes tile, bm, bn, bk, density, stride and efficiency_KEY" if spec.kind == "matmul" \
                else f"a {spec.kind} op takes stride and efficiency_KEY (tiling is for matmuls)"
            raise SemanticError(f"unknown option '{o.name}' for '{spec.name}'", o.span, hint)
    if "tile" in out:
        clash = [k for k in ("bm", "bn", "bk") if k in out]
        if clash:
            raise SemanticError(f"`tile` sets bm, bn and bk; {clash[0]} is given too", body[0].span)
        t = out.pop("tile")
        out.update(bm=t, bn=t, bk=t)
    elif any(k in out for k in ("bm", "bn", "bk")) and not all(k in out for k in ("bm", "bn", "bk")):
        raise SemanticError("a tiling gives all of bm, bn and bk (or `tile` for a square tile)", body[0].span)
    return tuple(out.items())


def _math_option(r, spec: OpSpec, body):
    """`{ math = DTYPE }`: the dtype the op's math runs in (and its result is stored in, unless `as`)."""
    found = [o for o in body if o.name == "math"]
    if not found:
        return None
    if len(found) > 1:
        raise SemanticError("'math' is given twice", found[1].span)
    if spec.kind == "view":
        raise SemanticError(f"'{spec.name}' is a view: it does no math", found[0].span)
    value = found[0].value
    if not isinstance(value, ast.Name):
        raise SemanticError("`math` names a dtype, e.g. `math = fp16`", value.span)
    return r.dtype(value.id, value.span)


def _density(r, o) -> sympy.Expr:
    """The fraction of a matmul's multiply-adds that a masked kernel computes, in (0, 1]: the
    inputs are still read and the result written whole; only the FLOPs scale."""
    value = r.expect(o.value, DIMENSIONLESS, "'density'").expr
    bound = value.xreplace(r.program.bindings)
    if bound.is_number and not (bound.is_positive and (bound - 1).is_nonpositive):
        raise SemanticError(f"'density' is the fraction of the multiply-adds computed, in (0, 1], "
                            f"not {bound}", o.value.span)
    return value


def _whole_positive(r, o) -> sympy.Expr:
    value = r.expect(o.value, DIMENSIONLESS, f"'{o.name}'").expr
    bound = value.xreplace(r.program.bindings)
    if bound.is_number and not (bound.is_Integer and bound.is_positive):
        raise SemanticError(f"'{o.name}' is a whole number of elements, not {bound}", o.value.span)
    return value


def _op(r, call: ast.OpCall) -> OpSpec:
    if call.op == "custom":
        return CUSTOM
    if call.op not in r.program.ops:
        raise r.unknown(ast.Name(call.op, call.op_span), "operator", list(r.program.ops) + ["custom"])
    return r.program.ops[call.op]


def _check_arity(spec: OpSpec, call: ast.OpCall, inputs) -> None:
    if len(inputs) != len(spec.params):
        want = len(spec.params)
        raise SemanticError(f"'{spec.name}' takes {want} tensor{'s' * (want != 1)} "
                            f"({', '.join(spec.params)}), not {len(inputs)}", call.span)


def _axis(r, call: ast.OpCall, spec: OpSpec, inputs):
    """`axis = N` (negative from the end) or `axis = d` (the dimension of that size), for
    reductions and row-wise ops (softmax over any axis costs the same per element)."""
    from costlang.frontend.builtins import axis_of
    axis = None
    for kw in call.kwargs:
        if kw.name != "axis" or spec.kind not in ("reduce", "rowwise"):
            raise SemanticError(f"'{spec.name}' takes no option '{kw.name}'", kw.span,
                                "only reductions and row-wise ops take `axis = N`" if kw.name == "axis" else None)
        if not inputs[0].shape:
            raise ShapeError(f"{spec.name}: cannot reduce the scalar {inputs[0].name}", call.span)
        axis = axis_of(r, kw.value, inputs[0], op=spec.name)
    return axis


def _library_call(r, s: ast.Assign, spec: OpSpec, inputs, math=None):
    call = s.call
    result_shape = r.shape(call.result_type) if call.result_type else None
    if call.result_type and spec.kind != "view":
        raise SemanticError(f"'{spec.name}' infers its result type; `-> type` is for views "
                            "(reshape) and custom kernels", call.result_type.span)
    ctx = CallContext(spec, inputs, _axis(r, call, spec, inputs), result_shape, r.program.bindings, call.span,
                      math)
    result = RULES[spec.kind](ctx)
    if call.result_type and result.is_view:
        _check_view_dtype(r, spec, call.result_type, inputs[0])
    dtype = result.dtype
    if call.as_dtype is not None:
        if result.is_view:
            raise SemanticError("a view cannot change the dtype of what it views", call.as_dtype.span)
        dtype = r.dtype(call.as_dtype.id, call.as_dtype.span)
    storage = inputs[0].storage if result.is_view else s.name
    tensor = Tensor(s.name, dtype, result.shape, "intermediate", s.name_span, storage, r.repeat_path,
                    result.is_view and inputs[0].partial)
    node = OpNode(s.name, spec, tuple(t.name for t in inputs), s.name, result.flops, result.dtype, call.span,
                  scope=r.scope_path, repeat=r.repeat_path)
    return node, tensor


def _check_view_dtype(r, spec: OpSpec, stated: ast.TensorType, x: Tensor) -> None:
    """A view keeps the dtype of what it views: a stated dtype must be that one. Under a what-if
    that stores x (or what x views) in another dtype, the view follows it."""
    dtype = r.dtype(stated.dtype, stated.dtype_span)
    if dtype.name == x.dtype.name or x.storage in r.overrides.dtypes:
        return
    raise SemanticError(f"{spec.name}: {x.name} is {x.dtype.name}, so its view is {x.dtype.name}, "
                        f"not {dtype.name}", stated.dtype_span,
                        f"a view moves no bytes and cannot convert; write `-> {x.dtype.name}[...]`, "
                        f"or convert with an op and `as {dtype.name}` (e.g. `cast({x.name}) as {dtype.name}`)")


def _custom_call(r, s: ast.Assign, inputs):
    call = s.call
    if call.kwargs or call.as_dtype:
        raise SemanticError("a custom kernel states its result with `-> dtype[shape]`",
                            (call.kwargs[0].span if call.kwargs else call.as_dtype.span))
    math_opt = [o for o in call.body if o.name == "math"]
    units = _units(call.body)
    opts = r.options([o for o in call.body if o.name not in ("math", "units")], _CUSTOM_OPTIONS, "custom kernel")
    tensor = None
    if call.result_type is not None:
        dtype = r.dtype(call.result_type.dtype, call.result_type.dtype_span)
        tensor = Tensor(s.name, dtype, r.shape(call.result_type), "intermediate", s.name_span, s.name,
                        r.repeat_path)
    math = _math_dtype(r, s, math_opt, inputs, tensor)
    node = OpNode(s.name, CUSTOM, tuple(t.name for t in inputs), tensor.name if tensor else None,
                  opts.get("flops", sympy.Integer(0)), math, call.span,
                  reads=opts.get("reads"), writes=opts.get("writes"), scope=r.scope_path,
                  repeat=r.repeat_path, options=tuple((k, opts[k]) for k in ("experts", "top_k", "gathers", "backward_flops",
                                                        "backward_reads", "backward_writes") if k in opts)
                  + ((("units", units),) if units else ()))
    return node, tensor


def _units(body) -> str:
    """`units = vector` (or `matrix`, the default): the units a custom kernel's FLOPs run on, so its
    time uses that peak (an optimizer's update is elementwise work, on the vector units)."""
    found = [o for o in body if o.name == "units"]
    if not found:
        return ""
    value = found[0].value
    if not isinstance(value, ast.Name) or value.id not in ("matrix", "vector"):
        raise SemanticError("`units` is `matrix` or `vector`: the units the kernel's FLOPs run on", value.span,
                            "e.g. `units = vector` for elementwise work such as an optimizer's update")
    return value.id


def _math_dtype(r, s, math_opt, inputs, tensor):
    if math_opt:
        value = math_opt[0].value
        if not isinstance(value, ast.Name):
            raise SemanticError("`math` names a dtype, e.g. `math = fp16`", value.span)
        return r.dtype(value.id, value.span)
    if inputs:
        return math_dtype(inputs, f"custom kernel '{s.name}'", s.call.span)
    if tensor is not None:
        return tensor.dtype
    raise SemanticError(f"custom kernel '{s.name}' has no tensors to take a dtype from", s.call.span,
                        "say which dtype does its math, e.g. `math = fp32`")


