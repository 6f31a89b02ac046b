"""The backward pass, derived from the forward graph op by op: `train { ... }` → forward + backward.

Input: the resolver after the main file (its `Program.nodes` are the forward graph, in definition
order, which is topological) and the gradient rules the stdlib states next to each op
(`grad matmul(a, b) { da = dy @ transpose(b); db = transpose(a) @ dy }`, stdlib/ops.cost). Output:
the backward's nodes and tensors appended to the program, in reverse order of the forward, each
an ordinary node that fusion, tiling, sharding and the roofline treat like any other.

How it works (reverse-mode differentiation, the textbook algorithm):
- Which tensors need a gradient: the trainable weights (every weight not declared `frozen`),
  and every result computed from one of them. Inputs never need one; a node none of whose
  inputs needs a gradient gets no backward (frozen weights are pruned this way).
- The seeds: each program output (or, without `output`, each result nothing reads) that needs a
  gradient gets `<out>.grad`, an input of its own shape and dtype: the loss's gradient.
- For each forward node, last first: its result's gradient is the sum of the contributions its
  readers made (one `add` kernel per extra contribution); the op's rule is renamed to the node's
  tensors (`a` → its first input, `y` → its result, `dy` → that gradient, `da` → a new tensor
  `<input>.grad`) and resolved as ordinary statements, in the node's block instance and repeats.
  A repeated body's backward is one body too: `repeat(L)` stays one repeat, analysed once.
- Shapes back to the input's: a contribution larger than its input is summed over the broadcast
  dims. For a matmul (a weight's dW = Xᵀ·dY over a batch of rows) the sum is its contraction,
  so the matmul's result takes the weight's shape and its FLOPs are unchanged (2·rows·d·n); for
  other ops a reduction kernel sums it (a bias's gradient). Same size, other shape: a view.
- A matmul's `density` (causal attention) carries to the matmuls of its gradient.
- A collective written in the file transposes (an all-gather's gradient is a reduce-scatter over
  the same axis); the ones `parallel` and `shard` insert follow from the splits of the backward.
- A custom kernel states its own backward (`backward_flops`, `backward_reads`, `backward_writes`):
  one kernel that writes the gradients of all its inputs that need one; without them a training
  step through it is an error at the kernel.
- Weight gradients take the role `gradient`: resident for the whole step, × their repeat count.

Recomputation (`train { recompute = ... }`): some forward nodes run again just before the
backward that needs them, as copies (`<result>.recompute`, `OpNode.recompute` set: hardware FLOPs,
not model FLOPs) whose results the backward reads instead of the forward's, so the forward's
results die in the forward and the footprint follows from liveness alone.
- `full`: a checkpoint at each repeated body's input (Narayanan et al. 2021, Korthikanti et al.
  2022): the whole body's forward runs again before the body's backward (its input is the only
  tensor the body keeps).
- `selective` (Korthikanti et al. 2022): in each attention, the scores' matmul, the elementwise
  ops after it and the softmax run again before the backward of the matmul that reads the
  probabilities (P·V); neither the scores nor the probabilities are kept.
- Under `fusion flash` (as the file states it) a step recomputes as `selective` at least:
  FlashAttention's backward recomputes S and P from Q and K on chip (Dao et al. 2022,
  Algorithm 2), and passes/flash.py makes the copies and the attention's backward one kernel.
"""
from __future__ import annotations

import dataclasses
from typing import Optional

import sympy

from costlang.errors import CostlangError, ErrorGroup, SemanticError
from costlang.ir.program import OpNode, Tensor
from costlang.frontend import ast
from costlang.frontend.rename import rename

__all__ = ["define_grad", "derive_backward", "CUSTOM_BACKWARD"]

#: a collective's gradient: the collective that transposes it (`collective` below)
TRANSPOSE = {"all_gather": "reduce_scatter", "reduce_scatter": "all_gather", "all_reduce": "all_reduce",
             "all_to_all": "all_to_all", "send": "send"}

