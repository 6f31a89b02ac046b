"""Type checking of `let` and `query` expressions before any analysis runs.

Input: an expression over symbols, lets and result functions, and the resolver's program so far.
Output: nothing, or a `CostlangError`: unknown names or functions, result functions given names
that are not kernels, tensors or hardware, and unit mistakes (`bytes(x) + t_kernel(x)`), so that
`costlang check` finds them. Result functions stand in as placeholder symbols of the right unit.
"""
from __future__ import annotations

import sympy

from costlang.errors import CostNameError, SemanticError, did_you_mean
from costlang.frontend.expr import MATH_FUNCTIONS, evaluate
from costlang.ir.program import Value
from costlang.units import BYTE, BYTE_PER_S, DIMENSIONLESS, FLOP, FLOP_PER_S, INTENSITY, SECOND
from costlang.frontend import ast

__all__ = ["RESULT_UNITS", "TRAINING_FUNCTIONS", "TRAINING_ARGS", "training_args", "KERNEL_FUNCTIONS", "HARDWARE_FUNCTIONS", "STATIC_FUNCTIONS", "check_expression",
           "fusion_mode_arg", "static_call", "ProgramNames"]

#: functions usable anywhere: their value is known before any cost is computed
STATIC_FUNCTIONS = ("sizeof", "numel", "nbytes")

#: result functions over a kernel (or tensor, or nothing for the program) → unit of their value
KERNEL_FUNCTIONS = {
    "flops": FLOP, "bytes": BYTE, "bytes_read": BYTE, "bytes_written": BYTE,
    "intensity": INTENSITY, "critical_intensity": INTENSITY, "t_compute": SECOND,
    "t_memory": SECOND, "t_launch": SECOND, "t_kernel": SECOND, "attainable": FLOP_PER_S,
    "fraction_of_peak": DIMENSIONLESS,
    "measured_time": SECOND, "actual_traffic": BYTE, "effective_bandwidth": BYTE_PER_S,
    "achieved_throughput": BYTE_PER_S, "achieved_flops": FLOP_PER_S,
    "fraction_of_peak_bandwidth": DIMENSIONLESS, "fraction_of_peak_flops": DIMENSIONLESS,
    "algorithmic_bytes": BYTE, "working_set": BYTE,
    "weight_bytes": BYTE,  # weights (of a block instance or repeat), × repeat counts
    "cache_bytes": BYTE,   # caches (KV caches) likewise
    "saved_bytes": BYTE,   # a training step's saved activations (of a block instance or repeat), × counts
    "t_comms": SECOND, "comms_bytes": BYTE, "comms_latency": SECOND,
    "parameters": DIMENSIONLESS,  # weight elements (caches left out), × repeat counts
    "energy": DIMENSIONLESS,      # joules: pj_per_flop·FLOPs + pj_per_byte·bytes where stated, else tdp × T_kernel
}
#: result functions over a kernel (or tensor) at a memory level: `bytes_at(C, L2)`
LEVEL_FUNCTIONS = {"bytes_at": BYTE, "t_memory_at": SECOND}
#: result functions over a hardware (or the selected one)
HARDWARE_FUNCTIONS = {"capacity": BYTE, "bandwidth": BYTE_PER_S, "launch_overhead": SECOND,
                      "peak": FLOP_PER_S}
PROGRAM_FUNCTIONS = {"launches": DIMENSIONLESS, "footprint": BYTE,
                     # many chips (analysis.comms): the system's chip count, system-wide footprint, bounds
                     "chips": DIMENSIONLESS, "footprint_system": BYTE,
                     # the whole model's parameters, each once however the chips split or replicate it
                     "parameters_system": DIMENSIONLESS, "t_overlap": SECOND, "t_serial": SECOND, "t_estimate": SECOND,
                     "bubble": DIMENSIONLESS}  # a pipeline's idle fraction (p − 1)/(m + p − 1)
#: a training step's figures (analysis.training), each with the units of its optional arguments
TRAINING_FUNCTIONS = {"model_flops": FLOP, "hardware_flops": FLOP, "attention_flops": FLOP,
                      "optimizer_flops": FLOP, "tokens_per_step": DIMENSIONLESS, "step_time": SECOND,
                      "tokens_per_second": DIMENSIONLESS / SECOND, "mfu": DIMENSIONLESS, "hfu": DIMENSIONLESS,
                      "time_to_train": SECOND, "gpu_hours": DIMENSIONLESS, "training_memory": BYTE,
                      "achieved_mfu": DIMENSIONLESS, "achieved_hfu": DIMENSIONLESS}
#: the arguments each takes: (required units, optional units)
TRAINING_ARGS = {"mfu": ((), (SECOND,)), "hfu": ((), (SECOND,)), "tokens_per_second": ((), (SECOND,)),
                 "time_to_train": ((DIMENSIONLESS,), (FLOP_PER_S,)), "gpu_hours": ((DIMENSIONLESS,), (FLOP_PER_S,))}
RESULT_UNITS = {**KERNEL_FUNCTIONS, **HARDWARE_FUNCTIONS, **PROGRAM_FUNCTIONS, **LEVEL_FUNCTIONS,
                **TRAINING_FUNCTIONS}


