"""Blocks, tensor expressions and repetition: assignments → op nodes, block instances, repeats.

Input: an `ast.Assign` (its names already global) and the resolver. Output: nodes and tensors
added to the program. A block call binds the block's parameters (tensors, sizes, dtypes; shapes
checked and shape variables inferred at the call), renames its body (`h` → `y.h`, the returned
locals → the call's targets) and resolves the body's statements as ordinary ones, so its ops are
ordinary nodes. A kernel is never named like an instance: the tensors a call returns take the
call's names (`y`), but the kernels that compute them keep their names inside the instance (the
returned local `h`: kernel `y.h`; a returned expression `x @ w`: kernel `y.matmul`; a returned
block call `lm_head(x)`: instance `y.lm_head`, its kernel `y.lm_head.matmul`). A block whose whole
body is `return other(...)` (a zoo model's name for a generic one) is transparent: its call and
the inner one are one instance. `repeat(L) block(...)` instantiates the body once and records the count: the
analysis multiplies, nothing is unrolled. Sub-expressions (`x @ W + b`) become nodes named
`<target>.<op>`.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import sympy

from costlang.errors import CostlangError, SemanticError, ShapeError, did_you_mean
from costlang.ir.kinds import same_dim, shape_text
from costlang.ir.program import Instance, Repeat, Tensor
from costlang.ir.statements import Block, BlockParam
from costlang.units import DIMENSIONLESS
from costlang.frontend import ast
from costlang.frontend.calls import resolve_call
from costlang.frontend.operands import tensor_arg
from costlang.frontend.rename import block_locals, rename

__all__ = ["assign", "define_block", "subexpression", "shared_weight"]


def define_block(r, s: ast.BlockDef) -> None:
    r.define("block", s.name, s.span)
    seen = set()
    for p in s.params:
        if p.name in seen:
            raise SemanticError(f"block '{s.name}' has two parameters named '{p.name}'", p.span)
        seen.add(p.name)
        if p.kind in ("tensor", "dtype") and p.default is not None:
            raise SemanticError(f"only size parameters take a default; '{p.name}' is a {p.kind}",
                                p.default.span)
    returns = [i for i, st in enumerate(s.body) if isinstance(st, ast.Return)]
    if not returns:
        raise SemanticError(f"block '{s.name}' returns nothing", s.span,
                            "end its body with `return y` (or `return a, b`)")
    if len(returns) > 1 or returns[0] != len(s.body) - 1:
        raise SemanticError("`return` must be the last statement of a block, and the only one",
                            s.body[returns[-1] if len(returns) > 1 else returns[0]].span)
    for st in s.body:
        if isinstance(st, ast.TensorDecl) and st.role == "input":
            raise SemanticError("a block takes its inputs as parameters", st.span,
                                f"add `{st.name}: {st.type.span.text}` to the parameters of '{s.name}'")
        if isinstance(st, ast.Binding) and st.value is None:
            raise SemanticError(f"a {st.kind} inside a block needs a value (a new symbol would be "
                                "one per call)", st.span, f"declare `{st.kind} {st.name}` outside the block")
    r.block_defs[s.name] = s
    r.program.blocks[s.name] = Block(s.name, tuple(BlockParam(q.name, q.kind, q.span) for q in s.params),
                                     s.span)


def assign(r, s: ast.Assign) -> None:
    """Resolve `targets = rhs`: an op, a block call, a repeat, or a tensor expression."""
    targets = tuple(t.id for t in s.target_names)
    call = s.call
    outer_base, r.expr_base = r.expr_base, targets[0]  # sub-expressions are named after it
    try:
        if isinstance(call, ast.RepeatCall):
            _repeat(r, s, targets)
        elif call.op in r.block_defs:
            # a block's returned local computed by a block call: that call is the instance `y.a`
            instance = r.kernel_names.get(targets[0]) or _instance_name(r, targets[0], call.op)
            for t in targets:
                r.kernel_names.pop(t, None)
            call_block(r, call, targets, instance)
        elif call.op == "split" and "split" not in r.program.ops:
            from costlang.frontend.builtins import split
            split(r, s, targets)
        else:
            if len(targets) > 1:
                raise SemanticError(f"'{call.op}' gives one tensor, not {len(targets)}", s.span,
                                    "only blocks and split give several tensors")
            add_op(r, s)
    finally:
        r.expr_base = outer_base
    if s.is_output:
        for t in targets:
            if t not in r.program.tensors:  # a custom kernel without `-> dtype[shape]` makes no tensor
                raise SemanticError(f"'{t}' computes no tensor, so it cannot be an output", s.span,
                                    f"give it a result type: `output {t} = custom(...) -> fp16[N] {{ ... }}`")
        r.program.outputs.update(targets)


def add_op(r, s: ast.Assign) -> Tensor:
    """One op node (nested operands first, each a node of its own) and the tensor it computes."""
    if s.call.op not in r.block_defs and s.call.op not in ("custom", "split", "slice"):
        flat = _flatten(r, s.call)
        s = s if flat is s.call else dataclasses.replace(s, call=flat)
    r.define("value", s.name, s.name_span)
    node, tensor = resolve_call(r, s)
    kernel = r.kernel_names.pop(s.name, None)  # a block's result: its kernel keeps its own name
    if kernel is not None:
        node = dataclasses.replace(node, name=kernel)
    if tensor is not None:
        r.program.tensors[tensor.name] = r.stored(tensor)
    r.program.nodes[node.name] = node
    return tensor


def fresh_name(r, base: str, what: str) -> str:
    """A new global name `<base>.<what>`, `<base>.<what>_2`, ... for a sub-expression or instance."""
    name, k = f"{base}.{what}", 1
    while (("value", name) in r.origin or name in r.program.nodes or name in r.program.instances
           or name in r.kernel_names.values()):
        k += 1
        name = f"{base}.{what}_{k}"
    return name


def _instance_name(r, target: str, block: str) -> str:
    """The instance name of a block call assigned to `target`: the target itself, unless the target
    is an enclosing instance's name (a block that returns what this call computes) and a name this
    call would define there, `<target>.<local>`, is already defined or belongs to a block instance
    still being resolved (a later statement of the enclosing block will define it). Then the call
    gets a fresh name under the current instance (`<scope>.<block>`), so its locals cannot clash;
    where nothing clashes, every name stays as it was."""
    if not r.block_stack:
        return target
    mine = {f"{target}.{n}" for n in _own_names(r.block_defs[block])}
    claimed = set().union(*r.block_claims) if r.block_claims else set()
    if not (mine & claimed or any(("value", n) in r.origin for n in mine)):
        return target
    return fresh_name(r, r.scope_path or target, block)


def _own_names(block: ast.BlockDef) -> set[str]:
    """The names a block's body defines under its instance's prefix (not those its returns rename)."""
    names = {t.id for s in block.body if isinstance(s, ast.Assign) for t in s.target_names}
    names |= {s.name for s in block.body if isinstance(s, ast.TensorDecl)}
    return names - {e.id for e in block.body[-1].values if isinstance(e, ast.Name)}


def _flatten(r, call: ast.OpCall) -> ast.OpCall:
    """The call with its nested tensor operands resolved first (in source order) and named (the
    call itself when every operand is a name already)."""
    if all(isinstance(a, ast.Name) for a in call.args):
        return call
    args = []
    for a in call.args:
        t = subexpression(r, a, r.expr_base) if not isinstance(a, ast.Name) else None
        args.append(ast.Name(t.name, a.span) if t is not None else a)
    return dataclasses.replace(call, args=tuple(args))


def subexpression(r, expr: ast.Expr, base: str):
    """The tensor a nested op expression computes (a node of its own), or None for a number."""
    call = ast.as_op_call(expr)
    if call is None or not _mentions_tensor(r, expr):
        return None
    if call.op not in r.block_defs and call.op != "custom":
        call = _flatten(r, call)
    name = fresh_name(r, base, call.op)
    if call.op in r.block_defs:
        out = call_block(r, call, (name,), name)
        if len(out) != 1:
            raise SemanticError(f"block '{call.op}' returns {len(out)} tensors; inside an expression "
                                "a block must return one", expr.span,
                                f"assign its results first: `a, b = {call.op}(...)`")
        return out[0]
    return add_op(r, ast.Assign(name, call, False, expr.span, expr.span))


def _mentions_tensor(r, expr) -> bool:
    if isinstance(expr, ast.Name):
        return expr.id in r.program.tensors
    if isinstance(expr, ast.Call):
        from costlang.frontend.builtins import BUILTINS
        return (expr.func in r.program.ops or expr.func in r.block_defs or expr.func == "custom"
                or expr.func in BUILTINS
                or any(_mentions_tensor(r, a) for a in expr.args))
    if isinstance(expr, ast.BinOp):
        return _mentions_tensor(r, expr.left) or _mentions_tensor(r, expr.right)
    if isinstance(expr, ast.Neg):
        return _mentions_tensor(r, expr.operand)
    return False


# --- block calls ------------------------------------------------------------------------------

@dataclass
class _Binding:
    """What a call binds: tensor params → tensors, sizes → values, dtype params → dtypes."""
    tensors: dict
    sizes: dict
    dtypes: dict


#: block instances one program may expand to (each is resolved statement by statement); the
#: largest shipped model has 16; a block calling the one before twice, 14 levels deep, has 32767
MAX_INSTANCES = 10_000


def call_block(r, call: ast.OpCall, targets: tuple[str, ...], instance: str,
               base: str | None = None) -> list[Tensor]:
    """Instantiate block `call.op` as `instance`; its returns are named `targets` (nested operands
    are named after `base`, the instance unless given)."""
    return _instantiate(r, call, targets, instance, base)[0]


def _instantiate(r, call, targets, instance, base=None):
    block = r.block_defs[call.op]
    if block.name in r.block_stack:
        chain = " → ".join(r.block_stack[r.block_stack.index(block.name):] + [block.name])
        raise SemanticError(f"block '{block.name}' calls itself ({chain}); a block cannot be recursive",
                            call.span, "repeat a block with `repeat(N) block(...)` instead")
    returns = block.body[-1].values
    if len(returns) != len(targets):
        raise SemanticError(f"block '{block.name}' returns {len(returns)} tensor{'s' * (len(returns) != 1)}"
                            f", not {len(targets)}", call.span,
                            f"assign {len(returns)} name{'s' * (len(returns) != 1)}: "
                            + ", ".join(f"t{i + 1}" for i in range(len(returns))) + f" = {block.name}(...)")
    r.block_count += 1
    if r.block_count > MAX_INSTANCES:  # blocks that call the one before twice double at every level
        raise SemanticError(f"the program expands to more than {MAX_INSTANCES} block instances", call.span,
                            "a block that calls another several times, nested many levels deep, grows "
                            "exponentially: use `repeat(N) block(...)`, which is analysed once")
    bound = _bind(r, block, call, instance if base is None else base)
    table = _table(r, block, bound, targets, instance)
    shares = _shares(r, call, instance)
    if instance not in r.program.instances:  # a transparent block's inner call: the same instance
        r.program.instances[instance] = Instance(instance, block.name, call.span, r.repeat_path)
    outer_scope = r.scope_path
    r.block_claims.append({f"{instance}.{n}" for n in _own_names(block)})
    r.block_stack.append(block.name)
    r.scope_path = instance
    if shares is not None:
        r.sharing.append((instance, shares, call.span))
    try:
        out = _run_body(r, block, table, targets, call, instance)
    except CostlangError as e:
        if e.span is not None and e.span.file == call.span.file and e.span.line == call.span.line:
            raise
        e.hint = ((e.hint + "; ") if e.hint else "") + f"in block '{block.name}' called at {call.span}"
        raise
    finally:
        r.block_stack.pop()
        r.block_claims.pop()
        r.scope_path = outer_scope
        if shares is not None:
            r.sharing.pop()
    return out, bound


# --- instances that share their weights ---------------------------------------------------------

def _shares(r, call, instance: str):
    """`y = block(...) { shares = other }`: the instance whose weights this one uses (None if none).
    `{ recompute = none | selective | full }` is the instance's recomputation policy in a training step
    (recorded in `Program.recompute_calls`; the backward reads it)."""
    shared = None
    for o in call.body:
        if o.name == "recompute":
            _recompute_option(r, o, instance)
            continue
        if o.name == "pool":
            from costlang.frontend.pools import place
            place(r, o, instance)
            continue
        if o.name != "shares":
            raise SemanticError(f"a block call takes no option '{o.name}'", o.span,
                                "a block call's options are `shares = INSTANCE` (its weights are INSTANCE's, "
                                "held once in memory), `recompute = none | selective | full` and "
                                "`pool = POOL` (the serving pool it runs on)")
        if not isinstance(o.value, ast.Name) or o.value.id not in r.program.instances:
            raise SemanticError("`shares` names a block instance defined above, whose weights this call uses",
                                o.value.span, did_you_mean(o.value.id, r.program.instances)
                                if isinstance(o.value, ast.Name) else None)
        shared = o.value.id
    if shared is not None:
        here, there = (r.program.placements.get(i, (None,))[0] for i in (instance, shared))
        if here != there:
            raise SemanticError(f"'{instance}' runs on {_pool_words(here)} and '{shared}' on {_pool_words(there)}: "
                                "instances on two pools cannot share one copy of their weights",
                                next(o.span for o in call.body if o.name == "shares"),
                                "each pool holds its own copy: remove `shares`, or place both on one pool")
    return shared


def _pool_words(pool) -> str:
    return f"pool '{pool}'" if pool else "no pool"


def _recompute_option(r, o, instance: str) -> None:
    from costlang.frontend.training import RECOMPUTE
    if not isinstance(o.value, ast.Name) or o.value.id not in RECOMPUTE:
        raise SemanticError(f"`recompute` is one of {', '.join(RECOMPUTE)}", o.value.span,
                            "e.g. `h = repeat(L) layer(x) { recompute = full }`")
    r.program.recompute_calls[instance] = (o.value.id, o.span)


def shared_weight(r, tensor: Tensor) -> Tensor:
    """A weight declared inside an instance that shares another's weights: the same memory as the
    other instance's weight of the same path (its storage), which must have its shape, dtype and count."""
    for instance, shared, span in reversed(r.sharing):
        if not tensor.name.startswith(instance + "."):
            continue
        other_name = shared + tensor.name[len(instance):]
        other = r.program.tensors.get(other_name)
        hint = (f"`shares = {shared}` holds one copy of the weights for both instances; every weight of "
                f"'{instance}' needs one of the same path, shape and dtype in '{shared}'")
        if other is None or other.role != "weight":
            raise SemanticError(f"weight '{tensor.name}' has no counterpart '{other_name}' to share", span, hint)
        p = r.program
        # a what-if that retypes the shared weights retypes the other instance's storage
        retyped = other.storage in r.overrides.dtypes
        if (len(other.shape) != len(tensor.shape)
                or any(sympy.simplify(x - y) != 0 for x, y in zip(other.shape, tensor.shape))
                or (not retyped and other.dtype.name != tensor.dtype.name)
                or sympy.simplify(p.count(other.repeat) - p.count(tensor.repeat)) != 0):
            raise SemanticError(f"weight '{tensor.name}' ({tensor.dtype.name}{shape_text(tensor.shape)}, "
                                f"× {p.count(tensor.repeat)}) differs from '{other_name}' "
                                f"({other.dtype.name}{shape_text(other.shape)}, × {p.count(other.repeat)})",
                                span, hint)
        return dataclasses.replace(tensor, dtype=other.dtype, storage=other.storage)
    return tensor


