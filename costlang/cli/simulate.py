"""`costlang simulate FILE`: serving under load. The file's prefill and decode blocks make the step
model; a workload (a Poisson arrival rate with length distributions, or a trace file) runs through
a continuous-batching scheduler in a discrete-event simulation (`queries.serving`), beside the
steady state in closed form.

  costlang simulate FILE --rate 5 --requests 2000 --prompt-len fixed:1024 --output-len fixed:128 \\
      --max-batch 64 --block-size 16 --slo-ttft 1 --slo-tpot 0.05 [--power 700 --price 2] [--json]
"""
from __future__ import annotations

import sys
from fractions import Fraction

from costlang.cli.common import ArgumentError, add_number_options, add_set_option, apply_cli_settings, argument_span

__all__ = ["add_parsers"]


def add_parsers(sub) -> list:
    p = sub.add_parser("simulate", help="serving under load: latency percentiles of a request stream, "
                                        "simulated, beside the steady state in closed form")
    p.add_argument("file", help="the .cost file with the prefill and decode step blocks")
    p.add_argument("--prefill", default="prefill", metavar="NAME", help="the prefill block instance (default prefill)")
    p.add_argument("--decode", default="decode", metavar="NAME", help="the decode block instance (default decode)")
    p.add_argument("--batch-dim", default="B", metavar="DIM", help="the free dim of the decode's batch (default B)")
    p.add_argument("--prompt-dim", default="S", metavar="DIM", help="the free dim of the prompt length (default S)")
    p.add_argument("--context-dim", default="T", metavar="DIM", help="the free dim of the decode's context (default T)")
    p.add_argument("--rate", type=_positive, metavar="REQ/S", help="Poisson arrivals at this rate")
    p.add_argument("--requests", type=_count, default=1000, metavar="N", help="requests to simulate (default 1000)")
    p.add_argument("--prompt-len", default="fixed:512", metavar="SPEC",
                   help="fixed:N, uniform:LO:HI, lognormal:MEDIAN:SIGMA, or sample:TRACE (drawn from a "
                        "trace file's prompt column) (default fixed:512)")
    p.add_argument("--output-len", default="fixed:128", metavar="SPEC", help="as --prompt-len; sample:TRACE draws from its output column (default fixed:128)")
    p.add_argument("--seed", type=_seed, default=0, help="the random seed (default 0)")
    p.add_argument("--trace", metavar="FILE", help="a CSV or JSON-lines trace: arrival (s), prompt, output (tokens)")
    p.add_argument("--max-batch", type=_count, default=256, metavar="N", help="sequences per step (default 256)")
    p.add_argument("--token-budget", type=_count, metavar="N", help="tokens per step (default: no limit)")
    p.add_argument("--chunked-prefill", action="store_true", help="mix prefill chunks into decode steps (Sarathi)")
    p.add_argument("--block-size", type=_count, default=16, metavar="TOKENS", help="KV page size (default 16)")
    p.add_argument("--kv-memory", type=_positive, metavar="BYTES",
                   help="bytes for the KV cache (default: capacity − weights)")
    p.add_argument("--decode-file", metavar="FILE",
                   help="disaggregated: decode on this file's decode instance and hardware (a second pool), "
                        "the prefill on FILE's; each prompt's KV cache crosses the link between them")
    p.add_argument("--link-bandwidth", type=_positive, metavar="B/S",
                   help="the link between the pools, bytes per second (with --decode-file)")
    p.add_argument("--link-latency", type=_nonnegative, default=Fraction(0), metavar="S",
                   help="the link's latency per transfer, seconds (default 0)")
    p.add_argument("--draft", metavar="NAME",
                   help="speculative decoding: the draft's decode instance (one token); with --verify and "
                        "--alpha, prints the TPOT per drafted length k and the best k, and simulates nothing")
    p.add_argument("--verify", metavar="NAME", help="the target's instance over K tokens per sequence")
    p.add_argument("--verify-dim", default="K", metavar="DIM", help="the free dim of the verify's tokens (default K)")
    p.add_argument("--alpha", type=_fraction, action="append", default=[], metavar="A",
                   help="acceptance rate of a drafted token, 0..1 (repeatable)")
    p.add_argument("--context", type=_count, default=1024, metavar="T",
                   help="tokens of context for the speculative figures (default 1024)")
    p.add_argument("--slo-ttft", type=_positive, metavar="S", help="goodput: TTFT at most this many seconds")
    p.add_argument("--slo-tpot", type=_positive, metavar="S", help="goodput: TPOT at most this many seconds")
    p.add_argument("--power", type=_positive, metavar="W", help="power per chip, for the energy figures (default: the hardware's TDP, where stated)")
    p.add_argument("--chips", type=_count, metavar="N",
                   help="chips the deployment holds (default 1; 2 with --decode-file, one per pool)")
    p.add_argument("--price", type=_positive, metavar="$", help="dollars per chip-hour, for the cost figures")
    p.add_argument("--progress", action="store_true", help="a progress bar on stderr")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--hardware", help="analyse on another hardware preset")
    add_set_option(p)
    add_number_options(p)
    p.set_defaults(handler=_simulate, power_source="--power")
    return [p]