#: a custom kernel's backward, stated at the call (`{ backward_flops = ...; backward_reads = ... }`)
CUSTOM_BACKWARD = ("backward_flops", "backward_reads", "backward_writes")


def define_grad(r, s: ast.GradDef) -> None:
    """`grad OP(a, b) { da = ...; db = ... }`: checked against the op, kept as written."""
    op = s.op.id
    r.define("grad", op, s.span, overridable=True)
    spec = r.program.ops.get(op)
    if spec is None:
        raise r.unknown(s.op, "operator", r.program.ops)
    if spec.kind == "collective":
        raise SemanticError(f"'{op}' is a collective: its gradient follows from the sharding", s.op.span,
                            "a training step's collectives are inserted by `parallel`/`shard`")
    if len(s.params) != len(spec.params):
        raise SemanticError(f"'{op}' takes {len(spec.params)} tensor{'s' * (len(spec.params) != 1)} "
                            f"({', '.join(spec.params)}); its gradient names {len(s.params)}", s.span)
    reserved = {"y", "dy"} & set(s.params)
    if reserved:
        raise SemanticError(f"'{sorted(reserved)[0]}' names the op's result (y) or its gradient (dy) "
                            "in a gradient; rename the input", s.span)
    targets = {"d" + p for p in s.params}
    for st in s.body:
        if st.name.startswith("d") and st.name not in targets and st.name[1:] not in s.params \
                and st.name != "dy":
            continue  # a local of the rule (`dsum = ...`) is fine
        if st.name == "dy":
            raise SemanticError("`dy` is the gradient the rule is given; it cannot be assigned", st.name_span)
    r.grad_defs[op] = s


