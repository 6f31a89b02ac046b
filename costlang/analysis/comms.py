"""Communication: the T_comms of collective kernels and the many-chip bounds of a program.

Input: a `Program` with a selected system and a kernel of it. Output: the kernel's `Comms` (what
each chip sends), the `Link` it crosses and T_comms = sent / (links · one_way) + steps · α
(stdlib/collectives.cost states `sent` and `steps` per algorithm). For the program: the lower
bound max(ΣT_compute, ΣT_memory, ΣT_comms) (communication fully overlapped with the rest) and
the upper bound ΣT_compute + ΣT_memory + ΣT_comms (nothing overlapped), each plus the launches
and, with pipeline stages, times (m + p − 1)/m for the bubble (`passes.parallelism`).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Optional

import sympy

from costlang.errors import SemanticError
from costlang.analysis.memo import left_max
from costlang.ir.program import Program
from costlang.ir.system import Comms, Link
from costlang.passes.parallelism import bubble_fraction, once_per_step, pipeline_stretch

__all__ = ["KernelComms", "kernel_comms", "program_bounds", "pipeline_stretch", "bubble_fraction",
           "once_per_step", "BoundParts", "bound_parts", "nccl_bandwidths", "system_flops", "overlap_estimate"]


@dataclass(frozen=True)
class KernelComms:
    comms: Comms
    link: Link
    t_comms: sympy.Expr


def kernel_comms(program: Program, ops: tuple[str, ...]) -> Optional[KernelComms]:
    """The communication of a kernel: its collective op's (a collective is a kernel of its own)."""
    node = program.nodes[ops[0]]
    if node.comms is None:
        return None
    system = program.system
    together = "+" in node.comms.axis   # `x+y+z`: the links of every axis at once
    names = node.comms.axis.split("+" if together else "·")   # `gpu·node`: a flat ring over several axes
    axes = [system.axis(a) for a in names] if system is not None else [None]
    if any(a is None for a in axes):
        raise SemanticError(f"collective '{node.name}' runs over axis '{node.comms.axis}', which the "
                            f"selected system does not have", node.span)
    link = axes[0].link
    bindings = program.bindings
    if together:   # the bytes split across the axes in proportion to their links: Σ bandwidths
        link = dataclasses.replace(link, one_way=sympy.Add(*[a.link.bandwidth for a in axes]),
                                   links=sympy.Integer(1), stated="one_way",
                                   latency=max((a.link.latency for a in axes), key=lambda e: e.xreplace(bindings)))
    elif len(axes) > 1:   # every step of the ring crosses the slowest of the links, at the largest α
        slowest = min((a.link for a in axes), key=lambda l: l.bandwidth.xreplace(bindings))
        link = dataclasses.replace(slowest, latency=max((a.link.latency for a in axes),
                                                        key=lambda e: e.xreplace(bindings)))
    c = node.comms
    if len(axes) == 1 and link.leaf is not None:   # an oversubscribed fat tree: a slower effective link
        factor = link.tree_factor(c.collective, c.group)
        if factor != 1:
            link = dataclasses.replace(link, one_way=link.one_way / factor)
    if together and c.group != 1:   # a ring along each axis at once: 2(p_i − 1) steps on each
        c = dataclasses.replace(c, steps=sympy.Add(*[2 * (a.size - 1) for a in axes]), steps_formula=sympy.Add(
            *[2 * (sympy.Symbol(f"p_{a.name}", positive=True, integer=True) - 1) for a in axes]))
    return KernelComms(c, link, c.sent / link.bandwidth + c.steps * link.latency)