def _positive(text: str) -> Fraction:
    import argparse
    try:
        v = Fraction(text)
    except (ValueError, ZeroDivisionError):
        v = Fraction(0)
    if v <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive number, not {text!r}")
    return v


def _nonnegative(text: str) -> Fraction:
    import argparse
    try:
        v = Fraction(text)
    except (ValueError, ZeroDivisionError):
        v = Fraction(-1)
    if v < 0:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, 0 or more, not {text!r}")
    return v


def _fraction(text: str) -> Fraction:
    import argparse
    try:
        v = Fraction(text)
    except (ValueError, ZeroDivisionError):
        v = Fraction(-1)
    if not 0 <= v <= 1:
        raise argparse.ArgumentTypeError(f"expected a number from 0 to 1, not {text!r}")
    return v


def _seed(text: str) -> int:
    import argparse
    if not text.isdigit() or len(text) > 18:
        raise argparse.ArgumentTypeError(f"expected a whole number from 0, not {text!r}")
    return int(text)


def _count(text: str) -> int:
    import argparse
    if not text.isdigit() or int(text) < 1 or len(text) > 9:
        raise argparse.ArgumentTypeError(f"expected a whole number from 1, not {text!r}")
    return int(text)


def _simulate(args) -> str:
    import numpy as np

    from costlang import load
    from costlang.queries import serving as sv
    from costlang.queries.pipeline import analyze
    model = load(args.file)
    analysis = analyze(apply_cli_settings(model, args.set), hardware=args.hardware, answers=False)
    if args.draft:
        return _speculative(args, analysis)
    program = analysis.program
    try:
        placed = {role: program.placements.get(name, (None,))[0] for role, name in
                  (("prefill", args.prefill), ("decode", args.decode))}
        on_pools = bool(program.pools) and any(placed.values()) and not args.decode_file
        if on_pools and placed["prefill"] == placed["decode"]:   # colocated on one pool of replicas
            pool = program.pools[placed["prefill"]]
            analysis = _on(analysis, pool)
            args.pool_label = f"{pool.name}, {pool.count} × {pool.hardware}"
        steps = sv.step_model(analysis, args.prefill, args.decode, args.batch_dim, args.prompt_dim,
                              args.context_dim, args.kv_memory)
        rng = np.random.default_rng(args.seed)
        if args.trace:
            from costlang.frontend.loader import read_text
            from pathlib import Path
            workload = sv.read_trace(read_text(Path(args.trace), display=args.trace), args.trace)
        else:
            if args.rate is None:
                raise ArgumentError("give an arrival rate (--rate REQ/S) or a trace (--trace FILE)",
                                    argument_span("costlang simulate", args.file))
            n = args.requests
            arrivals = sv.poisson_arrivals(float(args.rate), n, rng)
            workload = sv.Workload(arrivals, _lengths(sv, "--prompt-len", args.prompt_len, n, rng),
                                   _lengths(sv, "--output-len", args.output_len, n, rng))
        scheduler = sv.Scheduler(args.max_batch, args.token_budget, args.chunked_prefill, args.block_size)
        progress = _bar(len(workload.arrivals)) if args.progress else None
        pools = None
        replicas = 1
        if on_pools and placed["prefill"] != placed["decode"]:
            pools, steps = _pooled(args, sv, analysis, placed, workload, scheduler)
            sim = pools.combined
            replicas = int(sum(p.count for p in (program.pools.get(placed[r]) for r in placed) if p is not None))
        elif args.decode_file:
            if args.link_bandwidth is None:
                raise ArgumentError("a disaggregated deployment needs the link between its pools: "
                                    "--link-bandwidth BYTES_PER_S", argument_span("--decode-file", args.decode_file))
            second = analyze(apply_cli_settings(load(args.decode_file), args.set), hardware=args.hardware,
                             answers=False)
            decode_steps = sv.step_model(second, args.prefill, args.decode, args.batch_dim, args.prompt_dim,
                                         args.context_dim, args.kv_memory)
            pools = sv.simulate_disaggregated(steps, decode_steps, workload, scheduler, scheduler,
                                              args.link_bandwidth, args.link_latency)
            pools.names = (f"{analysis.hardware.name} ({args.file})", f"{second.hardware.name} ({args.decode_file})")
            pools.link = (args.link_bandwidth, args.link_latency)
            sim = pools.combined
            steps = decode_steps  # the report shows the decode pool's cache and power
            replicas = 2
        else:
            if on_pools:
                replicas = int(program.pools[placed["prefill"]].count)
            sim = sv.simulate_replicas(steps, workload, scheduler, replicas, progress)
        if progress:
            print(file=sys.stderr)
        steady = None
        fixed = pools is None and replicas == 1 and not args.trace and args.prompt_len.startswith("fixed:") and args.output_len.startswith("fixed:")
        if fixed:
            steady = sv.steady_state(steps, int(workload.prompts[0]), int(workload.outputs[0]), args.rate,
                                     args.max_batch, args.block_size)
    except sv.ServingError as e:  # a condition of the whole command: placed at the file
        raise sv.ServingError(e.message, e.span, e.hint) from None
    if args.chips is None:
        args.chips = replicas
    energy = None
    tokens = int(workload.outputs[sim.served].sum())
    if args.power is None and steps.power is not None:
        args.power, args.power_source = steps.power, "the hardware's TDP"
    if args.power is not None and tokens and sim.makespan > 0:
        energy = sv.energy_and_cost(sim.makespan, tokens, args.power, args.chips, args.price)
    from costlang.printers.text.serving import serving_dict, serving_report
    if args.json:
        from costlang.printers.data.json import dumps
        return dumps(serving_dict(args, steps, sim, steady, energy, pools)) + "\n"
    return serving_report(args, steps, sim, steady, energy, pools)


