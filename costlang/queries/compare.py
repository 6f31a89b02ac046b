"""Before/after fusion: the same program analysed unfused and under a fusion mode, side by side.

Input: an `Analysis` (the "after": the mode the user chose) and a baseline mode (default
``none``, one kernel per op). Output: `FusionComparison`, data only: for FLOPs, total bytes,
intensity, T_kernel and launches, the value before, the value after and the exact ratio
after / before (kept in the program's symbols, so `8·N / (16·N)` is the constant 1/2 even
when N is free). Printers turn ratios below 1 into "÷ k" and above 1 into "× k".
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Optional

import sympy

from costlang.units import BYTE, DIMENSIONLESS, FLOP, INTENSITY, SECOND, Unit
from costlang.analysis.roofline import analyze_roofline

__all__ = ["Change", "FusionComparison", "compare_fusion", "analysis_under", "FIGURES", "ratio_ends"]

# Program statements answered by `analyze` that may ask for other fusion modes themselves:
# an analysis under another mode leaves them out, so that `with_fusion` cannot recurse.
_ANSWERED = ("queries", "solves", "compares")

# (attribute of Totals, label printed with the ratio, unit)
FIGURES = (
    ("flops", "FLOPs", FLOP),
    ("bytes", "traffic", BYTE),
    ("intensity", "I", INTENSITY),
    ("t_kernel", "T_kernel", SECOND),
    ("launches", "launches", DIMENSIONLESS),
)


@dataclass(frozen=True)
class Change:
    """One figure before and after fusion, and after / before (None when before is 0 or ∞)."""
    figure: str
    label: str
    unit: Unit
    before: sympy.Expr
    after: sympy.Expr
    ratio: Optional[sympy.Expr]


@dataclass(frozen=True)
class FusionComparison:
    baseline: str
    mode: str
    changes: tuple[Change, ...]
    kernels_before: tuple[tuple[str, ...], ...]   # the ops of each kernel, in execution order
    kernels_after: tuple[tuple[str, ...], ...]

    def change(self, figure: str) -> Change:
        return next(c for c in self.changes if c.figure == figure)


def compare_fusion(analysis, baseline: str = "none") -> FusionComparison:
    """Compare `analysis` with the same program, hardware and bindings under `baseline`.

    >>> from costlang import load_string
    >>> m = load_string("use hardware note_virtual\\ndim N\\ninput x: fp32[N]\\na = cos(x)\\nb = cos(a)")
    >>> c = compare_fusion(m.analyze())
    >>> c.change("bytes").before, c.change("bytes").after, c.change("bytes").ratio
    (16*N, 8*N, 1/2)
    """
    before = analysis_under(analysis, baseline)
    changes = tuple(_change(name, label, unit, getattr(before.totals, name), getattr(analysis.totals, name))
                    for name, label, unit in FIGURES)
    return FusionComparison(baseline, analysis.fusion, changes,
                            tuple(k.ops for k in before.kernels), tuple(k.ops for k in analysis.kernels))


def analysis_under(analysis, mode: str):
    """The same program, hardware and bindings analysed under fusion `mode`, without its queries
    and what-if statements."""
    if mode not in analysis.other_modes:
        program = analysis.program
        quiet = {f.name: type(getattr(program, f.name))() for f in dataclasses.fields(program)
                 if f.name in _ANSWERED}
        analysis.other_modes[mode] = analyze_roofline(dataclasses.replace(program, **quiet), fusion=mode,
                                             hardware=analysis.hardware.name)
    return analysis.other_modes[mode]


def _change(name: str, label: str, unit: Unit, before, after) -> Change:
    before, after = (sympy.Integer(x) if isinstance(x, int) else x for x in (before, after))  # launches
    ratio = None
    if before not in (0, sympy.oo) and after != sympy.oo:
        ratio = sympy.cancel(after / before)
    return Change(name, label, unit, before, after, ratio)


def ratio_ends(analysis, change: Change):
    """A ratio after / before that still depends on one free symbol x, at its ends: (x, the ratio at
    x = 1, its limit as x → ∞), each exact; None when the ratio is a number, depends on several
    symbols, or sympy cannot take the limit within the time budget."""
    from costlang.budget import time_budget
    from costlang.errors import BudgetError
    if change.ratio is None:
        return None
    r = analysis.value(change.ratio)
    free = sorted(r.free_symbols, key=str)
    if len(free) != 1:
        return None
    x = free[0]
    try:
        with time_budget(None, "the ends of a fusion ratio", None):
            return x, sympy.simplify(r.subs(x, 1)), sympy.limit(_for_large(r, x), x, sympy.oo)
    except (BudgetError, NotImplementedError, ValueError, TypeError):
        return None


def _for_large(e, x):
    """`e` with each max()/min() replaced by the argument that wins as x → ∞ (sympy's limit cannot
    take max() of expressions in x)."""
    def pick(m):
        best = m.args[0]
        for t in m.args[1:]:
            d = sympy.limit(t - best, x, sympy.oo)
            if d != 0 and bool(d > 0) == isinstance(m, sympy.Max):
                best = t
        return best
    return e.replace(lambda s: isinstance(s, (sympy.Max, sympy.Min)), pick)