def fusion_mode_arg(node: ast.Call) -> ast.Expr:
    """Check `with_fusion(MODE, expr)` (expr evaluated under another fusion mode); return expr."""
    from costlang.ir.program import FUSION_MODES
    args = node.args
    if len(args) != 2 or not isinstance(args[0], ast.Name) or args[0].id not in FUSION_MODES:
        raise SemanticError("with_fusion() takes a fusion mode and an expression", node.span,
                            f"e.g. `with_fusion(none, bytes())`; modes are: {', '.join(FUSION_MODES)}")
    return args[1]


def check_expression(r, expr: ast.Expr, whole_query: bool = False) -> None:
    """Raise the first problem of a let or query expression; `bound(x)` only as a whole query."""
    if whole_query and isinstance(expr, ast.Call) and expr.func == "bound":
        _CheckScope(r).kernel_arg(expr, allow_none=True)
        return
    evaluate(expr, _CheckScope(r))


class NameScope:
    """What a name means while resolving: a symbol, or a `let` (evaluated once); a tensor is an
    error. Subclasses say how lets are cached and what hint a misused tensor gets."""
    tensor_hint = "use numel({0}) or nbytes({0})"

    def __init__(self, r):
        self.r = r

    def known_names(self):
        return list(self.r.program.symbols) + list(self.r.program.lets)

    @property
    def bindings(self) -> dict:
        return self.r.program.bindings

    def name(self, node: ast.Name) -> Value:
        p = self.r.program
        if node.id in p.symbols:
            return Value(p.symbols[node.id].symbol, DIMENSIONLESS)
        if node.id in p.lets:
            return self.let(node.id)
        if self.is_tensor(node.id):
            raise SemanticError(f"'{node.id}' is a tensor, not a number", node.span,
                                self.tensor_hint.format(node.id))
        raise self.r.unknown(node, "name", self.known_names())

    def is_tensor(self, name: str) -> bool:
        return name in self.r.program.tensors

    def let(self, name: str) -> Value:
        raise NotImplementedError


class _CheckScope(NameScope):
    tensor_hint = "use a result function such as bytes({0}) or numel({0})"

    def is_tensor(self, name: str) -> bool:
        return name in self.r.program.tensors or name in self.r.program.nodes

    def let(self, name: str) -> Value:
        # cached on the resolver: `let a2 = a1 + a1` must not double the work
        cache = self.r.let_values
        if name not in cache:
            cache[name] = evaluate(self.r.program.lets[name].value, self)
        return cache[name]

    def call(self, node: ast.Call) -> Value:
        f = node.func
        if f in STATIC_FUNCTIONS:
            return static_call(self.r, node)
        if f == "bound":
            raise SemanticError("bound() gives a verdict, not a number; query it on its own",
                                node.span, "write `query bound(C)`")
        if f == "with_fusion":
            return evaluate(fusion_mode_arg(node), self)
        if f not in RESULT_UNITS:
            known = tuple(MATH_FUNCTIONS) + STATIC_FUNCTIONS + tuple(RESULT_UNITS) + ("bound", "with_fusion")
            raise CostNameError(f"unknown function '{f}'", node.func_span, did_you_mean(f, known))
        if f in KERNEL_FUNCTIONS:
            self.kernel_arg(node, allow_none=not f.startswith(("measured", "actual", "effective", "achieved"))
                            and not f.startswith("fraction_of_peak_"))
        elif f in PROGRAM_FUNCTIONS and node.args:
            raise SemanticError(f"{f}() takes no arguments", node.span)
        elif f in HARDWARE_FUNCTIONS:
            self.hardware_args(node)
        elif f in LEVEL_FUNCTIONS:
            self.level_args(node)
        elif f in TRAINING_FUNCTIONS:
            training_args(node, lambda e: evaluate(e, self))
        return Value(self.placeholder(node), RESULT_UNITS[f])

    def placeholder(self, node: ast.Call) -> sympy.Dummy:
        """One symbol per distinct call, kept by the resolver: a chain of lets over results stays small."""
        key = (node.func, tuple(a.id if isinstance(a, ast.Name) else id(a) for a in node.args))
        if key not in self.r.placeholders:
            self.r.placeholders[key] = sympy.Dummy(node.func, positive=True)
        return self.r.placeholders[key]

    def kernel_arg(self, node: ast.Call, allow_none: bool) -> None:
        p = self.r.program
        if not node.args and allow_none:
            return
        if len(node.args) != 1 or not isinstance(node.args[0], ast.Name):
            what = "one kernel or tensor name" + (" (or none, for the whole program)" if allow_none else "")
            raise SemanticError(f"{node.func}() takes {what}", node.span)
        arg = node.args[0]
        if arg.id not in p.nodes and arg.id not in p.tensors and arg.id not in p.instances \
                and not _inserted(p, arg.id):
            raise self.r.unknown(arg, "kernel or tensor", list(p.nodes) + list(p.tensors))

    def hardware_args(self, node: ast.Call) -> None:
        args = list(node.args)
        if node.func == "peak":
            if not args or not isinstance(args[0], ast.Name):
                raise SemanticError("peak() takes a dtype and, optionally, a hardware", node.span)
            self.r.dtype(args[0].id, args[0].span)
            args = args[1:]
        extra = {"peak": {"matrix", "vector"}, "bandwidth": self._levels(), "capacity": self._levels()}
        extra = extra.get(node.func, set())
        hws = [a for a in args if isinstance(a, ast.Name) and a.id in self.r.program.hardware]
        rest = [a for a in args if a not in hws]
        if len(hws) > 1 or len(rest) > (1 if extra else 0) or any(not isinstance(a, ast.Name) for a in args):
            what = {"peak": " and `matrix` or `vector`", "bandwidth": " and a memory level",
                    "capacity": " and a memory level"}.get(node.func, "")
            raise SemanticError(f"{node.func}() takes at most one hardware name{what}", node.span)
        for a in rest:
            if a.id not in extra:
                raise self.r.unknown(a, "hardware or memory level" if extra else "hardware",
                                     list(self.r.program.hardware) + sorted(extra))

    def _levels(self) -> set:
        return {m.name for hw in self.r.program.hardware.values() for m in hw.memories}

    def level_args(self, node: ast.Call) -> None:
        if len(node.args) != 2 or not all(isinstance(a, ast.Name) for a in node.args):
            raise SemanticError(f"{node.func}() takes a kernel or tensor name and a memory level, "
                                f"e.g. `{node.func}(C, L2)`", node.span)
        self.kernel_arg(_first_only(node), allow_none=False)
        if node.args[1].id not in self._levels():
            raise self.r.unknown(node.args[1], "memory level", sorted(self._levels()))