def _run_body(r, block, table, targets, call, instance) -> list[Tensor]:
    for original in block.body[:-1]:
        st = rename(original, table)
        if isinstance(st, ast.Binding):
            what = f"the value of {st.kind} '{original.name}'"
            table[original.name] = ast.Const(r.expect(st.value, DIMENSIONLESS, what).expr, DIMENSIONLESS,
                                             st.span)
        elif isinstance(st, ast.TensorDecl):
            r.stmt_TensorDecl(st, None)
        else:
            assign(r, st)
    out = []
    for target, expr in zip(targets, rename(block.body[-1].values, table)):
        if isinstance(expr, ast.Name):
            if expr.id != target:
                raise SemanticError(f"block '{block.name}' returns '{expr.id}' unchanged", expr.span,
                                    "return something the block computes or declares")
            out.append(r.program.tensors[target])
            continue
        op = ast.as_op_call(expr)
        if op is None:
            raise SemanticError("a block returns tensors, not numbers", expr.span)
        outer_base, r.expr_base = r.expr_base, instance  # its operands are named inside the instance
        try:
            out.append(_returned(r, block, op, target, instance, expr.span))
        finally:
            r.expr_base = outer_base
    for target in targets:  # a returned declared tensor: no kernel computes it
        r.kernel_names.pop(target, None)
    return out


