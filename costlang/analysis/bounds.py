"""The verdict data model: what bounds a kernel, over which values of a free symbol.

Input: nothing (definitions). Output: `Bound` (memory-, compute-, launch-, comms-bound, balanced,
depends, undecided), `Interval` and `Regime` (exact intervals of one free symbol, each with a
bound), `Condition` (a bound and the structured relations under which it holds), `Verdict`, and
`bound_at`, the rule that turns the signs of the compared differences into a bound. Data only;
`analysis.verdict` decides verdicts, `printers.verdicts` words them.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Optional

import sympy

from costlang.analysis.bound_kind import (BALANCED, COMMS, COMPUTE, DEPENDS, LAUNCH, MEMORY, UNDECIDED, Bound,
                                          Word)

__all__ = ["Word", "Bound", "Interval", "Regime", "Condition", "Verdict", "Times", "bound_at", "with_level",
           "MEMORY", "COMPUTE", "LAUNCH", "COMMS", "BALANCED", "DEPENDS", "UNDECIDED"]


@dataclass(frozen=True)
class Interval:
    """lower .. upper (exact; upper may be sympy.oo), each end open or closed; a point when equal."""
    lower: sympy.Expr
    upper: sympy.Expr
    lower_closed: bool = False
    upper_closed: bool = False

    @property
    def is_point(self) -> bool:
        return self.lower == self.upper

    def as_set(self) -> sympy.Set:
        return sympy.Interval(self.lower, self.upper, not self.lower_closed, not self.upper_closed)


@dataclass(frozen=True)
class Regime:
    interval: Interval
    bound: Bound


@dataclass(frozen=True)
class Condition:
    """`bound` where every relation holds (no relations: everywhere the earlier ones do not)."""
    bound: Bound
    relations: tuple[sympy.Basic, ...] = ()


@dataclass(frozen=True)
class Verdict:
    """`bound` is the verdict when it is one for every value; DEPENDS with `regimes` (intervals of
    `symbol`) or `conditions`; UNDECIDED when sympy could not decide (then `conditions` hold the
    comparisons as relations). `level` names the binding memory level (HBM, L2) where the hardware
    has several, so a memory-bound verdict reads HBM-bound."""
    bound: Bound
    symbol: Optional[sympy.Symbol] = None
    regimes: tuple[Regime, ...] = ()
    conditions: tuple[Condition, ...] = ()
    level: Optional[str] = None

    def bounds(self) -> tuple[Bound, ...]:
        """Every bound the verdict can take, in order of appearance."""
        found = [r.bound for r in self.regimes] + [c.bound for c in self.conditions] or [self.bound]
        return tuple(dict.fromkeys(found))

    def at(self, value) -> Optional[Bound]:
        """The bound at symbol = value (regimes only); None when no regime contains it."""
        if not self.regimes:
            return self.bound if self.bound not in (DEPENDS, Bound.UNDECIDED) else None
        for r in self.regimes:
            if r.interval.as_set().contains(value) == sympy.true:
                return r.bound
        return None


def with_level(v: Verdict, level: Optional[str]) -> Verdict:
    return v if level is None or v.level == level else replace(v, level=level)



@dataclass(frozen=True)
class Times:
    """What is compared: differences whose signs decide the verdict (Max-free, except `busy`)."""
    roofline: sympy.Expr                 # T_memory − T_compute
    launch: tuple[sympy.Expr, ...]       # launch − each thing it must exceed
    comms: tuple[sympy.Expr, ...]        # T_comms − T_compute, T_comms − T_memory (none: no comms)

    def all(self) -> tuple[sympy.Expr, ...]:
        return (self.roofline, *self.launch, *self.comms)


def bound_at(signs: dict, t: Times) -> Optional[Bound]:
    """The bound from the signs of the differences (None: a sign is unknown)."""
    s = lambda e: signs.get(e)  # noqa: E731
    if t.launch:
        ls = [s(e) for e in t.launch]
        if any(v is None for v in ls) and not any(v is not None and v <= 0 for v in ls):
            return None
        if all(v == 1 for v in ls):
            return LAUNCH
    if t.comms:
        cs = [s(e) for e in t.comms]
        if None in cs:
            return None
        if all(v == 1 for v in cs):
            return COMMS
        if min(cs) == 0:
            return BALANCED
    r = s(t.roofline)
    return None if r is None else {1: MEMORY, -1: COMPUTE, 0: BALANCED}[r]