def overlap_estimate(analysis) -> Optional[tuple[sympy.Expr, sympy.Expr, tuple]]:
    """With `overlap = f` stated on parallelisms: (estimate, hidden, ((kind, axis, f), ...)), where
    hidden = Σ f · T_comms of each collective over that parallelism's axis (× count, × the pipeline's
    stretch for a pipelined kernel) and estimate = max(lower bound, upper bound − hidden): the serial
    step with that share of the communication hidden behind compute, never below full overlap.
    None when no overlap is stated or the program has no bounds."""
    program, totals = analysis.program, analysis.totals
    stated = tuple((s.kind, s.axis, dict(s.options)["overlap"]) for s in program.parallels
                   if "overlap" in dict(s.options))
    if not stated or totals.t_overlap is None:
        return None
    fractions = {axis: f for _, axis, f in stated}
    stretch, once = pipeline_stretch(program), once_per_step(program)
    hidden = sympy.Integer(0)
    for k in analysis.kernels:
        f = fractions.get(k.comms.comms.axis) if k.comms else None
        if f is None:
            continue
        s = 1 if stretch == 1 or any(op in once for op in k.ops) else stretch
        hidden += f * s * k.count * k.t_comms
    return sympy.Max(totals.t_overlap, totals.t_serial - hidden), hidden, stated


def system_flops(analysis) -> sympy.Expr:
    """The FLOPs of the whole system in one step: each chip's, × the chips; with pipeline stages,
    the kernels outside the staged layer stack (embedding, head) run on one stage of each pipeline
    (the first or the last), so they count chips / p times, not chips times."""
    from costlang.passes.parallelism import _top_level
    program = analysis.program
    chips = program.system.chips
    spec = next((s for s in program.parallels if s.kind == "pipeline"), None)
    if spec is None:
        return chips * analysis.totals.flops
    p = program.system.axis(spec.axis).size
    staged = {r.name for r in program.repeats.values() if _top_level(r)}
    total = sympy.Integer(0)
    for k in analysis.kernels:
        inside = any(r in staged for r in program.nodes[k.ops[0]].repeat)
        total += k.count * k.flops * (chips if inside else chips / p)
    return total


def nccl_bandwidths(comms: Comms, t_comms: sympy.Expr, value=lambda e: e) -> Optional[tuple[sympy.Expr, sympy.Expr]]:
    """(algBW, busBW) of a collective as nccl-tests reports them (NVIDIA nccl-tests, doc/PERFORMANCE.md):
    algBW = S / t with S the operation's size (the buffer per rank; an all-gather's gathered output,
    p·n), and busBW = algBW × the collective's factor: 2(p − 1)/p for an all-reduce, (p − 1)/p for a
    reduce-scatter, an all-gather or an all-to-all, 1 for a send. None where the time (`value` binds
    it) is not a positive number (a one-chip group, free sizes) or the collective is not one of these."""
    name, p, n = comms.collective, comms.group, comms.message
    if name.startswith("all_reduce"):
        size, factor = n, 2 * (p - 1) / p
    elif name.startswith("all_gather"):
        size, factor = p * n, (p - 1) / p
    elif name.startswith(("reduce_scatter", "all_to_all")):
        size, factor = n, (p - 1) / p
    elif name.startswith("send"):
        size, factor = n, sympy.Integer(1)
    else:
        return None
    bound = value(t_comms)
    if not (bound.is_number and bound.is_positive):
        return None
    alg = size / t_comms
    return alg, alg * factor


@dataclass(frozen=True)
class BoundParts:
    """The pieces `program_bounds` combines when some kernels run once per step outside the
    pipeline stretch: the pipelined kernels' sums, the once-per-step kernels' sums (each
    (launch time, ΣT_compute, ΣT_memory, ΣT_comms)), and the terms of the two bounds:
    lower = max(stretch × stage_lower, whole_lower), upper = stretch × stage_upper + once_upper."""
    stage: tuple
    once: tuple
    stage_lower: sympy.Expr
    whole_lower: sympy.Expr
    stage_upper: sympy.Expr
    once_upper: sympy.Expr


def bound_parts(totals) -> Optional[BoundParts]:
    """`BoundParts` of an analysis's totals (None when no kernel runs outside the stretch)."""
    if totals.once is None:
        return None
    oc, om, ox, ol = totals.once
    tl, tc, tm, tx = totals.t_launch, totals.t_compute, totals.t_memory, totals.t_comms
    stage = (tl - ol, tc - oc, tm - om, tx - ox)
    return BoundParts(stage, (ol, oc, om, ox), stage[0] + sympy.Max(*stage[1:]), tl + sympy.Max(tc, tm, tx),
                      sum(stage, sympy.Integer(0)), ol + oc + om + ox)