class _Backward:
    def __init__(self, r):
        self.r = r
        self.p = r.program
        self.contributions: dict[str, list[str]] = {}
        self.total: dict[str, str] = {}
        self.errors: list[CostlangError] = []
        self.gradients: dict[str, str] = {}  # weight → its gradient tensor

    # --- which tensors need a gradient -----------------------------------------------------------
    def needs(self, nodes) -> set[str]:
        """Trainable weights and what is computed from them. A repeated body's input is the previous
        iteration's output after the first: when that output needs a gradient, the body computes its
        input's gradient in every iteration (the first one's too: L, where L − 1 would do when the
        first input needs none)."""
        seed = {t.name for t in self.p.tensors.values() if t.role == "weight" and not t.frozen}
        while True:
            out = set(seed)
            for n in nodes:
                if n.output is not None and any(i in out for i in n.inputs):
                    out.add(n.output)
            more = {x for rep in self.p.repeats.values() for x, y in rep.carried if y in out} - out
            if not more:
                return out
            seed |= more

    def seeds(self, nodes, needs) -> list[str]:
        read = {i for n in nodes for i in n.inputs}
        outs = [o for o in sorted(self.p.outputs) if o in needs]
        outs += [n.output for n in nodes if n.output is not None and n.output in needs
                 and n.output not in read and n.output not in self.p.outputs]
        return outs

    # --- the gradient of a tensor: the sum of its contributions ----------------------------------
    def grad_of(self, name: str) -> Optional[str]:
        if name in self.total:
            return self.total[name]
        parts = self.contributions.get(name, [])
        if not parts:
            return None
        total = parts[0]
        if len(parts) > 1:
            t = self.p.tensors[name]
            # summed where the contributions are made: in a repeated body when one is (each layer sums
            # the gradient of its own input), else where the tensor is
            inner = max((self.p.tensors[q] for q in parts), key=lambda q: len(q.repeat))
            repeat = inner.repeat if len(inner.repeat) > len(t.repeat) else t.repeat
            scope = self._scope_of(inner.name) if repeat is not t.repeat else self._scope_of(name)
            with self.at(repeat, scope):
                for k, part in enumerate(parts[1:], 1):
                    target = self.new_name(name, "grad_sum")
                    call = ast.OpCall("add", (ast.Name(total, t.span), ast.Name(part, t.span)), (), None, None, (),
                                      t.span, t.span)
                    self.resolve(ast.Assign(target, call, False, t.span, t.span))
                    total = target
        self.total[name] = total
        return total

    def _scope_of(self, name: str) -> str:
        """The block instance of the node that computes `name` (a backward node is named as its result)."""
        node = self.p.nodes.get(name) or self.producer.get(name)
        return node.scope if node is not None and node.output == name else ""

    def new_name(self, base: str, what: str) -> str:
        from costlang.frontend.blocks import fresh_name
        return fresh_name(self.r, base, what)

    def at(self, repeat, scope):
        return _Where(self.r, repeat, scope)

    def resolve(self, st: ast.Assign) -> None:
        from costlang.frontend.blocks import assign
        assign(self.r, st)

    # --- one forward node ------------------------------------------------------------------------
    def node(self, n: OpNode, needs: set[str]) -> None:
        if n.output is None or n.output not in needs:
            return
        targets = [i for i in n.inputs if i in needs]
        if not targets:
            return
        dy = self.grad_of(n.output)
        if dy is None:
            return  # nothing downstream of it reaches the loss
        with self.at(n.repeat, n.scope):
            if n.op.kind == "custom":
                self.custom(n, dy, needs)
            elif n.op.kind == "collective":
                self.collective(n, dy)
            else:
                self.rule(n, dy, needs)

    def rule(self, n: OpNode, dy: str, needs: set[str]) -> None:
        g = self.r.grad_defs.get(n.op.name)
        if g is None:
            raise SemanticError(f"op '{n.op.name}' states no gradient, and a training step needs the "
                                f"gradient of '{n.name}'", n.span,
                                f"state it next to the op: `grad {n.op.name}({', '.join(n.op.params)}) "
                                "{ d" + (n.op.params[0] if n.op.params else "x") + " = ... }`")
        again = self.recomputed.get
        # each parameter of the rule: the tensor or the number written in its position (`c - x`
        # binds a to the number c and b to x; a number has no gradient, and stands as itself)
        operand = dict(zip(g.params, n.operands()))
        table: dict = {"y": again(n.output, n.output), "dy": dy}
        for param, value in operand.items():
            table[param] = again(value, value) if isinstance(value, str) \
                else ast.Const(value, _dimensionless(), n.span)
        for st in g.body:
            param = st.name[1:] if st.name.startswith("d") else None
            x = operand.get(param) if param in g.params else None
            if param in g.params:
                if not isinstance(x, str) or x not in needs:
                    continue
                name = self.new_name(x, "grad")
            else:
                name = self.new_name(n.output, st.name)
            table[st.name] = name
            renamed = dataclasses.replace(rename(st, table), name=name)  # the new name is not renamed again
            if n.constants:
                renamed = self.numbers_folded(renamed)
            passed = self.passed_on(renamed, x)
            if passed is not None:  # `dx = reshape(dy)` of the same size: the gradient itself
                table[st.name] = passed
                if x is not None:
                    self.contributions.setdefault(x, []).append(self.fitted(passed, x, n, made_here=False))
                continue
            renamed = self.shaped(renamed, x)
            before = set(self.p.nodes)
            self.resolve(renamed)
            self.carry_density(n, before)
            if x is not None:
                self.contributions.setdefault(x, []).append(self.fitted(name, x, n))

    def numbers_folded(self, st: ast.Assign) -> ast.Assign:
        """A rule's op applied to numbers only (pow's `log(a)` where a is the number operand c) is
        the number it computes, held as the function applied (`log(c)`): a number operand costs
        nothing whatever its value, so it is never evaluated."""
        def fold(e):
            if isinstance(e, ast.BinOp):
                left, right = fold(e.left), fold(e.right)
                return e if left is e.left and right is e.right else dataclasses.replace(e, left=left, right=right)
            if isinstance(e, ast.Neg):
                operand = fold(e.operand)
                return e if operand is e.operand else dataclasses.replace(e, operand=operand)
            if not isinstance(e, ast.Call):
                return e
            args = tuple(fold(a) for a in e.args)
            op = self.p.ops.get(e.func)
            if op is not None and op.kind == "elementwise" and not e.kwargs and args \
                    and all(isinstance(a, ast.Const) for a in args):
                return ast.Const(sympy.Function(e.func)(*(a.value for a in args)), _dimensionless(), e.span)
            return e if all(a is b for a, b in zip(args, e.args)) else dataclasses.replace(e, args=args)
        call = st.call
        args = tuple(fold(a) for a in call.args)
        if all(a is b for a, b in zip(args, call.args)):
            return st
        return dataclasses.replace(st, call=dataclasses.replace(call, args=args))

    def passed_on(self, st: ast.Assign, of: Optional[str]) -> Optional[str]:
        """`dx = reshape(t)` where t has x's shape, or x is broadcast (a bias): t itself, no node.
        `of` is the tensor the statement is the gradient of (None for a rule's temporary)."""
        call = st.call
        if (call.op != "reshape" or call.result_type is not None or of is None
                or len(call.args) != 1 or not isinstance(call.args[0], ast.Name)
                or call.args[0].id not in self.p.tensors):
            return None
        t = self.p.tensors[call.args[0].id]
        x = self.p.tensors[of]
        if _same(t.numel, x.numel, self.p) and not (len(t.shape) == len(x.shape)
                                                     and all(_same(a, b, self.p) for a, b in zip(t.shape, x.shape))):
            return None  # same size, other shape: a view (`shaped`)
        return t.name

    def shaped(self, st: ast.Assign, of: Optional[str]) -> ast.Assign:
        """A rule's view (`dx = reshape(dy)`) gets the type of the input it is the gradient of."""
        call = st.call
        if call.result_type is not None or of is None or call.op != "reshape":
            return st
        x = self.p.tensors[of]
        dims = tuple(ast.Const(d, _dimensionless(), st.span) for d in x.shape)
        dy = self.p.tensors[call.args[0].id] if isinstance(call.args[0], ast.Name) else None
        dtype = dy.dtype.name if dy is not None else x.dtype.name
        rt = ast.TensorType(dtype, dims, st.span, st.span)
        return dataclasses.replace(st, call=dataclasses.replace(call, result_type=rt))

    def carry_density(self, n: OpNode, before: set) -> None:
        density = n.option("density")
        if density is None:
            return
        for name in [k for k in self.p.nodes if k not in before]:
            m = self.p.nodes[name]
            if m.op.kind == "matmul" and m.option("density") is None:
                self.p.nodes[name] = dataclasses.replace(m, flops=m.flops * density,
                                                         options=m.options + (("density", density),))

    def fitted(self, name: str, x: str, n: OpNode, made_here: bool = True) -> str:
        """The contribution `name` brought to x's shape (see the module docstring). Only a matmul the
        rule itself made (`made_here`) takes the sum into its contraction; a gradient passed on
        unchanged (`reshape(dy)`) is another tensor's too."""
        g, want = self.p.tensors[name], self.p.tensors[x]
        if len(g.shape) == len(want.shape) and all(_same(a, b, self.p) for a, b in zip(g.shape, want.shape)):
            return name
        if _same(g.numel, want.numel, self.p):
            target = self.new_name(x, "grad_view")
            dims = tuple(ast.Const(d, _dimensionless(), n.span) for d in want.shape)
            call = ast.OpCall("reshape", (ast.Name(name, n.span),), (), None,
                              ast.TensorType(g.dtype.name, dims, n.span, n.span), (), n.span, n.span)
            self.resolve(ast.Assign(target, call, False, n.span, n.span))
            return target
        producer = self.p.nodes.get(name)
        extra = len(g.shape) - len(want.shape)
        if (made_here and producer is not None and producer.op.kind == "matmul" and extra > 0
                and all(_same(a, b, self.p) for a, b in zip(g.shape[extra:], want.shape))):
            # the sum over the leading (batch) dims is part of the contraction: same FLOPs
            self.p.tensors[name] = dataclasses.replace(g, shape=want.shape)
            self.p.nodes[name] = dataclasses.replace(producer, options=producer.options + (("sum_leading", extra),))
            return name
        # a broadcast operand (a bias): a reduction kernel sums the gradient to its shape
        target = self.new_name(x, "grad_sum")
        self.r.define("value", target, n.span)
        t = Tensor(target, g.dtype, want.shape, "intermediate", n.span, target, self.r.repeat_path)
        self.p.tensors[target] = t
        if len(g.shape) < len(want.shape) or not all(_same(a, b, self.p) for a, b in
                                                      zip(g.shape[len(g.shape) - len(want.shape):], want.shape)):
            raise SemanticError(f"the gradient of '{x}' ({len(g.shape)} dims) cannot be summed back to its shape",
                                n.span, "costlang sums a broadcast operand's gradient over leading dimensions")
        self.p.nodes[target] = OpNode(target, _reduction(self.p), (name,), target, g.numel, g.dtype, n.span,
                                      scope=self.r.scope_path, repeat=self.r.repeat_path,
                                      options=(("sum_leading", len(g.shape) - len(want.shape)),))
        return target

    def collective(self, n: OpNode, dy: str) -> None:
        """A collective written in the file transposes: an all-gather's gradient is a reduce-scatter
        over the same axis and dim, a reduce-scatter's an all-gather; an all-reduce's, an all-to-all's
        and a send's are the same collective (the adjoint of a sum over chips is a sum over chips;
        a send's gradient goes back the other way). The algorithm carries over when the transposed
        collective has it (`all_reduce_tree`), else the plain one runs."""
        from costlang.frontend.collectives import build
        base = next((b for b in sorted(TRANSPOSE, key=len, reverse=True) if n.op.name.startswith(b)), None)
        if base is None or n.comms is None:
            raise SemanticError(f"costlang does not know the gradient of the collective '{n.op.name}'", n.span,
                                f"its transpose is known for {', '.join(TRANSPOSE)}")
        other = TRANSPOSE[base]
        spec = self.p.ops.get(other + n.op.name[len(base):]) or self.p.ops[other]
        x, y, g = self.p.tensors[n.inputs[0]], self.p.tensors[n.output], self.p.tensors[dy]
        axis = next((i for i, (a, b) in enumerate(zip(x.shape, y.shape)) if not _same(a, b, self.p)), 0)
        name = self.new_name(x.name, "grad")
        self.r.define("value", name, n.span)
        node, tensor = build(spec, name, g, n.comms.axis, n.comms.group, axis, n.span, self.p.bindings,
                             scope=self.r.scope_path, repeat=self.r.repeat_path)
        self.p.tensors[name] = tensor
        self.p.nodes[name] = node
        self.contributions.setdefault(x.name, []).append(self.fitted(name, x.name, n))

    def custom(self, n: OpNode, dy: str, needs: set[str]) -> None:
        stated = {k: n.option(k) for k in CUSTOM_BACKWARD}
        if stated["backward_flops"] is None:
            raise SemanticError(f"the custom kernel '{n.name}' states no backward, and a training step "
                                "needs the gradient of its inputs", n.span,
                                "add `backward_flops = ...` (and `backward_reads`, `backward_writes` in bytes) "
                                "to its { ... }")
        grads = [i for i in dict.fromkeys(n.inputs) if i in needs]
        first = grads[0]
        x = self.p.tensors[first]
        name = self.new_name(first, "grad")
        self.r.define("value", name, n.span)
        self.p.tensors[name] = Tensor(name, x.dtype, x.shape, "intermediate", n.span, name, self.r.repeat_path)
        self.p.nodes[name] = OpNode(name, n.op, (dy,) + tuple(self.recomputed.get(i, i) for i in n.inputs), name,
                                    stated["backward_flops"],
                                    n.math_dtype, n.span, reads=stated["backward_reads"],
                                    writes=stated["backward_writes"], scope=self.r.scope_path,
                                    repeat=self.r.repeat_path,
                                    # an expert kernel's backward routes the tokens' gradients as its
                                    # forward routed the tokens (passes.parallelism.insert_all_to_all)
                                    options=tuple((k, v) for k, v in n.options if k in ("experts", "top_k")))
        self.contributions.setdefault(first, []).append(name)
        for other in grads[1:]:  # written by the same kernel: its `backward_writes` counts them
            t = self.p.tensors[other]
            gname = self.new_name(other, "grad")
            self.r.define("value", gname, n.span)
            self.p.tensors[gname] = Tensor(gname, t.dtype, t.shape, "intermediate", n.span, name,
                                           self.r.repeat_path, partial=True)
            self.p.gradient_seeds[gname] = other   # split as the input it is the gradient of (passes.shard)
            self.contributions.setdefault(other, []).append(gname)

    # --- the whole step --------------------------------------------------------------------------
    def run(self) -> None:
        nodes = list(self.p.nodes.values())
        self.producer = {n.output: n for n in nodes if n.output is not None}  # the forward's, once
        needs = self.needs(nodes)
        if not any(t.role == "weight" and not t.frozen for t in self.p.tensors.values()):
            raise SemanticError("a training step updates weights, and every weight here is frozen (or there "
                                "are none)", self.p.training.span, "declare a `weight`, or drop `frozen`")
        for o in self.seeds(nodes, needs):
            t = self.p.tensors[o]
            name = self.new_name(o, "grad")
            self.r.define("value", name, t.span)
            self.p.tensors[name] = Tensor(name, t.dtype, t.shape, "input", t.span, name, ())
            self.p.gradient_seeds[name] = o      # split as its forward output is (passes.shard)
            self.contributions.setdefault(o, []).append(name)
        self.recomputed: dict[str, str] = {}
        policy = self.p.training.recompute
        if policy == "none" and self.p.fusion == "flash":
            policy = "selective"  # FlashAttention's backward recomputes S and P (passes/flash.py)
        groups = recompute_groups(self.p, nodes, policy)
        for n in reversed(nodes):
            try:
                if n.name in groups:
                    self.recompute(groups[n.name])
                self.node(n, needs)
            except ErrorGroup as e:
                self.errors.extend(e.errors)
            except CostlangError as e:
                self.errors.append(e)
        for rep in self.p.repeats.values():  # a body's input's gradient is the previous layer's
            for x, _ in rep.carried:             # output's: its contributions summed in the body
                if x in self.contributions:
                    self.grad_of(x)
        for w in [t for t in self.p.tensors.values() if t.role == "weight" and not t.frozen]:
            g = self.grad_of(w.name)
            if g is None:
                continue
            t = self.p.tensors[g]
            self.p.tensors[g] = dataclasses.replace(t, role="gradient", repeat=w.repeat)
            self.gradients[w.name] = g


    def recompute(self, group: list) -> None:
        """Copies of the forward nodes `group` (in forward order), each reading the copies made
        before it, marked as recomputation; the backward reads their results from now on."""
        for m in group:
            if m.output is None:
                continue
            t = self.p.tensors[m.output]
            name = self.new_name(m.output, "recompute")
            self.r.define("value", name, m.span)
            storage = name if t.storage == t.name else self.recomputed.get(t.storage, t.storage)
            self.p.tensors[name] = dataclasses.replace(t, name=name, storage=storage)
            inputs = tuple(self.recomputed.get(i, i) for i in m.inputs)
            self.p.nodes[name] = dataclasses.replace(m, name=name, inputs=inputs, output=name, recompute=True)
            self.recomputed[m.output] = name


