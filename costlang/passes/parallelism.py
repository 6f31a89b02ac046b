"""Sharding, second half: the collectives that pipeline and data parallelism add to the per-chip program.

Input: the per-chip tensors and nodes `passes.shard` built (local shapes, per-chip FLOPs), the
program's `parallel pipeline` / `parallel data` statements and the mesh axis sizes. Output: the
same, with
- `parallel pipeline over AXIS { microbatches = m }`: every top-level repeat (the layer stack)
  runs count/p of its layers on each of the p stages, and a `send` of the stack's output crosses
  to the next stage (m sends of a micro-batch each: sent n in total, m latency steps); the step
  takes (m + p − 1)/m times the stage's busy time (`pipeline_stretch`: the bubble);
- `parallel data over AXIS { gradients = DTYPE }`: a training step. One all-reduce of every
  weight's gradient (the chip's weights, in DTYPE, bucketed into one buffer as DDP does) runs at
  the end of the step; the gradient buffer is resident (role "gradient").
"""
from __future__ import annotations

import dataclasses
from typing import Optional

import sympy

from costlang.errors import SemanticError
from costlang.ir.program import OpNode, Repeat, Tensor
from costlang.ir.system import comms_of

__all__ = ["fresh", "collective_node", "stage_repeats", "insert_sends", "insert_gradient_all_reduce",
           "insert_all_to_all", "pipeline_stretch", "bubble_fraction", "once_per_step", "insert_zero", "zero_stage", "zero_shard", "stage_share", "scale_to_stage", "is_backward_send",
           "insert_dense_all_reduce", "end_weights", "smaller_end", "trainable_count"]


def fresh(name: str, taken) -> str:
    """`name`, or `name_2`, `name_3`, ... when it is taken."""
    if name not in taken:
        return name
    i = 2
    while f"{name}_{i}" in taken:
        i += 1
    return f"{name}_{i}"


def collective_node(program, op: str, algorithm, name: str, source: Tensor, out: str, axis: str, size,
                    span, repeat=(), scope="", message=None) -> OpNode:
    """A node of collective `op` (or `op_ALGORITHM`) reading `source` and writing `out`; its message is
    `source`'s bytes unless stated."""
    op_name = op if algorithm is None else f"{op}_{algorithm.id}"
    spec = program.ops.get(op_name)
    if spec is None or spec.kind != "collective":
        raise SemanticError(f"there is no collective '{op_name}'", algorithm.span if algorithm else span)
    return OpNode(name, spec, (source.name,), out, sympy.Integer(0), source.dtype, span, scope=scope,
                  repeat=repeat, comms=comms_of(spec, axis, size, source.bytes if message is None else message))


def _option(spec, key, default=None):
    return dict(spec.options).get(key, default)


# --- pipeline ------------------------------------------------------------------------------------

def stage_repeats(program, pipeline, sizes, bindings) -> dict:
    """The top-level repeats with count/p layers each (p = the pipeline axis's size)."""
    p = sizes[pipeline.axis]
    tops = [r for r in program.repeats.values() if _top_level(r)]
    if not tops:
        raise SemanticError("pipeline parallelism splits a stack of repeated layers into stages, and this "
                            "program repeats nothing", pipeline.span,
                            "write the layers as `layers = repeat(L) layer(x, ...)`")
    out = dict(program.repeats)
    for r in tops:
        per_stage = r.count / p
        bound = per_stage.xreplace(bindings)
        if bound.is_number and not (bound.is_integer and bound.is_positive):
            raise SemanticError(f"the {r.count.xreplace(bindings)} layers of '{r.name}' do not divide into "
                                f"{p.xreplace(bindings)} pipeline stages", pipeline.span,
                                "pick a stage count that divides the layer count")
        v = _option(pipeline, "virtual", sympy.Integer(1))
        chunk = (per_stage / v).xreplace(bindings)
        if chunk.is_number and not (chunk.is_integer and chunk.is_positive):
            raise SemanticError(f"the {per_stage.xreplace(bindings)} layers of a stage of '{r.name}' do not divide "
                                f"into {v.xreplace(bindings)} virtual stages", pipeline.span,
                                "interleaving needs layers ÷ (stages · virtual) whole: pick a virtual count that "
                                "divides the layers per stage")
        out[r.name] = dataclasses.replace(r, count=per_stage)
    return out


