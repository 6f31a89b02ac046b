"""The text report: kernels table, totals, footprint, measurements, queries and conventions.

Input: an `Analysis`. Output: a string (deterministic for the same input).
"""
from __future__ import annotations

import sympy

from costlang.analysis.verdict import Verdict
from costlang.ir.program import Value
from costlang.units import BYTE, BYTE_PER_S, FLOP, FLOP_PER_S, SECOND
from costlang.printers.text.memory import hierarchy_text, memory_lines
from costlang.printers.words.comparisons import ratio_text
from costlang.printers.words.verdicts import bound_text
from costlang.printers.numbers import count_text, exact_or_approx, human, no_empty_equals, percent, units_convention

__all__ = ["report", "CONVENTIONS", "SUMMARY_KERNELS", "CELL_WIDTH"]

#: a program with more kernels than this gets the summary view by default (`--kernels`: the full table)
SUMMARY_KERNELS = 12
#: a table cell longer than this is cut with "…" (the whole expression: `--json`, `costlang derive`)
CELL_WIDTH = 50
#: the summary lists at most this many kernels, those that take the most time
TOP_KERNELS = 5

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
    f = {"optimizer": t.optimizer or TRAINING[lang]["no_optimizer"], "recompute": t.recompute + ("" if not t.recompute_calls else
                                       " (" + ", ".join(f"{i}: {pol}" for i, pol in t.recompute_calls) + ")"),
         "zero": zero_name(t.zero, lang), "chips": count_text(v(t.chips)), "data": count_text(v(t.data_chips)),
         "tokens": count_text(tokens), "model": human(v(t.model_flops), FLOP),
         "per_token": human(v(t.model_flops / t.tokens), FLOP), "attention": human(v(t.attention_flops), FLOP),
         "hardware": human(v(t.hardware_flops), FLOP), "optimizer_flops": human(v(t.optimizer_flops), FLOP),
         "lower": human(v(t.step_lower), SECOND), "upper": human(v(t.step_upper), SECOND),
         "tps": _rate(v(t.tokens_per_second())), "mfu": percent(v(t.mfu())), "hfu": percent(v(t.hfu())),
         "dtype": t.peak_dtype, "peak": human(v(t.peak), FLOP_PER_S), "weights": human(v(t.weights), BYTE),
         "gradients": human(v(t.gradients), BYTE), "states": human(v(t.states), BYTE),
         "total": human(v(t.memory), BYTE)}
    if t.measured is not None:
        f.update(measured=human(v(t.measured), SECOND), achieved_mfu=percent(v(t.mfu(t.measured))),
                 achieved_hfu=percent(v(t.hfu(t.measured))))
    return training_words(f, lang)


def _rate(e) -> str:
    """A count per second, SI-prefixed (1.017 M); exact or symbolic as such."""
    from costlang.printers.floats import SI, prefixed
    return prefixed(float(e), SI, "").strip() if e.is_number and e.is_finite else exact_or_approx(e)


def _table(rows: list[list[str]], header: list[str], cut_from: int | None = None, cut=None) -> list[str]:
    """Aligned columns; with `cut_from`, the cells of the columns from there on are cut by `cut`
    (at `CELL_WIDTH` by default), except the last (the verdict, whose length widens nothing after
    it); the names before them never are."""
    if cut_from is not None:
        cut = cut or _Cut(CELL_WIDTH)
        rows = [r[:cut_from] + [cut(c) for c in r[cut_from:-1]] + r[-1:] for r in rows]
    widths = [max(len(r[i]) for r in rows + [header]) for i in range(len(header))]
    fmt = lambda r: "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip()  # noqa: E731
    return [fmt(header), fmt(["-" * w for w in widths])] + [fmt(r) for r in rows]


#: the summary cuts a value's text in the totals and queries at this length
LONG_WIDTH = 80


class _Cut:
    """Cuts a text longer than `width` with "…", and remembers whether it cut any."""

    def __init__(self, width: int):
        self.width, self.used = width, False

    def __call__(self, text: str) -> str:
        if len(text) <= self.width:
            return text
        self.used = True
        return text[:self.width - 1].rstrip() + "…"


def _cut_note(cut, width: int) -> list[str]:
    """The pointer to the whole expressions, after text that `cut` shortened."""
    if not cut.used:
        return []
    from costlang.printers.words.phrases import phrase
    return ["  " + phrase("en", "cut_cells").format(width=width)]


