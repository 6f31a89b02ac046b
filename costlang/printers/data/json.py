"""The JSON report: one object with hardware, kernels, totals, footprint, measurements, queries.

Numbers are JSON numbers when every symbol is bound (integers stay integers; other values are
floats), otherwise the expression as a string (sympy `str`). Keys are in a fixed order.
"""
from __future__ import annotations


import sympy

from costlang.analysis.composition import crossings, kernel_scopes, repeats
from costlang.analysis.verdict import Verdict
from costlang.printers.numbers import json_number as number
from costlang.printers.words.verdicts import to_dict as verdict_dict
from costlang.printers.data.strict import dumps, json_safe

__all__ = ["to_json", "to_dict", "comparison_dict", "number", "dumps", "json_safe"]


def _kernel(a, k) -> dict:
    v = lambda e: number(a.value(e))  # noqa: E731
    return {
        "name": k.name, "ops": list(k.ops), "op_types": list(k.op_names),
        "flops": v(k.flops), "bytes_read": v(k.bytes_read), "bytes_written": v(k.bytes_written),
        "bytes": v(k.bytes), "intensity": v(k.intensity), "critical_intensity": v(k.critical_intensity),
        "t_compute": v(k.t_compute), "t_memory": v(k.t_memory), "t_kernel": v(k.t_kernel),
        "attainable": v(k.attainable), "fraction_of_peak": v(k.fraction_of_peak),
        "bound": verdict_dict(k.bound, number), "math_dtype": k.cost.math_dtype,
        "reads": [_traffic(t, v) for t in k.cost.reads],
        "writes": [_traffic(t, v) for t in k.cost.writes],
        "level": k.level, "algorithmic_bytes": v(k.algorithmic_bytes),
        "levels": [{"level": lt.level, "bytes": v(lt.bytes), "bandwidth": v(lt.bandwidth),
                    "efficiency": _eff(lt.efficiency, v), "t_memory": v(lt.t_memory)} for lt in k.levels],
        "compute_efficiency": _eff(k.compute_efficiency, v),
        "tiling": _tiling(k.cost.tiling, v),
        "count": v(k.count), "repeat": list(k.repeat),
        "blocks": list(kernel_scopes(a, k)),
    }


def _traffic(t, v) -> dict:
    out = {"tensor": t.tensor, "role": t.role, "bytes": v(t.bytes)}
    if t.times is not None:   # a modelled crossing count (tiling, flash, stride, cache)
        out.update(algorithmic=v(t.ideal), times=v(t.times), why=t.why)
    return out


def _eff(e, v):
    return None if e is None else {"key": e.key, "value": v(e.value), "source": e.source, "where": e.where}


def _tiling(t, v):
    if t is None:
        return None
    return {"kind": t.kind, "figures": {n: v(e) for n, e in t.figures}, "stage": t.stage,
            "capacity": v(t.capacity) if t.capacity is not None else None, "working_set": v(t.working_set),
            "held": [list(h) for h in t.held],
            "limit_per_element": v(t.limit_per_element) if t.limit_per_element is not None else None,
            "limit": v(t.limit) if t.limit is not None else None,
            "theta": v(t.theta) if t.theta is not None else None}


def _repeat(a, r) -> dict:
    v = lambda e: number(a.value(e))  # noqa: E731
    figures = lambda f: {"flops": v(f.flops), "bytes": v(f.bytes), "t_kernel": v(f.t_kernel),  # noqa: E731
                         "launches": v(f.launches), "weight_bytes": v(f.weight_bytes),
                         "cache_bytes": v(f.cache_bytes)}
    return {"name": r.name, "block": r.block, "count": v(r.count), "kernels": list(r.kernels),
            "per_iteration": figures(r.per_iteration), "total": figures(r.total)}


def _value(a, value):
    if isinstance(value, Verdict):
        return verdict_dict(value, number)
    return number(a.value(value.expr))


