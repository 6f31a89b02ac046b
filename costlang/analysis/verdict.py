"""Verdicts: memory-, compute- or launch-bound, decided exactly, or as a condition on free symbols.

Input: T_compute, T_memory and the launch overhead of a kernel (bound symbols substituted).
Output: a `Verdict`. When free symbols leave the comparison open, the verdict says which way it
goes for which values (solved for the symbol when there is exactly one).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import sympy

from ..budget import time_budget
from ..errors import Span

__all__ = ["Verdict", "decide"]

MEMORY, COMPUTE, LAUNCH, BALANCED, DEPENDS = (
    "memory-bound", "compute-bound", "launch-bound", "balanced", "depends")


@dataclass(frozen=True)
class Verdict:
    bound: str
    condition: Optional[str] = None   # for DEPENDS: when it is memory-bound

    def __str__(self) -> str:
        return self.bound if self.condition is None else f"memory-bound when {self.condition}, else compute-bound"


def _sign(e: sympy.Expr, span: Optional[Span]) -> Optional[int]:
    if not e.is_number:
        with time_budget(None, "simplifying a roofline comparison", span):
            e = sympy.simplify(e)
    if e.is_positive:
        return 1
    if e.is_negative:
        return -1
    if e.is_zero:
        return 0
    return None


def decide(t_compute: sympy.Expr, t_memory: sympy.Expr, launch: sympy.Expr,
           span: Optional[Span] = None) -> Verdict:
    """The bound of a kernel from its (bound) times; `span` is what a time-budget error points at.

    >>> decide(sympy.Rational(1, 200000), sympy.Rational(3, 2500), 0).bound
    'memory-bound'
    """
    if _sign(launch - sympy.Max(t_compute, t_memory), span) == 1:
        return Verdict(LAUNCH)
    sign = _sign(t_memory - t_compute, span)
    if sign is not None:
        return Verdict({1: MEMORY, -1: COMPUTE, 0: BALANCED}[sign])
    return Verdict(DEPENDS, _condition(t_memory > t_compute, span))


def _condition(rel, span: Optional[Span]) -> str:
    free = sorted(rel.free_symbols, key=str)
    if len(free) == 1:
        try:
            with time_budget(None, "solving when a kernel is memory-bound", span):
                solved = sympy.solve_univariate_inequality(rel, free[0])
            return str(solved)
        except (NotImplementedError, ValueError, TypeError):
            pass
    return str(rel)
