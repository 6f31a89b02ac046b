"""The many-chip sections of the reports: the system, each collective's T_comms, the bounds.

Input: an `Analysis` whose program selects a system. Output: text lines (`system_lines`); the JSON is
`printers.data.system`. Figures are per chip (every chip runs the same kernels);
system-wide ones are per chip × chips.
"""
from __future__ import annotations

import sympy

from costlang.analysis.comms import (bound_parts, bubble_fraction, nccl_bandwidths, overlap_estimate,
                                     pipeline_stretch, stage_ends, system_flops)
from costlang.units import BYTE, BYTE_PER_S, FLOP, SECOND
from costlang.printers.numbers import exact_or_approx, expr_text, human
from costlang.printers.words.verdicts import bound_text

__all__ = ["system_lines", "link_text", "conventions"]


def conventions(a) -> str:
    """What the report assumes about many chips (empty without a system)."""
    if a.program.system is None:
        return ""
    return (" Many chips: figures are per chip (every chip runs the same kernels on its part); a collective's "
            "T_kernel = launch + max(T_compute, T_memory, T_comms) with T_comms = sent / (links · one-way "
            "bandwidth) + steps · α; bidirectional link figures are halved.")


def link_text(link, v) -> str:
    stated = (f"stated as {human(v(2 * link.one_way), BYTE_PER_S)} bidirectional"
              if link.stated == "bidirectional" else "stated one-way")
    links = "" if link.links == 1 else f", {link.links} links per chip"
    tree = "" if link.leaf is None or link.oversubscription == 1 else \
        f"; fat tree {exact_or_approx(v(link.oversubscription))}:1 above leaves of {exact_or_approx(v(link.leaf))} chips"
    return (f"{link.kind} {human(v(link.one_way), BYTE_PER_S)} per direction ({stated}){links}; "
            f"α = {human(v(link.latency), SECOND)}{tree}")


def system_lines(a) -> list[str]:
    system = a.program.system
    if system is None:
        return []
    v = a.value
    axes = ", ".join(f"{x.name} = {exact_or_approx(v(x.size))}" for x in system.axes)
    lines = ["", f"system: {system.name}, {exact_or_approx(v(system.chips))} × {system.chip} (mesh {axes})"]
    seen = []
    for x in system.axes:
        lines.append(f"  axis {x.name}: {link_text(x.link, v)}")
        seen.append(x.link)
    collectives = [k for k in a.kernels if k.comms]
    if collectives:
        lines += ["", "communication (per chip; T_comms = sent / (links · one-way BW) + steps · α)"]
    for k in collectives:
        c = k.comms.comms
        sent = _formula(c.sent_formula, human(v(c.sent), BYTE))
        steps = _formula(c.steps_formula, exact_or_approx(v(c.steps)))
        bw = nccl_bandwidths(c, k.t_comms, v)
        bus = (f" (nccl-tests: algBW {human(v(bw[0]), BYTE_PER_S)}, busBW {human(v(bw[1]), BYTE_PER_S)})"
               if bw is not None else "")
        axis = system.axis(c.axis)
        tree = "" if axis is None or k.comms.link.one_way == axis.link.one_way else \
            f"; across the fat tree at {human(v(k.comms.link.one_way), BYTE_PER_S)} per direction"
        lines.append(f"  {k.name}: {c.collective} over {c.axis} (p = {exact_or_approx(v(c.group))}, "
                     f"n = {human(v(c.message), BYTE)}): sent = {sent}; steps = {steps}{tree}; "
                     f"T_comms = {human(v(k.t_comms), SECOND)}{bus}; {bound_text(k.bound)}")
    t = a.totals
    chips = system.chips
    lines += _parallel_lines(a)
    lines += ["", "many-chip totals (one chip's time; the system runs its chips in parallel)"]
    stretch = pipeline_stretch(a.program)
    times, close = ("", "") if stretch == 1 else (f"{_stretch_words(a.program)} × (", ")")
    if collectives:
        sent = sum((k.comms.comms.sent for k in collectives), 0)
        lines.append(f"  T_comms {human(v(t.t_comms), SECOND)}; sent per chip {human(v(sent), BYTE)}, "
                     f"system-wide {human(v(chips * sent), BYTE)}")
        if t.stages is not None:
            lines += _bounds_by_stage(a)
        elif t.once is not None:
            lines += _bounds_with_once(a, stretch)
        else:
            lines.append(f"  lower bound (communication fully overlapped): {times}launches + max(ΣT_compute, "
                         f"ΣT_memory, ΣT_comms){close} = {human(v(t.t_overlap), SECOND)}")
            lines.append(f"  upper bound (nothing overlapped): {times}launches + ΣT_compute + ΣT_memory + "
                         f"ΣT_comms{close} = {human(v(t.t_serial), SECOND)}")
    est = overlap_estimate(a)
    if est is not None:
        stated = ", ".join(f"{kind} over {axis} {exact_or_approx(v(f))}" for kind, axis, f in est[2])
        lines.append(f"  with the stated overlaps ({stated}): max(lower bound, upper bound − Σ overlap × T_comms) = "
                     f"max({human(v(t.t_overlap), SECOND)}, {human(v(t.t_serial), SECOND)} − "
                     f"{human(v(est[1]), SECOND)}) = {human(v(est[0]), SECOND)}")
    lines.append(f"  system-wide: FLOPs {human(v(system_flops(a)), FLOP)}; "
                 f"footprint {human(v(chips * a.footprint.bytes), BYTE)} on {exact_or_approx(v(chips))} chips")
    return lines