def report(a, comparison=None, instances: bool = False, kernels: bool | None = None) -> str:
    """The text report; with a `FusionComparison`, a before/after fusion section follows the totals;
    `instances` lists every instance of every repeated body. `kernels`: True, the full report with
    every kernel's table and sections; False, the summary (totals, verdict, the kernels that take the
    most time, footprint, queries, solves); None, the summary when the program has more than
    `SUMMARY_KERNELS` kernels."""
    if kernels is None:
        kernels = len(a.kernels) <= SUMMARY_KERNELS
    from costlang.printers.text.composition import crossing_lines, kernel_label, repeat_lines
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
    if not kernels:
        cut = _Cut(LONG_WIDTH)
        body = _totals(a, cut)[1:] + summary_lines(a, cut)   # the header ends with a blank line already
        return _finish(a, lines + body, comparison, instances, cut=cut)
    comms = a.program.system is not None  # many chips: a T_comms column (printers/system.py)
    rows = [[kernel_label(k), "+".join(k.op_names), human(v(k.flops), FLOP), human(v(k.bytes), BYTE),
             exact_or_approx(v(k.intensity)), exact_or_approx(v(k.critical_intensity)),
             human(v(k.t_compute), SECOND), human(v(k.t_memory), SECOND)]
            + ([human(v(k.t_comms), SECOND)] if comms else []) + [human(v(k.t_kernel), SECOND),
             bound_text(k.bound, k.level)] for k in a.kernels]
    lines.append("kernels" + (" (per chip)" if comms else ""))
    cut = _Cut(CELL_WIDTH)
    table = ["  " + r for r in _table(rows, ["name", "ops", "FLOPs", "bytes", "I (FLOP/B)", "I*",
                                             "T_compute", "T_memory"] + (["T_comms"] if comms else [])
                                      + ["T_kernel", "bound"], cut_from=2, cut=cut)]
    lines += table + _cut_note(cut, CELL_WIDTH)
    lines += repeat_lines(a) + crossing_lines(a)
    lines += _provenance(a) + memory_lines(a)
    lines += ["", "attainable performance"]
    for k in a.kernels:
        lines.append(f"  {k.name}: min(peak, BW × I) = {human(v(k.attainable), FLOP_PER_S)} "
                     f"({percent(v(k.fraction_of_peak))} of peak)")
    return _finish(a, lines + _totals(a), comparison, instances)


def _totals(a, cut=lambda text: text) -> list[str]:
    """The totals; `cut` shortens each value's text (the summary cuts long expressions)."""
    t, v = a.totals, a.value
    h = lambda e, unit: cut(human(v(e), unit))  # noqa: E731
    x = lambda e: cut(exact_or_approx(v(e)))  # noqa: E731
    return ["", "totals",
            f"  FLOPs {h(t.flops, FLOP)}; bytes {h(t.bytes, BYTE)} "
            f"(read {h(t.bytes_read, BYTE)}, written {h(t.bytes_written, BYTE)})",
            f"  I = {x(t.intensity)} FLOP/B; I* = {x(t.critical_intensity)} FLOP/B",
            f"  T_compute {h(t.t_compute, SECOND)}; T_memory {h(t.t_memory, SECOND)}; "
            f"launches {count_text(t.launches)} ({h(t.t_launch, SECOND)}); T_kernel {h(t.t_kernel, SECOND)}; "
            f"{cut(bound_text(t.bound, t.level))}"] + _launch_note(a)


def _finish(a, lines: list[str], comparison, instances: bool, cut=lambda text: text) -> str:
    """The sections after the totals, the same in the full report and the summary."""
    from costlang.printers.text.composition import footprint_lines, instance_lines
    mem = a.hardware.main_memory
    lines += _comparison(a, comparison) if comparison is not None else []
    from costlang.printers.text.system import system_lines
    lines += system_lines(a)
    lines += training_lines(a)
    lines += footprint_lines(a) + (instance_lines(a) if instances else []) + _pools(a, cut) + _measurements(a) \
        + _queries(a, cut)
    if a.solves or a.comparisons:  # printers/whatif.py imports the solver: only when there are some
        from costlang.printers.text.whatif import whatif_lines
        lines += whatif_lines(a)
    if getattr(cut, "used", False):   # the summary cut some text: where to read it whole
        lines += [""] + [line.strip() for line in _cut_note(cut, cut.width)]
    from costlang.printers.text.system import conventions as comms_conventions
    conventions = CONVENTIONS.format(level=mem.name, units=units_convention())
    lines += ["", "conventions: " + conventions + comms_conventions(a)]
    return "\n".join(no_empty_equals(line) for line in lines) + "\n"


