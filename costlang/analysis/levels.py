"""Memory levels and efficiency factors: a kernel's bytes and T_memory at every level, and which binds.

Input: the hardware, a kernel's ops and its modelled `KernelCost` (`analysis.reuse`). Output:
`LevelTime`s, farthest level first, and the factors that apply. T_memory at a level is
bytes / (chip bandwidth × efficiency); the binding level is the one with the largest T_memory
(ties go to the farther level). Efficiency factors are 1 unless stated; one stated on an op of
the kernel (`{ efficiency_HBM = 0.9 }`) replaces the hardware's for that kernel, so a factor
applies exactly once. `peak()` and `bandwidth()` stay the raw figures.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import sympy

from costlang.errors import SemanticError
from costlang.ir.program import Efficiency, Hardware, Program
from costlang.passes.costs import KernelCost
from costlang.analysis.memo import dominates, positive_somewhere

__all__ = ["LevelTime", "level_times", "binding_level", "factor", "check_kernel_factors"]


@dataclass(frozen=True)
class LevelTime:
    level: str
    bytes: sympy.Expr
    bandwidth: sympy.Expr            # the chip's raw bandwidth at this level
    efficiency: Optional[Efficiency]  # None: 1
    t_memory: sympy.Expr
    per_sm: bool = False

    @property
    def achievable(self) -> sympy.Expr:
        return self.bandwidth * (self.efficiency.value if self.efficiency else 1)


def factor(program: Program, hw: Hardware, ops, key: str) -> Optional[Efficiency]:
    """The efficiency named `key` for a kernel: the smallest one its ops state, else the hardware's."""
    stated = [(program.nodes[n].option(f"efficiency_{key}"), n) for n in ops]
    stated = [(v, n) for v, n in stated if v is not None]
    if stated:
        value, node = min(stated, key=lambda p: (sympy.oo if not p[0].is_number else p[0]))
        return Efficiency(key, value, None, f"kernel:{node}")
    return hw.efficiency(key)


def check_kernel_factors(program: Program, hw: Hardware, ops) -> None:
    known = {"compute", "matrix", "vector"} | {m.name for m in hw.memories}
    for n in ops:
        for key, _ in program.nodes[n].options:
            if key.startswith("efficiency_") and key[len("efficiency_"):] not in known:
                raise SemanticError(f"unknown efficiency '{key}' on '{n}'", program.nodes[n].span,
                                    f"hardware '{hw.name}' has: " + ", ".join(f"efficiency_{k}" for k in sorted(known)))


def level_times(program: Program, hw: Hardware, ops, cost: KernelCost) -> tuple[LevelTime, ...]:
    per_level = dict(cost.level_bytes)
    out = []
    for m in hw.memories:
        nbytes = per_level.get(m.name, cost.bytes)
        eff = factor(program, hw, ops, m.name)
        bw = hw.chip_bandwidth(m)
        out.append(LevelTime(m.name, nbytes, bw, eff, nbytes / (bw * (eff.value if eff else 1)), m.per_sm))
    return tuple(out)


def binding_level(levels: tuple[LevelTime, ...], main: str, bindings) -> LevelTime:
    """The level with the largest T_memory at the bound values (the farther one on a tie); when
    free symbols leave the order open, the main level (HBM). A difference that is evidently
    negative (`memo.dominates`), or evidently positive at one point of the domain
    (`memo.positive_somewhere`), needs no `simplify`; nor does any difference when no level is
    evidently slower than the main one (the answer is the main level either way)."""
    if len(levels) == 1:
        return levels[0]
    main_level = next(lt for lt in levels if lt.level == main)
    behind = [(lt, (lt.t_memory - main_level.t_memory).xreplace(bindings)) for lt in levels]
    if not any(diff.is_positive for _, diff in behind):
        return main_level   # no level evidently slower than the main one: the main one, decided or not
    best = main_level
    for lt, diff in behind:
        if best is not main_level:
            diff = (lt.t_memory - best.t_memory).xreplace(bindings)
        if diff.is_positive:
            best = lt
        elif not diff.is_number and (positive_somewhere(diff) or not dominates(0, diff)
                                     and not sympy.simplify(diff).is_nonpositive):
            return main_level
    return best
