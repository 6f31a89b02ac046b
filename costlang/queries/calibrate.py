"""Calibration and validation: roofline predictions against `measure` blocks.

Input: analyses whose programs have `measure KERNEL { time = ... }` blocks. Output: data only —
`Point`s (one per measured kernel: T_compute, T_memory, the roofline prediction, the measured time),
a least-squares `Fit` of three factors, and leave-one-out predictions.

The calibrated model keeps the roofline's form with named factors (hardware_schema.md):
    T = launch + max(T_compute / η_compute, T_memory / η_memory)
Each kernel's class is its roofline verdict: memory-bound kernels (T_memory ≥ T_compute) inform
η_memory, compute-bound ones η_compute, and the intercept is the launch overhead, which the small
kernels pin down. With a = 1/η_memory and c = 1/η_compute the model is linear in (launch, a, c):
    measured_i ≈ launch + a·T_memory_i   (memory-bound)   or   launch + c·T_compute_i   (compute-bound)
so the fit is least squares of the relative residuals (each row weighted by 1/measured_i), solved exactly
(sympy rationals, normal equations). A factor
whose class has no measured kernel is not fitted (it stays 1); the launch overhead is fitted only
when more kernels than factors are measured, and never below 0 (a negative intercept is refitted
at 0). Errors are signed, (predicted − measured) / measured; the roofline prediction must not exceed
the measurement (it is a lower bound), and a line where it does is flagged.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

import sympy

from costlang.errors import SemanticError

__all__ = ["Point", "Fit", "points", "fit", "predict", "leave_one_out", "leave_source_out", "publication", "signed_error", "mape"]


@dataclass(frozen=True)
class Point:
    """One measured kernel."""
    file: str
    kernel: str           # the kernel's name (a fused kernel is named after its ops)
    hardware: str
    t_compute: sympy.Expr
    t_memory: sympy.Expr
    launch: sympy.Expr    # the hardware's own launch overhead (0 for the presets)
    predicted: sympy.Expr  # the roofline T_kernel: a lower bound
    measured: sympy.Expr
    kind: str = ""        # the kernel class of a corpus row (gemm, elementwise, attention, collective, ...)
    source: str = ""      # where a corpus row's measurement was published

    @property
    def memory_bound(self) -> bool:
        return bool(self.t_memory >= self.t_compute)

    @property
    def holds(self) -> bool:
        """The roofline lower bound holds: predicted ≤ measured."""
        return bool(self.predicted <= self.measured)


@dataclass(frozen=True)
class Fit:
    launch: sympy.Expr
    memory_factor: sympy.Expr    # a = 1 / η_memory (1 when not fitted)
    compute_factor: sympy.Expr   # c = 1 / η_compute
    fitted: tuple[str, ...]      # which of "launch", "memory", "compute" were fitted
    points: tuple[Point, ...]

    @property
    def efficiency_memory(self) -> sympy.Expr:
        return 1 / self.memory_factor

    @property
    def efficiency_compute(self) -> sympy.Expr:
        return 1 / self.compute_factor

    def residuals(self) -> tuple[tuple[Point, sympy.Expr, sympy.Expr], ...]:
        """(point, calibrated prediction, prediction − measured) for every point fitted."""
        return tuple((p, predict(self, p), predict(self, p) - p.measured) for p in self.points)


def points(analysis, file: str) -> list[Point]:
    """The measured kernels of one analysis, with every figure a number."""
    out = []
    for m in analysis.program.measurements.values():
        k = analysis.kernel_of(m.node)
        figures = [analysis.value(x) for x in (k.t_compute, k.t_memory, k.launch, k.t_kernel, m.time)]
        if not all(f.is_number for f in figures):
            raise SemanticError(f"kernel '{k.name}' is measured but its times depend on free symbols "
                                f"({', '.join(sorted(str(s) for f in figures for s in f.free_symbols))})",
                                m.span, "bind every dim and param the measured kernel uses")
        tc, tm, launch, predicted, measured = figures
        out.append(Point(file, k.name, analysis.hardware.name, tc, tm, launch, predicted, measured))
    return out


def predict(f: Fit, p: Point) -> sympy.Expr:
    return f.launch + sympy.Max(f.compute_factor * p.t_compute, f.memory_factor * p.t_memory)


def fit(data: Sequence[Point]) -> Optional[Fit]:
    """Least squares of launch, 1/η_memory and 1/η_compute over the measured kernels (None if none)."""
    data = tuple(data)
    if not data:
        return None
    columns = [c for c in ("memory", "compute")
               if any(p.memory_bound == (c == "memory") for p in data)]
    with_launch = len(data) > len(columns)
    for launch in ((True, False) if with_launch else (False,)):
        solution = _least_squares(data, columns, launch)
        if solution is None or (launch and solution["launch"] < 0):
            continue
        break
    else:
        solution = _least_squares(data, columns, False) or {}
    one = sympy.Integer(1)
    fitted = tuple(c for c in ("launch", *columns) if c in solution)
    return Fit(solution.get("launch", data[0].launch), solution.get("memory", one),
               solution.get("compute", one), fitted, data)


def _least_squares(data, columns, launch: bool) -> Optional[dict]:
    names = (["launch"] if launch else []) + list(columns)
    if not names:
        return {}
    rows = []
    for p in data:
        row = []
        for name in names:
            if name == "launch":
                row.append(sympy.Integer(1))
            elif name == "memory":
                row.append(p.t_memory if p.memory_bound else sympy.Integer(0))
            else:
                row.append(sympy.Integer(0) if p.memory_bound else p.t_compute)
        rows.append(row)
    # relative least squares: each row divided by its measured time, so the fit minimizes the sum of
    # squared RELATIVE errors (what MAPE measures), and a 10 s training step does not drown a 10 µs kernel
    X = sympy.Matrix([[x / p.measured for x in row] for row, p in zip(rows, data)])
    # without a fitted launch, the hardware's own launch overhead is part of every prediction
    y = sympy.Matrix([(p.measured - (0 if launch else p.launch)) / p.measured for p in data])
    normal = X.T * X
    if normal.det() == 0:
        return None
    beta = normal.LUsolve(X.T * y)
    solution = dict(zip(names, beta))
    if any(solution[c] <= 0 for c in columns):
        return None
    return solution


def leave_one_out(data: Sequence[Point]) -> list[tuple[Point, Optional[sympy.Expr]]]:
    """Each point predicted by a fit over all the others; None when the others cannot fit more than
    the factors exactly (fewer kernels than factors + 1): an exact fit would validate nothing."""
    data = list(data)
    out = []
    for i, p in enumerate(data):
        train = data[:i] + data[i + 1:]
        classes = {q.memory_bound for q in train}
        f = fit(train) if len(train) > len(classes) else None
        out.append((p, None if f is None else predict(f, p)))
    return out


def publication(p: Point) -> str:
    """The publication a point comes from: its source up to the first ": ", else its file."""
    return p.source.split(": ")[0] if p.source else p.file


def leave_source_out(data: Sequence[Point]) -> list[tuple[Point, Optional[sympy.Expr]]]:
    """Each point predicted by a fit over the points of OTHER publications only: a held-out split by
    source. A corpus row's publication is its `source` up to the first ": " (the rest locates the
    row in it); a `measure` block's is its file. None when the other publications cannot fit more
    than the factors exactly."""
    data = list(data)
    out = []
    for p in data:
        train = [q for q in data if publication(q) != publication(p)]
        classes = {q.memory_bound for q in train}
        f = fit(train) if len(train) > len(classes) else None
        out.append((p, None if f is None else predict(f, p)))
    return out


def signed_error(predicted: sympy.Expr, measured: sympy.Expr) -> sympy.Expr:
    """(predicted − measured) / measured: negative when the prediction is below the measurement."""
    return (predicted - measured) / measured


def mape(pairs) -> Optional[sympy.Expr]:
    """Mean absolute percentage error (as a fraction) of (predicted, measured) pairs; None if none."""
    errors = [abs(signed_error(pred, meas)) for pred, meas in pairs if pred is not None]
    return sympy.Add(*errors) / len(errors) if errors else None
