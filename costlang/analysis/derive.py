"""Derivations: analysis results → the chapter's recipe as steps (formula → values → result).

"The chapter" is section 1.10, "루프라인·메모리바운드 분석" (Roofline and memory-bound analysis), of a
Korean GPU textbook, the first of the two lecture documents whose worked examples costlang follows.

Input: an `Analysis` and one of its results (a `KernelResult`, the `Totals`, a `QueryResult`, a
`MeasuredResult`). Output: `Step`s and small dataclasses holding sympy expressions: the formula in
named quantities (`Term`s such as I, I*, T_compute), the same in the program's symbols, the
formula with every bound value put in (unevaluated, so a printer shows it), and the exact value.
Printers (Markdown, LaTeX) only format these; nothing here produces text.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import sympy

from costlang.ir import expr as ir_expr
from costlang.ir.program import Value
from costlang.units import BYTE, BYTE_PER_S, DIMENSIONLESS, FLOP, FLOP_PER_S, INTENSITY, SECOND, Unit
from costlang.analysis.verdict import Verdict

__all__ = ["Term", "Name", "Literal", "Step", "TrafficLine", "KernelDerivation", "MeasuredDerivation",
           "derive_kernel", "derive_totals", "derive_bounds", "derive_query", "derive_measured", "derive_lets",
           "unevaluated_subs", "only_reordered", "display_expr"]


class Term(sympy.Symbol):
    """A named quantity of the recipe (FLOP, byte, I, I*, P_peak, BW, T_compute, ...)."""


class Name(sympy.Symbol):
    """A kernel, tensor, dtype or hardware name, printed as a name rather than a variable."""


class Literal(sympy.Symbol):
    """A number with a unit as the file wrote it (``100 GB``), shown as written."""


FLOP_T, BYTE_T, I_T, ISTAR_T = Term("FLOP"), Term("byte"), Term("I"), Term("I*")
PEAK_T, BW_T, P_T, FRAC_T = Term("P_peak"), Term("BW"), Term("P"), Term("P/P_peak")
TC_T, TM_T, TL_T, TK_T = Term("T_compute"), Term("T_memory"), Term("T_launch"), Term("T_kernel")
# collectives (α–β): p chips, n bytes per chip, sent bytes, steps latency terms, over a link
GROUP_T, MSG_T, SENT_T, STEPS_T = Term("p"), Term("n"), Term("sent"), Term("steps")
LINK_BW_T, ALPHA_T, LINKS_T, TCOMMS_T = Term("BW_link"), Term("alpha"), Term("links"), Term("T_comms")


@dataclass(frozen=True)
class Step:
    """lhs = formula = symbolic = substituted = value; any of the middle three may be absent."""
    lhs: sympy.Expr
    formula: Optional[sympy.Expr]
    symbolic: Optional[sympy.Expr]
    substituted: Optional[sympy.Expr]
    value: sympy.Expr
    unit: Unit
    percent: bool = False   # a fraction of a peak, shown in %


@dataclass(frozen=True)
class TrafficLine:
    """One tensor crossing the memory level: read or written, numel × dtype size bytes."""
    direction: str  # "read" or "write"
    tensor: str
    role: str
    dtype: Optional[str]
    numel: Optional[sympy.Expr]
    size: Optional[sympy.Expr]
    bytes: sympy.Expr
    value: sympy.Expr   # bytes with bound symbols substituted


@dataclass(frozen=True)
class KernelDerivation:
    name: str
    ops: tuple[str, ...]
    level: str
    math_dtype: str
    traffic: tuple[TrafficLine, ...]
    bytes: Step
    flops: Step
    intensity: Step
    critical_intensity: Step
    attainable: Step
    fraction_of_peak: Step
    t_compute: Step
    t_memory: Step
    t_kernel: Step
    verdict: Verdict   # with free symbols: its regimes or conditions (analysis.verdict)
    comms: tuple[Step, ...] = ()       # a collective: n, p, sent, steps, T_comms (the α–β formula)


@dataclass(frozen=True)
class MeasuredDerivation:
    kernel: str
    time: sympy.Expr
    steps: tuple[Step, ...]


def unevaluated_subs(expr, mapping):
    """`expr` with `mapping` put in, kept unevaluated so that a printer shows the substitution.

    >>> N = sympy.Symbol("N")
    >>> str(unevaluated_subs(6 * N, {N: sympy.Integer(1024)}))
    '6*1024'
    """
    if not isinstance(expr, sympy.Basic) or not mapping:
        return expr
    with sympy.evaluate(False):
        return expr.xreplace(mapping)


def _step(a, lhs, formula, symbolic, env, unit, show_symbolic=True, percent=False) -> Step:
    """A step whose formula is in `Term`s (valued by `env`); the symbolic form is shown when it has
    symbols and `show_symbolic` (for P and T_kernel it only repeats the pieces already derived)."""
    subst = unevaluated_subs(formula, env) if formula is not None else None
    shown = symbolic if symbolic.free_symbols and show_symbolic else None
    return Step(lhs, formula, shown, subst, a.value(symbolic), unit, percent)


def _traffic(a, direction, t) -> TrafficLine:
    tensor = a.program.tensors.get(t.tensor)
    if tensor is None:
        return TrafficLine(direction, t.tensor, t.role, None, None, None, t.bytes, a.value(t.bytes))
    shape = tensor.shape
    numel = sympy.Mul(*shape, evaluate=False) if len(shape) > 1 else (shape[0] if shape else sympy.Integer(1))
    return TrafficLine(direction, t.tensor, t.role, tensor.dtype.name, numel, tensor.dtype.size, t.bytes,
                       a.value(t.bytes))


def _bytes_formula(lines):
    terms = [sympy.Mul(l.numel, l.size, evaluate=False) if l.numel is not None else l.bytes for l in lines]
    return sympy.Add(*terms, evaluate=False) if len(terms) > 1 else (terms[0] if terms else sympy.Integer(0))


def _node_flops_formula(program, node):
    """FLOPs of one op as the recipe writes them (2·M·N·K, not 36), checked against the cost."""
    kind, per = node.kind, node.op.flops
    out = program.tensors.get(node.output) if node.output else None
    ins = [program.tensors[t] for t in node.inputs]
    factors = None
    if kind == "elementwise" and out is not None:
        factors = [per, *out.shape]
    elif kind == "matmul" and out is not None and ins:
        factors = [per, *out.shape, ins[0].shape[-1]]
    elif kind in ("reduce", "rowwise") and ins:
        factors = [per, *ins[0].shape]
    if factors is None:
        return node.flops
    factors = [f for f in factors if f != 1] or [sympy.Integer(1)]
    formula = sympy.Mul(*factors, evaluate=False) if len(factors) > 1 else factors[0]
    return formula if sympy.expand(formula.doit() - node.flops) == 0 else node.flops


def derive_kernel(a, k) -> KernelDerivation:
    """The chapter's recipe for one kernel: ① bytes, ② FLOPs, ③ I vs I*, attainable, times, verdict."""
    traffic = tuple(_traffic(a, "read", t) for t in k.cost.reads) + tuple(
        _traffic(a, "write", t) for t in k.cost.writes)
    nodes = [a.program.nodes[n] for n in k.ops]
    flops_formula = sympy.Add(*[_node_flops_formula(a.program, n) for n in nodes], evaluate=False) \
        if len(nodes) > 1 else _node_flops_formula(a.program, nodes[0])
    env = {FLOP_T: a.value(k.flops), BYTE_T: a.value(k.bytes), PEAK_T: k.peak, BW_T: k.bandwidth,
           I_T: a.value(k.intensity), ISTAR_T: k.critical_intensity, TC_T: a.value(k.t_compute),
           TM_T: a.value(k.t_memory), TL_T: k.launch, P_T: a.value(k.attainable)}
    largest = sympy.Max(TC_T, TM_T, evaluate=False)
    if k.comms is not None:  # an unsorted max: the values follow the formula's order
        env[TCOMMS_T] = a.value(k.t_comms)
        largest = sympy.Function("max")(TC_T, TM_T, TCOMMS_T)
    return KernelDerivation(
        k.name, k.op_names, a.hardware.main_memory.name, k.cost.math_dtype, traffic,
        _formula_step(a, BYTE_T, _bytes_formula(traffic), k.bytes, BYTE),
        _formula_step(a, FLOP_T, flops_formula, k.flops, FLOP),
        _step(a, I_T, FLOP_T / BYTE_T, k.intensity, env, INTENSITY),
        _step(a, ISTAR_T, PEAK_T / BW_T, k.critical_intensity, env, INTENSITY),
        _step(a, P_T, sympy.Min(PEAK_T, sympy.Mul(BW_T, I_T, evaluate=False), evaluate=False),
              k.attainable, env, FLOP_PER_S, show_symbolic=False),
        _step(a, FRAC_T, P_T / PEAK_T, k.fraction_of_peak, env, DIMENSIONLESS, False, percent=True),
        _step(a, TC_T, FLOP_T / PEAK_T, k.t_compute, env, SECOND),
        _step(a, TM_T, BYTE_T / BW_T, k.t_memory, env, SECOND),
        _step(a, TK_T, sympy.Add(TL_T, largest, evaluate=False),
              k.t_kernel, env, SECOND, show_symbolic=False),
        k.bound, _comms_steps(a, k) if k.comms is not None else ())