def stage_ends(program, kernels) -> Optional[tuple]:
    """With p ≥ 2 pipeline stages: (first only, last only, middle), the names of the kernels that run
    on the first stage alone (outside the staged layers and before them: the embedding; and the
    stages' forward sends, which every stage but the last makes), on the last alone (after the layers:
    the final norm, the head; and a training step's backward sends, which every stage but the first
    makes), and, with p ≥ 3 stages and sends both ways, what a middle stage leaves out (the ends' own
    kernels, not the sends: it makes both), else None. None without a pipeline, with one stage or a
    stage count left free, or when every kernel is staged."""
    from costlang.passes.parallelism import _top_level, is_backward_send
    spec = next((s for s in program.parallels if s.kind == "pipeline"), None)
    if spec is None or program.system is None:
        return None
    p = program.system.axis(spec.axis).size.xreplace(program.bindings)
    if not (p.is_number and p >= 2):
        return None
    staged = {r.name for r in program.repeats.values() if _top_level(r)}
    once = once_per_step(program)
    inside = [any(r in staged for r in program.nodes[k.ops[0]].repeat) for k in kernels]
    if not any(inside):
        return None
    training = program.training
    forward = set(training.forward_nodes) if training is not None else None
    is_forward = [forward is None or k.ops[0] in forward for k in kernels]
    data = next((s.axis for s in program.parallels if s.kind == "data"), None)

    def span(which):
        at = [i for i in range(len(kernels)) if inside[i] and is_forward[i] == which]
        return (at[0], at[-1]) if at else (None, None)
    (start, end), (back_start, back_end) = span(True), span(False)
    if start is None:
        return None
    first, last, sends, back = set(), set(), set(), set()
    for i, k in enumerate(kernels):
        node = program.nodes[k.ops[0]]
        if inside[i] or k.name in once:
            continue
        if k.comms is not None and k.comms.comms.collective == "send":
            # a send to the next stage: every stage but the last; a gradient's back: all but the first
            (back if is_backward_send(node) else sends).add(k.name)
        elif (k.comms is not None and k.comms.comms.axis == data) or (training is not None and (
                node.name == training.update or node.scope.startswith("optimizer"))):
            continue   # the data-parallel collectives and the update: every stage, on its own part
        elif is_forward[i]:
            if i < start:
                first.add(k.name)      # the embedding
            elif i > end:
                last.add(k.name)       # the final norm, the head, the loss
        elif back_start is not None and i < back_start:
            last.add(k.name)           # their backward
        elif back_end is not None and i > back_end:
            first.add(k.name)          # the embedding's backward
    if not (first or last or back):
        return None
    middle = frozenset(first | last) if p >= 3 and sends and back else None
    return frozenset(first | sends), frozenset(last | back), middle


def program_bounds(t_compute, t_memory, t_comms, t_launch, stretch=sympy.Integer(1), once=None):
    """(lower, upper): full overlap max(Tc, Tm, Tcomms) and no overlap Tc + Tm + Tcomms, + launches;
    with pipeline stages the stage's part × `stretch` = (m + p − 1)/m (the bubble: stages wait for
    each other). `once`: (Tc, Tm, Tcomms, launches) of the kernels that run once per step after the
    pipeline drains (a training step's gradient all-reduce), outside the stretch: then the lower
    bound is the larger of the stretched stage and the busiest resource over the whole step, and
    the upper bound the stretched stage plus them."""
    if once is None or stretch == 1:
        return (stretch * (t_launch + left_max(t_compute, t_memory, t_comms)),
                stretch * (t_launch + t_compute + t_memory + t_comms))
    oc, om, ox, ol = once
    stage_lower = t_launch - ol + left_max(t_compute - oc, t_memory - om, t_comms - ox)
    lower = left_max(stretch * stage_lower, t_launch + left_max(t_compute, t_memory, t_comms))
    upper = stretch * (t_launch - ol + t_compute - oc + t_memory - om + t_comms - ox) + ol + oc + om + ox
    return lower, upper
