"""The text report: kernels table, totals, footprint, measurements, queries and conventions.

Input: an `Analysis`. Output: a string (deterministic for the same input).
"""
from __future__ import annotations

from costlang.analysis.verdict import Verdict
from costlang.ir.program import Value
from costlang.units import BYTE, BYTE_PER_S, FLOP, FLOP_PER_S, SECOND
from costlang.printers.text.memory import hierarchy_text, memory_lines
from costlang.printers.words.comparisons import ratio_text
from costlang.printers.words.verdicts import bound_text
from costlang.printers.numbers import count_text, exact_or_approx, human, no_empty_equals, percent, units_convention

__all__ = ["report", "CONVENTIONS"]

CONVENTIONS = (
    "FMA = 2 FLOP (GEMM = 2·M·N·K); {units}; "
    "bytes are algorithmic bytes at the {level} level: each kernel reads each input once and writes "
    "each output once, at its dtype's size; I* = peak FLOP/s of the dtype doing the math / bandwidth; "
    "T_kernel = launch + max(T_compute, T_memory) is a lower bound on the measured time; peaks are dense."
)


def training_lines(a, lang: str = "en") -> list[str]:
    """The training section (analysis.training): nothing for a program that is not a training step."""
    from costlang.analysis.training import training_figures
    from costlang.printers.words.training import TRAINING, training_words, zero_name
    t = training_figures(a)
    if t is None:
        return []
    v = a.value
    tokens = v(t.tokens)
    f = {"optimizer": t.optimizer or TRAINING[lang]["no_optimizer"], "recompute": t.recompute,
         "zero": zero_name(t.zero, lang), "chips": count_text(v(t.chips)), "data": count_text(v(t.data_chips)),
         "tokens": count_text(tokens), "model": human(v(t.model_flops), FLOP),
         "per_token": human(v(t.model_flops / t.tokens), FLOP), "attention": human(v(t.attention_flops), FLOP),
         "hardware": human(v(t.hardware_flops), FLOP), "optimizer_flops": human(v(t.optimizer_flops), FLOP),
         "lower": human(v(t.step_lower), SECOND), "upper": human(v(t.step_upper), SECOND),
         "tps": _rate(v(t.tokens_per_second())), "mfu": percent(v(t.mfu())), "hfu": percent(v(t.hfu())),
         "dtype": t.peak_dtype, "peak": human(v(t.peak), FLOP_PER_S), "weights": human(v(t.weights), BYTE),
         "gradients": human(v(t.gradients), BYTE), "states": human(v(t.states), BYTE),
         "total": human(v(t.memory), BYTE)}
    return training_words(f, lang)


def _rate(e) -> str:
    """A count per second, SI-prefixed (1.017 M); exact or symbolic as such."""
    from costlang.printers.numbers import _SI, _prefixed
    return _prefixed(float(e), _SI, "").strip() if e.is_number and e.is_finite else exact_or_approx(e)


def _table(rows: list[list[str]], header: list[str]) -> list[str]:
    widths = [max(len(r[i]) for r in rows + [header]) for i in range(len(header))]
    fmt = lambda r: "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip()  # noqa: E731
    return [fmt(header), fmt(["-" * w for w in widths])] + [fmt(r) for r in rows]