def _stretch_words(program) -> str:
    """The pipeline's stretch as a formula: (m + p − 1)/m, or (m + (p − 1)/v)/m interleaved."""
    spec = next((s for s in program.parallels if s.kind == "pipeline"), None)
    virtual = dict(spec.options).get("virtual", 1) if spec is not None else 1
    return "(m + p − 1)/m" if virtual == 1 else "(m + (p − 1)/v)/m"


def _bounds_with_once(a, stretch) -> list[str]:
    """The bounds when some kernels run once per step after the pipeline drains: the pipelined
    part is stretched by (m + p − 1)/m, the once-per-step part is not."""
    v, t, parts = a.value, a.totals, bound_parts(a.totals)
    s = lambda e: human(v(e), SECOND)  # noqa: E731
    k = f"({exact_or_approx(v(stretch))})"
    four = lambda x: (f"launches {s(x[0])}, ΣT_compute {s(x[1])}, ΣT_memory {s(x[2])}, "  # noqa: E731
                      f"ΣT_comms {s(x[3])}")
    return [
        f"  pipelined kernels: {four(parts.stage)}; run once per step, after the pipeline drains: {four(parts.once)}",
        f"  lower bound (communication fully overlapped): max({_stretch_words(a.program)} × (pipelined launches + max(ΣT_compute, "
        f"ΣT_memory, ΣT_comms)), launches + max(ΣT_compute, ΣT_memory, ΣT_comms) of the whole step) = "
        f"max({k} × {s(parts.stage_lower)}, {s(parts.whole_lower)}) = {s(t.t_overlap)}",
        f"  upper bound (nothing overlapped): {_stretch_words(a.program)} × (pipelined launches + ΣT_compute + ΣT_memory + ΣT_comms)"
        f" + (once-per-step launches + ΣT_compute + ΣT_memory + ΣT_comms) = {k} × {s(parts.stage_upper)} + "
        f"{s(parts.once_upper)} = {s(t.t_serial)}"]