def _top_level(r) -> bool:
    """A repeat outside any other, a training step's micro-batch repeat (frontend.optimizer) aside:
    the layer stack that pipeline stages split."""
    return r.name != "micro_batches" and all(o == "micro_batches" for o in r.outer)


def insert_sends(program, nodes: dict, tensors: dict, pipeline, sizes) -> dict:
    """After each top-level repeat's output: the stage's `send` to the next stage; in a training step
    also, where the gradient of that output enters the layers' backward, the send of that gradient
    back to the previous stage (`{ direction = backward }`). Interleaved (`virtual = v`), each
    micro-batch crosses v times as many stage boundaries: v times the bytes and the latency terms."""
    m = _option(pipeline, "microbatches", sympy.Integer(1))
    v = _option(pipeline, "virtual", sympy.Integer(1))
    if sizes[pipeline.axis].xreplace(program.bindings) == 1:
        return nodes   # one stage: nothing crosses to another
    tops = [r for r in program.repeats.values() if _top_level(r)]
    crossing = {r.name: r.name for r in tops}      # tensor → what it crosses (forward: the output)
    if program.training is not None:
        for r in tops:
            grad = _gradient_entering(program, r)
            if grad is not None:
                crossing[grad] = r.name
    out: dict = {}
    for n in nodes.values():
        if n.output not in crossing:
            out[n.name] = n
            continue
        taken = set(tensors) | set(nodes) | set(out)
        stage = fresh(f"{n.output}_stage", taken)
        tensors[stage] = dataclasses.replace(tensors[n.output], name=stage, storage=stage)
        out[n.name] = dataclasses.replace(n, output=stage)
        name = fresh(f"{n.output}_send", taken | {stage})
        send = collective_node(program, "send", None, name, tensors[stage], n.output, pipeline.axis,
                               sizes[pipeline.axis], pipeline.span, scope=n.scope,
                               repeat=tuple(r for r in n.repeat if r == "micro_batches"))
        if n.output != crossing[n.output]:
            send = dataclasses.replace(send, options=(("direction", "backward"),))
        # m micro-batches cross one after another: the same bytes in all, m latency terms
        c = send.comms
        out[name] = dataclasses.replace(send, comms=dataclasses.replace(
            c, steps=c.steps * m * v, steps_formula=c.steps_formula * m * v, sent=c.sent * v,
            sent_formula=c.sent_formula * v))
    return out


def _gradient_entering(program, r) -> Optional[str]:
    """The gradient of repeat r's output that its layers' backward reads: the last tensor written
    outside the layers, named as a gradient of the output, that a node inside them reads."""
    inside = lambda n: r.name in n.repeat  # noqa: E731
    read_inside = {t for n in program.nodes.values() if inside(n) for t in n.inputs}
    forward = set(program.training.forward_nodes)
    found = None
    for n in program.nodes.values():
        if (n.output and not inside(n) and n.output.startswith(f"{r.name}.grad") and n.output in read_inside
                and n.name not in forward):
            found = n.output
    return found


def is_backward_send(node) -> bool:
    """A pipeline's send of an activation gradient back to the previous stage."""
    return node.option("direction") == "backward"


