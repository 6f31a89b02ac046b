"""Footprint by liveness: the bytes that must be resident at once, against the memory capacity.

Input: a `Program`, its kernels in execution order and their costs (what each reads and writes).
Output: `Footprint`. Weights and caches are resident for the whole program, each counted as many
times as its repeated body runs (L layers have L sets of weights). Activations are live from the
kernel that writes them to memory to the last kernel that reads them (inputs from the start,
program outputs to the end); the footprint adds the peak of the live bytes over the schedule.
A repeated body appears once in the schedule, so its activations count once, not × L: its
iterations run one after another and each frees what the last one needed. Linear in the
number of kernels (one sweep with births and deaths). With every size bound, the peak is found
among the exact values of the steps, without a symbolic Max.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import sympy

from costlang.ir.program import RESIDENT_ROLES, Program
from costlang.passes.costs import Traffic, role_of
from costlang.analysis.memo import smax

__all__ = ["Footprint", "footprint"]


@dataclass(frozen=True)
class Footprint:
    bytes: sympy.Expr                 # resident + live
    capacity: Optional[sympy.Expr]
    tensors: tuple[Traffic, ...]      # the resident tensors (bytes × count), then those live at the peak
    resident: sympy.Expr = sympy.Integer(0)   # weights and caches, × their repeat counts
    live: sympy.Expr = sympy.Integer(0)       # peak live activation bytes over the schedule
    peak_at: Optional[str] = None     # the first kernel at which the live bytes peak (None: it depends)


def footprint(program: Program, capacity, kernels, costs, outputs: set, bindings: dict) -> Footprint:
    resident = [Traffic(t.name, t.role, t.bytes * program.count(t.repeat)) for t in program.tensors.values()
                if t.storage == t.name and t.role in RESIDENT_ROLES]
    last = len(kernels) - 1
    birth: dict[str, int] = {}
    death: dict[str, int] = {}
    for t in program.tensors.values():
        if t.role == "input":
            birth[t.name], death[t.name] = 0, 0
    for i, cost in enumerate(costs):
        for tr in cost.writes:
            s = _storage(program, tr.tensor)
            if s is not None and program.tensors[s].role not in RESIDENT_ROLES:  # resident: counted once
                birth.setdefault(s, i)
                death[s] = max(death.get(s, i), i)
        for tr in cost.reads:
            s = _storage(program, tr.tensor)
            if s is not None and program.tensors[s].role not in RESIDENT_ROLES:
                birth.setdefault(s, i)
                death[s] = max(death.get(s, i), i)
    for s in outputs:
        if s in birth:
            death[s] = max(last, 0)
    bound = _bound_peak(program, birth, death, max(len(kernels), 1), bindings)
    if bound is not None:  # every size bound: the exact peak directly, no symbolic Max
        live, peak_index = bound
    else:
        steps = _live_per_step(program, birth, death, max(len(kernels), 1))
        # A step where nothing is born holds at most what the step before held (only deaths since),
        # so it cannot be the peak; the Max of the rest is remembered (scenarios share the schedule).
        born_at = set(birth.values())
        peaks = [step for i, step in enumerate(steps) if i == 0 or i in born_at]
        live = smax(*dict.fromkeys(peaks)) if steps else sympy.Integer(0)
        peak_index = _peak_index(steps, live, bindings)
    at_peak = ()
    if peak_index is not None:
        at_peak = tuple(Traffic(s, role_of(program, s, outputs), program.tensors[s].bytes)
                        for s in birth if birth[s] <= peak_index <= death[s])
    res = sympy.Add(*[t.bytes for t in resident])
    return Footprint(res + live, capacity, tuple(resident) + at_peak, res, live,
                     kernels[peak_index].name if peak_index is not None and kernels else None)


def _storage(program: Program, name: str) -> Optional[str]:
    t = program.tensors.get(name)
    return t.storage if t is not None else None  # "(stated)" bytes of a custom kernel name no tensor


def _live_per_step(program, birth, death, n, size=lambda e: e) -> list:
    """The bytes live at each step of the schedule (each tensor's bytes mapped by `size`)."""
    born: dict[int, list] = {}
    dead: dict[int, list] = {}
    for s, b in birth.items():
        bytes_ = size(program.tensors[s].bytes)
        born.setdefault(b, []).append(bytes_)
        dead.setdefault(death[s], []).append(bytes_)
    steps, running = [], sympy.Integer(0)
    for i in range(n):
        running = running + sympy.Add(*born.get(i, []))
        steps.append(running)
        running = running - sympy.Add(*dead.get(i, []))
    return steps


def _bound_peak(program, birth, death, n, bindings) -> Optional[tuple]:
    """(the largest step's exact value, its first index) when the bindings make every live
    tensor's size an exact number; None otherwise. The same value as the symbolic Max, bound,
    computed from the bound sizes directly (a model's tensors have a few distinct sizes)."""
    sizes: dict = {}
    for s in birth:
        e = program.tensors[s].bytes
        if e not in sizes:
            sizes[e] = e.xreplace(bindings)
            if not sizes[e].is_Rational:
                return None
    values = _live_per_step(program, birth, death, n, sizes.__getitem__)
    peak = max(values)
    return peak, values.index(peak)


def _peak_index(steps, live, bindings) -> Optional[int]:
    peak = live.xreplace(bindings)
    if not peak.is_number:
        return None
    for i, step in enumerate(steps):
        if (step.xreplace(bindings) - peak) == 0:
            return i
    return None
