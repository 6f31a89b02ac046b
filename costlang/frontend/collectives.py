"""Collectives: op definitions of kind `collective` and their calls `y = all_reduce(x, over = tp)`.

Input: an `ast.OpDef` / `ast.Assign` and the resolver. Output: an `OpSpec` whose `comms` holds the
formulas (`sent` bytes per chip, `steps` latency terms, `scale` of the result's dim `axis`) in the
placeholders p (chips in the group) and n (bytes of the input per chip), and, for a call, an
`OpNode` with its `Comms` (the formulas with p and n put in) and the result tensor.
A collective runs over one mesh axis of the selected system; `algorithm = NAME` picks the op
named `<op>_<NAME>` (e.g. `all_reduce_tree`).
"""
from __future__ import annotations

import sympy

from costlang.errors import SemanticError, did_you_mean
from costlang.frontend.expr import evaluate, unit_words
from costlang.ir.program import OpNode, OpSpec, Tensor, Value
from costlang.ir.system import GROUP, MESSAGE, comms_of
from costlang.units import BYTE, DIMENSIONLESS
from costlang.frontend import ast

__all__ = ["collective_spec", "collective_call", "build"]

_OPTIONS = {"sent": BYTE, "steps": DIMENSIONLESS, "scale": DIMENSIONLESS}


def collective_spec(r, s: ast.OpDef) -> OpSpec:
    """`op all_reduce(x): collective, sent = 2 * (p - 1) / p * n, steps = 2 * (p - 1)`."""
    if len(s.params) != 1:
        raise SemanticError(f"a collective op takes one operand; '{s.name}' declares {len(s.params)}", s.span)
    formulas = {}
    for o in s.options:
        if o.name not in _OPTIONS:
            raise SemanticError(f"unknown collective option '{o.name}'", o.span,
                                did_you_mean(o.name, _OPTIONS) or "collectives take sent, steps and scale")
        if o.name in formulas:
            raise SemanticError(f"'{o.name}' is given twice", o.span)
        v = evaluate(o.value, _FormulaScope(r))
        want = _OPTIONS[o.name]
        if v.unit != want and not (o.name == "sent" and v.unit == DIMENSIONLESS and v.expr == 0):
            raise SemanticError(f"'{o.name}' must be {unit_words(want)}, not {unit_words(v.unit)}",
                                o.value.span, "in a collective, p is the number of chips in the group "
                                "and n the bytes of the input per chip")
        formulas[o.name] = v.expr
    if "sent" not in formulas:
        raise SemanticError(f"collective '{s.name}' states no `sent = ...` (bytes each chip sends)", s.span)
    formulas.setdefault("steps", sympy.Integer(0))
    formulas.setdefault("scale", sympy.Integer(1))
    return OpSpec(s.name, s.params, "collective", sympy.Integer(0), s.span, tuple(formulas.items()))


class _FormulaScope:
    """p and n are the collective's placeholders; every other name is the file's."""

    def __init__(self, r):
        self.r = r

    @property
    def bindings(self):
        return self.r.program.bindings

    def name(self, node: ast.Name) -> Value:
        if node.id == "p":
            return Value(GROUP, DIMENSIONLESS)
        if node.id == "n":
            return Value(MESSAGE, BYTE)
        return self.r.static.name(node)

    def call(self, node: ast.Call) -> Value:
        return self.r.static.call(node)

    def known_names(self):
        return ["p", "n"] + self.r.static.known_names()


def collective_call(r, s: ast.Assign, spec: OpSpec, inputs):
    call = s.call
    if len(inputs) != 1:
        raise SemanticError(f"'{spec.name}' takes one tensor, not {len(inputs)}", call.span)
    if call.body or call.result_type or call.as_dtype:
        raise SemanticError(f"a collective takes only `over = AXIS` and, optionally, `algorithm = NAME` "
                            "and `axis = N`", call.span)
    kw = {}
    for o in call.kwargs:
        if o.name not in ("over", "algorithm", "axis"):
            raise SemanticError(f"'{spec.name}' takes no option '{o.name}'", o.span,
                                did_you_mean(o.name, ("over", "algorithm", "axis")))
        kw[o.name] = o
    if "over" not in kw:
        raise SemanticError(f"say which mesh axis '{spec.name}' runs over", call.span,
                            f"e.g. `{s.name} = {spec.name}({inputs[0].name}, over = tp)`")
    axes = _axis_product(kw["over"])
    if axes is not None and len(axes) > 1:
        return _over_several_axes(r, s, spec, inputs[0], axes, kw, call)
    if "algorithm" in kw:
        spec = _algorithm(r, spec, kw["algorithm"])
    axis_name = _name_value(kw["over"], "over names a mesh axis, e.g. `over = tp`")
    system = r.program.system
    if system is None:
        raise SemanticError("a collective runs over a mesh axis of a system, and no system is selected",
                            kw["over"].span, "add `use system dgx_h100` (or a system of your own) before this line")
    mesh = system.axis(axis_name.id)
    if mesh is None:
        raise r.unknown(axis_name, f"axis of system '{system.name}'", [a.name for a in system.axes])
    x = inputs[0]
    axis = _dim_axis(r, kw.get("axis"), x)
    node, tensor = build(spec, s.name, x, mesh.name, mesh.size, axis, call.span, r.program.bindings,
                         scope=r.scope_path, repeat=r.repeat_path)
    return node, tensor