def pipeline_stretch(program) -> sympy.Expr:
    """(m + (p − 1)/v)/m: the step time over the stage's busy time (1 without a pipeline); with v
    virtual stages per chip (interleaved 1F1B) the fill and drain take (p − 1)/v micro-batch
    times, so the bubble over the busy time is (p − 1)/(v·m) (Narayanan et al. 2021, §2.2)."""
    spec = next((s for s in program.parallels if s.kind == "pipeline"), None)
    if spec is None or program.system is None:
        return sympy.Integer(1)
    p, m = program.system.axis(spec.axis).size, _option(spec, "microbatches", sympy.Integer(1))
    v = _option(spec, "virtual", sympy.Integer(1))
    return (m + (p - 1) / v) / m


def once_per_step(program) -> frozenset:
    """The collectives that run once per step after a pipeline drains: the gradient all-reduce."""
    return frozenset(n.name for n in program.nodes.values()
                     if n.kind == "collective" and program.tensors[n.inputs[0]].role == "gradient")


def bubble_fraction(program) -> sympy.Expr:
    """(p − 1)/(v·m + p − 1), the idle fraction of a pipeline step: 1 − 1/stretch."""
    return sympy.cancel(1 - 1 / pipeline_stretch(program))   # one fraction, (p − 1)/(v·m + p − 1)


# --- expert parallel ----------------------------------------------------------------------------

def insert_all_to_all(program, nodes: dict, tensors: dict, expert, sizes, experts: set, share=None) -> dict:
    """Around each expert kernel: the all-to-all that dispatches its tokens to the chips holding their
    experts, and the one that brings the results back (combine). Each moves top_k copies of the
    chip's tokens (`top_k` of the kernel, 1 when unstated); the kernel does 1/p of the work."""
    p = sizes[expert.axis]
    share = p if share is None else share   # the chips the tokens split over (× the data axis with it)
    algorithm = _option(expert, "algorithm")
    out: dict = {}
    for n in nodes.values():
        if n.name not in experts:
            out[n.name] = n
            continue
        k = n.option("top_k") or sympy.Integer(1)
        taken = set(tensors) | set(nodes) | set(out)
        x = tensors[n.inputs[0]]
        routed = fresh(f"{n.name}_dispatched", taken)
        tensors[routed] = dataclasses.replace(x, name=routed, role="intermediate", storage=routed)
        name = fresh(f"{n.name}_dispatch", taken | {routed})
        out[name] = collective_node(program, "all_to_all", algorithm, name, x, routed, expert.axis, p, n.span,
                                    n.repeat, n.scope, message=k * x.bytes)
        partial = fresh(f"{n.output}_experts", taken | {routed, name})
        tensors[partial] = dataclasses.replace(tensors[n.output], name=partial, role="intermediate", storage=partial)
        out[n.name] = dataclasses.replace(n, inputs=(routed,) + n.inputs[1:], output=partial, flops=n.flops / share,
                                          reads=n.reads / share if n.reads is not None else None)
        combine = fresh(f"{n.name}_combine", taken | {routed, name, partial})
        out[combine] = collective_node(program, "all_to_all", algorithm, combine, tensors[partial], n.output,
                                       expert.axis, p, n.span, n.repeat, n.scope, message=k * tensors[partial].bytes)
    return out


# --- data parallel training ----------------------------------------------------------------------

def insert_gradient_all_reduce(program, nodes: dict, tensors: dict, data, sizes, repeats,
                               elsewhere=frozenset()) -> None:
    """The gradient buffer (the chip's weights, in the gradient dtype; under a pipeline the stage's
    that holds the most, less the other end's `elsewhere`) and its all-reduce over the axis."""
    dtype = _option(data, "gradients")
    count = lambda t: sympy.Mul(*[repeats[r].count for r in t.repeat])  # noqa: E731
    numel = sympy.Add(*[t.numel * count(t) for t in tensors.values()
                        if t.role == "weight" and t.storage == t.name and t.name not in elsewhere])
    if numel == 0:
        raise SemanticError("a training step all-reduces the weights' gradients, and this program has no "
                            "weights", data.span)
    node = _buffer_all_reduce(program, nodes, tensors, "gradients", dtype, numel, None, data, sizes)
    nodes[node.name] = node


