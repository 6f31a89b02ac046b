"""Queries and lets: expressions over analysis results (`flops(C)`, `1 / t_kernel()`, ...).

Input: an `Analysis` (kernels, totals, footprint) and the program's `let`s and `query`s.
Output: `QueryResult`s (a `Value`, or a verdict for `bound(...)`); the figures of `measure`
blocks are in `analysis.measured`. A result function takes a kernel or tensor name, or nothing for the whole program.
"""
from __future__ import annotations

from costlang.budget import running

from dataclasses import dataclass
from typing import Optional, Union

import sympy

from costlang.errors import CostlangError, CostNameError, SemanticError, Span, did_you_mean
from costlang.ir.expr import Call, Expr, Name
from costlang.ir.statements import Query
from costlang.frontend.expr import evaluate
from costlang.ir.program import Value
from costlang.units import BYTE, BYTE_PER_S, DIMENSIONLESS, FLOP_PER_S, SECOND, Unit, is_unit, parse_unit
from costlang.frontend.typecheck import (KERNEL_FUNCTIONS, STATIC_FUNCTIONS, TRAINING_FUNCTIONS, ProgramNames,
                                        static_call, training_args)
from costlang.analysis.roofline import KernelResult, analyze_roofline, not_finite
from costlang.analysis.verdict import Verdict

__all__ = ["QueryResult", "analyze_with_queries", "answer_queries", "evaluate_in"]

#: kernel figures: attributes of KernelResult and Totals of the same name
_FIGURES = ("flops", "bytes", "bytes_read", "bytes_written", "intensity", "critical_intensity",
            "t_compute", "t_memory", "t_kernel", "attainable", "fraction_of_peak", "algorithmic_bytes",
            "t_comms")
_MEASURED = ("measured_time", "actual_traffic", "effective_bandwidth", "achieved_throughput",
             "achieved_flops", "fraction_of_peak_bandwidth", "fraction_of_peak_flops")


@dataclass(frozen=True)
class QueryResult:
    name: str
    value: Union[Value, Verdict]
    span: Span
    #: on a sharded program, "chip" when the value counts one chip's share (parameters, weight_bytes,
    #: flops, footprint, ...), "system" when it counts the whole system (footprint_system, chips); else None
    per: Optional[str] = None


#: figures of the per-chip program that count one chip's share (on a sharded program)
PER_CHIP = frozenset({"training_memory", "parameters", "weight_bytes", "cache_bytes", "saved_bytes", "footprint", "flops", "bytes",
                      "bytes_read", "bytes_written", "algorithmic_bytes", "comms_bytes"})
#: figures of the whole system
PER_SYSTEM = frozenset({"footprint_system", "chips", "parameters_system", "model_flops", "hardware_flops",
                        "attention_flops", "optimizer_flops", "tokens_per_step"})


def _per(program, expr) -> Optional[str]:
    """Whether a query's value is one chip's share or the whole system's (None: neither is named,
    both are, or the program runs on one chip)."""
    if not program.sharded:
        return None
    funcs: set = set()
    seen: set = set()

    def walk(node) -> None:
        if isinstance(node, Call):
            funcs.add(node.func)
        if isinstance(node, Name) and node.id in program.lets and node.id not in seen:
            seen.add(node.id)
            walk(program.lets[node.id].value)
        for child in getattr(node, "args", ()) or ():
            walk(child)
        for attr in ("left", "right", "operand"):
            if hasattr(node, attr):
                walk(getattr(node, attr))

    walk(expr)
    chip, system = bool(funcs & PER_CHIP), bool(funcs & PER_SYSTEM)
    return "chip" if chip and not system else "system" if system and not chip else None


def analyze_with_queries(program, fusion=None, hardware=None, decide: bool = True, stages: bool = True):
    """The roofline analysis (`analysis.roofline`) with the file's lets and queries answered, and
    no solves or comparisons: what a solve, a sweep or a scenario re-analyses (`decide=False`: no
    verdict decided, for a solve's sides)."""
    analysis = analyze_roofline(program, fusion=fusion, hardware=hardware, decide=decide, stages=stages)
    analysis.queries = answer_queries(analysis)
    return analysis