def _returned(r, block, op: ast.OpCall, target: str, instance: str, span) -> Tensor:
    """The tensor `target` that a returned expression computes: a block call is an instance of its
    own inside this one (`y.lm_head`; the same instance for a transparent block), an op a kernel
    named `<instance>.<op>`, after its nested operands."""
    if op.op in r.block_defs:
        inner = instance if _transparent(r, block) else fresh_name(r, instance, op.op)
        (tensor,) = call_block(r, op, (target,), inner, base=instance)
        return tensor
    if op.op not in ("custom", "split", "slice"):
        op = _flatten(r, op)
    r.kernel_names[target] = fresh_name(r, instance, op.op)
    return add_op(r, ast.Assign(target, op, False, span, span))


def _transparent(r, block: ast.BlockDef) -> bool:
    """A block whose body is only `return other(...)`: another name for a block call."""
    if len(block.body) != 1 or len(block.body[0].values) != 1:
        return False
    op = ast.as_op_call(block.body[0].values[0])
    return op is not None and op.op in r.block_defs


def _table(r, block, bound: _Binding, targets, instance) -> dict:
    table = {name: f"{instance}.{name}" for name in block_locals(block)}
    for name, value in bound.sizes.items():
        table[name] = ast.Const(value, DIMENSIONLESS, block.span)
    for name, dtype in bound.dtypes.items():
        table[name] = dtype.name
    for name, tensor in bound.tensors.items():
        table[name] = tensor.name
    for target, expr in zip(targets, block.body[-1].values):
        if isinstance(expr, ast.Name) and expr.id in table and expr.id not in bound.tensors:
            table[expr.id] = target  # a returned local takes the call's name; its kernel keeps its own
            r.kernel_names[target] = f"{instance}.{expr.id}"
    return table