def _buffer_all_reduce(program, nodes: dict, tensors: dict, base: str, dtype, numel, storage, spec, sizes) -> OpNode:
    """A gradient buffer of `numel` elements (`base`; a part of `storage`, or a buffer of its own)
    and its all-reduce over `spec`'s axis, reduced in place: the result is the buffer again (its
    storage), not a second one. The node is returned, not placed."""
    taken = set(tensors) | set(nodes)
    grads = fresh(base, taken)
    storage = storage or grads
    tensors[grads] = Tensor(grads, dtype, (numel,), "gradient", spec.span, storage)
    reduced = fresh(f"{base}_reduced", taken | {grads})
    tensors[reduced] = Tensor(reduced, dtype, (numel,), "intermediate", spec.span, storage)
    name = fresh(f"{base}_all_reduce", taken | {grads, reduced})
    node = collective_node(program, "all_reduce", _option(spec, "algorithm"), name, tensors[grads], reduced,
                           spec.axis, sizes[spec.axis], spec.span)
    # no FLOPs: its "math" dtype is the model's (one the chip states a peak for), not the gradients'
    math = next(t.dtype for t in tensors.values() if t.role == "weight")
    return dataclasses.replace(node, math_dtype=math)


def insert_dense_all_reduce(program, nodes: dict, tensors: dict, expert, sizes, dense) -> dict:
    """Expert and data parallelism in a training step (the batch over both axes): the gradients of
    the weights every chip holds whole (attention, norms, router: `dense` parameters on the chip) are
    summed over the expert axis too, once per step, before the data-parallel reduction of the whole
    buffer: an all-reduce over the expert axis (DeepSpeed-MoE's non-expert parameters reduce over
    every chip; the experts' over the data axis alone)."""
    training = program.training
    if dense == 0 or sizes[expert.axis].xreplace(program.bindings) == 1:
        return nodes
    node = _buffer_all_reduce(program, nodes, tensors, "dense_gradients", tensors[training.buffer].dtype, dense,
                              training.buffer, expert, sizes)
    out: dict = {}
    for k, n in nodes.items():
        if k == training.update:
            out[node.name] = node
        out[k] = n
    if node.name not in out:   # no optimizer: the reduction ends the step
        out[node.name] = node
    return out


# --- ZeRO: a training step's gradient reduction and parameter gathers ----------------------------

def zero_stage(program) -> int:
    """The training step's ZeRO stage (`train { zero = k }`; 0 without ZeRO or without training)."""
    t = program.training
    return int(t.option("zero", 0)) if t is not None else 0


def zero_shard(n, size, bindings) -> sympy.Expr:
    """One chip's part of a flat buffer of n elements under ZeRO over `size` chips: n/size, or
    ⌈n/size⌉ when size does not divide n (ZeRO pads its flat buffers to a multiple of N_d)."""
    part = n / size
    bound = part.xreplace(bindings)
    return part if not bound.is_number or bound.is_integer else sympy.ceiling(part)


def stage_share(program, repeats, tensors=None, elsewhere=frozenset()) -> sympy.Expr:
    """The part of the trainable parameters one chip holds: n with the stage's repeat counts and the
    chip's split of each weight (tensor or expert parallelism: `tensors`, the sharded ones), less the
    weights another pipeline stage holds (`elsewhere`), over n with the whole model's (1 without a
    pipeline or a split weight)."""
    whole = trainable_count(program, program.tensors, program.repeats)
    held = trainable_count(program, tensors or program.tensors, repeats, lambda k: k not in elsewhere)
    return sympy.cancel(held / whole) if whole != 0 else sympy.Integer(1)


