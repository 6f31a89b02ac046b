"""Tabulating a sweep: the parts that need no sympy.

What a sweep is once its quantities are exact expressions compiled to straight lines of numpy
operations (`StraightLine`, which `queries.vectorised` compiles from sympy): its axes, parsed from
`NAME=LO..HI[:SPACING]` (`axis_from_text`, given how to read a bound and which names are dims or
params), the grid, the float columns, the rows where a kernel changes bound (`Mark`, `marks`) and
its exact crossings (`Crossing`), all held by a `Sweep`. `queries.sweep` analyses and compiles;
`queries.compiled` keeps a compiled plan on disk and runs it again through this module alone, so
a repeated sweep never imports sympy. Floats only here.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Mapping

import numpy as np

from costlang.analysis.bound_kind import BALANCED, COMPUTE, MEMORY, Bound
from costlang.errors import CostlangError, Source, Span, did_you_mean
from costlang.units import Unit

if TYPE_CHECKING:
    import sympy

__all__ = ["SweepError", "StraightLine", "CompiledPlan", "Axis", "Crossing", "Mark", "Sweep", "arg_span", "axis_from_text",
           "grid", "marks", "regime_codes", "first_bad_size", "DEFAULT_POINTS", "MAX_POINTS", "MAX_GRID",
           "MAX_BOUND", "CODES", "BOUNDS"]

DEFAULT_POINTS = 11
MAX_POINTS = 100_000
MAX_GRID = 1_000_000  # points in all: a 30000 × 30000 grid would need tens of GB
#: sweep values are floats: a bound beyond this is refused (10^400 would be inf, and inf..inf NaN)
MAX_BOUND = 1e300


class SweepError(CostlangError):
    """A sweep (or plot) that cannot be tabulated; `queries.sweep` raises it for bad axes too."""
    kind = "sweep"


#: the operations of a straight line, by name (the names are what a compiled plan stores)
OPERATIONS = {"add": np.add, "multiply": np.multiply, "maximum": np.maximum, "minimum": np.minimum,
              "power": np.power, "floor": np.floor, "ceil": np.ceil, "log": np.log, "exp": np.exp,
              "abs": np.abs}
_ARITY = {"add": 2, "multiply": 2, "maximum": 2, "minimum": 2, "power": 2}


class StraightLine:
    """An expression as a straight line of numpy operations. Slots: the symbols' arrays (`inputs`
    of them), then the numbers, then one per step's result; a step is (operation name, slots of
    its arguments), each an earlier slot; `result` is the slot of the value.

    >>> line = StraightLine(1, (2.0,), (("multiply", (0, 1)), ("add", (2, 1))), 3)   # 2·x + 2
    >>> line([np.array([1.0, 3.0])])
    array([4., 8.])
    """
    __slots__ = ("inputs", "numbers", "steps", "result", "_ops")

    def __init__(self, inputs: int, numbers: tuple, steps: tuple, result: int):
        self.inputs, self.numbers, self.steps, self.result = inputs, tuple(numbers), tuple(steps), result
        slots = inputs + len(self.numbers)
        for op, args in self.steps:   # checked here: a plan read from disk is data, never trusted
            if op not in OPERATIONS or len(args) != _ARITY.get(op, 1) or \
                    not all(type(a) is int and 0 <= a < slots for a in args):
                raise ValueError(f"not a straight line: step {op!r} {args!r}")
            slots += 1
        if not (type(result) is int and 0 <= result < slots):
            raise ValueError("not a straight line: its result is no slot")
        self._ops = [(OPERATIONS[op], args) for op, args in self.steps]

    def __call__(self, arrays) -> np.ndarray:
        values = [*arrays, *self.numbers]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            for fn, args in self._ops:
                values.append(fn(*[values[a] for a in args]))
            return np.broadcast_to(np.asarray(values[self.result], dtype=float), np.shape(arrays[0])).copy()

    def to_data(self) -> dict:
        """JSON-ready: numbers as floats (±inf as strings), steps as [name, [slots]]."""
        return {"inputs": self.inputs, "numbers": [_json_float(x) for x in self.numbers],
                "steps": [[op, list(args)] for op, args in self.steps], "result": self.result}

    @classmethod
    def from_data(cls, data: dict) -> "StraightLine":
        """The line `to_data` gave `data` for; ValueError (or TypeError, KeyError) when it is not one."""
        numbers = tuple(_float_of(x) for x in data["numbers"])
        steps = tuple((str(op), tuple(args)) for op, args in data["steps"])
        return cls(int(data["inputs"]), numbers, steps, data["result"])


def _json_float(x: float):
    return x if math.isfinite(x) else ("inf" if x > 0 else "-inf" if x < 0 else "nan")


def _float_of(x) -> float:
    if isinstance(x, str):
        return {"inf": math.inf, "-inf": -math.inf, "nan": math.nan}[x]
    if type(x) not in (int, float):
        raise ValueError(f"not a number: {x!r}")
    return float(x)


@dataclass(frozen=True)
class Axis:
    name: str
    values: tuple[float, ...]


@dataclass(frozen=True)
class Crossing:
    kernel: str
    symbol: str
    value: sympy.Expr    # exact; printers.words.comparisons.crossing_text says it in words
    below: Bound = MEMORY    # the bound just below the crossing
    above: Bound = COMPUTE   # and just above it


@dataclass(frozen=True)
class Mark:
    """A row where `kernel` changes bound: `bound` from that row on (BALANCED: at that row only)."""
    kernel: str
    bound: Bound


@dataclass(frozen=True)
class Sweep:
    symbols: tuple[str, ...]
    labels: tuple[str, ...]
    grid: tuple[np.ndarray, ...]            # per symbol, its value at every grid point (flat)
    columns: tuple[np.ndarray, ...]         # one column per label
    marks: tuple[tuple[Mark, ...], ...]     # per row: which kernels changed bound since the last row
    crossings: tuple[Crossing, ...]
    units: tuple[Unit, ...] = ()            # one per label (the unit of its column, SI base)
    shape: tuple[int, ...] = ()             # the number of values of each symbol (the grid's axes)

    @functools.cached_property
    def points(self) -> tuple[tuple[float, ...], ...]:
        """One row per grid point (built on first use: a million Python tuples cost more than
        the whole evaluation, and only the printers need them)."""
        return tuple(zip(*(g.tolist() for g in self.grid)))


def arg_span(flag: str, text: str) -> Span:
    """A span over a whole command-line argument, so its errors quote it with a caret."""
    return Span(Source(flag, text), 1, 1, 1, len(text) + 1)


def axis_from_text(text: str, default: str, kinds: Mapping[str, str], bound: Callable[[str, str], float]) -> Axis:
    """`NAME=LO..HI[:pow2|:lin[:N]|:log[:N]]` or a list `NAME=V1,V2,...`, where `kinds` gives the
    kind (`dim` or `param`) of each name that may be swept and `bound(name, text)` the value of one
    bound or listed value (`queries.sweep.parse_axis` reads them as costlang expressions)."""
    name, sep, rest = text.partition("=")
    spec, _, mode = rest.partition(":")
    lo_text, dots, hi_text = spec.partition("..")
    listed = not dots and "," in rest
    if not (sep and (dots or listed) and name.strip().isidentifier()):
        raise SweepError(f"expected a range such as B=1..1024:pow2 or a list such as B=1,8,64, not {text!r}",
                         arg_span("--over", text))
    name = name.strip()
    if name not in kinds:
        raise SweepError(f"cannot sweep '{name}': it is not a dim or param of this file",
                         arg_span("--over", text), did_you_mean(name, kinds))
    if listed:
        values = [bound(name, t) for t in rest.split(",")]
        if any(v <= 0 for v in values) or values != sorted(set(values)):
            raise SweepError(f"the listed values of {name} must be positive and increasing", arg_span("--over", text))
    else:
        lo, hi = (bound(name, t) for t in (lo_text, hi_text))
        if not 0 < lo <= hi:
            raise SweepError(f"the range of {name} must go from a positive value up, not {lo:g}..{hi:g}",
                             arg_span("--over", text))
        values = _values(mode.strip() or default, lo, hi, arg_span("--over", text))
    if kinds[name] == "dim":
        if listed and any(v != round(v) for v in values):
            raise SweepError(f"{name} is a dim: its listed values must be whole numbers", arg_span("--over", text))
        values = sorted({float(round(v)) for v in values if round(v) >= 1})
    if not 1 <= len(values) <= MAX_POINTS:
        raise SweepError(f"a sweep has 1 to {MAX_POINTS} points per symbol, not {len(values)}",
                         arg_span("--over", text))
    return Axis(name, tuple(values))


def _values(mode: str, lo: float, hi: float, span: Span) -> list[float]:
    kind, _, count = mode.partition(":")
    if kind == "pow2":
        first, last = math.ceil(math.log2(lo) - 1e-12), math.floor(math.log2(hi) + 1e-12)
        if last - first >= MAX_POINTS:
            raise SweepError(f"a sweep has 1 to {MAX_POINTS} points per symbol, not {last - first + 1}", span)
        return [2.0 ** k for k in range(first, last + 1)]
    if count and not (count.isascii() and count.isdigit()):
        raise SweepError(f"the number of points in {mode!r} must be a whole number", span,
                         "for example lin:100 or log:9")
    n = int(count) if count else DEFAULT_POINTS
    if not 1 <= n <= MAX_POINTS:
        raise SweepError(f"a sweep has 1 to {MAX_POINTS} points per symbol, not {n}", span)
    if kind in ("lin", "log"):  # Python floats from here on (numpy's repr is `np.float64(2.0)`), each once
        spaced = np.linspace(lo, hi, n) if kind == "lin" else np.geomspace(lo, hi, n)
        return sorted({float(v) for v in spaced})  # a degenerate range (lo = hi) is one point
    raise SweepError(f"unknown sweep spacing {mode!r}", span, "use pow2, lin[:N] or log[:N]")


def grid(axes) -> list[np.ndarray]:
    """Each axis's value at every point of their grid, flat (the last axis varies fastest)."""
    return [g.ravel() for g in np.meshgrid(*[np.asarray(a.values, dtype=float) for a in axes], indexing="ij")]


