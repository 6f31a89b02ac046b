"""Derivation steps for the memory hierarchy: per-level times, a kernel's tiling, access granularity
and efficiency factors (the parts of a memory-hierarchy analysis a worked example shows).

Input: an `Analysis` and one `KernelResult`. Output: `MemoryDerivation` (data: `Step`s of
`analysis.derive` and the factors), or None when the kernel has nothing of the kind to show (a
one-level hardware, no tiling, coalesced access, no factors), so classic derivations are unchanged.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import sympy

from costlang.units import BYTE, BYTE_PER_S, DIMENSIONLESS, INTENSITY, SECOND
from costlang.analysis.derive import Step, Term, unevaluated_subs
from costlang.analysis.reuse import flash_blocks

__all__ = ["MemoryDerivation", "derive_memory"]


@dataclass(frozen=True)
class MemoryDerivation:
    levels: tuple[Step, ...]        # T_memory at each level, farthest first
    binding: Optional[str]          # the binding level (None: one level)
    tiling_kind: Optional[str]      # "matmul" or "flash"
    tiling: tuple[Step, ...]        # sizes, tile counts, HBM bytes, limits, working set
    stage: Optional[str]
    fits: Optional[bool]            # working set ≤ capacity (None: unknown or symbolic)
    held: tuple[tuple[str, str], ...]
    strided: tuple[Step, ...]       # actual bytes of each strided read, then the effective bandwidth
    efficiencies: tuple             # `Efficiency`s applied to this kernel


def _t(name):
    return Term(name)


def _step(a, lhs, formula, env, value, unit) -> Step:
    subst = unevaluated_subs(formula, env)
    return Step(lhs, formula, None, subst, a.value(value), unit)


def derive_memory(a, k) -> Optional[MemoryDerivation]:
    levels = _levels(a, k) if len(k.levels) > 1 or any(lt.efficiency for lt in k.levels) else ()
    kind, tiling, fits = None, (), None
    t = k.cost.tiling
    if t is not None:
        kind = t.kind
        tiling = _matmul(a, k, t) if t.kind == "matmul" else _flash(a, k, t)
        if t.capacity is not None:
            room = a.value(t.capacity - t.working_set)
            fits = bool(room.is_nonnegative) if room.is_number else None
    strided = _strided(a, k)
    effs = tuple(e for e in [k.compute_efficiency] + [lt.efficiency for lt in k.levels] if e is not None)
    if not (levels or tiling or strided or effs):
        return None
    return MemoryDerivation(levels, k.level, kind, tiling, t.stage if t else None, fits,
                            t.held if t else (), strided, effs)


def _levels(a, k) -> tuple[Step, ...]:
    out = []
    for lt in k.levels:
        T, B, BW = _t(f"T_memory@{lt.level}"), _t(f"byte@{lt.level}"), _t(f"BW@{lt.level}")
        env = {B: a.value(lt.bytes), BW: lt.bandwidth}
        formula = B / BW
        if lt.efficiency is not None:
            e = _t(f"e@{lt.level}")
            env[e] = lt.efficiency.value
            formula = B / sympy.Mul(e, BW, evaluate=False)
        out.append(_step(a, T, formula, env, lt.t_memory, SECOND))
    return tuple(out)


def _matmul(a, k, t) -> tuple[Step, ...]:
    f = dict(t.figures)
    b = a.program.tensors[a.program.nodes[next(n for n in k.ops if a.program.nodes[n].kind == "matmul")]
                          .inputs[0]].dtype.size
    names = {n: _t(n) for n in ("M", "N", "K", "bm", "bn", "bk", "tm", "tn", "tk")}
    env = {names[n]: a.value(f[n]) for n in names}
    bT = _t("b")
    env[bT] = b
    M, N, K, bm, bn, bk, tm, tn, tk = (names[n] for n in ("M", "N", "K", "bm", "bn", "bk", "tm", "tn", "tk"))
    steps = [_step(a, tm, M / bm, env, f["tm"], _count()),
             _step(a, tn, N / bn, env, f["tn"], _count()),
             _step(a, tk, K / bk, env, f["tk"], _count())]
    tiled = sympy.Mul(bT, sympy.Add(sympy.Mul(tm, tn, tk, sympy.Add(sympy.Mul(bm, bk), sympy.Mul(bk, bn),
                                                                    evaluate=False), evaluate=False),
                                    sympy.Mul(M, N, evaluate=False), evaluate=False), evaluate=False)
    value = b * (f["tm"] * f["tn"] * f["tk"] * (f["bm"] * f["bk"] + f["bk"] * f["bn"]) + f["M"] * f["N"])
    steps.append(_step(a, _t("byte@tiled"), tiled, env, value, BYTE))
    per_element = sympy.Mul(2, bm, bn, evaluate=False) / sympy.Add(bm, bn, evaluate=False)
    steps.append(_step(a, _t("I_inf@element"), per_element, env, t.limit_per_element, _count()))
    per_byte = sympy.Mul(2, bm, bn, evaluate=False) / sympy.Mul(bT, sympy.Add(bm, bn, evaluate=False),
                                                                 evaluate=False)
    steps.append(_step(a, _t("I_inf"), per_byte, env, t.limit, INTENSITY))
    ws = sympy.Add(sympy.Mul(bT, sympy.Add(sympy.Mul(bm, bk), sympy.Mul(bk, bn), evaluate=False),
                             evaluate=False), sympy.Mul(4, bm, bn, evaluate=False), evaluate=False)
    steps.append(_step(a, _t("WS"), ws, env, t.working_set, BYTE))
    return tuple(steps)


def _flash(a, k, t) -> tuple[Step, ...]:
    f = dict(t.figures)
    Mt, d, N, Bc, Br, Tc = (_t(n) for n in ("M_sram", "d", "N", "B_c", "B_r", "T_c"))
    C, b = _t("C"), _t("b")
    env = {Mt: a.value(f["M"]), d: a.value(f["d"]), N: a.value(f["N_k"]), C: a.value(t.capacity),
           b: a.value(t.capacity / f["M"])}
    paper = sympy.ceiling(sympy.Mul(Mt, sympy.Pow(sympy.Mul(4, d, evaluate=False), -1, evaluate=False),
                                    evaluate=False), evaluate=False)
    rule = flash_blocks(env[C], env[d], env[b])[2]
    if rule == "either":
        largest = sympy.Max(_largest_block("rows_d", C, b, d), _largest_block("square", C, b, d), evaluate=False)
    else:
        largest = _largest_block(rule, C, b, d)
    steps = [_step(a, Bc, sympy.Min(paper, largest, evaluate=False), env, f["B_c"], _count())]
    env[Bc] = a.value(f["B_c"])
    steps.append(_step(a, Br, sympy.Min(Bc, d, evaluate=False), env, f["B_r"], _count()))
    steps.append(_step(a, Tc, sympy.ceiling(N / Bc, evaluate=False), env, f["T_c"], _count()))
    env[Tc] = a.value(f["T_c"])
    q = next(r for r in k.cost.reads if r.why == "flash" and r.role != "stats")
    out = next(w for w in k.cost.writes if w.why == "flash" and w.role != "stats")
    Q, O, KV, S = _t("|Q|"), _t("|O|"), _t("|K|+|V|"), _t("stats")
    env.update({Q: a.value(q.ideal), O: a.value(out.ideal), KV: a.value(k.cost.algorithmic_bytes - q.ideal - out.ideal),
                S: a.value(16 * _rows(a, k))})
    formula = sympy.Add(sympy.Mul(Tc, Q, evaluate=False), KV,
                        sympy.Mul(sympy.Add(sympy.Mul(2, Tc, evaluate=False), -1, evaluate=False), O, evaluate=False),
                        sympy.Mul(sympy.Add(Tc, -1, evaluate=False), S, evaluate=False), evaluate=False)
    steps.append(_step(a, _t("byte@HBM"), formula, env, k.bytes, BYTE))
    steps.append(_step(a, _t("theta"), sympy.Mul(3, Q, 4, d, N, evaluate=False) / Mt, env, t.theta, BYTE))
    return tuple(steps)


def _largest_block(rule, C, b, d):
    """The largest B_c whose working set b·(2·B_c·d + 2·B_r·d + B_r·B_c) + 8·B_r fits in C: with
    B_r = d it is linear in B_c; with B_r = B_c, quadratic (b·B² + (4·b·d + 8)·B ≤ C)."""
    M, A = (lambda *x: sympy.Mul(*x, evaluate=False)), (lambda *x: sympy.Add(*x, evaluate=False))
    if rule == "rows_d":
        top = A(C, M(-2, b, sympy.Pow(d, 2, evaluate=False)), M(-8, d))
        return sympy.floor(M(top, sympy.Pow(M(3, b, d), -1, evaluate=False)), evaluate=False)
    lin = A(M(4, b, d), 8)
    root = sympy.Pow(A(sympy.Pow(lin, 2, evaluate=False), M(4, b, C)), sympy.Rational(1, 2), evaluate=False)
    return sympy.floor(M(A(root, M(-1, lin)), sympy.Pow(M(2, b), -1, evaluate=False)), evaluate=False)


def _rows(a, k):
    o = next(w for w in k.cost.writes if w.why == "flash" and w.role != "stats")
    tensor = a.program.tensors[o.tensor]
    return tensor.numel / tensor.shape[-1]


def _count():
    return DIMENSIONLESS


def _strided(a, k) -> tuple[Step, ...]:
    out = []
    for tr in k.cost.reads:
        if tr.why != "strided":
            continue
        n, S, b, sector = _t("n"), _t("S"), _t("b"), _t("sector")
        tensor = a.program.tensors[tr.tensor]
        stride = next(a.program.nodes[x].option("stride") for x in k.ops
                      if a.program.nodes[x].option("stride") is not None)
        env = {n: a.value(tensor.numel), S: a.value(stride), b: tensor.dtype.size, sector: a.hardware.sector}
        formula = sympy.Mul(n, sympy.Min(sympy.Mul(S, b, evaluate=False), sector, evaluate=False), evaluate=False)
        out.append(_step(a, _t(f"byte@{tr.tensor}"), formula, env, tr.bytes, BYTE))
    if out:
        eff, alg, T = _t("effective_bandwidth"), _t("byte@algorithmic"), _t("T_memory")
        env = {alg: a.value(k.algorithmic_bytes), T: a.value(k.t_memory)}
        out.append(_step(a, eff, alg / T, env, k.algorithmic_bytes / k.t_memory, BYTE_PER_S))
    return tuple(out)
