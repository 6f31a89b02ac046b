"""A training step after its backward: the gradient buffer, gradient accumulation and the optimizer.

Input: the resolver once `frontend.backward` has appended the backward (`Program.training` has its
`weight_grads`). Output, in this order:
- The gradient buffer. Every trainable weight's gradient (role `gradient`) becomes a part of one
  flat buffer `gradients` of n elements, n = Σ numel(W) × W's repeat count over the trainable
  weights (DDP's bucketed buffer): the buffer is resident once, the per-weight gradients are views
  of it. With `gradients = DTYPE` the buffer and the per-weight gradients are kept in DTYPE, else in
  the weights' dtype.
- Gradient accumulation (`micro_batches = m`): the forward and the backward run m times per
  optimizer step. They become the body of a repeat named `micro_batches` of count m: the analysis
  multiplies a repeated body's FLOPs, bytes, launches and collectives by its count and counts its
  activations once (each micro-batch frees what the last one needed), which is exactly gradient
  accumulation, kept exact and symbolic (m may be a free dim). Resident tensors (weights, caches,
  gradients, states) are not in the repeat: they are held once, whatever m.
- The optimizer (`optimizer = NAME`): the block NAME of stdlib/train.cost (NAME_master with
  `master = DTYPE`), called once at the top level on the gradient buffer as the instance `optimizer`.
"""
from __future__ import annotations

import dataclasses

import sympy

from costlang import _resources
from costlang.errors import SemanticError, did_you_mean
from costlang.ir.program import RESIDENT_ROLES, Repeat, Tensor
from costlang.frontend import ast

__all__ = ["finish_training", "OPTIMIZERS", "MICRO_BATCHES", "trainable_count"]

#: the optimizers stdlib/train.cost defines (each also as NAME_master)
OPTIMIZERS = ("sgd", "sgd_momentum", "adam", "adamw")
#: the repeat that holds the forward and backward under gradient accumulation
MICRO_BATCHES = "micro_batches"


def trainable_count(program) -> sympy.Expr:
    """n: the trainable parameters' elements, each weight × its repeat count (shared weights once)."""
    return sympy.Add(*[t.numel * program.count(t.repeat) for t in program.tensors.values()
                       if t.role == "weight" and not t.frozen and t.storage == t.name])


def finish_training(r) -> None:
    """The gradient buffer, the micro-batch repeat and the optimizer (see the module docstring)."""
    p = r.program
    training = p.training
    weights = [t for t in p.tensors.values() if t.role == "weight" and not t.frozen and t.storage == t.name]
    wt = weights[0].dtype
    data = next((s for s in p.parallels if s.kind == "data"), None)
    # the train statement's gradient dtype, else `parallel data { gradients = DTYPE }`'s, else the weights'
    gt = training.gradients or (dict(data.options).get("gradients") if data is not None else None) or wt
    buffer = _gradient_buffer(r, gt, training.span)
    m = training.option("micro_batches")
    if m is not None:
        _micro_batches(r, m, training.span)
    update = _optimizer(r, training, buffer, wt, gt) if training.optimizer is not None else None
    p.training = dataclasses.replace(p.training, buffer=buffer, update=update)


def _gradient_buffer(r, gt, span) -> str:
    from costlang.frontend.blocks import fresh_name
    p = r.program
    n = trainable_count(p)
    name = "gradients" if ("value", "gradients") not in r.origin else fresh_name(r, "train", "gradients")
    r.define("value", name, span)
    p.tensors[name] = Tensor(name, gt, (n,), "gradient", span, name, ())
    for _, g in p.training.weight_grads:
        t = p.tensors[g]
        if t.role != "gradient":
            continue
        if t.storage != t.name:  # a view of the gradient as its kernel wrote it (another shape)
            root = p.tensors[t.storage]
            if root.storage != root.name or root.role != "intermediate" or p.tensors[root.name] is t:
                continue  # a gradient passed on from another tensor: left as it is
            p.tensors[root.name] = dataclasses.replace(root, role="gradient", dtype=gt, storage=name,
                                                       partial=True, repeat=t.repeat)
        p.tensors[g] = dataclasses.replace(t, dtype=gt, storage=name, partial=True)
    return name


def _micro_batches(r, m, span) -> None:
    p = r.program
    if MICRO_BATCHES in p.repeats:
        raise SemanticError(f"'{MICRO_BATCHES}' names a repeat already; gradient accumulation needs the name",
                            span)
    p.repeats = {**{MICRO_BATCHES: Repeat(MICRO_BATCHES, m, span)},
                 **{k: dataclasses.replace(v, outer=(MICRO_BATCHES,) + v.outer) for k, v in p.repeats.items()}}
    for k, n in list(p.nodes.items()):
        p.nodes[k] = dataclasses.replace(n, repeat=(MICRO_BATCHES,) + n.repeat)
    for k, t in list(p.tensors.items()):
        storage = p.tensors.get(t.storage, t)
        if storage.role in RESIDENT_ROLES or t.role in RESIDENT_ROLES:
            continue
        p.tensors[k] = dataclasses.replace(t, repeat=(MICRO_BATCHES,) + t.repeat)
    p.instances = {k: dataclasses.replace(i, repeat=(MICRO_BATCHES,) + i.repeat) for k, i in p.instances.items()}


def _optimizer(r, training, buffer: str, wt, gt) -> str:
    from costlang.frontend.blocks import call_block
    name = training.optimizer
    span = training.span
    if name not in OPTIMIZERS:
        raise SemanticError(f"there is no optimizer '{name}'", span,
                            did_you_mean(name, OPTIMIZERS) or f"the stdlib's optimizers: {', '.join(OPTIMIZERS)}")
    master = training.option("master")
    block = f"{name}_master" if master is not None else name
    if block not in r.block_defs:
        r.import_path(_resources.stdlib_dir() / "train.cost", span)
    args = [ast.Name(buffer, span), ast.Name(wt.name, span), ast.Name(gt.name, span)]
    if master is not None:
        args.append(ast.Name(master.name, span))
    call = ast.OpCall(block, tuple(args), (), None, None, (), span, span)
    instance = "optimizer" if ("value", "optimizer") not in r.origin else "train.optimizer"
    saved = (r.repeat_path, r.scope_path, r.expr_base)
    r.repeat_path, r.scope_path, r.expr_base = (), "", instance
    before = set(r.program.nodes)
    try:
        call_block(r, call, (instance,), instance)
    finally:
        r.repeat_path, r.scope_path, r.expr_base = saved
    return next(k for k, n in r.program.nodes.items() if k not in before and n.kind == "custom")