def recompute_groups(p, nodes, policy: str) -> dict:
    """The forward nodes to run again, by policy (see the module docstring): the node before whose
    backward a group is recomputed (the group's last reader in the forward) → the group. `policy` is
    the train statement's; a block call's `{ recompute = ... }` (`Program.recompute_calls`) overrides
    it for the nodes of that instance (the innermost instance that states one)."""
    calls = {name: pol for name, (pol, _) in p.recompute_calls.items()}

    def of(n: OpNode) -> tuple:
        """(the instance whose policy applies, or None for the train statement's; the policy)"""
        best = None
        for name, pol in calls.items():
            if (n.scope == name or n.scope.startswith(name + ".")) and (best is None or len(name) > len(best[0])):
                best = (name, pol)
        return best if best is not None else (None, policy)

    groups: dict = {}
    bodies: dict = {}
    for n in nodes:   # full: a checkpoint at each repeated body's input, or at the instance's that asks
        if n.kind == "collective":
            continue
        where, pol = of(n)
        if pol != "full":
            continue
        if n.repeat:
            bodies.setdefault(("repeat", n.repeat[0]), []).append(n)
        elif where is not None:
            bodies.setdefault(("instance", where), []).append(n)
    for body in bodies.values():
        groups[body[-1].name] = body
    if policy != "selective" and "selective" not in calls.values():
        return groups
    producer = {n.output: n for n in nodes if n.output is not None}
    readers: dict = {}
    for n in nodes:
        for i in n.inputs:
            readers.setdefault(p.tensors[i].storage if i in p.tensors else i, []).append(n)
    for n in nodes:
        if n.kind != "rowwise" or n.op.name != "softmax" or of(n)[1] != "selective":
            continue
        chain, m = [n], producer.get(n.inputs[0])
        while m is not None and m.kind in ("elementwise", "view"):
            chain.insert(0, m)
            m = producer.get(m.inputs[0])
        if m is None or m.kind != "matmul":
            continue  # not the scores of an attention (a router's softmax)
        chain.insert(0, m)
        last = _attention_reader(n, readers)
        if last is not None:
            groups[last.name] = chain
    return groups