def _bind(r, block: ast.BlockDef, call: ast.OpCall, instance: str) -> _Binding:
    params = {p.name: p for p in block.params}
    given: dict[str, ast.Expr] = {}
    if len(call.args) > len(block.params):
        raise SemanticError(f"block '{block.name}' takes {len(block.params)} argument"
                            f"{'s' * (len(block.params) != 1)} ({', '.join(params)}), not {len(call.args)}",
                            call.span)
    for p, arg in zip(block.params, call.args):
        given[p.name] = arg
    for kw in call.kwargs:
        if kw.name not in params:
            raise SemanticError(f"block '{block.name}' has no parameter '{kw.name}'", kw.span,
                                did_you_mean(kw.name, params) or f"its parameters: {', '.join(params)}")
        if kw.name in given:
            raise SemanticError(f"'{kw.name}' is given twice", kw.span)
        given[kw.name] = kw.value
    b = _Binding({}, {}, {})
    for p in block.params:
        if p.name not in given:
            continue
        arg = given[p.name]
        if p.kind == "tensor":
            b.tensors[p.name] = _tensor_argument(r, arg, instance, block, p)
        elif p.kind == "dtype":
            if not isinstance(arg, ast.Name):
                raise SemanticError(f"'{p.name}' of block '{block.name}' is a dtype", arg.span)
            b.dtypes[p.name] = r.dtype(arg.id, arg.span)
        else:
            b.sizes[p.name] = r.expect(arg, DIMENSIONLESS, f"'{p.name}' of block '{block.name}'").expr
    for p in block.params:
        if p.kind == "tensor" and p.name in b.tensors:
            _unify(r, block, p, b.tensors[p.name], b, given[p.name])
    missing = []
    for p in block.params:
        if p.name in given or p.name in b.sizes or p.name in b.dtypes:
            continue
        if p.kind in ("dim", "param") and p.default is not None:
            table = {k: ast.Const(v, DIMENSIONLESS, p.span) for k, v in b.sizes.items()}
            b.sizes[p.name] = r.expect(rename(p.default, table), DIMENSIONLESS, f"the default of '{p.name}'").expr
            continue
        missing.append(p.name)
    if missing:   # every missing argument at once (a zoo call without its dtypes misses four)
        names = ", ".join(f"'{m}'" for m in missing)
        raise SemanticError(f"block '{block.name}' needs an argument for {names}", call.span,
                            f"pass {'them' if len(missing) > 1 else 'it'}, e.g. `{block.name}(..., "
                            + ", ".join(f"{m} = ..." for m in missing) + ")`")
    return b


