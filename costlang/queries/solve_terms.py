"""The vocabulary of a solve's answer: which side of a crossing, which max()/min() branch, which step.

Input: nothing (definitions). Output: `Side` (the regime on one side of a crossing: memory-bound,
fits in memory, lhs < rhs, …), `Taken` and `Case` (the max()/min() arguments a root's branch
takes: "y is memory-bound there"), `StepKind` (what a derivation step does) and `Undecided`
(what sympy could not decide). Data only, never words: `analysis.solve` fills them and the
printers word them from their phrase tables (`printers.phrases`, in each language).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import sympy

from costlang.analysis.bounds import Bound, Word

__all__ = ["Side", "Taken", "Case", "StepKind", "Undecided", "sides_of"]


class Side(Word):
    """The regime of lhs − rhs on one side of a crossing (the value is a stable JSON identifier)."""
    MEMORY = "memory-bound"
    COMPUTE = "compute-bound"
    FITS = "fits"                  # footprint < capacity
    DOES_NOT_FIT = "does-not-fit"
    BELOW = "below"                # lhs < rhs, for sides that have no name of their own
    ABOVE = "above"                # lhs > rhs
    EQUAL = "equal"                # lhs − rhs is zero on a whole interval


#: (lhs function, rhs function) → (side where lhs < rhs, where lhs > rhs, the sign of lhs − rhs whose
#: side also takes lhs = rhs: −1 footprint = capacity fits; 0 at I = I* neither, it is balanced)
_PAIRS = {("intensity", "critical_intensity"): (Side.MEMORY, Side.COMPUTE, 0),
          ("t_memory", "t_compute"): (Side.COMPUTE, Side.MEMORY, 0),
          ("footprint", "capacity"): (Side.FITS, Side.DOES_NOT_FIT, -1)}


def sides_of(funcs: tuple) -> tuple[Side, Side, int]:
    """The sides of `lhs REL rhs` for the functions its two sides call (None: not a call).

    >>> sides_of(("capacity", "footprint"))
    (<Side.DOES_NOT_FIT: 'does-not-fit'>, <Side.FITS: 'fits'>, 1)
    """
    if funcs in _PAIRS:
        return _PAIRS[funcs]
    if funcs[::-1] in _PAIRS:   # rhs − lhs: the regimes swap sides, and so does the equality
        below, above, equal = _PAIRS[funcs[::-1]]
        return above, below, -equal
    return Side.BELOW, Side.ABOVE, 0


@dataclass(frozen=True)
class Taken:
    """One max()/min() argument that a root's branch takes: a kernel's T_compute or T_memory
    (`kernel` and `bound`: "y is memory-bound"), or another term (`term`, the larger or smaller)."""
    kernel: Optional[str] = None
    bound: Optional[Bound] = None
    term: Optional[sympy.Expr] = None
    larger: bool = True


@dataclass(frozen=True)
class Case:
    """The branch a root lies on; `certain` False when that depends on the free symbols ("if …")."""
    taken: tuple[Taken, ...]
    certain: bool = True


class StepKind(Word):
    """What a derivation step of a solve states."""
    EQUATION = "equation"                  # lhs = rhs in the program's symbols
    GENERAL_EQUATION = "general-equation"  # the same in b, Istar and BW
    CLEARED = "cleared"                    # the numerator of lhs − rhs = 0
    ROOT_GENERAL = "root-general"          # X = the root in b, Istar and BW
    ROOT = "root"                          # X = the root in the program's symbols
    BOUND_VALUES = "bound-values"          # X = the root with the bound values


class Undecided(Word):
    """A part of a solve's answer that sympy could not decide (the printers say so in words)."""
    REGIMES = "regimes"
    GENERAL = "general form"
    LIMITS = "limits"
    APPROXIMATIONS = "approximations"
    CONDITIONS = "conditions"
    EXPLANATION = "explanation"
