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
from .memo import smax

__all__ = ["Verdict", "decide", "decide_comms", "clear_caches"]

MEMORY, COMPUTE, LAUNCH, BALANCED, DEPENDS = (
    "memory-bound", "compute-bound", "launch-bound", "balanced", "depends")
COMMS, COMMS_DEPENDS = "comms-bound", "comms-depends"


@dataclass(frozen=True)
class Verdict:
    """`bound` is the roofline regime; with free symbols it may be DEPENDS, and then `condition`
    says when it is memory-bound. `launch_condition`, when set, says for which values the launch
    overhead dominates instead (the verdict is then launch-bound there)."""
    bound: str
    condition: Optional[str] = None
    launch_condition: Optional[str] = None

    def __str__(self) -> str:
        if self.bound == COMMS_DEPENDS:
            return f"comms-bound when {self.condition}, else memory- or compute-bound"
        text = self.bound if self.condition is None else \
            f"memory-bound when {self.condition}, else compute-bound"
        return text if self.launch_condition is None else \
            f"launch-bound when {self.launch_condition}, else {text}"


def _sign(e: sympy.Expr, span: Optional[Span]) -> Optional[int]:
    for candidate in (e, None):
        if candidate is None:
            if e.is_number:
                return None
            candidate = _simplified(e, span)
        if candidate.is_positive:
            return 1
        if candidate.is_negative:
            return -1
        if candidate.is_zero:
            return 0
    return None


_SIMPLIFIED: dict = {}


def clear_caches() -> None:
    """Forget memoised simplifications and conditions (for tests that replace sympy functions)."""
    _SIMPLIFIED.clear()
    _CONDITIONS.clear()


def _simplified(e: sympy.Expr, span: Optional[Span]) -> sympy.Expr:
    """`simplify`, once per distinct expression: kernels of one program repeat the same few."""
    if e not in _SIMPLIFIED:
        if len(_SIMPLIFIED) > 4096:
            _SIMPLIFIED.clear()
        with time_budget(None, "simplifying a roofline comparison", span):
            _SIMPLIFIED[e] = sympy.simplify(e)
    return _SIMPLIFIED[e]


def decide(t_compute: sympy.Expr, t_memory: sympy.Expr, launch: sympy.Expr,
           span: Optional[Span] = None) -> Verdict:
    """The bound of a kernel from its (bound) times; `span` is what a time-budget error points at.

    >>> decide(sympy.Rational(1, 200000), sympy.Rational(3, 2500), 0).bound
    'memory-bound'
    """
    launch_sign = _sign(launch - smax(t_compute, t_memory), span)
    if launch_sign == 1:
        return Verdict(LAUNCH)
    launch_condition = None
    if launch_sign is None:
        launch_condition = _condition([launch > t_compute, launch > t_memory], span)
    sign = _sign(t_memory - t_compute, span)
    if sign is not None:
        return Verdict({1: MEMORY, -1: COMPUTE, 0: BALANCED}[sign], None, launch_condition)
    return Verdict(DEPENDS, _condition([t_memory > t_compute], span), launch_condition)


def decide_comms(roofline: Verdict, t_compute, t_memory, t_comms, launch, bindings,
                 span: Optional[Span] = None) -> Verdict:
    """Comms-bound when T_comms exceeds both T_compute and T_memory; else the roofline verdict."""
    t_comms = t_comms.xreplace(bindings)
    busy = sympy.Max(t_compute, t_memory).xreplace(bindings)
    if _sign(launch.xreplace(bindings) - sympy.Max(busy, t_comms), span) == 1:
        return Verdict(LAUNCH)
    sign = _sign(t_comms - busy, span)
    if sign == 1:
        return Verdict(COMMS)
    if sign is None:
        return Verdict(COMMS_DEPENDS, _condition([t_comms > t_compute, t_comms > t_memory], span))
    return Verdict(BALANCED) if sign == 0 else roofline


_CONDITIONS: dict = {}


def _condition(relations: list, span: Optional[Span]) -> str:
    """When all `relations` hold (memoised: kernels of one program repeat the same few)."""
    key = tuple(relations)
    if key not in _CONDITIONS:
        if len(_CONDITIONS) > 4096:
            _CONDITIONS.clear()
        _CONDITIONS[key] = _solve_condition(relations, span)
    return _CONDITIONS[key]


def _solve_condition(relations: list, span: Optional[Span]) -> str:
    """Solved for the symbol when there is exactly one free symbol, else as written."""
    free = sorted(set().union(*[r.free_symbols for r in relations]), key=str)
    if len(free) == 1:
        try:
            with time_budget(None, "solving when a kernel's verdict changes", span):
                sets = [sympy.solve_univariate_inequality(r, free[0], relational=False) for r in relations]
            return str(sympy.Intersection(*sets).as_relational(free[0]))
        except (NotImplementedError, ValueError, TypeError, AttributeError):
            pass
    return str(sympy.And(*relations))