def trainable_count(program, held: dict, repeats: dict, keep=lambda name: True) -> sympy.Expr:
    """The trainable parameters (weights not frozen, each counted at its storage) that `keep` admits:
    each weight's element count in `held` (whole, or one chip's part) × its repeat counts in `repeats`."""
    return sympy.Add(*[held[k].numel * sympy.Mul(*[repeats[r].count for r in t.repeat])
                       for k, t in program.tensors.items()
                       if t.role == "weight" and not t.frozen and t.storage == t.name and keep(k)])


def end_weights(program) -> tuple[frozenset, frozenset]:
    """The weights outside the staged layers that the first pipeline stage reads (before the layers:
    the embedding) and those the last reads (after them: the final norm, the head), by the forward's
    order; a weight read on both sides (tied embeddings) is in both."""
    staged = {r.name for r in program.repeats.values() if _top_level(r)}
    forward = set(program.training.forward_nodes) if program.training is not None else None
    order = [n for n in program.nodes.values() if forward is None or n.name in forward]
    inside = [any(r in staged for r in n.repeat) for n in order]
    if not any(inside):
        return frozenset(), frozenset()
    start = inside.index(True)
    first, last = set(), set()
    for i, n in enumerate(order):
        if inside[i]:
            continue
        for name in n.inputs:
            storage = program.tensors[program.tensors[name].storage]
            if storage.role == "weight" and not any(r in staged for r in storage.repeat):
                (first if i < start else last).add(storage.name)
    return frozenset(first), frozenset(last)


def smaller_end(program, tensors, ends, bindings) -> frozenset:
    """Of the two ends' weights, those only the smaller end holds (its bytes per chip, `tensors`):
    the busiest stage holds the larger. Nothing when they cannot be ordered or one end has none."""
    first, last = ends
    only_first, only_last = first - last, last - first
    if not only_first or not only_last:
        return frozenset()
    size = lambda names: sympy.Add(*[tensors[k].bytes for k in names]).xreplace(bindings)  # noqa: E731
    a, b = size(only_first), size(only_last)
    if not (a.is_number and b.is_number):
        return frozenset()
    return frozenset(only_last if b <= a else only_first)


def scale_to_stage(program, nodes: dict, tensors: dict, share) -> None:
    """One chip's gradient buffer, optimizer states and update: `share` of the whole model's (its
    pipeline stage's layers, its part of each weight split over tensor or expert axes)."""
    training = program.training
    if share == 1:
        return
    for k, t in list(tensors.items()):
        if (t.role == "state" or k == training.buffer) and t.storage == t.name and len(t.shape) == 1:
            tensors[k] = dataclasses.replace(t, shape=(t.shape[0] * share,))
    u = nodes.get(training.update)
    if u is not None:
        nodes[u.name] = dataclasses.replace(u, flops=u.flops * share,
                                            reads=u.reads * share if u.reads is not None else None,
                                            writes=u.writes * share if u.writes is not None else None)