def _attention_reader(softmax: OpNode, readers) -> Optional[OpNode]:
    """The matmul that reads the probabilities (P·V), through elementwise ops and views."""
    frontier = [softmax.output]
    while frontier:
        t = frontier.pop()
        for n in readers.get(t, []):
            if n.kind == "matmul":
                return n
            if n.kind in ("elementwise", "view") and n.output is not None:
                frontier.append(n.output)
    return None


class _Where:
    """Resolve in a block instance and its repeats (the forward node's), then restore."""

    def __init__(self, r, repeat, scope):
        self.r, self.repeat, self.scope = r, repeat, scope

    def __enter__(self):
        self.saved = (self.r.repeat_path, self.r.scope_path, self.r.expr_base)
        self.r.repeat_path, self.r.scope_path = tuple(self.repeat), self.scope

    def __exit__(self, *exc):
        self.r.repeat_path, self.r.scope_path, self.r.expr_base = self.saved


def _dimensionless():
    from costlang.units import DIMENSIONLESS
    return DIMENSIONLESS


def _same(a, b, p) -> bool:
    from costlang.ir.kinds import same_dim
    return same_dim(a, b, p.bindings)


def _reduction(p):
    from costlang.ir.program import OpSpec
    return p.ops.get("sum") or OpSpec("sum", ("x",), "reduce", sympy.Integer(1))


def derive_backward(r) -> dict[str, str]:
    """Append the backward of the program's forward graph (see the module docstring); the map
    weight → its gradient tensor. Errors are collected and raised together."""
    b = _Backward(r)
    b.run()
    if b.errors:
        raise ErrorGroup(b.errors)
    return b.gradients