def answer_queries(analysis) -> tuple[QueryResult, ...]:
    scope = _QueryScope(analysis)
    for name, let in analysis.program.lets.items():  # in order: a chain of lets never recurses deeply
        try:
            with running("evaluating this let", let.span):
                scope.name(Name(name, let.span))
        except CostlangError:
            pass  # reported by the query that uses the let, if any
    out = []
    for q in analysis.program.queries:
        with running("evaluating this query", q.span):
            if isinstance(q.value, Call) and q.value.func == "bound":
                out.append(QueryResult(q.name, scope.verdict(q.value), q.span))
            else:
                value = evaluate(q.value, scope)
                _check_finite(analysis.value(value.expr), q.value)
                out.append(QueryResult(q.name, stated_unit(q, value), q.span, _per(analysis.program, q.value)))
    return tuple(out)


def stated_unit(q: Query, value: Value) -> Value:
    """The query's value in the unit it names (`in tokens/s`): its dimensions must be those of
    1/unit (1/s for tokens/s; none for `in tokens`); a scaled unit rescales it (tokens/ms: ÷ 1000)."""
    if q.unit is None:
        return value
    count, per = q.unit
    if per is not None and not is_unit(per):
        raise SemanticError(f"'{per}' is not a unit: a query's unit is a count per a unit, as in "
                            "`in tokens/s`", q.unit_span, "write s, ms, B, GB, FLOP, ... after the /")
    scale, per_unit = parse_unit(per) if per is not None else (sympy.Integer(1), DIMENSIONLESS)
    expected = DIMENSIONLESS / per_unit
    stated = f"{count}/{per}" if per is not None else count
    if value.unit.dimensions != expected:
        has = "a pure number" if value.unit.dimensions.dimensionless else f"in {value.unit}"
        raise SemanticError(f"'{q.value.span.text}' is {has}, but {stated} is "
                            + (f"a count per {per}" if per is not None else "a pure count"), q.unit_span,
                            f"leave `in {stated}` out, or name a unit that matches")
    return Value(value.expr * scale, Unit(expected.flop, expected.byte, expected.second, stated))


def _check_finite(bound, node: Expr) -> None:
    """A query whose value, with the bound symbols' values put in, divides by zero is an error."""
    if not_finite(bound):
        raise SemanticError(f"'{node.span.text}' is not a finite number with the values given "
                            "(it divides by zero)", node.span,
                            "check the values of the dims and params it uses")


def evaluate_in(analysis, expr: Expr) -> Value:
    """Evaluate any expression over an analysis (used by printers and what-if tools)."""
    return evaluate(expr, _QueryScope(analysis))


def target_of(analysis, node: Call):
    """What a one-argument function such as `intensity(y)` is about: a `KernelResult`, or an
    instance's totals (positioned errors as the query's own)."""
    return _QueryScope(analysis)._target(node, allow_none=False)