def _on(analysis, pool):
    from costlang.queries.pools import analysis_on
    return analysis_on(analysis, pool.hardware)


def _pooled(args, sv, analysis, placed, workload, scheduler):
    """Prefill and decode on two pools of one file: each instance's step model on its pool's
    hardware, the cache of each pool what its replica's capacity leaves after its instance's
    weights, the KV over the slower of the two networks with the larger latency."""
    from costlang.queries.pipeline import _figure
    program = analysis.program
    pools = {role: program.pools.get(placed[role]) for role in placed}
    models = {}
    for role, name in (("prefill", args.prefill), ("decode", args.decode)):
        pool = pools[role]
        on = analysis if pool is None else _on(analysis, pool)
        memory = args.kv_memory
        if memory is None:
            memory = on.value(on.hardware.capacity - _figure(on, "weight_bytes", name))
            if memory.free_symbols or not memory.is_positive:
                raise sv.ServingError(f"no memory is left for the KV cache on the {role} pool after its weights")
        models[role] = sv.step_model(on, args.prefill, args.decode, args.batch_dim, args.prompt_dim,
                                     args.context_dim, memory)
    networks = [p.link for p in pools.values() if p is not None]
    if args.link_bandwidth is not None:
        bandwidth = args.link_bandwidth
    elif len(networks) == 2 and None not in networks:
        bandwidth = min(networks, key=lambda x: float(x))
    else:
        missing = next(p for p in pools.values() if p is not None and p.link is None) if None in networks else None
        span = missing.span if missing is not None else program.main_span
        raise sv.ServingError("prefill and decode run on two pools, and the KV cache crosses the network between "
                              "them: state each pool's `network = BANDWIDTH` (or give --link-bandwidth)", span)
    latency = max((p.latency for p in pools.values() if p is not None), key=lambda x: float(x))
    if args.link_latency:
        latency = args.link_latency
    count = {role: int(pools[role].count) if pools[role] is not None else 1 for role in pools}
    result = sv.simulate_disaggregated(models["prefill"], models["decode"], workload, scheduler, scheduler,
                                       bandwidth, latency, count["prefill"], count["decode"])
    result.names = tuple(f"{pools[r].name} ({count[r]} × {pools[r].hardware})" if pools[r] is not None
                         else f"{analysis.hardware.name}" for r in ("prefill", "decode"))
    result.link = (bandwidth, latency)
    return result, models["decode"]