def _comms_steps(a, k) -> tuple[Step, ...]:
    """The α–β cost of a collective kernel: its message n, sent(p, n), steps(p) and
    T_comms = sent / (links · BW_link) + steps · α, each formula with its numbers put in."""
    from costlang.ir.system import GROUP, MESSAGE
    c, link = k.comms.comms, k.comms.link
    put = {GROUP: a.value(c.group), MESSAGE: a.value(c.message)}
    bw = LINK_BW_T if link.links == 1 else sympy.Mul(LINKS_T, LINK_BW_T, evaluate=False)
    with sympy.evaluate(False):
        formula = sympy.Add(SENT_T / bw, STEPS_T * ALPHA_T)
    numbers = {SENT_T: a.value(c.sent), STEPS_T: a.value(c.steps), LINK_BW_T: a.value(link.one_way),
               ALPHA_T: a.value(link.latency), LINKS_T: a.value(link.links)}
    message = c.message if c.message.free_symbols else None
    return (Step(GROUP_T, None, None, None, a.value(c.group), DIMENSIONLESS),
            Step(MSG_T, None, message, None, a.value(c.message), BYTE),
            _formula_in(sympy.factor(c.sent_formula), SENT_T, put, a.value(c.sent), BYTE),
            _formula_in(sympy.factor(c.steps_formula), STEPS_T, put, a.value(c.steps), DIMENSIONLESS),
            Step(TCOMMS_T, formula, None, unevaluated_subs(formula, numbers), a.value(k.t_comms), SECOND))


