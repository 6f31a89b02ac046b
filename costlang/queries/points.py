"""Kernels at a point: an analysis with free sizes evaluated at given values, compiled (the sweep's
evaluator), without analysing again. What the playground's sliders and `Model.interact` show.

Input: an `Analysis` and {symbol name: value}. Output: per kernel its intensity, attainable FLOP/s and
bound at that point, as floats (a point's floats are for display; the exact verdicts are the
analysis's regimes).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from costlang.queries.vectorised import evaluator

__all__ = ["KernelPoint", "kernels_at"]


@dataclass(frozen=True)
class KernelPoint:
    name: str
    intensity: float
    attainable: Optional[float]
    bound: str          # "memory-bound", "compute-bound" or "balanced"


def kernels_at(a, values: dict) -> list:
    """Every kernel of `a` at `values` (one value per free symbol; a KeyError names a missing one)."""
    syms = sorted(a.program.free_symbols, key=str)
    missing = [str(s) for s in syms if str(s) not in values]
    if missing:
        raise KeyError(f"no value for {', '.join(missing)}")
    grid = [np.asarray([float(values[str(s)])]) for s in syms]
    out = []
    for k in a.kernels:
        i, tc, tm, tk, f = (float(evaluator(a.value(e), syms)(grid)[0]) for e in
                            (k.intensity, k.t_compute, k.t_memory, k.t_kernel, k.flops))
        bound = "compute-bound" if tc > tm else "memory-bound" if tm > tc else "balanced"
        out.append(KernelPoint(k.name, i, f / tk if tk > 0 else None, bound))
    return out