def build(spec: OpSpec, name: str, x: Tensor, axis_name: str, group, axis: int, span, bindings,
          output: str = None, scope: str = "", repeat: tuple = ()):
    """The node and result tensor of collective `spec` on tensor `x` over a mesh axis of size `group`,
    inside block instance `scope` and the repeats `repeat` (a collective in a repeated layer runs
    as often as the layer)."""
    formulas = dict(spec.comms)
    shape = list(x.shape)
    if shape:
        shape[axis] = _scaled(shape[axis], formulas["scale"].xreplace({GROUP: group}), bindings, span, x)
    elif formulas["scale"] != 1:
        raise SemanticError(f"'{spec.name}' changes a dimension; {x.name} is a scalar", span)
    out = output or name
    if group.xreplace(bindings) == 1:
        # a group of one chip: the collective moves nothing and is a view of its input (no kernel)
        view = OpSpec(spec.name, spec.params, "view", sympy.Integer(0), spec.span)
        tensor = Tensor(out, x.dtype, tuple(shape), "intermediate", span, x.storage, repeat, x.partial)
        return OpNode(name, view, (x.name,), out, sympy.Integer(0), x.dtype, span, scope=scope,
                      repeat=repeat), tensor
    tensor = Tensor(out, x.dtype, tuple(shape), "intermediate", span, out, repeat)
    node = OpNode(name, spec, (x.name,), out, sympy.Integer(0), x.dtype, span,
                  comms=comms_of(spec, axis_name, group, x.bytes), scope=scope, repeat=repeat)
    return node, tensor


def _scaled(dim, scale, bindings, span, x):
    new = dim * scale
    bound = new.xreplace(bindings)
    if bound.is_number and not (bound.is_integer and bound.is_positive):
        raise SemanticError(f"the collective would make a dimension of {x.name} {dim} × {scale} = {bound}, "
                            "not a whole number", span, "the split dimension must divide by the group size")
    return new


def _axis_product(value):
    """`gpu * node` → [gpu, node] (the axis names, innermost first); a single name → [name]; else None."""
    if isinstance(value, ast.Option):
        value = value.value
    if isinstance(value, ast.Name):
        return [value]
    if isinstance(value, ast.BinOp) and value.op == "*":
        left, right = _axis_product(value.left), _axis_product(value.right)
        return None if left is None or right is None else left + right
    return None


#: an all-reduce over several axes (innermost first): hierarchically (Thakur et al. 2005; NCCL's
#: tree/ring over nodes): reduce-scatters inward to outward, an all-reduce of the shards over the
#: outermost axis, all-gathers back; flat: one ring over all the chips, every step at the slowest
#: link's speed; simultaneously (the multi-axis all-reduce of a TPU torus, "How to Scale Your
#: Model", part 3): the data split across the axes, each chip sending on the links of every axis
#: at once
ALGORITHMS_OVER_AXES = ("hierarchical", "flat", "simultaneous")