def _formula_in(formula, lhs, put, value, unit) -> Step:
    """`lhs = formula(p, n) = the numbers put in = value` (just the value for a constant formula)."""
    if formula.is_number:
        return Step(lhs, None, None, None, value, unit)
    return Step(lhs, formula, None, unevaluated_subs(formula, put), value, unit)


def _formula_step(a, lhs, formula, symbolic, unit) -> Step:
    """A step whose formula is already in the program's symbols (bytes and FLOPs)."""
    same = symbolic == formula or only_reordered(formula, symbolic)
    base = formula if same else symbolic
    subst = unevaluated_subs(base, a.bindings) if symbolic.free_symbols & set(a.bindings) else None
    return Step(lhs, formula, None if same else symbolic, subst, a.value(symbolic), unit)


def only_reordered(formula, symbolic) -> bool:
    """Whether `symbolic` is `formula` with its terms and factors merely reordered (M·K·2 vs 2·K·M),
    so that showing both would add nothing; 6·N from N·2 + N·2 + N·2 is a real step.

    >>> M, K = sympy.symbols("M K")
    >>> only_reordered(sympy.Mul(M, K, 2, evaluate=False), 2 * K * M)
    True
    """
    if not isinstance(formula, sympy.Basic) or sympy.expand(formula.doit() - symbolic) != 0:
        return False
    terms_f, terms_s = sympy.Add.make_args(formula), sympy.Add.make_args(symbolic)
    if len(terms_f) != len(terms_s):
        return False
    return sorted(map(_factor_count, terms_f)) == sorted(map(_factor_count, terms_s))


def _factor_count(term) -> int:
    return sum(_factor_count(f) for f in term.args) if term.is_Mul else 1


def derive_totals(a) -> tuple[Step, ...]:
    """Whole-program sums: FLOPs, bytes, I, T_compute, T_memory, T_kernel (launches included)."""
    t = a.totals
    return (_formula_step(a, FLOP_T, t.flops, t.flops, FLOP),
            _formula_step(a, BYTE_T, t.bytes, t.bytes, BYTE),
            _step(a, I_T, FLOP_T / BYTE_T, t.intensity,
                  {FLOP_T: a.value(t.flops), BYTE_T: a.value(t.bytes)}, INTENSITY),
            Step(TK_T, None, t.t_kernel if t.t_kernel.free_symbols else None, None, a.value(t.t_kernel), SECOND))


