"""Kernels at a point: an analysis with free sizes evaluated at given values, compiled (the sweep's
evaluator), without analysing again. What the playground's sliders and `Model.interact` show.

Input: an `Analysis` and {symbol name: value}. Output: per kernel its intensity, attainable FLOP/s and
bound at that point, as floats (a point's floats are for display; the exact verdicts are the
analysis's regimes).
"""
from __future__ import annotations

import math

from dataclasses import dataclass
from typing import Optional

import numpy as np

from costlang.queries.vectorised import evaluator

__all__ = ["KernelPoint", "kernels_at"]


@dataclass(frozen=True)
class KernelPoint:
    name: str
    intensity: Optional[float]     # None where the values overflow a float (10^300 tokens)
    attainable: Optional[float]
    bound: str          # "memory-bound", "compute-bound", "balanced" or "undecided" (overflowed)


def _point(name: str, i: float, tc: float, tm: float, tk: float, f: float) -> KernelPoint:
    """A kernel's figures at one point; a time or count that overflowed a float (inf, nan) is no
    figure: its entry is None and the bound undecided, never a non-finite number."""
    finite = math.isfinite(tc) and math.isfinite(tm)
    bound = ("compute-bound" if tc > tm else "memory-bound" if tm > tc else "balanced") if finite else "undecided"
    attainable = f / tk if math.isfinite(f) and math.isfinite(tk) and tk > 0 else None
    return KernelPoint(name, i if math.isfinite(i) else None,
                       attainable if attainable is not None and math.isfinite(attainable) else None, bound)


def kernels_at(a, values: dict) -> list:
    """Every kernel of `a` at `values` (one value per free symbol; a KeyError names a missing one). A
    value for a size the file binds moves it too: the program is analysed once more with those sizes
    free (`queries.sweep`'s plan, kept on the analysis) and evaluated there."""
    bound = {n: v for n, v in values.items() if n in a.program.symbols and a.program.symbols[n].value is not None}
    if bound:
        return _moved(a, values, bound)
    syms = sorted(a.program.free_symbols, key=str)
    missing = [str(s) for s in syms if str(s) not in values]
    if missing:
        raise KeyError(f"no value for {', '.join(missing)}")
    grid = [np.asarray([float(values[str(s)])]) for s in syms]

    def at(e) -> float:   # no free symbol: the expression is a number already
        return float(evaluator(a.value(e), syms)(grid)[0]) if syms else float(a.value(e))
    return [_point(k.name, *(at(e) for e in (k.intensity, k.t_compute, k.t_memory, k.t_kernel, k.flops)))
            for k in a.kernels]


def _moved(a, values: dict, bound: dict) -> list:
    from costlang.queries.sweep import Axis, grid_values
    names = sorted({*bound, *(str(s) for s in a.program.free_symbols)})
    missing = [n for n in names if n not in values]
    if missing:
        raise KeyError(f"no value for {', '.join(missing)}")
    axes = [Axis(n, (float(values[n]),)) for n in names]
    figures = ("intensity", "t_compute", "t_memory", "t_kernel", "flops")
    shows = [f"{f}({k.name})" for k in a.kernels for f in figures]
    _, _, _, columns = grid_values(a, axes, shows)
    return [_point(k.name, *(float(columns[5 * j + m][0]) for m in range(5))) for j, k in enumerate(a.kernels)]
