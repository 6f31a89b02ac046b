"""Roofline analysis: kernels and their costs → intensity, I*, times, verdicts, footprint.

Input: a resolved `Program`, a fusion mode and (optionally) another hardware. Output: `Analysis`,
data only: sympy expressions in the program's symbols (bound ones kept as symbols, so a
derivation can show the formula and then the values) and `Analysis.value` to substitute them.
T_kernel = launch + max(T_compute, T_memory) is a lower bound on the measured time.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Optional

import sympy

from costlang.errors import SemanticError
from costlang.ir.graph import consumers_of_storage, program_outputs
from costlang.ir.program import Hardware, Program, Value
from costlang.passes.kernels import Kernel
from costlang.ir.program import Efficiency
from costlang.analysis.comms import KernelComms, kernel_comms, once_per_step, pipeline_stretch, program_bounds, stage_ends
from costlang.passes.costs import KernelCost, grouped_sum
from costlang.analysis.footprint import Footprint, footprint
from costlang.analysis.memo import bound_value, left_max, remembered, smax, smin, ssum, unsettled
from costlang.analysis.shared import bindings_key, decide_bound, structure
from costlang.analysis.measured import measured
from costlang.analysis.levels import binding_level, check_kernel_factors, factor, level_times
from costlang.analysis.bounds import UNDECIDED
from costlang.analysis.verdict import Verdict, decide, decide_comms, domain_floors, with_level, within

__all__ = ["KernelResult", "Totals", "Footprint", "Analysis", "analyze_roofline", "select_hardware", "not_finite"]


@dataclass(frozen=True)
class KernelResult:
    name: str
    ops: tuple[str, ...]
    op_names: tuple[str, ...]
    cost: KernelCost
    peak: sympy.Expr
    bandwidth: sympy.Expr
    launch: sympy.Expr
    intensity: sympy.Expr
    critical_intensity: sympy.Expr
    t_compute: sympy.Expr
    t_memory: sympy.Expr
    t_kernel: sympy.Expr
    attainable: sympy.Expr
    fraction_of_peak: sympy.Expr
    bound: Verdict
    #: bytes and T_memory per memory level, farthest first; `level` is the binding one's name
    #: (None when the hardware has one level); t_memory above is the binding level's
    levels: tuple = ()
    level: Optional[str] = None
    #: the factors applied (None: 1): compute (or matrix/vector) and the main level's bandwidth
    compute_efficiency: Optional[object] = None
    #: how many times the kernel runs: 1, or the product of the counts of the repeats around it;
    #: the figures above are per run, totals add count × figure
    count: sympy.Expr = sympy.Integer(1)
    repeat: tuple[str, ...] = ()  # the repeats (innermost last) whose body the kernel is in
    t_comms: sympy.Expr = sympy.Integer(0)   # collectives only (analysis.comms)
    comms: Optional[KernelComms] = None

    @property
    def algorithmic_bytes(self):
        return self.cost.algorithmic_bytes

    @property
    def flops(self):
        return self.cost.flops

    @property
    def bytes_read(self):
        return self.cost.bytes_read

    @property
    def bytes_written(self):
        return self.cost.bytes_written

    @property
    def bytes(self):
        return self.cost.bytes


@dataclass(frozen=True)
class Totals:
    flops: sympy.Expr
    bytes_read: sympy.Expr
    bytes_written: sympy.Expr
    bytes: sympy.Expr
    intensity: sympy.Expr
    critical_intensity: sympy.Expr
    t_compute: sympy.Expr
    t_memory: sympy.Expr
    t_launch: sympy.Expr
    t_kernel: sympy.Expr
    launches: int  # an int, or a sympy expression when a repeat has a symbolic count
    bound: Verdict
    level: Optional[str] = None   # the binding memory level of the sums (None: one level)
    t_comms: sympy.Expr = sympy.Integer(0)
    #: many chips: full overlap (launch + max(ΣT_compute, ΣT_memory, ΣT_comms)) and none (their sum)
    t_overlap: Optional[sympy.Expr] = None
    t_serial: Optional[sympy.Expr] = None
    #: with pipeline stages and kernels run once per step after the pipeline drains (a training
    #: step's gradient all-reduce): their (ΣT_compute, ΣT_memory, ΣT_comms, launch time), which the
    #: bounds keep outside the (m + p − 1)/m stretch; None otherwise
    once: Optional[tuple] = None
    #: with p ≥ 2 pipeline stages and kernels outside the staged layers (embedding, head): the
    #: (lower, upper) bounds of the first stage (the embedding, the forward sends), of the last (the
    #: head, a training step's backward sends) and, with p ≥ 3 stages and sends both ways, of a middle
    #: stage (both sends); t_overlap and t_serial are the busiest stage's. None otherwise
    stages: Optional[tuple] = None


#: where an Analysis keeps its bindings' key among its remembered values
_BINDINGS_KEY = ("bindings key",)


@dataclass
class Analysis:
    program: Program
    hardware: Hardware
    fusion: str
    kernels: tuple[KernelResult, ...]
    totals: Totals
    footprint: Footprint
    bindings: dict
    queries: tuple = field(default=())
    measurements: tuple = field(default=())
    solves: tuple = field(default=())        # analysis.solve: SolveResult / RegimeMap
    comparisons: tuple = field(default=())   # analysis.whatif: Comparison
    #: the same program under other fusion modes, analysed once each (analysis.compare)
    other_modes: dict = field(default_factory=dict, repr=False, compare=False)
    #: the same program on each serving pool's other hardware, analysed once each (queries.pools)
    other_hardware: dict = field(default_factory=dict, repr=False, compare=False)
    #: serving pools: queries.pools.PoolAnswer per `pool` statement
    pools: tuple = field(default=())
    _values: dict = field(default_factory=dict, repr=False, compare=False)
    #: what repeated sweeps of this analysis share, per (swept names, shown quantities) (analysis.sweep)
    sweep_plans: dict = field(default_factory=dict, repr=False, compare=False)

    def value(self, expr):
        """An expression (or a query's `Value`) with every bound symbol replaced by its value."""
        if isinstance(expr, int):
            return sympy.Integer(expr)
        if isinstance(expr, Value):
            return self.value(expr.expr)
        if not isinstance(expr, sympy.Basic):
            return expr
        # remembered: a model's kernels repeat the same few expressions (the bindings of an
        # Analysis do not change once it is made)
        known = self._values.get(expr)
        if known is None:
            key = self._values.get(_BINDINGS_KEY)
            if key is None:
                key = self._values[_BINDINGS_KEY] = bindings_key(self.bindings)
            try:
                known = bound_value(expr, self.bindings, key)
            except ValueError:   # a max() over a value that divides by zero (sympy: "nan is not comparable")
                known = sympy.nan
            self._values[expr] = known
        return known

    def kernel_of(self, node: str) -> KernelResult:
        for k in self.kernels:
            if node in k.ops:
                return k
        if node in self.program.instances:  # a block instance that is one kernel (a `measure` of it)
            nodes = self.program.nodes
            kernels = [k for k in self.kernels if any(nodes[op].scope == node or nodes[op].scope.startswith(node + ".")
                                                      for op in k.ops)]
            if len(kernels) == 1:
                return kernels[0]
        raise KeyError(node)

    def __repr__(self) -> str:
        free = ", ".join(str(s) for s in self.program.free_symbols) or "none"
        n = len(self.kernels)
        return (f"<costlang.Analysis {self.program.source_name!r}: {n} kernel{'s' * (n != 1)} on "
                f"{self.hardware.name}, fusion {self.fusion}, free symbols {free}>")


def select_hardware(program: Program, name: Optional[str] = None) -> Hardware:
    name = name or program.selected_hardware
    if name is None:
        from costlang.errors import Span
        main = program.main_span   # the file's line 1, not the first statement's name
        raise SemanticError("no hardware is selected", Span(main.source, 1, 1, 1, 1) if main else None,
                            "add a line such as `use hardware h100_sxm` "
                            "(`costlang hardware` lists the presets)")
    if name not in program.hardware:
        from costlang.errors import CostNameError, hardware_hint
        raise CostNameError(f"unknown hardware '{name}'", None,
                            hardware_hint(name, program.hardware, program.systems)
                            or "`costlang hardware` lists the presets")
    return program.hardware[name]


def analyze_roofline(program: Program, fusion: Optional[str] = None, hardware: Optional[str] = None,
                     levels: Optional[dict] = None, decide: bool = True, stages: bool = True,
                     figures: bool = True, memory: bool = True) -> Analysis:
    """Costs, roofline figures and measurements for a program under a fusion mode: no queries,
    solves or comparisons (`analysis.pipeline.analyze` adds them).

    `levels` (kernel name → the memory level that binds it) makes a figures-only analysis: each
    kernel's T_memory is that level's and no verdict is decided (every one is undecided). A solve
    uses it for the program with its hardware made symbolic, whose verdicts nobody reads and
    whose level order the numeric analysis has already settled. `decide=False` keeps the binding
    levels but decides no verdict either (a solve's analysis with X free: its sides read times,
    never verdicts). `stages=False` keeps a pipeline's bounds over every kernel (the first and
    last stages not timed apart): for an analysis whose bounds nobody reads. `figures=False`
    figures no kernel (no results, no sums): for an analysis of which only the memory is read
    (a footprint solve's general form); `memory=False` works out no footprint (None): for one of
    which only times and counts are read. A figures-only analysis (`levels`) checks no kernel's
    time for division by zero: the numeric analysis it follows has; and it compares no max() or
    min() it builds (`memo.settle` compares those its reader reads: a solve's general form reads
    two sides of the many kernels' figures)."""
    hw = select_hardware(program, hardware)
    mode = fusion or program.fusion or "elementwise"
    G, kernels, costs = structure(program, hw, mode)  # shared by scenarios that keep the graph
    outputs = program_outputs(program)
    bindings = program.bindings
    bkey = bindings_key(bindings)
    floors = domain_floors(program)   # verdicts speak only of sizes the shapes allow
    results = tuple(_kernel_result(program, hw, k, cost, bindings, bkey, floors, levels, decide)
                    for k, cost in zip(kernels, costs)) if figures else ()
    totals = _totals(results, hw, bindings, program.main_span, pipeline_stretch(program), once_per_step(program),
                     decided=levels is None and decide and figures, lazy=levels is not None,
                     # the hardware-symbolic program of a solve's general form keeps the simpler bounds
                     ends=stage_ends(program, results) if levels is None and stages else None)
    analysis = Analysis(program, hw, mode, results, dataclasses.replace(totals, bound=within(totals.bound, floors)),
                        footprint(program, hw.capacity, kernels, costs, outputs, bindings) if memory else None,
                        bindings)
    analysis.measurements = measured(analysis)
    if levels is None:
        _check_finite_kernels(analysis)
    return analysis


def not_finite(value) -> bool:
    """Whether a value with the symbols' values put in divides by zero somewhere (∞, zoo or nan in it)."""
    return isinstance(value, sympy.Basic) and value.has(sympy.zoo, sympy.nan, sympy.oo, -sympy.oo)


def _check_finite_kernels(analysis) -> None:
    """A kernel whose time, with every symbol's value put in, divides by zero (a tile of no
    elements, a capacity of none) is an error at its statement, not a report of nan."""
    for k in analysis.kernels:
        t = analysis.value(k.t_kernel)
        if not_finite(t) and not t.free_symbols:
            node = analysis.program.nodes[k.ops[0]]
            raise SemanticError(f"kernel '{k.name}' has no finite time with the values given (it divides by "
                                "zero)", node.span,
                                "check the values of the dims and params it uses (a memory level's capacity, a "
                                "tile size)")


def _kernel_result(program: Program, hw: Hardware, k: Kernel, cost: KernelCost, bindings,
                   bkey=None, floors: Optional[dict] = None, chosen: Optional[dict] = None,
                   decide: bool = True) -> KernelResult:
    peak, t_compute, ce, levels, main, intensity, critical, attainable, fraction = \
        _kernel_figures(program, hw, k, cost, chosen is not None)
    binding = binding_level(levels, main.level, bindings) if chosen is None else \
        next((lt for lt in levels if lt.level == chosen.get(k.name)), main)
    t_memory = binding.t_memory
    repeat = program.nodes[k.ops[0]].repeat
    comms = kernel_comms(program, k.ops)
    t_comms = comms.t_comms if comms else sympy.Integer(0)
    times = (t_compute, t_memory, t_comms) if comms else (t_compute, t_memory)
    span = program.nodes[k.ops[0]].span
    if chosen is not None or not decide:
        bound = Verdict(UNDECIDED)
    elif comms:
        bound = decide_comms(t_compute, t_memory, t_comms, hw.launch, bindings, span)
    else:
        bound = decide_bound(t_compute, t_memory, hw.launch, bindings,
                             bindings_key(bindings) if bkey is None else bkey, span)
    level = binding.level if len(levels) > 1 else None
    bound = with_level(within(bound, floors or {}), level)
    return KernelResult(
        k.name, k.ops, tuple(program.nodes[n].op.name for n in k.ops), cost, peak, hw.bandwidth, hw.launch,
        intensity, critical, t_compute, t_memory, _launch_plus(hw.launch, times, chosen is not None),
        attainable, fraction, bound,
        levels, level, ce, program.count(repeat), repeat, t_comms, comms)


_FIGURES: dict = {}
_T_KERNEL: dict = {}


def _launch_plus(launch, times: tuple, lazy: bool = False):
    """T_kernel = launch + max(times), once per distinct times (a model's kernels repeat a few);
    `lazy`: the max() left uncompared (`memo.settle` compares it where it is read)."""
    if lazy:
        return launch + unsettled(sympy.Max, times)
    return remembered(_T_KERNEL, (launch, times), lambda: launch + smax(*times))


def _kernel_figures(program: Program, hw: Hardware, k: Kernel, cost: KernelCost, lazy: bool = False) -> tuple:
    """What a kernel's figures are before any value is substituted. They depend only on the
    hardware, the kernel's cost (FLOPs, bytes per level, math dtype) and, per op, its kind, math
    dtype, FLOPs and stated efficiencies: so the kernels of repeated layers, equal in all of
    these, share one computation (the ops' names matter only where an op states an efficiency,
    which names its op), and so do the scenarios that keep them."""
    nodes = tuple(program.nodes[n] for n in k.ops)
    stated = tuple(o for n in nodes for o in n.options if o[0].startswith("efficiency_"))
    key = (id(hw), cost.flops, cost.bytes, cost.level_bytes, cost.math_dtype,
           tuple((n.op.kind, n.math_dtype.name, n.flops) for n in nodes), stated, k.ops if stated else ())
    # the hardware is kept beside its figures, so its id stays its own while the entry exists
    return remembered(_FIGURES, (key, lazy), lambda: (hw, _figures(program, hw, k, cost, lazy)))[1]


def _figures(program: Program, hw: Hardware, k: Kernel, cost: KernelCost, lazy: bool = False) -> tuple:
    check_kernel_factors(program, hw, k.ops)
    peak, t_compute, ce = _compute(program, hw, k, cost)
    levels = level_times(program, hw, k.ops, cost)
    main = next(lt for lt in levels if lt.level == hw.main_memory.name)
    bw, achieved_peak = main.achievable, peak * (ce.value if ce else 1)
    intensity = _ratio(cost.flops, cost.bytes)
    attainable = unsettled(sympy.Min, (achieved_peak, bw * intensity)) if lazy else smin(achieved_peak, bw * intensity)
    return peak, t_compute, ce, levels, main, intensity, achieved_peak / bw, attainable, attainable / peak


def _compute(program: Program, hw: Hardware, k: Kernel, cost: KernelCost):
    """The kernel's peak and T_compute. Mixed precision (DOMAIN.md): each op's FLOPs run at the
    peak of its own math dtype, so T_compute = Σ FLOPs_op / peak_op and the kernel's peak is the
    effective one, ΣFLOPs / T_compute (the dtype's peak when the kernel computes in one dtype)."""
    nodes = [program.nodes[n] for n in k.ops if program.nodes[n].flops != 0]
    groups = {(n.math_dtype.name, unit_of(n)) for n in nodes}
    effs = {u: factor(program, hw, k.ops, u) or factor(program, hw, k.ops, "compute") for _, u in groups}
    if len(groups) <= 1:
        dtype, unit = groups.pop() if groups else (cost.math_dtype, unit_of(program.nodes[k.ops[0]]))
        if not nodes and hw.peak(dtype, unit) is None:
            # no FLOPs: T_compute is 0 whatever the peak, so none is demanded; I* is read against
            # the hardware's largest peak (informative only: I = 0 is below any I*)
            peak = max((p for _, p in hw.peaks), key=lambda p: sympy.N(p))
            return peak, sympy.Integer(0), None
        peak = _peak(program, hw, k, dtype, nodes[0] if nodes else program.nodes[k.ops[0]], unit)
        eff = effs.get(unit)
        return peak, cost.flops / (peak * (eff.value if eff else 1)), eff
    raw = sympy.Add(*[n.flops / _peak(program, hw, k, n.math_dtype.name, n, unit_of(n)) for n in nodes])
    t_compute = sympy.Add(*[n.flops / (_peak(program, hw, k, n.math_dtype.name, n, unit_of(n))
                                       * (effs[unit_of(n)].value if effs[unit_of(n)] else 1)) for n in nodes])
    peak = cost.flops / raw
    eff = None
    if any(effs.values()):
        ratio = raw / t_compute
        eff = Efficiency("compute", sympy.cancel(ratio) if ratio.free_symbols else ratio, None, "kernel")
    return (sympy.cancel(peak) if peak.free_symbols else peak), t_compute, eff


def unit_of(node) -> str:
    """Matmuls (and custom kernels, unless they say `units = vector`) run on the matrix units;
    elementwise, reductions and row-wise ops on the vector units."""
    if node.kind == "custom":
        return node.option("units") or "matrix"
    return "vector" if node.kind in ("elementwise", "reduce", "rowwise") else "matrix"


def _peak(program: Program, hw: Hardware, k: Kernel, dtype: str, node, unit: str = "matrix") -> sympy.Expr:
    peak = hw.peak(dtype, unit)
    if peak is None:
        raise SemanticError(f"hardware '{hw.name}' states no peak FLOP/s for {dtype}, "
                            f"which kernel '{k.name}' computes in", node.span,
                            f"it states peaks for: {', '.join(d for d, _ in hw.peaks)}; add "
                            f"`peak {dtype} = ...` to a hardware that extends it")
    return peak


def _ratio(a, b):
    """FLOPs per byte: a kernel that moves nothing has infinite intensity, unless it does nothing."""
    if b == 0:
        return sympy.Integer(0) if a == 0 else sympy.oo
    return a / b


def _totals(kernels, hw: Hardware, bindings, span=None, stretch=sympy.Integer(1), once=frozenset(),
            decided: bool = True, ends: Optional[tuple] = None, lazy: bool = False) -> Totals:
    """Sums over the kernels, each counted as often as it runs (a repeated body's `count`);
    `lazy`: each kernel's busy time a max() left uncompared, as its T_kernel is."""
    add = lambda attr: ssum((k.count, getattr(k, attr)) for k in kernels)  # noqa: E731
    flops, read, written = add("flops"), add("bytes_read"), add("bytes_written")
    tc, tm, tk = add("t_compute"), add("t_memory"), add("t_kernel")
    launches = grouped_sum(k.count for k in kernels)
    launches = int(launches) if launches.is_Integer else launches
    t_launch = launches * hw.launch
    istar = _program_istar(flops, tc, hw, kernels)
    # a kernel's busy time is the max of its times; without comms, the T_kernel's max (`_launch_plus`)
    most = (lambda *times: unsettled(sympy.Max, times)) if lazy else smax
    busy = ssum((k.count, most(k.t_compute, k.t_memory, k.t_comms) if k.comms else most(k.t_compute, k.t_memory))
                for k in kernels)
    tcomms = add("t_comms")
    verdict = _totals_verdict(tc, tm, tcomms, t_launch if kernels else sympy.Integer(0), busy, bindings, span) \
        if decided else Verdict(UNDECIDED)
    once_sums = _once_sums(kernels, once, hw) if stretch != 1 else None
    bounded = tcomms != 0 or stretch != 1
    lower, upper = program_bounds(tc, tm, tcomms, t_launch, stretch, once_sums) \
        if bounded and ends is None else (None, None)
    stages = None
    if bounded and ends is not None:
        # each end leaves out the other's kernels; a middle stage both ends' own (not the sends)
        left_out = (ends[1], ends[0]) + ((ends[2],) if ends[2] is not None else ())
        stages = tuple(program_bounds(tc - o[0], tm - o[1], tcomms - o[2], t_launch - o[3], stretch, once_sums)
                       for o in (_part_sums(kernels, names, hw) for names in left_out))
        lower, upper = (left_max(*[stage[i] for stage in stages]) for i in (0, 1))   # the busiest stage's
    level = _total_level(kernels, hw, bindings) if decided else None
    return Totals(flops, read, written, read + written, _ratio(flops, read + written), istar,
                  tc, tm, t_launch, tk, launches, with_level(verdict, level), level,
                  tcomms, lower, upper, once_sums if lower is not None else None, stages)


def _part_sums(kernels, names, hw: Hardware) -> tuple:
    """(ΣT_compute, ΣT_memory, ΣT_comms, launch time) of the named kernels, each × its count."""
    ks = [k for k in kernels if k.name in names]
    add = lambda attr: sympy.Add(*[k.count * getattr(k, attr) for k in ks])  # noqa: E731
    return add("t_compute"), add("t_memory"), add("t_comms"), sympy.Add(*[k.count for k in ks]) * hw.launch


def _totals_verdict(tc, tm, tcomms, t_launch, busy, bindings, span) -> Verdict:
    """The program's verdict: launch-bound where Σ launch overheads exceed Σ max(T_compute,
    T_memory[, T_comms]) over its kernels (each counted as often as it runs), else the roofline
    verdict of the sums (comms-bound where ΣT_comms exceeds both ΣT_compute and ΣT_memory)."""
    bound = lambda e: e.xreplace(bindings)  # noqa: E731
    if tcomms != 0:
        return decide_comms(tc, tm, tcomms, t_launch, bindings, span)
    return decide(bound(tc), bound(tm), bound(t_launch), span, busy=bound(busy) if t_launch != 0 else None)


def _once_sums(kernels, once, hw: Hardware):
    """(ΣT_compute, ΣT_memory, ΣT_comms, launches) of the kernels run once per step (None: there are none)."""
    return _part_sums(kernels, once, hw) if any(k.name in once for k in kernels) else None


def _total_level(kernels, hw: Hardware, bindings) -> Optional[str]:
    """The level whose summed T_memory is largest (the main one when free symbols leave it open)."""
    if len(hw.memories) < 2 or not kernels:
        return None
    sums = {m.name: ssum((k.count, lt.t_memory) for k in kernels for lt in k.levels if lt.level == m.name)
            for m in hw.memories}
    best = hw.main_memory.name
    for name, t in sums.items():
        diff = (t - sums[best]).xreplace(bindings)
        if not diff.is_number:
            return hw.main_memory.name
        if diff.is_positive:
            best = name
    return best


def _program_istar(flops, t_compute, hw: Hardware, kernels=()):
    """The program's I*: its effective peak (ΣFLOPs / ΣT_compute) over the bandwidth.

    With this choice I < I* exactly when ΣT_memory > ΣT_compute, whatever mix of dtypes the
    kernels compute in; for a single-dtype program it is that dtype's I*. A program without FLOPs
    has no effective peak: its I* is its kernels' (the largest, if they differ), never merely the
    hardware's first declared peak.
    """
    if t_compute == 0:
        found = {k.critical_intensity for k in kernels}
        if found:
            return max(found, key=lambda e: sympy.N(e)) if all(e.is_number for e in found) else found.pop()
        return next(iter(dict(hw.peaks).values())) / hw.bandwidth
    eff = hw.efficiency(hw.main_memory.name)
    istar = flops / (hw.bandwidth * (eff.value if eff else 1) * t_compute)
    if not istar.free_symbols:
        return istar
    # a compare's scenarios have the same sums, with other values
    return remembered(_CANCELLED, istar, lambda: sympy.cancel(istar), 256)


_CANCELLED: dict = {}