def report(a, comparison=None, instances: bool = False) -> str:
    """The text report; with a `FusionComparison`, a before/after fusion section follows the totals;
    `instances` lists every instance of every repeated body."""
    from costlang.printers.text.composition import crossing_lines, footprint_lines, instance_lines, kernel_label, repeat_lines
    hw = a.hardware
    v = a.value
    peaks = ", ".join(f"{d} {human(v(p), FLOP_PER_S)}" for d, p in hw.peaks)
    mem = hw.main_memory
    cap = f", capacity {human(v(mem.capacity), BYTE)}" if mem.capacity is not None else ""
    lines = [f"costlang report: {a.program.source_name}",
             f"hardware: {hw.name} ({mem.name} {human(v(mem.bandwidth), BYTE_PER_S)}{cap}; "
             f"launch {human(v(hw.launch), SECOND)}; peak {peaks})",
             f"fusion: {a.fusion}", ""]
    if len(hw.memories) > 1 or hw.vector_peaks:
        vec = ", ".join(f"{d} {human(v(p), FLOP_PER_S)}" for d, p in hw.vector_peaks)
        lines[-1:-1] = [hierarchy_text(hw, v)] + ([f"vector peaks: {vec}"] if vec else [])
    free = a.program.free_symbols
    if free:
        lines += [f"free symbols: {', '.join(str(s) for s in free)} (results below are expressions in them)", ""]
    if a.program.sizes:
        assumed = "; ".join(f"{size} (at {span.line}:{span.column})" for size, span in a.program.sizes)
        lines[-1:-1] = [f"sizes assumed to be positive whole numbers: {assumed}"]
    comms = a.program.system is not None  # many chips: a T_comms column (printers/system.py)
    rows = [[kernel_label(k), "+".join(k.op_names), human(v(k.flops), FLOP), human(v(k.bytes), BYTE),
             exact_or_approx(v(k.intensity)), exact_or_approx(v(k.critical_intensity)),
             human(v(k.t_compute), SECOND), human(v(k.t_memory), SECOND)]
            + ([human(v(k.t_comms), SECOND)] if comms else []) + [human(v(k.t_kernel), SECOND),
             bound_text(k.bound, k.level)] for k in a.kernels]
    lines.append("kernels" + (" (per chip)" if comms else ""))
    lines += ["  " + r for r in _table(rows, ["name", "ops", "FLOPs", "bytes", "I (FLOP/B)", "I*",
                                              "T_compute", "T_memory"] + (["T_comms"] if comms else [])
                                       + ["T_kernel", "bound"])]
    lines += repeat_lines(a) + crossing_lines(a)
    lines += _provenance(a) + memory_lines(a)
    lines += ["", "attainable performance"]
    for k in a.kernels:
        lines.append(f"  {k.name}: min(peak, BW × I) = {human(v(k.attainable), FLOP_PER_S)} "
                     f"({percent(v(k.fraction_of_peak))} of peak)")
    t = a.totals
    lines += ["", "totals",
              f"  FLOPs {human(v(t.flops), FLOP)}; bytes {human(v(t.bytes), BYTE)} "
              f"(read {human(v(t.bytes_read), BYTE)}, written {human(v(t.bytes_written), BYTE)})",
              f"  I = {exact_or_approx(v(t.intensity))} FLOP/B; I* = {exact_or_approx(v(t.critical_intensity))} FLOP/B",
              f"  T_compute {human(v(t.t_compute), SECOND)}; T_memory {human(v(t.t_memory), SECOND)}; "
              f"launches {count_text(t.launches)} ({human(v(t.t_launch), SECOND)}); T_kernel {human(v(t.t_kernel), SECOND)}; "
              f"{bound_text(t.bound, t.level)}"] + _launch_note(a)
    lines += _comparison(a, comparison) if comparison is not None else []
    from costlang.printers.text.system import system_lines
    lines += system_lines(a)
    lines += training_lines(a)
    lines += footprint_lines(a) + (instance_lines(a) if instances else []) + _measurements(a) + _queries(a)
    if a.solves or a.comparisons:  # printers/whatif.py imports the solver: only when there are some
        from costlang.printers.text.whatif import whatif_lines
        lines += whatif_lines(a)
    from costlang.printers.text.system import conventions as comms_conventions
    conventions = CONVENTIONS.format(level=mem.name, units=units_convention())
    lines += ["", "conventions: " + conventions + comms_conventions(a)]
    return "\n".join(no_empty_equals(line) for line in lines) + "\n"


def _provenance(a) -> list[str]:
    """Where each kernel's bytes come from: every tensor it reads or writes, with its role."""
    v = a.value
    show = lambda ts: ", ".join(_traffic(t, v) for t in ts) or "nothing"  # noqa: E731
    return ["", "traffic by tensor"] + [f"  {k.name}: reads {show(k.cost.reads)}; writes {show(k.cost.writes)}"
                                        for k in a.kernels]


def _traffic(t, v) -> str:
    who = "as stated" if t.role == "stated" else f"{t.tensor} ({t.role})"
    times = f" (× {exact_or_approx(v(t.times))}, {t.why})" if t.times is not None else ""
    return f"{who} {human(v(t.bytes), BYTE)}{times}"


def _launch_note(a) -> list[str]:
    t, v = a.totals, a.value
    if t.bound.bound != "launch-bound":
        return []
    launches = "1 launch takes" if t.launches == 1 else f"{t.launches} launches take"
    return [f"  launch-bound: {launches} {human(v(t.t_launch), SECOND)}, more than the "
            f"{human(v(t.t_kernel - t.t_launch), SECOND)} the kernels spend on memory and compute; "
            "fusing kernels removes launches"]


def _comparison(a, c) -> list[str]:
    v = a.value
    rows = [[ch.label, human(v(ch.before), ch.unit), human(v(ch.after), ch.unit), ratio_text(ch, v)]
            for ch in c.changes]
    lines = ["", f"fusion comparison: {c.baseline} → {c.mode}"]
    lines += ["  " + r for r in _table(rows, ["figure", c.baseline, c.mode, "change"])]
    for label, kernels in (("before", c.kernels_before), ("after", c.kernels_after)):
        lines.append(f"  kernels {label} ({len(kernels)}): " + " | ".join("+".join(ops) for ops in kernels))
    return lines


def _section(title: str, lines: list[str]) -> list[str]:
    """A titled section after a blank line; nothing when it has no lines."""
    return ["", title, *lines] if lines else []


def _measurements(a) -> list[str]:
    def figure(name, val) -> str:
        shown = percent(a.value(val.expr)) if name.startswith("fraction") else _value(a, val)
        return f"{name.replace('_', ' ')} {shown}"
    return _section("measurements", [f"  {m.kernel}: " + "; ".join(figure(n, v) for n, v in m.figures)
                                     for m in a.measurements])


def _queries(a) -> list[str]:
    from costlang.printers.words.phrases import phrase
    per = phrase("en", "per")
    return _section("queries", [f"  {q.name} = {_value(a, q.value)}"
                                + (f" ({per[q.per]})" if getattr(q, "per", None) else "") for q in a.queries])


def _value(a, value) -> str:
    if isinstance(value, Verdict):
        return bound_text(value)
    if isinstance(value, Value):
        e = a.value(value.expr)
        if value.unit.dimensionless and not (hasattr(e, "is_Integer") and e.is_Integer):
            return exact_or_approx(e)
        return human(e, value.unit)
    return str(value)