def insert_zero(program, nodes: dict, tensors: dict, data, sizes, share=sympy.Integer(1)) -> dict:
    """The collectives of a data-parallel training step over N_d = the data axis's size, G the
    gradient buffer's bytes (n·sizeof(gradients)), P the parameters' (n·sizeof(weights)):
    - stage 0 (plain data parallelism, DDP): one all-reduce of the buffer (G) before the update;
    - stage 1 (optimizer states sharded) and 2 (gradients too): a reduce-scatter of the buffer (G)
      before the update, which then runs on the chip's 1/N_d of the parameters, and an all-gather
      of the updated parameters (each chip sends its P/N_d) after it;
    - stage 3 (parameters too; FSDP): the reduce-scatter and the update as in stage 2, and the
      parameters all-gathered before the forward and again before the backward, not after the update.
    The sharded tensors themselves (states from stage 1, the gradient buffer from stage 2) get their
    1/N_d shapes in passes.shard. The collectives are placed in the step's order: gathers before the
    first forward and the first backward node, the reduction before the optimizer's update."""
    training = program.training
    stage = zero_stage(program)
    axis, size = data.axis, sizes[data.axis]
    algorithm = _option(data, "algorithm")
    buffer = tensors[training.buffer]
    whole = program.tensors[training.buffer]            # n elements, before any split
    n = whole.numel * share                             # a pipeline stage's part of them
    wt = next(t.dtype for t in tensors.values() if t.role == "weight")
    taken = set(tensors) | set(nodes)

    def name(base):
        out = fresh(base, taken)
        taken.add(out)
        return out

    def collective(op, label, source, out, message, repeat=()):
        node = collective_node(program, op, algorithm if op == "all_reduce" else None, name(label), source, out,
                               axis, size, data.span, repeat=repeat, message=message)
        return dataclasses.replace(node, math_dtype=wt)   # no FLOPs: the model's dtype, one with a peak

    before: dict = {}   # node name → collectives placed before it
    after: dict = {}
    update = training.update
    G = whole.bytes * share
    if stage == 0:
        reduced = name(f"{training.buffer}_reduced")
        # reduced in place: the result is the gradient buffer again (its storage), not a second buffer
        tensors[reduced] = Tensor(reduced, buffer.dtype, (n,), "intermediate", data.span, buffer.name)
        red = collective("all_reduce", f"{training.buffer}_all_reduce", buffer, reduced, G)
    else:
        shard = name(f"{training.buffer}_shard")
        part = zero_shard(n, size, program.bindings)
        tensors[shard] = Tensor(shard, buffer.dtype, (part,), "intermediate", data.span, buffer.name,
                                partial=True)
        red = collective("reduce_scatter", f"{training.buffer}_reduce_scatter", buffer, shard, G)
        if update is not None:
            u = nodes[update]
            nodes[update] = dataclasses.replace(u, inputs=(shard,) + u.inputs[1:])
        local = name("parameters_shard")
        # stage 3: the chip's 1/N_d of the parameters is all it holds of them; each weight is gathered
        # into place for its use (a part of that storage: its readers read the whole weight; the
        # gathered weights in flight are not counted in the footprint)
        tensors[local] = Tensor(local, wt, (part,), "weight" if stage == 3 else "intermediate", data.span,
                                local)
        if stage == 3:
            for k, t in list(tensors.items()):
                if t.role == "weight" and t.storage == t.name and not t.frozen and k != local:
                    tensors[k] = dataclasses.replace(t, storage=local, partial=True)
        P_shard = part * wt.size
        gathered = name("parameters")
        # the gathered parameters are the weights themselves, in place: no second copy
        tensors[gathered] = Tensor(gathered, wt, (n,), "intermediate", data.span, local)
        if stage in (1, 2):
            after.setdefault(update, []).append(
                collective("all_gather", "parameters_all_gather", tensors[local], gathered, P_shard))
        else:
            micro = tuple(r for r in ("micro_batches",) if r in program.repeats)
            forward = [k for k in nodes if k in set(training.forward_nodes)]
            backward = [k for k in nodes if k not in set(training.forward_nodes) and nodes[k].kind != "collective"
                        and k != update and nodes[k].scope != "optimizer"]
            if forward:
                before.setdefault(forward[0], []).append(collective(
                    "all_gather", "parameters_all_gather_forward", tensors[local], gathered, P_shard, micro))
            if backward:
                again = name("parameters_backward")
                tensors[again] = Tensor(again, wt, (n,), "intermediate", data.span, local)
                before.setdefault(backward[0], []).append(collective(
                    "all_gather", "parameters_all_gather_backward", tensors[local], again, P_shard, micro))
    if update is not None:
        before.setdefault(update, []).insert(0, red)
    out: dict = {}
    for k, node in nodes.items():
        for c in before.get(k, []):
            out[c.name] = c
        out[k] = node
        for c in after.get(k, []):
            out[c.name] = c
    if update is None:  # no optimizer: the reduction ends the step
        out[red.name] = red
    return out
