"""Footprint by liveness: the bytes that must be resident at once, against the memory capacity.

Input: a `Program`, its kernels in execution order and their costs (what each reads and writes).
Output: `Footprint`. Weights and caches are resident for the whole program, each counted as many
times as its repeated body runs (L layers have L sets of weights). Activations are live from the
kernel that writes them to memory to the last kernel that reads them (inputs from the start,
program outputs to the end); the footprint adds the peak of the live bytes over the schedule.
A repeated body appears once in the schedule, so its activations count once, not × L: its
iterations run one after another and each frees what the last one needed. Linear in the
number of kernels (one sweep with births and deaths). With every size bound, the peak is found
among the exact values of the steps, without a symbolic Max.

A training step (`Program.training`) runs the forward, then the backward (the nodes after the
forward's, recomputations included). A tensor the forward writes and the backward reads is a
saved activation: it lives from its forward kernel to its last backward reader, across the turn.
In a repeated body run L times (all L forwards, then all L backwards), a saved tensor of the body
is held by every layer at once: at the body's kernels the worst iteration is the last forward
(and the first backward), where the other L − 1 layers' copies are live, so each saved tensor of
the body adds (L − 1) × its bytes from the body's first forward kernel to its last backward
kernel, on top of its own life. A body-internal temporary (written and last read in the same
half) counts once. Still one sweep, no unrolling: at the turn the live bytes are exactly the
unrolled schedule's (every layer's saved tensors), and at a body kernel they are the worst
iteration's.

Under ZeRO stage 3 (FSDP) each chip holds 1/N_d of the parameters and gathers the rest for their use:
the gathered weights in flight are counted apart (`gathered`), as the two largest FSDP units (one
repeat iteration's weights, e.g. a transformer layer, or the weights outside any repeat, the root
unit): PyTorch FSDP's `limit_all_gathers` keeps at most two units' all-gathers in flight (the one in
use and the one prefetched; PyTorch documentation, torch.distributed.fsdp.FullyShardedDataParallel).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import sympy

from costlang.ir.program import RESIDENT_ROLES, Program
from costlang.passes.costs import Traffic, role_of
from costlang.analysis.memo import smax

__all__ = ["Footprint", "footprint"]


@dataclass(frozen=True)
class Footprint:
    bytes: sympy.Expr                 # resident + live
    capacity: Optional[sympy.Expr]
    tensors: tuple[Traffic, ...]      # the resident tensors (bytes × count), then those live at the peak
    resident: sympy.Expr = sympy.Integer(0)   # weights and caches, × their repeat counts
    live: sympy.Expr = sympy.Integer(0)       # peak live activation bytes over the schedule
    peak_at: Optional[str] = None     # the first kernel at which the live bytes peak (None: it depends)
    #: a training step's saved activations (written by the forward, read by the backward), each ×
    #: its repeat count; their sum is `saved`
    saved_tensors: tuple[Traffic, ...] = ()
    saved: sympy.Expr = sympy.Integer(0)
    #: ZeRO-3/FSDP: the parameters gathered in flight (the two largest units), part of `bytes`
    gathered: sympy.Expr = sympy.Integer(0)


def footprint(program: Program, capacity, kernels, costs, outputs: set, bindings: dict) -> Footprint:
    # a pipeline stage holds its own end's weights, not the other's (the busiest: the larger end)
    resident = [Traffic(t.name, t.role, t.bytes * program.count(t.repeat)) for t in program.tensors.values()
                if t.storage == t.name and t.role in RESIDENT_ROLES and t.name not in program.other_stage_weights]
    last = len(kernels) - 1
    birth: dict[str, int] = {}
    death: dict[str, int] = {}
    for t in program.tensors.values():
        if t.role == "input":
            birth[t.name], death[t.name] = 0, 0
    for i, cost in enumerate(costs):
        for tr in cost.writes:
            s = _storage(program, tr.tensor)
            if s is not None and program.tensors[s].role not in RESIDENT_ROLES:  # resident: counted once
                birth.setdefault(s, i)
                death[s] = max(death.get(s, i), i)
        for tr in cost.reads:
            s = _storage(program, tr.tensor)
            if s is not None and program.tensors[s].role not in RESIDENT_ROLES:
                birth.setdefault(s, i)
                death[s] = max(death.get(s, i), i)
    for s in outputs:
        if s in birth:
            death[s] = max(last, 0)
    lives = [(s, birth[s], death[s], 1) for s in birth]  # (tensor, first step, last step, copies)
    saved, extra = _saved(program, kernels, costs, birth)
    lives += extra
    bound = _bound_peak(program, lives, max(len(kernels), 1), bindings)
    if bound is not None:  # every size bound: the exact peak directly, no symbolic Max
        live, peak_index = bound
    else:
        steps = _live_per_step(program, lives, max(len(kernels), 1))
        # A step where nothing is born holds at most what the step before held (only deaths since),
        # so it cannot be the peak; the Max of the rest is remembered (scenarios share the schedule).
        born_at = {b for _, b, _, _ in lives}
        peaks = [step for i, step in enumerate(steps) if i == 0 or i in born_at]
        live = smax(*dict.fromkeys(peaks)) if steps else sympy.Integer(0)
        peak_index = _peak_index(steps, live, bindings)
    at_peak = ()
    if peak_index is not None:
        held: dict[str, sympy.Expr] = {}
        for s, b, d, times in lives:
            if b <= peak_index <= d:
                held[s] = held.get(s, 0) + times
        at_peak = tuple(Traffic(s, role_of(program, s, outputs), program.tensors[s].bytes * n)
                        for s, n in held.items())
    res = sympy.Add(*[t.bytes for t in resident])
    gathered = _gathered(program, bindings)
    return Footprint(res + gathered + live, capacity, tuple(resident) + at_peak, res, live,
                     kernels[peak_index].name if peak_index is not None and kernels else None,
                     saved, sympy.Add(*[t.bytes for t in saved]), gathered)


def _gathered(program: Program, bindings: dict) -> sympy.Expr:
    """ZeRO-3/FSDP: the bytes of the two largest units of gathered weights (0 at other stages): a
    unit is one iteration of a repeat's weights (L of them), or the weights outside every repeat. With
    sizes left free the two cannot be ordered, and 2 × the largest stands for them (an upper bound)."""
    from costlang.passes.parallelism import zero_stage
    if zero_stage(program) != 3:
        return sympy.Integer(0)
    data = next((x for x in program.parallels if x.kind == "data"), None)
    axis = program.system.axis(data.axis) if data is not None and program.system is not None else None
    if axis is None or axis.size.xreplace(bindings) == 1:
        return sympy.Integer(0)   # one chip holds every parameter: nothing is gathered
    units: dict[tuple, sympy.Expr] = {}
    for t in program.tensors.values():
        if t.role == "weight" and t.partial and t.storage != t.name:   # a weight gathered into place
            units[t.repeat] = units.get(t.repeat, sympy.Integer(0)) + t.bytes
    values = []
    for repeat, b in units.items():   # a body run L ≥ 2 times is L units of its iteration's weights
        count = program.count(repeat).xreplace(bindings)
        values += [b] if count == 1 else [b, b]
    if not values:
        return sympy.Integer(0)
    numbers = [v.xreplace(bindings) for v in values]
    if all(n.is_number for n in numbers):
        top = sorted(range(len(values)), key=lambda i: numbers[i], reverse=True)[:2]
        return sympy.Add(*[values[i] for i in top])
    return 2 * smax(*values) if len(values) > 1 else values[0]


def _saved(program: Program, kernels, costs, birth) -> tuple[tuple[Traffic, ...], list]:
    """A training step's saved activations (a tensor a forward kernel writes, or the forward reads
    as an input, that a backward kernel reads), × their repeat counts; and for those of a repeated
    body, the other iterations' copies: (tensor, the body's first forward kernel, its last
    backward kernel, count − 1). See the module docstring."""
    training = program.training
    if training is None or not training.forward_nodes:
        return (), []
    forward = set(training.forward_nodes)
    made_by_forward: set = set()  # storages the forward writes
    backward_at = []
    for k in kernels:
        # a collective the sharding pass put among the forward's nodes (a Megatron all-reduce)
        # reads what the forward wrote: it is the forward's too
        fwd = all(op in forward or (program.nodes[op].kind == "collective" and not program.nodes[op].recompute
                                    and all(_storage(program, t) in made_by_forward or
                                            program.producer(_storage(program, t) or "") is None
                                            for t in program.nodes[op].inputs))
                  for op in k.ops)
        backward_at.append(not fwd)
        if fwd:
            made_by_forward.update(program.nodes[op].output for op in k.ops if program.nodes[op].output)
    first: dict[tuple, int] = {}  # a repeat → its body's first forward kernel
    final: dict[tuple, int] = {}  # a repeat → its body's last backward kernel
    read_back: dict[str, int] = {}  # a tensor → the last backward kernel that reads it
    touched: set = set()  # what the forward writes or reads (the loss's gradient is neither)
    for i, (k, cost) in enumerate(zip(kernels, costs)):
        rep = program.nodes[k.ops[0]].repeat
        for j in range(1, len(rep) + 1):
            if backward_at[i]:
                final[rep[:j]] = i
            else:
                first.setdefault(rep[:j], i)
        if not backward_at[i]:
            touched.update(_storage(program, tr.tensor) for tr in cost.reads + cost.writes)
            continue
        for tr in cost.reads:
            s = _storage(program, tr.tensor)
            if s is not None and s in touched and program.tensors[s].role not in RESIDENT_ROLES:
                read_back[s] = i
    saved, extra = [], []
    for s in read_back:
        t = program.tensors[s]
        saved.append(Traffic(s, "saved", t.bytes * _kept(program, t.repeat)))
        if t.repeat and t.repeat in first and t.repeat in final:
            others = _kept(program, t.repeat) - 1
            if others != 0:
                extra.append((s, first[t.repeat], final[t.repeat], others))
    # A body's carried input (layer l's input is layer l − 1's output) read by its backward: the
    # outputs of the other iterations are the other layers' saved inputs (L − 1 copies of the
    # output; the first layer's input is the tensor the repeat is called with, saved above).
    for name, rep in program.repeats.items():
        where = rep.outer + (name,)
        if where not in first or where not in final:
            continue
        for inp, out in getattr(rep, "carried", ()):
            si, so = _storage(program, inp), _storage(program, out)
            if si in read_back and so in birth and so not in read_back:
                others = _kept(program, where) - 1
                if others != 0:
                    saved.append(Traffic(so, "saved", program.tensors[so].bytes * others))
                    extra.append((so, first[where], final[where], others))
    return tuple(saved), extra


def _kept(program: Program, repeat: tuple) -> sympy.Expr:
    """How many copies of a body's saved tensor live at once: its repeat counts, but for gradient
    accumulation's `micro_batches` (each micro-batch's backward frees its activations before the next)."""
    return program.count(tuple(r for r in repeat if r != "micro_batches"))


def _storage(program: Program, name: str) -> Optional[str]:
    t = program.tensors.get(name)
    return t.storage if t is not None else None  # "(stated)" bytes of a custom kernel name no tensor


def _live_per_step(program, lives, n, size=lambda e, times: e if times == 1 else e * times) -> list:
    """The bytes live at each step of the schedule: `lives` are (tensor, first step, last step,
    copies); each tensor's bytes mapped by `size`."""
    born: dict[int, list] = {}
    dead: dict[int, list] = {}
    for s, b, d, times in lives:
        bytes_ = size(program.tensors[s].bytes, times)
        born.setdefault(b, []).append(bytes_)
        dead.setdefault(d, []).append(bytes_)
    steps, running = [], sympy.Integer(0)
    for i in range(n):
        running = running + sympy.Add(*born.get(i, []))
        steps.append(running)
        running = running - sympy.Add(*dead.get(i, []))
    return steps


def _bound_peak(program, lives, n, bindings) -> Optional[tuple]:
    """(the largest step's exact value, its first index) when the bindings make every live
    tensor's size an exact number; None otherwise. The same value as the symbolic Max, bound,
    computed from the bound sizes directly (a model's tensors have a few distinct sizes)."""
    sizes: dict = {}
    for s, _, _, times in lives:
        e = program.tensors[s].bytes if times == 1 else program.tensors[s].bytes * times
        if e not in sizes:
            sizes[e] = e.xreplace(bindings)
            if not sizes[e].is_Rational:
                return None
    values = _live_per_step(program, lives, n, size=lambda e, times: sizes[e if times == 1 else e * times])
    peak = max(values)
    return peak, values.index(peak)


def _peak_index(steps, live, bindings) -> Optional[int]:
    peak = live.xreplace(bindings)
    if not peak.is_number:
        return None
    for i, step in enumerate(steps):
        if (step.xreplace(bindings) - peak) == 0:
            return i
    return None
