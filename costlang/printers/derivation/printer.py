"""Derivation printers: analysis results → a worked example in the chapter's recipe (base class).

Input: an `Analysis` (or one of its results, with the analysis it belongs to). Output: text in a
markup that a subclass defines (Markdown, LaTeX). Dispatch is by class name, as in sympy's
printing package: printing an object calls `_print_<ClassName>` for the first class of its MRO
that has one, so a new result type (a fusion comparison, a solve result) is one method. The
steps themselves come from `analysis.derive`; this module only arranges and formats them.
"""
from __future__ import annotations

import string
from pathlib import Path

import sympy

from costlang.analysis import derive
from costlang.analysis.verdict import Bound, Verdict
from costlang.printers.words.verdicts import Style, verdict_words
from costlang.units import BYTE, BYTE_PER_S, FLOP_PER_S, SECOND
from costlang.printers.derivation.mathtex import CostLatexPrinter, escape_name, number_part, value_chain
from costlang.printers.numbers import count_text, tidy
from costlang.printers.words.korean import particle
from costlang.printers.words.phrases import LANGUAGES, phrase
from costlang.printers.derivation.memory import MemoryDerivationMixin
from costlang.printers.derivation.solve import SolveDerivation

__all__ = ["Printer", "DerivationPrinter", "STEPS"]

#: the steps of a kernel's derivation, in the recipe's order (`derive --steps` picks some)
STEPS = ("bytes", "flops", "intensity", "attainable", "times", "memory", "verdict")

_CIRCLED = {1: "①", 2: "②", 3: "③"}


def _math_dtypes(a) -> set[str]:
    """The dtypes the file's kernels compute in: the header lists only their peaks."""
    nodes = a.program.nodes
    return {k.cost.math_dtype for k in a.kernels} | {
        nodes[n].math_dtype.name for k in a.kernels for n in k.ops if n in nodes and nodes[n].math_dtype}


#: before → after longer than this (LaTeX characters) is summarised by its ratio's ends
_LONG = 240


class Printer:
    """Settings, validated once, and `_print_<ClassName>` dispatch."""

    _default_settings: dict = {}
    #: setting → the values it may take (a tuple) or the type it must have
    _setting_checks: dict = {}

    def __init__(self, settings=None, **kwargs):
        given = {**(settings or {}), **kwargs}
        unknown = sorted(set(given) - set(self._default_settings))
        if unknown:
            raise TypeError(f"unknown setting {unknown[0]!r} for {type(self).__name__}; "
                            f"known settings: {', '.join(sorted(self._default_settings))}")
        self._settings = {**self._default_settings, **given}
        for name, check in self._setting_checks.items():
            value = self._settings[name]
            ok = value in check if isinstance(check, tuple) else isinstance(value, check)
            if not ok:
                raise ValueError(f"setting {name!r} of {type(self).__name__} cannot be {value!r}; "
                                 f"expected {check if isinstance(check, tuple) else check.__name__}")

    def doprint(self, obj, **context) -> str:
        return self._print(obj, **context)

    def _print(self, obj, **context):
        for cls in type(obj).__mro__:
            method = getattr(self, "_print_" + cls.__name__, None)
            if method is not None:
                return method(obj, **context)
        return self.emptyPrinter(obj)

    def emptyPrinter(self, obj):
        raise TypeError(f"{type(self).__name__} has no way to print a {type(obj).__name__}")


