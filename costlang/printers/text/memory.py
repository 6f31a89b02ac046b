"""Text report sections for the memory hierarchy: bytes and T_memory per level, tilings, access
granularity (actual vs algorithmic traffic, effective bandwidth) and efficiency factors.

Input: an `Analysis`. Output: lines (nothing for a one-level hardware without any of these
models, so the classic report is unchanged).
"""
from __future__ import annotations

import sympy

from costlang.units import BYTE, BYTE_PER_S, SECOND
from costlang.printers.numbers import exact_or_approx, human

__all__ = ["memory_lines", "hierarchy_text"]


def hierarchy_text(hw, v) -> str:
    parts = []
    for m in hw.memories:
        per = " per SM" if m.per_sm else ""
        cap = f", {human(v(m.capacity), BYTE)}" if m.capacity is not None else ""
        parts.append(f"{m.name} {human(v(m.bandwidth), BYTE_PER_S)}{cap}{per}")
    return "memory levels (farthest first): " + "; ".join(parts) + \
        (f"; {exact_or_approx(v(hw.sms))} SMs" if hw.sms is not None else "")


def memory_lines(a) -> list[str]:
    out = []
    if len(a.hardware.memories) > 1:
        out += _levels(a)
    out += _tilings(a) + _actual(a) + _efficiency(a)
    return out


def _levels(a) -> list[str]:
    v = a.value
    out = ["", "memory levels (bytes / (bandwidth × efficiency) = T_memory; the largest binds)"]
    for k in a.kernels:
        parts = [f"{lt.level} {human(v(lt.bytes), BYTE)} / {human(v(lt.achievable), BYTE_PER_S)} = "
                 f"{human(v(lt.t_memory), SECOND)}" for lt in k.levels]
        out.append(f"  {k.name}: " + "; ".join(parts) + f" → {k.level or a.hardware.main_memory.name} binds")
    return out


def _tilings(a) -> list[str]:
    v = a.value
    out = []
    for k in a.kernels:
        t = k.cost.tiling
        if t is None:
            continue
        fig = ", ".join(f"{n} = {exact_or_approx(v(e))}" for n, e in t.figures)
        out.append(f"  {k.name} ({'tiled matmul' if t.kind == 'matmul' else 'FlashAttention'}): {fig}")
        times = [f"{tr.tensor} × {exact_or_approx(v(tr.times))}" for tr in k.cost.reads + k.cost.writes
                 if tr.times is not None and tr.why in ("tiled", "flash") and tr.role != "stats"]
        if times:
            out.append("    crossings: " + ", ".join(times) + "; stats" * any(
                tr.role == "stats" for tr in k.cost.reads))
        for tensor, level in t.held:
            out.append(f"    {tensor} fits in {level}: HBM sees it once, {level} on every re-read")
        if t.limit is not None:
            out.append(f"    as K → ∞: I → 2·bm·bn/(bm + bn) = {exact_or_approx(v(t.limit_per_element))} FLOP per "
                       f"element = 2·bm·bn/(b·(bm + bn)) = {exact_or_approx(v(t.limit))} FLOP/B")
        if t.theta is not None:
            out.append(f"    large N: T_c ≈ 4·d·N/M, bytes ≈ 3·|Q|·T_c = {human(v(t.theta), BYTE)}: Θ(N²·d²/M)")
        out.append(f"    {a.hardware.main_memory.name} bytes {human(v(k.bytes), BYTE)} "
                   f"(algorithmic {human(v(k.algorithmic_bytes), BYTE)}); I = {exact_or_approx(v(k.intensity))} FLOP/B")
        out.append("    " + _fits(t, v))
    return ["", "tiling"] + out if out else []


def _fits(t, v) -> str:
    ws = f"working set {human(v(t.working_set), BYTE)}"
    if t.capacity is None:
        return ws + ": the hardware states no per-SM capacity to check it against"
    room = v(t.capacity - t.working_set)
    verdict = ("fits" if room.is_nonnegative else "does not fit") if room.is_number else (
        f"fits while {human(v(t.working_set), BYTE)} ≤ {human(v(t.capacity), BYTE)}")
    return f"{ws} vs {t.stage} {human(v(t.capacity), BYTE)} per SM: {verdict}"


def _actual(a) -> list[str]:
    v = a.value
    out = []
    for k in a.kernels:
        strided = [t for t in k.cost.reads if t.why == "strided"]
        if not strided:
            continue
        parts = [f"{t.tensor} algorithmic {human(v(t.ideal), BYTE)}, actual {human(v(t.bytes), BYTE)} "
                 f"(× {exact_or_approx(v(t.times))}, whole {human(v(a.hardware.sector), BYTE)} sectors)"
                 for t in strided]
        eff = v(k.algorithmic_bytes / k.t_memory)
        out.append(f"  {k.name}: " + "; ".join(parts))
        out.append(f"    effective bandwidth = algorithmic bytes / T_memory = {human(eff, BYTE_PER_S)} "
                   f"(of {human(v(k.bandwidth), BYTE_PER_S)} peak)")
    return ["", "actual vs algorithmic traffic"] + out if out else []


def _efficiency(a) -> list[str]:
    v = a.value
    out = []
    for k in a.kernels:
        effs = ([k.compute_efficiency] if k.compute_efficiency else []) + \
            [lt.efficiency for lt in k.levels if lt.efficiency is not None]
        if effs:
            out.append(f"  {k.name}: " + "; ".join(
                f"{e.key} × {exact_or_approx(v(e.value))}" + (f" ({e.source})" if e.source else "")
                + ("" if e.where == "hardware" else f" [{e.where}]") for e in effs))
    if not out:
        return []
    return ["", "efficiency factors (fractions of peak; applied once, in T_compute and T_memory)"] + out


def _is_number(e) -> bool:
    return isinstance(e, sympy.Basic) and e.is_number