def to_dict(a) -> dict:
    hw, t, f = a.hardware, a.totals, a.footprint
    v = lambda e: number(a.value(e))  # noqa: E731
    return {
        "file": a.program.source_name,
        "hardware": {
            "name": hw.name, "peaks": {d: v(p) for d, p in hw.peaks},
            "vector_peaks": {d: v(p) for d, p in hw.vector_peaks},
            "memory": [{"level": m.name, "bandwidth": v(m.bandwidth) if m.bandwidth is not None else None,
                        "capacity": v(m.capacity) if m.capacity is not None else None,
                        "per_sm": m.per_sm} for m in hw.memories],
            "sms": v(hw.sms) if hw.sms is not None else None, "sector": v(hw.sector),
            "efficiency": [_eff(e, v) for e in hw.efficiencies],
            "launch": v(hw.launch),
        },
        "fusion": a.fusion,
        "free_symbols": [str(s) for s in a.program.free_symbols],
        # sizes in free symbols assumed to be positive whole numbers (`N - M`), when there are any
        **({"assumed_sizes": [str(size) for size, _ in a.program.sizes]} if a.program.sizes else {}),
        "kernels": [_kernel(a, k) for k in a.kernels],
        "totals": {"flops": v(t.flops), "bytes_read": v(t.bytes_read), "bytes_written": v(t.bytes_written),
                   "bytes": v(t.bytes), "intensity": v(t.intensity),
                   "critical_intensity": v(t.critical_intensity), "t_compute": v(t.t_compute),
                   "t_memory": v(t.t_memory), "t_launch": v(t.t_launch), "t_kernel": v(t.t_kernel),
                   "launches": t.launches if isinstance(t.launches, int) else v(t.launches), "bound": verdict_dict(t.bound, number),
                   "level": t.level},
        "footprint": {"bytes": v(f.bytes), "capacity": v(f.capacity) if f.capacity is not None else None,
                      "resident": v(f.resident), "live": v(f.live), "gathered": v(f.gathered), "peak_at": f.peak_at,
                      "tensors": [{"tensor": x.tensor, "role": x.role, "bytes": v(x.bytes)} for x in f.tensors]},
        "measurements": [{"kernel": m.kernel, **{n: _value(a, val) for n, val in m.figures}}
                         for m in a.measurements],
        "queries": [{"name": q.name, "value": _value(a, q.value),
                     "unit": None if isinstance(q.value, Verdict) else str(q.value.unit),
                     "per": getattr(q, "per", None)} for q in a.queries],
        **({"pools": [{"name": p.name, "hardware": p.hardware, "count": int(p.count),
                       "network": v(p.network) if p.network is not None else None, "latency": v(p.latency),
                       "instances": [{"instance": i, "t_kernel": v(t)} for i, t in p.instances],
                       "held": v(p.held), "capacity": v(p.capacity) if p.capacity is not None else None}
                      for p in a.pools]} if a.pools else {}),
        **_composition(a),
        **_whatif(a),
        **_system(a),
        **_training(a),
    }


def _training(a) -> dict:
    """A training step's figures (analysis.training), present when the program is one."""
    from costlang.analysis.training import training_figures
    t = training_figures(a)
    if t is None:
        return {}
    v = lambda e: number(a.value(e))  # noqa: E731
    return {"training": {
        "optimizer": t.optimizer, "recompute": t.recompute, "recompute_calls": dict(t.recompute_calls),
        "zero": t.zero, "fsdp": t.zero == 3,
        "measured": None if t.measured is None else {"step_time": v(t.measured), "mfu": v(t.mfu(t.measured)),
                                                     "hfu": v(t.hfu(t.measured))},
        "chips": v(t.chips), "data_parallel": v(t.data_chips), "tokens_per_step": v(t.tokens),
        "model_flops": v(t.model_flops), "hardware_flops": v(t.hardware_flops),
        "attention_flops": v(t.attention_flops), "optimizer_flops": v(t.optimizer_flops),
        "model_flops_per_token": v(t.model_flops / t.tokens),
        "step_time": {"overlapped": v(t.step_lower), "serial": v(t.step_upper)},
        "tokens_per_second": v(t.tokens_per_second()), "mfu": v(t.mfu()), "hfu": v(t.hfu()),
        "peak": {"dtype": t.peak_dtype, "flops": v(t.peak)},
        "memory_per_chip": {"weights": v(t.weights), "gradients": v(t.gradients), "states": v(t.states),
                            "total": v(t.memory)}}}


def _composition(a) -> dict:
    """Repeated bodies and kernels fused across blocks, present when the program has them."""
    out = {}
    if a.program.repeats:
        out["repeats"] = [_repeat(a, r) for r in repeats(a)]
    found = crossings(a)
    if found:
        out["fusion_across_blocks"] = [{"kernel": k, "blocks": list(s)} for k, s in found]
    return out


def _system(a) -> dict:
    """Many chips (printers/system.py): the system, its collectives and the bounds; and T_comms per kernel."""
    if a.program.system is None:
        return {}
    from costlang.printers.data.system import system_dict
    return {"system": system_dict(a, number)}


def _whatif(a) -> dict:
    """Solves and scenario comparisons (printers/whatif.py), present when the file has them."""
    from costlang.printers.data.whatif import comparison_dict, solve_dict
    out = {}
    if a.solves:
        out["solves"] = [solve_dict(r) for r in a.solves]
    if a.comparisons:
        out["scenario_comparisons"] = [comparison_dict(c) for c in a.comparisons]
    return out


def comparison_dict(a, c) -> dict:
    """A `FusionComparison` as JSON: each figure before, after, and after / before."""
    from costlang.printers.words.comparisons import ratio_text
    v = lambda e: number(a.value(e))  # noqa: E731
    return {
        "baseline": c.baseline, "mode": c.mode,
        "figures": {ch.figure: {"before": v(ch.before), "after": v(ch.after),
                                "ratio": None if ch.ratio is None else v(ch.ratio),
                                "change": ratio_text(ch, a.value)} for ch in c.changes},
        "kernels_before": [list(ops) for ops in c.kernels_before],
        "kernels_after": [list(ops) for ops in c.kernels_after],
    }


def to_json(a, comparison=None) -> str:
    """The report as JSON; with a `FusionComparison`, under the key "fusion_comparison"."""
    d = to_dict(a)
    if comparison is not None:
        d["fusion_comparison"] = comparison_dict(a, comparison)
    return dumps(d)