def _tensor_argument(r, arg, instance, block, p) -> Tensor:
    t = tensor_arg(r, arg, instance)
    if t is None:
        raise SemanticError(f"'{p.name}' of block '{block.name}' is a tensor, not a number", arg.span)
    return t


def _unify(r, block, p: ast.BlockParam, t: Tensor, b: _Binding, arg: ast.Expr) -> None:
    """Check an argument against `p: dtype[dims]`, binding dtype params and shape variables."""
    want = p.type
    expected = f"{want.dtype}{shape_text([d.span.text for d in want.dims])}"
    if want.dtype in b.dtypes or any(q.name == want.dtype and q.kind == "dtype" for q in block.params):
        dtype = b.dtypes.setdefault(want.dtype, t.dtype)
    else:
        dtype = r.dtype(want.dtype, want.dtype_span)
    mismatch = ShapeError(f"block '{block.name}': argument '{p.name}' is {t.dtype.name}{shape_text(t.shape)}, "
                          f"the block expects {expected}", arg.span,
                          f"'{p.name}' is declared at {p.span}")
    if dtype.name != t.dtype.name or len(want.dims) != len(t.shape):
        raise mismatch
    for d, actual in zip(want.dims, t.shape):
        if isinstance(d, ast.Name) and _is_shape_variable(r, block, d.id) and d.id not in b.sizes:
            b.sizes[d.id] = actual
            continue
        table = {k: ast.Const(v, DIMENSIONLESS, d.span) for k, v in b.sizes.items()}
        value = r.expect(rename(d, table), DIMENSIONLESS, "a dimension").expr
        if not same_dim(value, actual, r.program.bindings, arg.span):
            mismatch.hint = f"{d.span.text} = {value}, but the argument has {actual} there"
            raise mismatch