class _QueryScope:
    def __init__(self, analysis):
        self.a = analysis
        self.lets: dict[str, Value] = {}

    def known_names(self):
        return list(self.a.program.symbols) + list(self.a.program.lets)

    @property
    def bindings(self) -> dict:
        return self.a.bindings

    def name(self, node: Name) -> Value:
        p = self.a.program
        if node.id in p.symbols:
            return Value(p.symbols[node.id].symbol, DIMENSIONLESS)
        if node.id in p.lets:
            if node.id not in self.lets:
                self.lets[node.id] = evaluate(p.lets[node.id].value, self)
            return self.lets[node.id]
        known = self.known_names()
        raise CostNameError(f"unknown name '{node.id}'", node.span, lambda: did_you_mean(node.id, known))

    def call(self, node: Call) -> Value:
        if self.a.program.placements and node.args and isinstance(node.args[0], Name):
            from costlang.queries.pools import analysis_on, pool_of
            pool = pool_of(self.a.program, node.args[0].id)
            if pool is not None and self.a.program.pools[pool].hardware != self.a.hardware.name:
                # an instance placed on a pool of another hardware: answered there
                return _QueryScope(analysis_on(self.a, self.a.program.pools[pool].hardware)).call(node)
        f = node.func
        if f == "weight_bytes":
            return Value(self._weight_bytes(node), BYTE)
        if f == "cache_bytes":
            return Value(self._weight_bytes(node, roles=("cache",)), BYTE)
        if f == "parameters":
            return Value(self._weight_bytes(node, parameters=True), DIMENSIONLESS)
        if f == "saved_bytes":
            return Value(self._saved_bytes(node), BYTE)
        if f in _FIGURES:
            target = self._target(node, allow_none=True)
            if not hasattr(target, f):  # attainable(), fraction_of_peak(): one kernel's figures
                raise SemanticError(f"{f}() is a figure of one kernel, not of the whole program", node.span,
                                    f"name the kernel, e.g. `{f}({self.a.kernels[0].name})`" if self.a.kernels
                                    else "this program has no kernels yet: compute a tensor, then name its kernel")
            return Value(getattr(target, f), KERNEL_FUNCTIONS[f])
        if f == "energy":
            return Value(self._energy(node), DIMENSIONLESS)
        if f == "comms_bytes":
            return Value(sympy.Add(*[n * k.comms.comms.sent for k, n in self._counted(node) if k.comms]), BYTE)
        if f == "comms_latency":  # the α part of T_comms: steps · α
            return Value(sympy.Add(*[n * k.comms.comms.steps * k.comms.link.latency
                                     for k, n in self._counted(node) if k.comms]), SECOND)
        if f == "t_launch":
            target = self._target(node, allow_none=True)
            return Value(target.t_launch if target is self.a.totals else target.launch, SECOND)
        if f in _MEASURED:
            return self._measured(node)
        if f == "working_set":
            tiling = self._target(node, allow_none=False).cost.tiling
            if tiling is None:
                raise SemanticError("working_set() is a tiled kernel's (a matmul with `{ tile = ... }` or a "
                                    "flash kernel)", node.span)
            return Value(tiling.working_set, BYTE)
        if f in ("bytes_at", "t_memory_at"):
            k = self._target(_first_arg(node), allow_none=False)
            lt = next((x for x in k.levels if x.level == node.args[1].id), None)
            if lt is None:
                raise CostNameError(f"hardware '{self.a.hardware.name}' has no memory level "
                                    f"'{node.args[1].id}'", node.args[1].span,
                                    did_you_mean(node.args[1].id, [x.level for x in k.levels]))
            return Value(lt.bytes if f == "bytes_at" else lt.t_memory, BYTE if f == "bytes_at" else SECOND)
        if f in STATIC_FUNCTIONS:
            return static_call(ProgramNames(self.a.program), node)
        if f == "with_fusion":  # the expression over the same program under another fusion mode
            from costlang.queries.compare import analysis_under
            return evaluate(node.args[1], _QueryScope(analysis_under(self.a, node.args[0].id)))
        if f == "bound":
            raise SemanticError("bound() gives a verdict, not a number; query it on its own",
                                node.span, "write `query bound(C)`")
        if f in TRAINING_FUNCTIONS:
            return self._training(node)
        return self._program_figure(node)

    def _energy(self, node: Call) -> sympy.Expr:
        """Joules of a kernel, a block instance or the program (× counts): pj_per_flop·FLOPs +
        pj_per_byte·bytes where the hardware states both, else its tdp × T_kernel."""
        hw = self.a.hardware
        target = self._target(node, allow_none=True)
        if hw.pj_per_flop is not None and hw.pj_per_byte is not None:
            return (hw.pj_per_flop * target.flops + hw.pj_per_byte * target.bytes) / 10 ** 12
        if hw.tdp is None:
            raise SemanticError(f"energy() needs the power of '{hw.name}': it states no `tdp` (watts), nor "
                                "`pj_per_flop` and `pj_per_byte`", node.span,
                                f"give one in a hardware of your own: `hardware mine : {hw.name} {{ tdp = 700 }}`")
        return hw.tdp * target.t_kernel

    def _training(self, node: Call) -> Value:
        """A training step's figure (analysis.training)."""
        from costlang.analysis.training import training_figures
        f = node.func
        args = [v.expr for v in training_args(node, lambda e: evaluate(e, self))]
        t = training_figures(self.a)
        if t is None:
            raise SemanticError(f"{f}() is a training step's figure, and this program is not one", node.span,
                                "add `train { ... }` (or run it with --train)")
        value = {"model_flops": lambda: t.model_flops, "hardware_flops": lambda: t.hardware_flops,
                 "attention_flops": lambda: t.attention_flops, "optimizer_flops": lambda: t.optimizer_flops,
                 "tokens_per_step": lambda: t.tokens, "step_time": lambda: t.step_lower,
                 "tokens_per_second": lambda: t.tokens_per_second(*args), "mfu": lambda: t.mfu(*args),
                 "hfu": lambda: t.hfu(*args), "time_to_train": lambda: t.time_to_train(*args),
                 "gpu_hours": lambda: t.chips * t.time_to_train(*args) / 3600,
                 "training_memory": lambda: t.memory,
                 "achieved_mfu": lambda: t.mfu(self._step_time(t, node)),
                 "achieved_hfu": lambda: t.hfu(self._step_time(t, node))}[f]()
        return Value(value, TRAINING_FUNCTIONS[f])

    @staticmethod
    def _step_time(t, node: Call) -> sympy.Expr:
        if t.measured is None:
            raise SemanticError(f"{node.func}() is the MFU at a measured step time, and the step has no "
                                "`measure step` block", node.span, "add `measure step { time = ... }` (or use "
                                f"{node.func[len('achieved_'):]}(T) with a time)")
        return t.measured

    def _weight_bytes(self, node: Call, parameters: bool = False, roles=("weight",)) -> sympy.Expr:
        """Weights (`roles=("cache",)`: caches) of the program, of a block instance or repeat, or
        of one tensor; with `parameters`, the number of weight elements, × repeat counts. A weight
        that instances share counts once in the program and in each instance that uses it."""
        from costlang.analysis.composition import weight_bytes
        p = self.a.program
        if not node.args:
            return weight_bytes(self.a, roles=roles, elements=parameters)
        arg = node.args[0]
        if len(node.args) == 1 and isinstance(arg, Name):
            if arg.id in p.instances:
                return weight_bytes(self.a, arg.id, roles=roles, elements=parameters)
            t = p.tensors.get(arg.id)
            if t is not None and t.role in roles:
                return (t.numel if parameters else t.bytes) * p.count(t.repeat)
        what = "a cache" if roles == ("cache",) else "a weight"
        raise SemanticError(f"{node.func}() takes a block instance, a repeat or {what} "
                            "(or nothing, for the whole program)", node.span)

    def _saved_bytes(self, node: Call) -> sympy.Expr:
        """A training step's saved activations (analysis.footprint), of the program or of the tensors
        a block instance or repeat declares, × repeat counts (0 for a program that does not train)."""
        p = self.a.program
        saved = self.a.footprint.saved_tensors
        if not node.args:
            return sympy.Add(*[t.bytes for t in saved])
        arg = node.args[0]
        if len(node.args) == 1 and isinstance(arg, Name) and arg.id in p.instances:
            return sympy.Add(*[t.bytes for t in saved if t.tensor == arg.id or t.tensor.startswith(arg.id + ".")])
        raise SemanticError("saved_bytes() takes a block instance or a repeat (or nothing, for the whole "
                            "program)", node.span)

    def verdict(self, node: Call) -> Verdict:
        return self._target(node, allow_none=True).bound

    def _program_figure(self, node: Call) -> Value:
        f, a = node.func, self.a
        if f == "launches":
            self._no_args(node)
            n = a.totals.launches  # an int, or a count × L
            return Value(sympy.Integer(n) if isinstance(n, int) else n, DIMENSIONLESS)
        if f == "footprint":
            self._no_args(node)
            return Value(a.footprint.bytes, BYTE)
        if f in ("chips", "footprint_system", "parameters_system", "t_overlap", "t_serial", "bubble", "t_estimate"):
            return self._many_chips(node)
        if f == "peak":
            if not node.args or not isinstance(node.args[0], Name):
                raise SemanticError("peak() takes a dtype and, optionally, a hardware", node.span)
            hw, unit = self._hardware_and(node.args[1:])
            value = hw.peak(node.args[0].id, unit or "matrix")
            if value is None:
                raise SemanticError(f"hardware '{hw.name}' states no peak for '{node.args[0].id}'",
                                    node.args[0].span)
            return Value(value, FLOP_PER_S)
        hw, level = self._hardware_and(node.args)
        if f == "launch_overhead":
            return Value(hw.launch, SECOND)
        mem = hw.main_memory if level is None else hw.level(level)
        if mem is None:
            raise CostNameError(f"hardware '{hw.name}' has no memory level '{level}'", node.span,
                                did_you_mean(level, [m.name for m in hw.memories]))
        if f == "bandwidth":   # raw, per chip: a per-SM level's figure times the SM count
            return Value(hw.chip_bandwidth(mem), BYTE_PER_S)
        if mem.capacity is None:
            raise SemanticError(f"hardware '{hw.name}' states no capacity for {mem.name}", node.span)
        return Value(mem.capacity, BYTE)   # per SM for a per-SM level (what one tile may use)

    def _hardware_and(self, args):
        """(hardware, the other name or None) from `[hw] [, name]` in either order."""
        hws = [x for x in args if isinstance(x, Name) and x.id in self.a.program.hardware]
        rest = [x.id for x in args if x not in hws]
        return (self._hardware(hws[0]) if hws else self.a.hardware), (rest[0] if rest else None)

    def _many_chips(self, node: Call) -> Value:
        self._no_args(node)
        a, f = self.a, node.func
        system = a.program.system
        chips = system.chips if system is not None else sympy.Integer(1)
        if f == "chips":
            return Value(chips, DIMENSIONLESS)
        if f == "bubble":
            from costlang.analysis.comms import bubble_fraction
            return Value(bubble_fraction(a.program), DIMENSIONLESS)
        if f == "parameters_system":  # the model's count: the program before sharding
            from types import SimpleNamespace
            from costlang.analysis.composition import weight_bytes
            whole = a.program.whole if a.program.whole is not None else a.program
            return Value(weight_bytes(SimpleNamespace(program=whole), elements=True), DIMENSIONLESS)
        if f == "footprint_system":
            return Value(sympy.expand(chips * a.footprint.bytes), BYTE)
        t = a.totals
        if f == "t_estimate":
            from costlang.analysis.comms import overlap_estimate
            est = overlap_estimate(a)
            if est is None:
                raise SemanticError("t_estimate() is the step with the stated overlaps, and no parallelism states "
                                    "one", node.span, "add e.g. `parallel tensor over gpu { overlap = 0.8 }` "
                                    "(with its source in a comment)")
            return Value(est[0], SECOND)
        if f == "t_overlap":
            return Value(t.t_overlap if t.t_overlap is not None
                         else t.t_launch + sympy.Max(t.t_compute, t.t_memory), SECOND)
        return Value(t.t_serial if t.t_serial is not None else t.t_launch + t.t_compute + t.t_memory, SECOND)

    def _hardware(self, arg: Expr):
        if not isinstance(arg, Name) or arg.id not in self.a.program.hardware:
            name = getattr(arg, "id", "?")
            from costlang.errors import hardware_hint
            raise CostNameError(f"unknown hardware '{name}'", arg.span,
                                hardware_hint(name, self.a.program.hardware, self.a.program.systems))
        return self.a.program.hardware[arg.id]

    def _no_args(self, node):
        if node.args:
            raise SemanticError(f"{node.func}() takes no arguments", node.span)

    def _target(self, node: Call, allow_none: bool):
        if not node.args and allow_none:
            return self.a.totals
        if len(node.args) != 1 or not isinstance(node.args[0], Name):
            raise SemanticError(f"{node.func}() takes one kernel or tensor name (or none, for the "
                                "whole program)", node.span)
        arg = node.args[0]
        name = arg.id
        p = self.a.program
        if name in p.instances:  # a block call or repeat: all of its kernels, × their counts
            from costlang.analysis.composition import instance_totals
            return instance_totals(self.a, name)
        if name not in p.nodes:
            producer = p.producer(name) if name in p.tensors else None
            if producer is None:
                hint = ("it is an input or weight: no kernel computes it" if name in p.tensors
                        else did_you_mean(name, p.nodes))
                raise CostNameError(f"'{name}' is not computed by any kernel", arg.span, hint)
            name = producer.name
        if p.nodes[name].kind == "view":
            raise SemanticError(f"'{name}' is a view: it is not a kernel and costs nothing", arg.span)
        return self.a.kernel_of(name)

    def _counted(self, node: Call) -> list:
        """(kernel, how often it counts) for a function over kernels: one kernel once; the whole
        program (no argument) or a block instance or repeat: each of its kernels as often as it
        runs, as their `Totals` count them (so `comms_bytes()` agrees with `t_comms()`)."""
        target = self._target(node, allow_none=True)
        if isinstance(target, KernelResult):
            return [(target, 1)]
        if node.args:
            from costlang.analysis.composition import instance_kernels
            kernels = instance_kernels(self.a, node.args[0].id)
        else:
            kernels = self.a.kernels
        return [(k, k.count) for k in kernels]

    def _measured(self, node: Call) -> Value:
        target = self._target(node, allow_none=False)
        if not isinstance(target, KernelResult):  # a block instance or repeat: its kernels' figures are apart
            name = node.args[0].id
            inside = [m.node for m in self.a.measurements if m.node.startswith(name + ".")]
            raise SemanticError(f"{node.func}() is a measured kernel's figure, and '{name}' is a block instance",
                                node.args[0].span,
                                f"name its measured kernel: {', '.join(inside)}" if inside else
                                "add `measure` for one of its kernels and name that kernel here")
        for m in self.a.measurements:
            if m.kernel == target.name:
                figures = dict(m.figures)
                if node.func in figures:
                    return figures[node.func]
                raise SemanticError(f"{node.func}() needs `traffic = ...` in the measure block of "
                                    f"'{m.node}'", node.span)
        raise SemanticError(f"kernel '{target.name}' has no `measure` block", node.span,
                            f"add `measure {node.args[0].id} {{ time = ... }}`")


def _first_arg(node: Call) -> Call:
    return Call(node.func, node.args[:1], node.span, node.func_span)