class DerivationPrinter(SolveDerivation, MemoryDerivationMixin, Printer):
    """The recipe's structure; subclasses supply the markup (headings, lists, math delimiters).
    Solve results are printed by the `SolveDerivation` methods (`printers.solve_derivation`)."""

    _default_settings = {"lang": "en", "digits": 3, "standalone": False, "steps": STEPS}
    _setting_checks = {"lang": LANGUAGES, "digits": int, "standalone": bool, "steps": tuple}

    # --- markup, defined by subclasses -------------------------------------------------------
    def heading(self, text: str, level: int) -> str: raise NotImplementedError
    def paragraph(self, text: str) -> str: raise NotImplementedError
    def items(self, texts: list[str]) -> str: raise NotImplementedError
    def math(self, tex: str) -> str: raise NotImplementedError
    def display(self, rows: list[str]) -> str: raise NotImplementedError
    def code(self, name: str) -> str: raise NotImplementedError
    def text(self, s: str) -> str: raise NotImplementedError

    def label(self, s: str) -> str:
        """Text from the file (a source named in it), inert in the markup; `text` is for phrases."""
        return self.text(s)
    def bold(self, s: str) -> str: raise NotImplementedError
    def document(self, blocks: list[str], title: str) -> str: raise NotImplementedError

    # --- helpers -------------------------------------------------------------------------------
    def _p(self, key):
        return phrase(self._settings["lang"], key)

    def _say(self, key, **fields) -> str:
        """The phrase `key`, its plain words escaped for the markup and its fields filled in."""
        return self._fill(self._p(key), **fields)

    def _fill(self, template: str, **fields) -> str:
        """A template with its words escaped and its fields (markup already) put in as they are; a
        field's format spec may be a Korean particle (`{x:는}`), chosen by what the field ends with."""
        out = []
        for words, field, spec, _ in string.Formatter().parse(template):
            out.append(self.text(words))
            if field is not None:
                value = str(fields[field])
                out.append(value + (particle(value, spec) if spec else ""))
        return "".join(out)

    def _tex(self, expr) -> tuple[str, bool]:
        p = CostLatexPrinter({"digits": self._settings["digits"]})
        return p.doprint(expr), p.rounded

    def _ratio_tex(self, e) -> str:
        """An exact ratio, or its first five digits and an ellipsis where the exact form is long
        (0.99976… must not print as 1)."""
        from costlang.printers.derivation.mathtex import approx_text
        tex, rounded = self._tex(e)
        return rf"{approx_text(float(e), 5)}\ldots" if rounded else tex

    def _chain(self, value, unit, percent=False) -> str:
        return " ".join(f"{rel} {tex}" for rel, tex in
                        value_chain(value, unit, self._settings["digits"], percent))

    def _step_rows(self, step: derive.Step) -> list[str]:
        """`lhs &= formula`, `&= symbolic`, `&= substituted`, `&= value ≈ rounded` (repeats dropped)."""
        lhs, _ = self._tex(step.lhs)
        parts: list[tuple[str, str]] = []
        for expr in (step.formula, tidy(step.symbolic), step.substituted):  # the general form in lowest terms
            if expr is None:
                continue
            tex, rounded = self._tex(expr)
            if tex != lhs and (not parts or parts[-1][1] != tex):
                parts.append((r"\approx" if rounded else "=", tex))
        chain = value_chain(step.value, step.unit, self._settings["digits"], step.percent)
        if parts and number_part(chain[0][1]) == parts[-1][1]:
            parts.pop()
        rows = [f"{rel} {tex}" for rel, tex in parts] + [" ".join(f"{r} {t}" for r, t in chain)]
        return [f"{lhs} &{rows[0]}"] + [f"&{r}" for r in rows[1:]]

    def _steps(self, steps) -> str:
        return self.display([r for s in steps for r in self._step_rows(s)])

    # --- results -------------------------------------------------------------------------------
    def _print_Analysis(self, a, extras=(), **_) -> str:
        title = self._say("title", file=self.code(Path(a.program.source_name).name))
        blocks = [self._hardware(a)]
        free = a.program.free_symbols
        if free:
            blocks.append(self.paragraph(self._say(
                "free", symbols=", ".join(self.math(self._tex(s)[0]) for s in free))))
        for k in a.kernels:
            blocks.append(self._print(k, analysis=a))
        if len(a.kernels) > 1:
            blocks.append(self._print(a.totals, analysis=a))
        for m in a.measurements:
            blocks.append(self._print(m, analysis=a))
        if a.queries:
            blocks.append(self._queries(a))
        # results other stages attach (solve results, what-if comparisons), then the caller's
        for extra in tuple(getattr(a, "solves", ())) + tuple(extras):
            blocks.append(self._print(extra, analysis=a))
        return self.document(blocks, title)

    def _hardware(self, a) -> str:
        hw = a.hardware
        level = hw.main_memory.name
        used = _math_dtypes(a)
        peaks = ", ".join(self.math(rf"P_{{\mathrm{{peak}}}}(\mathrm{{{escape_name(d)}}}) " + self._chain(p, FLOP_PER_S))
                          for d, p in hw.peaks if d in used or not used)
        text = self._say("hardware", name=self.code(hw.name), peaks=peaks, level=level,
                         bw=self.math(r"\mathrm{BW} " + self._chain(hw.bandwidth, BYTE_PER_S)),
                         launch=self.math(r"T_{\mathrm{launch}} " + self._chain(hw.launch, SECOND)))
        conventions = self._say("conventions", level=level, Tk=self.math(r"T_{\mathrm{kernel}}"))
        parts = [self.paragraph(text), self.paragraph(conventions)]
        other = [p for p in a.pools if p.hardware != hw.name]
        if other:   # instances placed on pools of other hardware: said, not silently derived here
            pools = ", ".join(f"{self.code(p.name)} ({self.code(p.hardware)}: "
                              + ", ".join(self.code(i) for i, _ in p.instances) + ")" for p in other)
            parts.append(self.paragraph(self._say("pools_elsewhere", pools=pools, name=self.code(hw.name))))
        return "\n\n".join(parts)

    def _print_KernelResult(self, k, analysis, **_) -> str:
        d = derive.derive_kernel(analysis, k)
        I, Istar = self.math("I"), self.math("I^{*}")
        attainable = self.math(r"P \approx \min\left(P_{\mathrm{peak}}, \mathrm{BW} \cdot I\right)")
        steps = {
            "bytes": [self.paragraph(self.bold(self._say("step_bytes", n=self._circled(1), level=d.level))),
                      self.items([self._traffic(t) for t in d.traffic]) if d.traffic else "",
                      self._steps([d.bytes])],
            "flops": [self.paragraph(self.bold(self._say("step_flops", n=self._circled(2)))),
                      self._steps([d.flops])],
            "intensity": [self.paragraph(self.bold(self._say("step_intensity", n=self._circled(3), I=I,
                                                             Istar=Istar))),
                          self._steps([d.intensity, d.critical_intensity]),
                          self.paragraph(self._say("critical_dtype", Istar=Istar, dtype=self.code(d.math_dtype)))],
            "attainable": [self.paragraph(self.bold(self._say("step_attainable", formula=attainable))),
                           self._steps([d.attainable, d.fraction_of_peak])],
            "times": self._comms(k, d) + [self.paragraph(self.bold(self._say("step_times"))),
                                          self._steps([d.t_compute, d.t_memory, d.t_kernel])],
            "memory": self._memory_blocks(analysis, k),
            "verdict": [self.paragraph(self.bold(self._say("verdict_title")) + ": " + self._verdict(d))],
        }
        if k.count == 1:
            title = self._say("kernel", name=self.code(d.name), ops=" + ".join(d.ops))
        else:  # a repeated body's kernel: its figures are per run
            title = self._say("kernel_repeated", name=self.code(d.name), ops=" + ".join(d.ops),
                              count=self.math(sympy.latex(k.count)))
        blocks = [self.heading(title, 2)]
        blocks += [b for name in self._settings["steps"] for b in steps[name]]
        return "\n\n".join(b for b in blocks if b)

    def _comms(self, k, d: derive.KernelDerivation) -> list[str]:
        """A collective's α–β cost: the link, then n, sent, steps and T_comms with their numbers."""
        if not d.comms:
            return []
        c, link = k.comms.comms, k.comms.link
        rule = self.math(r"T_{\mathrm{comms}} = \frac{\mathrm{sent}}{\mathrm{links} \cdot \mathrm{BW}_{\mathrm{link}}}"
                         r" + \mathrm{steps} \cdot \alpha")
        text = self._say("step_comms", collective=self.code(c.collective), axis=self.code(c.axis),
                         link=self.text(link.kind), rule=rule,
                         bw=self.math(r"\mathrm{BW}_{\mathrm{link}} " + self._chain(link.one_way, BYTE_PER_S)),
                         alpha=self.math(r"\alpha " + self._chain(link.latency, SECOND)))
        return [self.paragraph(self.bold(self._say("step_comms_title"))), self.paragraph(text),
                self._steps(list(d.comms))]

    def _circled(self, n: int) -> str:
        return _CIRCLED[n]

    def _traffic(self, t: derive.TrafficLine) -> str:
        """One item: the tensor, its role and dtype, numel × size = bytes (symbolic, then bound)."""
        pieces = [] if t.numel is None else [self._tex(sympy.Mul(t.numel, t.size, evaluate=False))[0]]
        if t.bytes.free_symbols and not (pieces and derive.only_reordered(
                sympy.Mul(t.numel, t.size, evaluate=False), t.bytes)):
            pieces.append(self._tex(t.bytes)[0])
        chain = self._chain(t.value, BYTE)
        shown = " = ".join(pieces) + " " + chain if pieces else chain.split(" ", 1)[1]
        if t.numel is None:
            return self._say("traffic_stated", direction=self.text(self._p(t.direction)), bytes=self.math(shown))
        return self._say("traffic", direction=self.text(self._p(t.direction)), tensor=self.code(t.tensor),
                         role=self.text(self._p("role").get(t.role, t.role)),
                         dtype=self.code(f"{t.dtype}"), bytes=self.math(shown))

    def _verdict(self, d: derive.KernelDerivation) -> str:
        bound = d.verdict.bound
        if bound in (Bound.DEPENDS, Bound.UNDECIDED):
            return self._say("depends", verdict=self._verdict_words(d.verdict))
        i, _ = self._tex(d.intensity.value)
        istar, _ = self._tex(d.critical_intensity.value)
        times = {"memory-bound": r"T_{\mathrm{memory}} > T_{\mathrm{compute}}",
                 "compute-bound": r"T_{\mathrm{compute}} > T_{\mathrm{memory}}",
                 "balanced": r"T_{\mathrm{compute}} = T_{\mathrm{memory}}"}
        if bound == "launch-bound":
            comparison = r"T_{\mathrm{launch}} > \max\left(T_{\mathrm{compute}}, T_{\mathrm{memory}}\right)"
        elif bound == "comms-bound":
            comparison = r"T_{\mathrm{comms}} > \max\left(T_{\mathrm{compute}}, T_{\mathrm{memory}}\right)"
        elif bound == "balanced" and d.comms and \
                sympy.Eq(d.comms[-1].value, sympy.Max(d.t_compute.value, d.t_memory.value)) == sympy.true:
            # T_comms equals the larger of the other two: a tie with the link, not the roofline's ridge
            comparison = r"T_{\mathrm{comms}} = \max\left(T_{\mathrm{compute}}, T_{\mathrm{memory}}\right)"
            return self._say("balanced_comms", comparison=self.math(comparison))
        else:
            sign = {"memory-bound": "<", "compute-bound": ">", "balanced": "="}[bound]
            comparison = rf"I = {i} {sign} I^{{*}} = {istar} \quad ({times[bound]})"
        return self._say(bound, comparison=self.math(comparison))

    def _print_Totals(self, t, analysis, **_) -> str:
        steps = derive.derive_totals(analysis)
        words = self._verdict_words(t.bound)
        blocks = [self.heading(self._say("totals", launches=count_text(t.launches)), 2), self._steps(steps)]
        bounds = derive.derive_bounds(analysis)
        if bounds:
            blocks += [self.paragraph(self._say("bounds")), self._steps(list(bounds))]
        return "\n\n".join(blocks + [self.paragraph(self.bold(self._say("verdict_title")) + ": " + words)])

    def _verdict_words(self, v: Verdict) -> str:
        """A verdict in words (printers.verdicts), its conditions in math."""
        return verdict_words(v, self._settings["lang"], self._verdict_style())

    def _verdict_style(self) -> Style:
        ops = {"<": "<", ">": ">", "≤": r"\le", "≥": r"\ge", "=": "=", "≈": r"\approx"}
        return Style(symbol=sympy.latex, op=ops.get, wrap=self.math,
                     relation=lambda r: self.math(self._tex(r)[0]), fill=self._fill)

    def _print_MeasuredResult(self, m, analysis, **_) -> str:
        d = derive.derive_measured(analysis, m)
        time = self.math(self._chain(d.time, SECOND).split(" ", 1)[1])
        return "\n\n".join([self.heading(self._say("measured", name=self.code(d.kernel), time=time), 2),
                            self._steps(d.steps)])

    def _queries(self, a) -> str:
        blocks = [self.heading(self._say("queries"), 2)]
        lets = derive.derive_lets(a)
        if lets:
            rows = [f"{self._tex(s.lhs)[0]} = {self._tex(s.formula)[0]}" for s in lets]
            blocks.append(self.paragraph(self._say("lets") + ": " + ", ".join(self.math(r) for r in rows)))
        for q in a.queries:
            blocks.append(self._print(q, analysis=a))
        return "\n\n".join(blocks)

    def _print_QueryResult(self, q, analysis, **_) -> str:
        step = derive.derive_query(analysis, q)
        if step is None:
            return self.items([self._say("query_verdict", name=self.code(q.name),
                                         verdict=self._verdict_words(q.value))])
        return self._steps([step])

    # --- results of other stages: one method each (solves: printers.solve_derivation) -----------
    def _print_FusionComparison(self, c, analysis, **_) -> str:
        """Before → after for FLOPs, traffic, I, T_kernel and launches, with the exact ratio."""
        kernels = lambda ks: ", ".join(self.code("+".join(k)) for k in ks)  # noqa: E731
        from costlang.queries.compare import ratio_ends
        rows = []
        for ch in c.changes:
            label = self.text(self._p("figure_label").get(ch.figure, ch.label))
            before = self._chain(analysis.value(ch.before), ch.unit).split(" ", 1)[1]
            after = self._chain(analysis.value(ch.after), ch.unit).split(" ", 1)[1]
            ends = ratio_ends(analysis, ch) if len(before) + len(after) > _LONG else None
            if ends is not None:   # free sizes: the ratio at their ends, not two pages of max()
                x = self._tex(ends[0])[0]
                first, last = (self._ratio_tex(e) for e in ends[1:])
                rows.append(label + ": " + self._say("fusion_ends", at_one=self.math(rf"\times\, {first}"),
                                                     x=self.math(x), at_inf=self.math(rf"\times\, {last}")))
                continue
            ratio = "" if ch.ratio is None else rf" \quad (\times\, {self._tex(analysis.value(ch.ratio))[0]})"
            rows.append(label + ": " + self.math(rf"{before} \to {after}{ratio}"))
        return "\n\n".join([
            self.heading(self._say("fusion", before=c.baseline, after=c.mode), 2),
            self.paragraph(self._say("fusion_kernels", before=kernels(c.kernels_before),
                                     after=kernels(c.kernels_after))),
            self.items(rows)])