def _bounds_by_stage(a) -> list[str]:
    """The bounds with the first and last pipeline stages (and a middle one) timed apart: each
    stage's, then the busiest."""
    v, t = a.value, a.totals
    s = lambda e: human(v(e), SECOND)  # noqa: E731
    first, last, middle = stage_ends(a.program, a.kernels)
    names = lambda ks: ", ".join(sorted(ks)[:3]) + (", …" if len(ks) > 3 else "") if ks else "nothing"  # noqa: E731
    what = "(the stretched stage and the kernels run once per step, as each stage's chips run them)" \
        if t.once is not None else f"({_stretch_words(a.program)} × each stage's sums)"
    labels = ["first stage", "last stage"] + (["a middle stage"] if middle is not None else [])
    others = ("the middle stages make the sends both ways and run neither end's own kernels, so one of the three "
              "is the busiest") if middle is not None else "the other stages run neither, so the first or the last " \
        "is the busiest"
    lows = ", ".join(f"{w} {s(lo)}" for w, (lo, _) in zip(labels, t.stages))
    ups = ", ".join(f"{w} {s(up)}" for w, (_, up) in zip(labels, t.stages))
    # where the stages' bounds are functions of a free symbol, their max() is what the line says
    # (writing it out again would have sympy compare the stages' terms pairwise, for seconds)
    result = lambda total, i: "" if any(v(stage[i]).free_symbols for stage in t.stages) else f" = {s(total)}"  # noqa: E731
    return [f"  stages timed apart {what}: the first stage alone runs {names(first)}; the last alone "
            f"{names(last)}; {others}",
            f"  lower bound (communication fully overlapped): max({lows}){result(t.t_overlap, 0)}",
            f"  upper bound (nothing overlapped): max({ups}){result(t.t_serial, 1)}"]


def _parallel_lines(a) -> list[str]:
    """One line per parallelism the file applies: its axis, and what it changes."""
    v, program = a.value, a.program
    words = {"tensor": "Megatron: column- and row-parallel matmuls, an all-reduce after each row-parallel one",
             "data": "the batch (the first dim of every input) split",
             "expert": "the experts split, the tokens too; all-to-all dispatch before and combine after the experts",
             "context": "the sequence (the second dim of every input) split; the keys and values gathered before "
                        "attention"}
    trained = {"expert": "; in the backward the tokens' gradients routed alike",
               "context": "; in the backward gathered again, their gradients reduce-scattered back"}
    out = []
    for s in program.parallels:
        size = exact_or_approx(v(program.system.axis(s.axis).size))
        text = words.get(s.kind, "") + (trained.get(s.kind, "") if program.training is not None else "")
        options = dict(s.options)
        if s.kind == "data" and program.training is not None:
            from costlang.passes.parallelism import zero_stage
            from costlang.printers.words.training import zero_name, zero_collectives
            stage = zero_stage(program)
            text += f"; a training step, {zero_name(stage)}: {zero_collectives(stage)}"
        elif s.kind == "data" and options.get("gradients") is not None:
            text += f"; a training step: the gradients ({options['gradients'].name}) all-reduced once per step"
        if s.kind == "pipeline":
            m = options.get("microbatches", 1)
            layers = ", ".join(f"{r.name} {exact_or_approx(v(r.count))} layers" for r in program.repeats.values()
                               if r.name != "micro_batches" and all(o == "micro_batches" for o in r.outer))
            bubble = bubble_fraction(program)
            virtual = options.get("virtual", 1)
            chunks = "" if virtual == 1 else f", v = {exact_or_approx(v(virtual))} virtual stages per chip (interleaved)"
            idle = "(p − 1)/(m + p − 1)" if virtual == 1 else "(p − 1)/(v·m + p − 1)"
            back = ", and of their gradients back" if program.training is not None else ""
            text = (f"{size} stages ({layers} per stage), m = {exact_or_approx(v(m))} micro-batches{chunks}, a send of "
                    f"the activations between stages{back}; bubble {idle} = {exact_or_approx(v(bubble))}"
                    f": the bounds are × {_stretch_words(program)} = "
                    f"{exact_or_approx(v(pipeline_stretch(program)))}")
        out.append(f"  parallel {s.kind} over {s.axis} ({size} chips): {text}")
    return ["", "parallelism"] + out if out else []


def _formula(formula, value: str) -> str:
    """`n·(2·p − 2)/p = 28.67 kB`, or just the value when the formula is a number."""
    return value if formula.is_number else f"{expr_text(sympy.factor(formula))} = {value}"