def derive_bounds(a) -> tuple[Step, ...]:
    """Many chips: the lower bound (communication fully overlapped) and the upper bound (nothing
    overlapped) over the sums, × (m + p − 1)/m with pipeline stages; () without communication."""
    from costlang.analysis.comms import once_per_step, pipeline_stretch
    t = a.totals
    if t.t_overlap is None:
        return ()
    stretch = pipeline_stretch(a.program)
    lower_t, upper_t, stretch_t = Term("T_lower"), Term("T_upper"), Term("stretch")
    env = {TL_T: a.value(t.t_launch), TC_T: a.value(t.t_compute), TM_T: a.value(t.t_memory),
           TCOMMS_T: a.value(t.t_comms), stretch_t: a.value(stretch)}
    with sympy.evaluate(False):
        lower = sympy.Add(TL_T, sympy.Function("max")(TC_T, TM_T, TCOMMS_T))
        upper = sympy.Add(TL_T, TC_T, TM_T, TCOMMS_T)
        if stretch != 1:
            lower, upper = sympy.Mul(stretch_t, lower), sympy.Mul(stretch_t, upper)
    if (once_per_step(a.program) and stretch != 1) or t.stages is not None:
        # the gradient all-reduce sits outside the stretch; or the busier of the first and last stages
        return (Step(lower_t, None, None, None, a.value(t.t_overlap), SECOND),
                Step(upper_t, None, None, None, a.value(t.t_serial), SECOND))
    return (Step(lower_t, lower, None, unevaluated_subs(lower, env), a.value(t.t_overlap), SECOND),
            Step(upper_t, upper, None, unevaluated_subs(upper, env), a.value(t.t_serial), SECOND))


# --- queries: the query's own expression, shown as the file wrote it -------------------------

def display_expr(a, node: ir_expr.Expr) -> sympy.Expr:
    """A query's expression tree (`ir.expr`) as unevaluated sympy, for display (never from text)."""
    if isinstance(node, ir_expr.Num):
        return node.value
    if isinstance(node, ir_expr.Quantity):
        return Literal(node.text)
    if isinstance(node, ir_expr.Name):
        sym = a.program.symbols.get(node.id)
        return sym.symbol if sym is not None else Name(node.id)
    if isinstance(node, ir_expr.Neg):
        return sympy.Mul(-1, display_expr(a, node.operand), evaluate=False)
    if isinstance(node, ir_expr.Call):
        args = [display_expr(a, x) for x in node.args]
        return sympy.Function(node.func)(*args)
    left, right = display_expr(a, node.left), display_expr(a, node.right)
    with sympy.evaluate(False):
        return {"+": lambda: left + right, "-": lambda: left - right, "*": lambda: left * right,
                "/": lambda: left / right, "^": lambda: left ** right}[node.op]()


def derive_query(a, q) -> Optional[Step]:
    """name = the file's expression = its value in the program's symbols = the bound value."""
    if isinstance(q.value, Verdict):
        return None
    source = next((x for x in a.program.queries if x.name == q.name and x.span == q.span), None)
    formula = display_expr(a, source.value) if source is not None else None
    expr = q.value.expr
    symbolic = expr if isinstance(expr, sympy.Basic) and expr.free_symbols else None
    return Step(Name(q.name), formula, symbolic, None, a.value(expr), q.value.unit)


def derive_lets(a) -> tuple[Step, ...]:
    """The file's `let` definitions, as written (queries refer to them by name)."""
    return tuple(Step(Name(name), display_expr(a, let.value), None, None, sympy.nan, DIMENSIONLESS)
                 for name, let in a.program.lets.items())


def derive_measured(a, m) -> MeasuredDerivation:
    """The note's section 3: effective bandwidth, achieved throughput and fractions from a time."""
    measure = a.program.measurements[m.node]
    k = next(x for x in a.kernels if x.name == m.kernel)
    time_t, traffic_t = Term("t_measured"), Term("traffic")
    env = {BYTE_T: a.value(k.bytes), time_t: measure.time, BW_T: k.bandwidth, FLOP_T: a.value(k.flops),
           PEAK_T: k.peak}
    if measure.traffic is not None:
        env[traffic_t] = measure.traffic
    formulas = {"effective_bandwidth": BYTE_T / time_t, "achieved_throughput": traffic_t / time_t,
                "fraction_of_peak_bandwidth": traffic_t / (time_t * BW_T),
                "achieved_flops": FLOP_T / time_t, "fraction_of_peak_flops": FLOP_T / (time_t * PEAK_T)}
    steps = []
    for name, value in m.figures:
        if name in formulas:
            f = formulas[name]
            steps.append(Step(Term(name), f, None, unevaluated_subs(f, env), a.value(value.expr), value.unit,
                              percent=name.startswith("fraction")))
    return MeasuredDerivation(m.kernel, measure.time, tuple(steps))