def summary_lines(a, cut=None) -> list[str]:
    """The kernels that take the most time, for the summary view: by count × T_kernel when the
    times are numbers (with each one's share of the kernels' summed time), else those whose time
    grows fastest with the free symbols (ranked with every free symbol at 10^6; the order of growth
    decides, not the constants). The rest are counted, with a pointer to `--kernels`."""
    from costlang.printers.text.composition import kernel_label
    from costlang.printers.words.phrases import phrase
    v = a.value
    times = [v(k.count * k.t_kernel) for k in a.kernels]
    n = len(a.kernels)
    shown = min(TOP_KERNELS, n)
    if all(t.is_number for t in times):
        order = sorted(range(n), key=lambda i: -_float(times[i]))[:shown]   # sorted() is stable: ties keep file order
        whole = sum(times)
        share = lambda i: percent(times[i] / whole) if whole != 0 else "-"  # noqa: E731
        rows = [[kernel_label(a.kernels[i]), "+".join(a.kernels[i].op_names),
                 human(v(a.kernels[i].t_kernel), SECOND), human(times[i], SECOND), share(i),
                 bound_text(a.kernels[i].bound, a.kernels[i].level)] for i in order]
        header = ["name", "ops", "T_kernel", "× count", "share", "bound"]
        title = phrase("en", "summary_top").format(shown=shown, n=n)
        rest = sum(times[i] for i in range(n) if i not in order)
        tail = (phrase("en", "summary_rest").format(others=n - shown, time=human(rest, SECOND),
                                                     share=percent(rest / whole) if whole != 0 else "-")
                if n > shown else None)
    else:
        symbols = sorted({s for t in times for s in getattr(t, "free_symbols", ())}, key=str)
        # in floats: exact powers such as (7/8)^(10^6) in a MoE formula would take seconds of gcd
        large = {s: sympy.Float(_LARGE, 30) for s in symbols}
        at_large = [_float(t.xreplace(large)) if symbols else _float(t) for t in times]
        order = sorted(range(n), key=lambda i: -at_large[i])[:shown]
        rows = [[kernel_label(a.kernels[i]), "+".join(a.kernels[i].op_names), human(times[i], SECOND),
                 bound_text(a.kernels[i].bound, a.kernels[i].level)] for i in order]
        header = ["name", "ops", "T_kernel × count", "bound"]
        title = phrase("en", "summary_grows").format(shown=shown, n=n,
                                                      symbols=", ".join(str(s) for s in symbols))
        tail = phrase("en", "summary_others").format(others=n - shown) if n > shown else None
    cells = _Cut(CELL_WIDTH)
    table = ["  " + r for r in _table(rows, header, cut_from=2, cut=cells)]
    if cut is not None:
        cut.used |= cells.used
    return ["", title] + table + ([f"  {tail}"] if tail else []) + ["  " + phrase("en", "summary_more")]


_LARGE = sympy.Integer(10) ** 6


def _float(e) -> float:
    try:
        return float(e)
    except TypeError:   # not a real number (an undefined value): ranked last
        return float("-inf")


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


def _pools(a, cut=lambda text: text) -> list[str]:
    """Serving pools: each one's replicas and network, its instances' T_kernel on its hardware, and
    what one replica holds against its capacity."""
    lines = []
    for p in a.pools:
        net = (f", network {human(p.network, BYTE_PER_S)}, latency {human(p.latency, SECOND)}"
               if p.network is not None else "")
        times = "; ".join(f"{i} T_kernel {cut(human(a.value(t), SECOND))}" for i, t in p.instances) or "no instances"
        holds = (f"one replica holds {cut(human(a.value(p.held), BYTE))} of {human(p.capacity, BYTE)}"
                 if p.capacity is not None else "")
        lines.append(f"  {p.name}: {count_text(p.count)} × {p.hardware}{net}: {times}" + (f"; {holds}" if holds else ""))
    return _section(f"pools (each instance analysed on its pool's hardware; the totals and footprint above are the "
                    f"whole program's on {a.hardware.name})", lines)


def _queries(a, cut=lambda text: text) -> list[str]:
    from costlang.printers.words.phrases import phrase
    per = phrase("en", "per")
    return _section("queries", [f"  {q.name} = {cut(_value(a, q.value))}"
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