def first_bad_size(values: np.ndarray):
    """The first point where a size is not a positive whole number (None: there is none)."""
    bad = np.nonzero(~((values >= 1) & (np.abs(values - np.round(values)) <= 1e-9 * np.abs(values))))[0]
    return int(bad[0]) if bad.size else None


#: a row's bound as a number: the sign of T_memory − T_compute (0 balanced; NaN not decided)
CODES = {MEMORY: 1.0, COMPUTE: -1.0, BALANCED: 0.0}
BOUNDS = {1.0: MEMORY, -1.0: COMPUTE, 0.0: BALANCED}


def regime_codes(x: np.ndarray, regimes) -> np.ndarray:
    """The bound code of each value of x from exact regimes, given as (lower, upper, lower closed,
    upper closed, code) with float ends: a value exactly at a crossing takes the point's regime."""
    codes = np.full(x.shape, np.nan)
    for lo, hi, lo_closed, hi_closed, code in regimes:
        inside = ((x >= lo) if lo_closed else (x > lo)) & ((x <= hi) if hi_closed else (x < hi))
        codes[inside] = code
    return codes


def marks(codes, n: int, row_length: int) -> tuple[tuple[Mark, ...], ...]:
    """Per row, the kernels whose bound differs from that of the last row before it (within one
    sweep line) that was not balanced, and the rows where a kernel turns balanced; `codes` yields
    (kernel, the bound code of each row). Vectorised: a million rows cost a few array passes."""
    out: list = [()] * n
    for name, code in codes:
        c = code.reshape(-1, row_length)
        cols = np.broadcast_to(np.arange(row_length), c.shape)
        valid = (c != 0) & ~np.isnan(c)
        last = np.maximum.accumulate(np.where(valid, cols, -1), axis=1)   # last valid row so far
        before = np.concatenate([np.full((c.shape[0], 1), -1), last[:, :-1]], axis=1)
        prior = np.take_along_axis(c, np.maximum(before, 0), axis=1)
        changed = valid & (before >= 0) & (c != prior)
        previous = np.concatenate([np.full((c.shape[0], 1), 0.0), c[:, :-1]], axis=1)
        balanced = (c == 0) & (previous != 0)   # turns balanced here (never the first row of a line)
        for i in np.nonzero((changed | balanced).ravel())[0].tolist():
            out[i] = (*out[i], Mark(name, BOUNDS[float(code[i])]))
    return tuple(out)