def _is_shape_variable(r, block, name: str) -> bool:
    """A size parameter, or a name in a tensor parameter's shape that nothing outside defines."""
    if any(q.name == name and q.kind in ("dim", "param") for q in block.params):
        return True
    if any(q.name == name for q in block.params):
        return False
    return name not in r.program.symbols and name not in r.program.lets


# --- repetition --------------------------------------------------------------------------------

def _repeat(r, s: ast.Assign, targets) -> None:
    rc = s.call
    call = rc.call
    if call.op not in r.block_defs:
        raise SemanticError(f"repeat applies a block; '{call.op}' is not one", call.op_span,
                            f"wrap it: `block step(x: ...) {{ return {call.op}(x) }}`")
    count = r.expect(rc.count, DIMENSIONLESS, "a repeat count").expr
    bound = count.xreplace(r.program.bindings)
    if bound.is_number and not (bound.is_integer and bound.is_positive):
        raise SemanticError(f"a repeat count must be a positive whole number, not {bound}", rc.count.span)
    name = r.kernel_names.get(targets[0], targets[0])  # a block's returned local: the repeat `y.layer`
    for t in targets:
        r.kernel_names.pop(t, None)
    r.program.repeats[name] = Repeat(name, count, rc.span, r.repeat_path)
    outer = r.repeat_path
    r.repeat_path = outer + (name,)
    try:
        out, bound_args = _instantiate(r, call, targets, name)
    finally:
        r.repeat_path = outer
    block = r.block_defs[call.op]
    carried = [p for p in block.params if p.kind == "tensor"]
    if len(out) > len(carried):
        raise SemanticError(f"block '{block.name}' returns {len(out)} tensors but takes "
                            f"{len(carried)}: a repeated body's outputs feed its first inputs", rc.span)
    for t, p in zip(out, carried):
        x = bound_args.tensors[p.name]
        same = (t.dtype.name == x.dtype.name and len(t.shape) == len(x.shape)
                and all(same_dim(a, c, r.program.bindings, rc.span) for a, c in zip(t.shape, x.shape)))
        if not same:
            raise ShapeError(f"a repeated body's output must match its input: '{block.name}' returns "
                             f"{t.dtype.name}{shape_text(t.shape)} for '{p.name}', which is "
                             f"{x.dtype.name}{shape_text(x.shape)}", rc.span,
                             "each iteration's output feeds the next iteration's input")
    # which outer tensor each output feeds back into (a training step's backward: frontend.backward)
    r.program.repeats[name] = dataclasses.replace(
        r.program.repeats[name], carried=tuple((bound_args.tensors[p.name].name, t.name) for t, p in zip(out, carried)))