def training_args(node, value) -> list:
    """The values of a training figure's arguments (`value` evaluates one), checked against
    TRAINING_ARGS: `time_to_train(2e12)`, `time_to_train(300e9, 140 TFLOP/s)`, `mfu(1.5 s)`."""
    required, optional = TRAINING_ARGS.get(node.func, ((), ()))
    units = required + optional
    if not len(required) <= len(node.args) <= len(units):
        words = {(): "no arguments", ((), (SECOND,)): "no argument, or a step time (a measured one)",
                 ((DIMENSIONLESS,), (FLOP_PER_S,)): "a number of tokens and, optionally, the FLOP/s each chip "
                                                    "achieves"}
        raise SemanticError(f"{node.func}() takes {words.get((required, optional), 'other arguments')}",
                            node.span, "e.g. `time_to_train(2e12)` or `time_to_train(300e9, 140 TFLOP/s)`"
                            if required else None)
    out = []
    for arg, unit in zip(node.args, units):
        v = value(arg)
        if v.unit.dimensions != unit.dimensions:
            raise SemanticError(f"this argument of {node.func}() is in {v.unit}, not {unit}", arg.span)
        out.append(v)
    return out


def _first_only(node: ast.Call) -> ast.Call:
    return ast.Call(node.func, node.args[:1], node.span, node.func_span)


def _inserted(p, name: str) -> bool:
    """A collective the sharding pass may insert (passes/shard.py, passes/parallelism.py): checked
    when the analysis runs, as the pass runs once the whole file is resolved. `<tensor>_all_reduce`,
    a pipeline's `<tensor>_send`, an expert kernel's `<kernel>_dispatch` and `<kernel>_combine`, and
    a training step's `gradients_all_reduce`."""
    if not (p.shardings or p.parallels):
        return False
    if name in ("gradients_all_reduce", "gradients_reduce_scatter", "parameters_all_gather",
                "parameters_all_gather_forward", "parameters_all_gather_backward"):
        return any(s.kind == "data" for s in p.parallels)
    for suffix in ("_all_reduce", "_send", "_dispatch", "_combine"):
        if name.endswith(suffix) and name[:-len(suffix)] in set(p.tensors) | set(p.nodes):
            return True
    return False


def static_call(r, node: ast.Call) -> Value:
    """sizeof(dtype), numel(tensor), nbytes(tensor): known before any cost is computed. `r` is the
    resolver, or `ProgramNames` over a finished program."""
    p = r.program
    if len(node.args) != 1 or not isinstance(node.args[0], ast.Name):
        raise SemanticError(f"{node.func}() takes one name", node.span)
    arg = node.args[0]
    if node.func == "sizeof":
        return Value(r.dtype(arg.id, arg.span).size, BYTE)
    if arg.id not in p.tensors:
        raise r.unknown(arg, "tensor", p.tensors)
    t = p.tensors[arg.id]
    return Value(t.numel, DIMENSIONLESS) if node.func == "numel" else Value(t.bytes, BYTE)


class ProgramNames:
    """What `static_call` needs of a resolver, over a finished program."""

    def __init__(self, program):
        self.program = program

    def dtype(self, name, span):
        if name not in self.program.dtypes:
            raise CostNameError(f"unknown dtype '{name}'", span, did_you_mean(name, self.program.dtypes))
        return self.program.dtypes[name]

    def unknown(self, name, what, known):
        return CostNameError(f"unknown {what} '{name.id}'", name.span, did_you_mean(name.id, known))