def _speculative(args, analysis) -> str:
    """The speculative figures: t_draft and t_verify(K) at the context given, then for each α the
    TPOT of k = 1..16 drafted tokens and the best k (exactly compared)."""
    import sympy

    from costlang.queries import serving as sv
    from costlang.printers.text.serving import speculative_report
    if not args.verify or not args.alpha:
        raise ArgumentError("speculative decoding needs the target's verify instance (--verify NAME) and "
                            "at least one --alpha", argument_span("--draft", args.draft))
    program = analysis.program
    for flag, name in (("--draft", args.draft), ("--verify", args.verify)):
        if name not in program.instances:
            raise ArgumentError(f"'{name}' is not a block instance of the file", argument_span(flag, name))
    for flag, name in (("--context-dim", args.context_dim), ("--verify-dim", args.verify_dim)):
        if name not in program.symbols:
            raise ArgumentError(f"'{name}' is not a dim of the file", argument_span(flag, name))
    T, K = program.symbols[args.context_dim].symbol, program.symbols[args.verify_dim].symbol
    bound = {k: v for k, v in analysis.bindings.items() if k not in (T, K)}
    at = {T: args.context}
    draft = sv.instance_figure(analysis, "t_kernel", args.draft).xreplace(bound).subs(at)
    verify = sv.instance_figure(analysis, "t_kernel", args.verify).xreplace(bound).subs(at)
    if (draft.free_symbols | verify.free_symbols) - {K}:
        raise ArgumentError("the draft and verify times depend on sizes other than the context and the "
                            "verify's tokens: give them values", argument_span("--draft", args.draft))
    plain = verify.subs(K, 1)
    rows = []
    for alpha in args.alpha:
        a = sympy.Rational(alpha.numerator, alpha.denominator)
        tpots = [sv.speculative_tpot(draft, lambda k: verify.subs(K, k + 1), a, k) for k in range(1, 17)]
        k, best = sv.best_draft_length(draft, lambda k: verify.subs(K, k + 1), a)
        rows.append((a, [sv.speculative_tokens(a, k) for k in range(1, 17)], tpots, k, best))
    return speculative_report(args, draft, plain, rows)


def _lengths(sv, flag: str, spec: str, n: int, rng):
    try:
        if spec.startswith("sample:"):   # drawn from a trace file's column, with replacement
            from pathlib import Path
            from costlang.frontend.loader import read_text
            path = spec[len("sample:"):]
            trace = sv.read_trace(read_text(Path(path), display=path), path)
            return sv.sampled_lengths(trace.prompts if flag == "--prompt-len" else trace.outputs, n, rng)
        return sv.lengths(spec, n, rng)
    except sv.ServingError as e:
        raise ArgumentError(e.message, argument_span(flag, spec)) from None


def _bar(total: int):
    step = max(total // 50, 1)
    state = {"last": -1}

    def show(done: int, n: int) -> None:
        if done // step != state["last"]:
            state["last"] = done // step
            filled = 40 * done // max(n, 1)
            print(f"\r[{'#' * filled}{'.' * (40 - filled)}] {done}/{n} requests", end="", file=sys.stderr)
    return show