@dataclass(frozen=True)
class CompiledPlan:
    """A sweep's plan compiled: everything tabulating it on a grid of its symbols needs, as floats
    and straight lines (`queries.sweep` compiles it from the exact plan; `to_data` and `from_data`
    keep it as JSON-ready data). `kernels` holds, per kernel in the program's order, either its
    exact regimes over the first symbol as `regime_codes` takes them (one swept symbol) or the
    line of its T_memory − T_compute, whose sign is its bound. `sizes`: the program's sizes that
    depend on the swept symbols alone, each a positive whole number at every point it may take."""
    symbols: tuple[str, ...]
    labels: tuple[str, ...]
    values: tuple[StraightLine, ...]
    units: tuple[Unit, ...]
    sizes: tuple[StraightLine, ...]
    kernels: tuple[tuple[str, object], ...]
    crossings: tuple[Crossing, ...] = ()

    def first_bad_size(self, flat):
        """(which size, the point, its value) where a size is not a positive whole number; None: none."""
        for k, size in enumerate(self.sizes):
            values = size(flat)
            i = first_bad_size(values)
            if i is not None:
                return k, i, float(values[i])
        return None

    def tabulate(self, axes, flat) -> Sweep:
        """The sweep on the grid `flat` of `axes` (the sizes already checked)."""
        columns = tuple(v(flat) for v in self.values)
        # one kernel's bounds at a time, so memory stays O(points × outputs) however many kernels
        codes = ((name, regime_codes(flat[0], how) if isinstance(how, tuple) else np.sign(how(flat)))
                 for name, how in self.kernels)
        return Sweep(tuple(a.name for a in axes), self.labels, tuple(flat), columns,
                     marks(codes, len(flat[0]), len(axes[-1].values)), self.crossings, self.units,
                     tuple(len(a.values) for a in axes))

    def to_data(self) -> dict:
        """JSON-ready (the crossings' exact values are not: whoever keeps the plan words them)."""
        return {"symbols": list(self.symbols), "labels": list(self.labels),
                "values": [v.to_data() for v in self.values],
                "units": [[u.flop, u.byte, u.second, u.label] for u in self.units],
                "sizes": [s.to_data() for s in self.sizes],
                "kernels": [[name, {"regimes": [[_json_float(lo), _json_float(hi), lc, hc, code]
                                                 for lo, hi, lc, hc, code in how]}
                             if isinstance(how, tuple) else {"gap": how.to_data()}] for name, how in self.kernels]}

    @classmethod
    def from_data(cls, data: dict) -> "CompiledPlan":
        """The plan `to_data` gave `data` for, without its crossings; ValueError (or TypeError,
        KeyError) when `data` is not one: a plan read from disk is checked, never trusted."""
        def regimes(rows):
            out = []
            for lo, hi, lc, hc, code in rows:
                if type(lc) is not bool or type(hc) is not bool or code not in BOUNDS:
                    raise ValueError("not a regime")
                out.append((_float_of(lo), _float_of(hi), lc, hc, float(code)))
            return tuple(out)

        def kernel(name, how):
            if not isinstance(name, str) or not isinstance(how, dict) or len(how) != 1:
                raise ValueError("not a kernel")
            return (name, regimes(how["regimes"])) if "regimes" in how else (name, StraightLine.from_data(how["gap"]))

        def unit(u):
            flop, byte, second, label = u
            if not all(type(x) is int for x in (flop, byte, second)) or not isinstance(label, str):
                raise ValueError("not a unit")
            return Unit(flop, byte, second, label)

        symbols, labels = tuple(map(str, data["symbols"])), tuple(map(str, data["labels"]))
        values = tuple(StraightLine.from_data(v) for v in data["values"])
        sizes = tuple(StraightLine.from_data(s) for s in data["sizes"])
        kernels = tuple(kernel(n, h) for n, h in data["kernels"])
        lines = [*values, *sizes, *(how for _, how in kernels if isinstance(how, StraightLine))]
        if len(values) != len(labels) or not 1 <= len(symbols) <= 2 or any(x.inputs != len(symbols) for x in lines):
            raise ValueError("not a sweep's plan")
        return cls(symbols, labels, values, tuple(unit(u) for u in data["units"]), sizes, kernels)