def _over_several_axes(r, s: ast.Assign, spec: OpSpec, x: Tensor, axes, kw, call):
    """`all_reduce(x, over = gpu * node [* pod] [, algorithm = hierarchical | flat | simultaneous])`:
    the cheaper of hierarchical and flat unless one is named (the hierarchical one where the
    comparison depends on free sizes). Hierarchical over k axes is 2k − 1 collective kernels
    (reduce-scatters, the outermost all-reduce, all-gathers, each with its own communication cost);
    flat is one all-reduce over a group of all the chips whose every step crosses the slowest of
    the axes' links; simultaneous is one all-reduce over all the chips whose bytes share the links
    of every axis at once (`axis_a+axis_b` in the report)."""
    system = r.program.system
    over = kw["over"]
    if system is None:
        raise SemanticError("a collective runs over mesh axes of a system, and no system is selected",
                            over.span, "add `use system dgx_h100` (or a system of your own) before this line")
    if spec.name != "all_reduce":
        raise SemanticError("a collective over several axes is an all-reduce (`all_reduce(x, over = "
                            "gpu * node)`, the inner axis first)", over.span,
                            "for another collective, call it once per axis")
    meshes = []
    for a in axes:
        m = system.axis(a.id)
        if m is None:
            raise r.unknown(a, f"axis of system '{system.name}'", [x.name for x in system.axes])
        if any(m.name == seen.name for seen in meshes):
            raise SemanticError(f"axis '{m.name}' is named twice", over.span)
        meshes.append(m)
    choice = None
    if "algorithm" in kw:
        algo = _name_value(kw["algorithm"], "algorithm = hierarchical, flat or simultaneous")
        if algo.id not in ALGORITHMS_OVER_AXES:
            raise SemanticError(f"an all-reduce over several axes is hierarchical, flat or simultaneous, "
                                f"not '{algo.id}'", algo.span, did_you_mean(algo.id, ALGORITHMS_OVER_AXES))
        choice = algo.id
    ops = r.program.ops
    bindings = r.program.bindings
    n = x.bytes
    total = sympy.Mul(*[m.size for m in meshes])
    flat_spec = ops["all_reduce"]
    if choice == "simultaneous":
        # one kernel over `x+y+z`; `analysis.comms.kernel_comms` prices it on the axes' links together
        return build(flat_spec, s.name, x, "+".join(m.name for m in meshes), total, 0, call.span, bindings,
                     scope=r.scope_path, repeat=r.repeat_path)
    flat_axis = "·".join(m.name for m in meshes)
    slow = min((m.link for m in meshes), key=lambda l: (l.bandwidth.xreplace(bindings)))
    flat_comms = comms_of(flat_spec, flat_axis, total, n)
    t_flat = flat_comms.sent / slow.bandwidth + flat_comms.steps * max(
        (m.link.latency for m in meshes), key=lambda e: e.xreplace(bindings))
    parts = _hierarchical_parts(ops, meshes, n)
    t_hier = sympy.Add(*[c.sent / m.link.bandwidth + c.steps * m.link.latency
                         for c, m in ((comms_of(o, m.name, m.size, size), m) for o, m, size in parts)])
    if choice is None:
        diff = (t_flat - t_hier).xreplace(bindings)
        choice = "flat" if diff.is_negative else "hierarchical"
    if choice == "flat":
        return build(flat_spec, s.name, x, flat_axis, total, 0, call.span, bindings,
                     scope=r.scope_path, repeat=r.repeat_path)
    # hierarchical: 2k − 1 kernels; all but the last added here, the last returned as the call's own
    axis = _dim_axis(r, kw.get("axis"), x)
    names = _hierarchical_names(s.name, meshes)
    current = x
    for (op, mesh, _), name in zip(parts[:-1], names[:-1]):
        node, tensor = build(op, name, current, mesh.name, mesh.size, axis, call.span, bindings,
                             scope=r.scope_path, repeat=r.repeat_path)
        r.define("value", name, call.span)
        r.program.tensors[tensor.name] = r.stored(tensor)
        r.program.nodes[node.name] = node
        current = tensor
    op, mesh, _ = parts[-1]
    return build(op, s.name, current, mesh.name, mesh.size, axis, call.span, bindings,
                 scope=r.scope_path, repeat=r.repeat_path)


def _hierarchical_parts(ops, meshes, n) -> list:
    """(op, axis, input bytes per chip) of each phase: reduce-scatters from the innermost axis out,
    the all-reduce over the outermost, all-gathers back in."""
    scatters, size = [], n
    for m in meshes[:-1]:
        scatters.append((ops["reduce_scatter"], m, size))
        size = size / m.size
    gathers = [(ops["all_gather"], m, size * sympy.Mul(*[a.size for a in meshes[i + 1:-1]]))
               for i, m in reversed(list(enumerate(meshes[:-1])))]
    return [*scatters, (ops["all_reduce"], meshes[-1], size), *gathers]


def _hierarchical_names(name: str, meshes) -> list:
    """The kernels' names: NAME_scatter (innermost axis), NAME_scatter_AXIS (further in), NAME_outer,
    NAME_gather_AXIS, and NAME itself for the last all-gather (two axes: NAME_scatter, NAME_outer, NAME)."""
    inner = meshes[:-1]
    scatters = [f"{name}_scatter"] + [f"{name}_scatter_{m.name}" for m in inner[1:]]
    gathers = [f"{name}_gather_{m.name}" for m in reversed(inner[1:])] + [name]
    return [*scatters, f"{name}_outer", *gathers]


def _algorithm(r, spec: OpSpec, option: ast.Option) -> OpSpec:
    algo = _name_value(option, "algorithm names a variant, e.g. `algorithm = tree`")
    name = f"{spec.name}_{algo.id}"
    other = r.program.ops.get(name)
    if other is None or other.kind != "collective":
        known = sorted(o[len(spec.name) + 1:] for o, v in r.program.ops.items()
                       if o.startswith(spec.name + "_") and v.kind == "collective")
        raise SemanticError(f"there is no algorithm '{algo.id}' for {spec.name} (no collective op '{name}')",
                            algo.span, did_you_mean(algo.id, known) or
                            (f"algorithms: {', '.join(known)}" if known else
                             f"define one: `op {name}(x): collective, sent = ..., steps = ...`"))
    return other


def _name_value(option: ast.Option, hint: str) -> ast.Name:
    if not isinstance(option.value, ast.Name):
        raise SemanticError(f"'{option.name}' takes a name", option.value.span, hint)
    return option.value


def _dim_axis(r, option, x: Tensor) -> int:
    if option is None:
        return 0
    value = r.expect(option.value, DIMENSIONLESS, "an axis").expr
    if not value.is_Integer or not -len(x.shape) <= int(value) < max(len(x.shape), 1):
        raise SemanticError(f"axis {value} is out of range for {x.name}", option.value.span)
    return int(value) % max(len(x.shape), 1)
