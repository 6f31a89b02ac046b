"""The words of `costlang simulate`: the step model, the workload, the steady state in closed form,
the simulated percentiles, goodput and the energy and cost figures (text), and the same as a dict
(JSON)."""
from __future__ import annotations

import numpy as np
import sympy

from costlang.printers.numbers import human, json_number, sig
from costlang.units import BYTE, SECOND

__all__ = ["serving_report", "serving_dict"]

_PCT = (50, 90, 99)


def _s(x) -> str:
    if x is None or (isinstance(x, float) and not np.isfinite(x)):
        return "-"
    if x == 0:
        return "0 s"
    return human(sympy.Float(x) if isinstance(x, float) else x, SECOND)


def _rate(x) -> str:
    return f"{sig(float(x))} /s"


def _metrics(sim) -> dict:
    from costlang.queries.serving import percentiles
    out = {}
    for name, values in (("TTFT", sim.ttft), ("TPOT", sim.tpot), ("E2E", sim.e2e), ("queue wait", sim.queue_wait)):
        p = percentiles(values, _PCT)
        out[name] = {**{f"p{q}": p[q] for q in _PCT}, "mean": float(values.mean()) if len(values) else float("nan")}
    return out


def serving_report(args, steps, sim, steady, energy, pools=None) -> str:
    served = int(sim.served.sum())
    lines = [f"costlang simulate: {args.file}",
             f"step model: P({steps.S}) = t_kernel({args.prefill}), D({steps.B}, {steps.T}) = t_kernel({args.decode}); "
             f"KV {human(steps.kv_bytes_per_token, BYTE)} per token, {human(steps.kv_memory, BYTE)} for the cache: "
             f"{sim.kv_blocks:,} pages of {args.block_size} tokens"]
    if args.trace:
        lines.append(f"workload: {len(sim.arrivals):,} requests from the trace {args.trace}")
    else:
        lines.append(f"workload: {len(sim.arrivals):,} requests, Poisson at {sig(float(args.rate))} /s, prompt "
                     f"{args.prompt_len}, output {args.output_len}, seed {args.seed}")
    budget = f"{args.token_budget:,} tokens" if args.token_budget else "no limit"
    lines.append(f"scheduler: continuous batching, max batch {args.max_batch}, token budget {budget}, chunked "
                 f"prefill {'on' if args.chunked_prefill else 'off'}")
    if pools is not None:
        took = pools.transfer_done - pools.prefill.finished
        took = took[~np.isnan(took)]
        bandwidth, latency = pools.link
        prefill_busy = pools.prefill.busy / (pools.prefill.replicas * sim.makespan) if sim.makespan > 0 else 0
        lines += [f"pools: prefill on {pools.names[0]}, decode on {pools.names[1]}; "
                  f"KV over a link of {sig(float(bandwidth) / 1e9)} GB/s, latency {_s(sympy.Rational(latency))}: "
                  f"from first token to the decode pool {_s(float(took.mean()) if len(took) else None)} on average; "
                  f"the prefill pool busy {sig(100 * prefill_busy, 3)} %, the decode pool's below"]
    elif sim.replicas > 1 or getattr(args, "pool_label", None):
        lines.append(f"pool: {args.pool_label}; requests dealt round-robin to the replicas, each with its own "
                     "scheduler and cache")
    if steady is not None:
        lines += ["", "steady state (closed form)",
                  f"  one request alone: S₁ = {_s(steady.service_one)}; utilisation ρ = λ·S₁ = {sig(float(steady.utilisation))}",
                  f"  largest stable rate one at a time: 1/S₁ = {_rate(steady.max_rate_one)}; at batch "
                  f"{steady.batch}: {_rate(steady.max_rate_batch)}"]
        if steady.md1_wait is not None:
            lines.append(f"  one at a time (M/D/1): mean wait ρ·S₁/(2·(1 − ρ)) = {_s(steady.md1_wait)}; "
                         f"Little's L = λ·W = {sig(float(steady.little_l))}")
        else:
            lines.append("  one at a time the queue grows without bound (ρ ≥ 1)")
    busy = sim.utilisation
    lines += ["", f"simulation: {served:,} requests served, {sim.rejected:,} rejected (larger than the KV cache), "
              f"{sim.steps:,} steps in {_s(sim.makespan)}, busy {sig(100 * busy, 3)} %"]
    table = [["", *[f"p{q}" for q in _PCT], "mean"]]
    for name, row in _metrics(sim).items():
        table.append([name, *[_s(row[f"p{q}"]) for q in _PCT], _s(row["mean"])])
    widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
    for r in table:
        lines.append("  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
    if served and sim.makespan > 0:
        lam = served / sim.makespan
        tokens = int(sim.outputs[sim.served].sum())
        lines.append(f"  throughput {sig(lam)} requests/s, {sig(tokens / sim.makespan)} output tokens/s; "
                     f"Little: L = {sig(sim.mean_in_system())} = λ·W = {sig(lam * float(sim.e2e.mean()))}")
        if args.slo_ttft is not None or args.slo_tpot is not None:
            slo = ", ".join(x for x in (
                f"TTFT ≤ {_s(sympy.Rational(args.slo_ttft))}" if args.slo_ttft is not None else "",
                f"TPOT ≤ {_s(sympy.Rational(args.slo_tpot))}" if args.slo_tpot is not None else "") if x)
            good = sim.goodput(_f(args.slo_ttft), _f(args.slo_tpot))
            lines.append(f"  goodput ({slo}): {sig(good)} requests/s, {sig(100 * good / lam, 3)} % of those served")
    if energy is not None:
        line = (f"energy ({sig(float(args.power))} W per chip ({args.power_source}), {args.chips} chip{'s' * (args.chips != 1)}, idle time "
                f"counted): {sig(float(energy.joules_per_token))} J per output token, "
                f"{sig(float(energy.tokens_per_second_per_watt))} tokens/s per W")
        if energy.dollars_per_million_tokens is not None:
            line += f"; ${sig(float(energy.dollars_per_million_tokens))} per million output tokens"
        lines += ["", line]
    return "\n".join(lines) + "\n"


def speculative_report(args, draft, plain, rows) -> str:
    """The speculative table: per α, the expected tokens per verify step and the TPOT at k = 1..4,
    the best k of 1..16 and its speed-up over plain decoding."""
    lines = [f"costlang simulate: {args.file}",
             f"speculative decoding at {args.context:,} tokens of context: draft step t_kernel({args.draft}) = "
             f"{_s(draft)}; plain decoding t_kernel({args.verify}) at {args.verify_dim} = 1: TPOT {_s(plain)}",
             "  expected tokens per verify step (1 − α^(k+1))/(1 − α); TPOT = (k·t_draft + t_verify(k + 1)) / tokens",
             ""]
    table = [["α", *[f"k = {k}" for k in range(1, 5)], "best k of 1..16", "TPOT", "speed-up"]]
    for alpha, _, tpots, k, best in rows:
        table.append([sig(float(alpha)), *[_s(t) for t in tpots[:4]], str(k), _s(best),
                      f"{sig(float(plain / best), 3)}×"])
    widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
    for r in table:
        lines.append("  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
    return "\n".join(lines) + "\n"


def _f(x):
    return None if x is None else float(x)


def _plain(v):
    """sympy numbers as JSON numbers, recursively."""
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, sympy.Basic):
        return json_number(v)
    if isinstance(v, (np.integer, np.floating)):
        return v.item()
    return v


def serving_dict(args, steps, sim, steady, energy, pools=None) -> dict:
    served = int(sim.served.sum())
    d = {"file": args.file, "kv_bytes_per_token": steps.kv_bytes_per_token, "kv_memory": steps.kv_memory,
         "kv_pages": sim.kv_blocks, "requests": len(sim.arrivals), "served": served, "rejected": sim.rejected,
         "steps": sim.steps, "makespan_s": sim.makespan, "busy_s": sim.busy, "replicas": sim.replicas,
         "metrics_s": _metrics(sim)}
    if served and sim.makespan > 0:
        d["throughput_requests_per_s"] = served / sim.makespan
        d["mean_in_system"] = sim.mean_in_system()
        d["goodput_requests_per_s"] = sim.goodput(_f(args.slo_ttft), _f(args.slo_tpot))
    if pools is not None:
        d["pools"] = {"prefill": pools.names[0], "decode": pools.names[1], "replicas": [pools.prefill.replicas, sim.replicas],
                      "link_bandwidth": json_number(sympy.Rational(pools.link[0])),
                      "link_latency_s": json_number(sympy.Rational(pools.link[1])),
                      "transfer_done_mean_s": float(np.nanmean(pools.transfer_done - pools.prefill.finished))}
    if steady is not None:
        d["steady_state"] = {"service_one_s": steady.service_one, "utilisation": steady.utilisation,
                             "max_rate_one": steady.max_rate_one, "batch": steady.batch,
                             "max_rate_batch": steady.max_rate_batch, "md1_wait_s": steady.md1_wait,
                             "little_l": steady.little_l}
    if energy is not None:
        d["energy"] = {"joules_per_token": energy.joules_per_token,
                       "tokens_per_second_per_watt": energy.tokens_per_second_per_watt,
                       "dollars_per_million_tokens": energy.dollars_per_million_tokens}
    return _plain(d)
