"""Training figures: a training step's FLOPs, time, tokens, MFU and HFU, time to train, per-chip memory.

Input: an `Analysis` of a program with `train { ... }` (its nodes after the backward, the optimizer and,
on many chips, the sharding pass). Output: `TrainingFigures` (data; the printers make the words).

Definitions (stated in docs/training.md):
- tokens per step: `train { tokens = N }`, else the model's first input (token ids: its elements;
  activations: its rows, the elements over the last dim), of the whole program (all chips), × the
  micro-batches of one optimizer step.
- model FLOPs: the forward and the backward of the derived graph without recomputation (every
  op's FLOPs × its repeat counts, the optimizer's update and the collectives left out), summed over
  the chips (a chip's FLOPs × the chip count: every chip runs the per-chip program). Per token,
  PaLM's 6·N + the attention term (Chowdhery et al. 2022, App. B) is its matmuls' share.
- attention FLOPs: the matmuls of two activations (no weight among their operands, and not a
  weight's gradient): QKᵀ and P·V, and in the backward their four gradients.
- hardware FLOPs: model FLOPs + recomputation. The nodes a recomputation policy adds are marked
  `recompute` (OpNode.recompute); with `recompute = full` and no such node the forward of every repeated body
  (the checkpointed layers) is counted once more, Megatron-LM's 8·P FLOPs per token.
- step time: the overlapped lower bound (launch + max(ΣT_compute, ΣT_memory, ΣT_comms)) and the
  serial upper bound (their sum), as t_overlap() and t_serial().
- MFU = model FLOPs / (step time × chips × peak), HFU the same with hardware FLOPs; peak: one chip's
  raw matrix peak of the dtype the model's matmuls run in. At the lower bound on the step time they
  are the best the model allows; given a measured step time, the achieved figures.
- memory per chip: weights, gradients and optimizer states resident on one chip (after ZeRO).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import sympy

__all__ = ["TrainingFigures", "training_figures", "DAY"]

DAY = sympy.Integer(86400)


@dataclass(frozen=True)
class TrainingFigures:
    zero: int
    chips: sympy.Expr
    data_chips: sympy.Expr           # N_d, the data-parallel axis's size (1 without one)
    tokens: sympy.Expr               # per optimizer step, all chips
    model_flops: sympy.Expr          # per step, all chips
    hardware_flops: sympy.Expr
    attention_flops: sympy.Expr
    optimizer_flops: sympy.Expr      # per step, all chips (not in the model's or hardware's)
    peak: sympy.Expr                 # one chip's raw peak
    peak_dtype: str
    step_lower: sympy.Expr
    step_upper: sympy.Expr
    weights: sympy.Expr              # resident bytes per chip
    gradients: sympy.Expr
    states: sympy.Expr
    optimizer: Optional[str] = None
    recompute: str = "none"
    #: block calls with a policy of their own (`{ recompute = ... }`): (instance, policy), in file order
    recompute_calls: tuple = ()
    #: `measure step { time = ... }`: the measured step time (None without one)
    measured: Optional[sympy.Expr] = None

    @property
    def memory(self) -> sympy.Expr:
        return self.weights + self.gradients + self.states

    def mfu(self, time=None) -> sympy.Expr:
        return self.model_flops / ((self.step_lower if time is None else time) * self.chips * self.peak)

    def hfu(self, time=None) -> sympy.Expr:
        return self.hardware_flops / ((self.step_lower if time is None else time) * self.chips * self.peak)

    def tokens_per_second(self, time=None) -> sympy.Expr:
        return self.tokens / (self.step_lower if time is None else time)

    def time_to_train(self, tokens, rate=None) -> sympy.Expr:
        """Seconds to train on `tokens`: steps × the step's lower bound; with `rate` (FLOP/s each
        chip achieves) the hardware FLOPs per token over the chips' rate (Narayanan et al. 2021:
        8·T·P/(n·X) under full recomputation)."""
        if rate is None:
            return tokens / self.tokens * self.step_lower
        return tokens * self.hardware_flops / self.tokens / (self.chips * rate)


def _count(program, repeat) -> sympy.Expr:
    return program.count(repeat)


def _is_recompute(n) -> bool:
    """A node a recomputation policy added (frontend.backward marks its copies `recompute`)."""
    return bool(getattr(n, "recompute", False)) or n.option("recompute") is not None


def _tokens(program, training) -> sympy.Expr:
    stated = training.option("tokens")
    micro = training.option("micro_batches")
    micro = sympy.Integer(1) if micro is None else micro
    if stated is not None:
        return stated * micro
    whole = program.whole if program.whole is not None else program
    inputs = [t for t in whole.tensors.values() if t.role == "input" and ".grad" not in t.name and t.shape]
    if not inputs:
        return micro
    t = inputs[0]
    integer = t.dtype.name.startswith(("int", "uint"))
    return (t.numel if integer or len(t.shape) < 2 else t.numel / t.shape[-1]) * micro


def training_figures(a) -> Optional[TrainingFigures]:
    """The figures of a training step (None for a program without `train`)."""
    from costlang.passes.parallelism import zero_stage
    p = a.program
    training = p.training
    if training is None:
        return None
    system = p.system
    chips = system.chips if system is not None and p.sharded else sympy.Integer(1)
    data = next((s for s in p.parallels if s.kind == "data"), None)
    data_chips = system.axis(data.axis).size if data is not None and system is not None else sympy.Integer(1)
    forward = set(training.forward_nodes)
    model = attention = recompute = optimizer = sympy.Integer(0)
    forward_repeated = sympy.Integer(0)
    marked = False
    tensors = p.tensors
    buffer = training.buffer
    for n in p.nodes.values():
        if n.kind in ("collective", "view"):
            continue
        f = n.flops * _count(p, n.repeat)
        if n.scope == "optimizer" or n.scope.startswith("optimizer.") or n.name == training.update:
            optimizer += f
            continue
        if _is_recompute(n):
            marked = True
            recompute += f
            continue
        model += f
        if n.name in forward and n.repeat and any(r != "micro_batches" for r in n.repeat):
            forward_repeated += f
        if n.kind == "matmul" and not any(tensors[tensors[i].storage].role == "weight" for i in n.inputs) \
                and not (n.output and tensors[n.output].storage == buffer):
            attention += f
    if not marked and training.recompute == "full" and not p.recompute_calls:
        recompute = forward_repeated
    dtype = _model_dtype(p, forward)
    peak = a.hardware.peak(dtype)
    if peak is None:
        from costlang.errors import SemanticError
        raise SemanticError(f"a training step's MFU is measured against the peak of the dtype its matmuls do "
                            f"math in ({dtype}), and '{a.hardware.name}' states none", training.span,
                            f"state one in a hardware of your own: `hardware mine : {a.hardware.name} "
                            f"{{ peak {dtype} = ... }}`")
    t = a.totals
    lower = t.t_overlap if t.t_overlap is not None else t.t_launch + sympy.Max(t.t_compute, t.t_memory)
    upper = t.t_serial if t.t_serial is not None else t.t_launch + t.t_compute + t.t_memory
    weights, gradients, states = _memory(p)
    return TrainingFigures(zero_stage(p), chips, data_chips, _tokens(p, training), model * chips,
                           (model + recompute) * chips, attention * chips, optimizer * chips, peak, dtype,
                           lower, upper, weights, gradients, states, training.optimizer, training.recompute,
                           tuple((name, pol) for name, (pol, _) in p.recompute_calls.items()),
                           _measured_step(p))


def _measured_step(p) -> Optional[sympy.Expr]:
    m = p.measurements.get("step")
    return m.time if m is not None and "step" not in p.nodes and "step" not in p.instances else None


def _model_dtype(p, forward) -> str:
    """The dtype MFU is measured against: the first forward matmul's math dtype; without one, the
    math dtype of the forward op with the most FLOPs (a custom kernel's `math = fp16` over int4
    weights is fp16 math: its peak is stated, the weights' dtype may have none); else a weight's."""
    for name in p.nodes:
        n = p.nodes[name]
        if name in forward and n.kind == "matmul":
            return n.math_dtype.name
    ops = [p.nodes[name] for name in p.nodes if name in forward and p.nodes[name].kind not in ("collective", "view")]
    if ops:
        return max(ops, key=lambda n: n.flops if n.flops.is_Rational else sympy.Integer(-1)).math_dtype.name
    return next(t.dtype.name for t in p.tensors.values() if t.role == "weight")


def _memory(p):
    """Resident bytes per chip by kind: weights, gradients, states (× repeat counts)."""
    out = {"weight": sympy.Integer(0), "gradient": sympy.Integer(0), "state": sympy.Integer(0)}
    for t in p.tensors.values():
        if t.role in out and t.storage == t.name and t.name not in p.other_stage_weights:
            out[t.role] += t.bytes * p.count(t.repeat)
    return out["weight"], out["gradient"], out["state"]
