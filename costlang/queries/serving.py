"""Serving under load: a step model taken from a file's prefill and decode blocks, its steady state
in closed form, and a discrete-event simulation of continuous batching for latency percentiles.

Input: an analysis of a file with a prefill instance (one sequence of S prompt tokens) and a decode
instance (B sequences, T tokens of context), with B, S and T left free. Output: data (`StepModel`,
`SteadyState`, `Simulation`); the printers make words of them.

The step model. A step's time is the sum of its parts:
  - a prefill chunk of n tokens of a request with c tokens already prefilled costs P(c + n) − P(c),
    where P(S) = t_kernel(prefill) at S prompt tokens; the chunks of one prompt add up to P(S), so
    chunking moves prefill work between steps without changing it;
  - the decode of the b running sequences costs D(b, t̄), D(B, T) = t_kernel(decode), at their mean
    context t̄ (exact where the decode's time is linear in each sequence's context, as attention's
    cache read is); between integer contexts D is interpolated linearly.
The exact expressions are compiled once into numpy (`vectorised.evaluator`, no sympy per request)
and tabulated: P over every prompt length, D over the contexts for each batch size met.

The scheduler: continuous batching, first come first served. A request is admitted when the
running batch has fewer than `max_batch` sequences and the paged KV cache has free blocks for its
prompt and its output (ceil((prompt + output) / block_size) blocks, reserved at admission, so no
request is ever preempted); otherwise it waits in the queue. Without chunked prefill a step is
either the whole prompts of the admitted requests waiting for prefill (as many as the token budget
allows, at least one) or one decode step of the running batch; with chunked prefill (Sarathi) every
step decodes the running batch and fills the rest of the token budget with prefill chunks. A
request's first token comes at the end of the step that finishes its prompt; each later step that
decodes it adds one token.

The clock and the processes are SimPy's: an arrival process releases the requests at their times
and the server process advances by whole segments of steps (every decode step between two events
at once, their times a cumulative sum), so the run costs Python work per event, not per token.
"""
from __future__ import annotations

import dataclasses
import heapq
import math
from fractions import Fraction
from collections import deque
from dataclasses import dataclass, field
from typing import Optional, Sequence

import numpy as np
import sympy

from costlang.errors import CostlangError
from costlang.queries.vectorised import evaluator

__all__ = ["StepModel", "step_model", "instance_figure", "Workload", "Scheduler", "Simulation", "SteadyState", "ServingError", "simulate",
           "steady_state", "lengths", "poisson_arrivals", "read_trace", "speculative_tokens",
           "speculative_tpot", "simulate_disaggregated", "Disaggregated", "best_draft_length", "kv_blocks", "EnergyPrice", "energy_and_cost"]


class ServingError(CostlangError):
    """A serving model or workload that cannot be simulated."""
    kind = "serving"


# --- the step model --------------------------------------------------------------------------------

@dataclass
class StepModel:
    """P(S) and D(B, T) as exact expressions (seconds), the KV bytes per token and the bytes left for
    the KV cache; `prefill_time` and `decode_time` evaluate them compiled."""
    prefill: sympy.Expr
    decode: sympy.Expr
    S: sympy.Symbol
    B: sympy.Symbol
    T: sympy.Symbol
    kv_bytes_per_token: sympy.Expr
    kv_memory: sympy.Expr
    power: Optional[sympy.Expr] = None   # W per chip: the hardware's TDP where it states one
    _p_table: np.ndarray = field(default=None, repr=False)
    _d_rows: dict = field(default_factory=dict, repr=False)
    _t_len: int = field(default=0, repr=False)

    def prefill_time(self, tokens: int) -> float:
        return float(self._prefill_table(tokens)[tokens])

    def _prefill_table(self, largest: int) -> np.ndarray:
        """P(0..largest); P(0) = 0 (no prompt, no prefill)."""
        if self._p_table is None or len(self._p_table) <= largest:
            n = max(largest + 1, 2 * (0 if self._p_table is None else len(self._p_table)), 1024)
            s = np.arange(n, dtype=float)
            with np.errstate(all="ignore"):
                table = np.asarray(_compiled(self.prefill, [self.S])([s]), dtype=float) * np.ones(n)
            table[0] = 0.0
            _finite(table, "prefill", first=1)
            self._p_table = table
        return self._p_table

    def decode_row(self, batch: int, largest: int) -> np.ndarray:
        """D(batch, T) for T = 0..largest (at least)."""
        row = self._d_rows.get(batch)
        if row is None or len(row) <= largest:
            n = max(largest + 2, self._t_len, 4096)
            self._t_len = max(self._t_len, n)
            t = np.arange(n, dtype=float)
            with np.errstate(all="ignore"):
                row = np.asarray(_compiled(self.decode, [self.B, self.T])([np.full(n, float(batch)), t]),
                                 dtype=float) * np.ones(n)
            _finite(row, "decode", first=1)   # a context of 0 tokens never decodes
            self._d_rows[batch] = row
        return row

    def decode_times(self, batch: int, context_sum: int, steps: int) -> np.ndarray:
        """The times of `steps` decode steps of `batch` sequences whose contexts sum to context_sum
        at the first step (each step adds one token to each)."""
        whole, rest = divmod(context_sum, batch)
        row = self.decode_row(batch, whole + steps + 1)
        a = row[whole:whole + steps]
        if rest == 0:
            return a.copy()
        f = rest / batch
        return (1 - f) * a + f * row[whole + 1:whole + steps + 1]

    def decode_time(self, batch: int, context_sum: int) -> float:
        return float(self.decode_times(batch, context_sum, 1)[0])


def _finite(times: np.ndarray, step: str, first: int = 0) -> None:
    """Step times the simulation can add (from index `first` on): finite and not negative."""
    bad = ~np.isfinite(times) | (times < 0)
    bad[:first] = False
    if bad.any():
        i = int(np.argmax(bad))
        raise ServingError(f"the {step} step's time is not a finite number of seconds at {i} tokens "
                           f"({times[i]}): the file's sizes or hardware give no time a simulation can count")


def _exact(x) -> sympy.Expr:
    """A number as an exact sympy number: ints, Fractions and sympy numbers as they are, a float as
    the decimal it prints as (0.6 is 3/5). Never text."""
    if isinstance(x, sympy.Basic):
        return x
    if isinstance(x, bool) or not isinstance(x, (int, float, Fraction, np.integer, np.floating)):
        raise TypeError(f"expected a number, not {x!r}")
    if isinstance(x, Fraction):
        return sympy.Rational(x.numerator, x.denominator)
    if isinstance(x, (int, np.integer)):
        return sympy.Integer(int(x))
    return sympy.Rational(repr(float(x)))


def _compiled(e: sympy.Expr, symbols):
    free = e.free_symbols - set(symbols)
    if free:
        raise ServingError(f"a step time depends on {', '.join(sorted(map(str, free)))}: give "
                           "them values (only the batch, prompt and context sizes are left free)")
    return evaluator(e, symbols)


def kv_blocks(kv_memory: int, kv_bytes_per_token: int, block_size: int) -> int:
    """Whole pages of block_size tokens that fit in kv_memory bytes."""
    return int(sympy.floor(sympy.Rational(kv_memory) / (sympy.Rational(kv_bytes_per_token) * block_size)))


def step_model(analysis, prefill: str = "prefill", decode: str = "decode", batch: str = "B",
               prompt: str = "S", context: str = "T", kv_memory=None) -> StepModel:
    """The step model of an analysed file: P(S) = t_kernel(prefill), D(B, T) = t_kernel(decode),
    the KV bytes per token cache_bytes(decode) / (B·T) and, unless given, the memory left for the
    KV cache capacity() − weight_bytes(); every other dim and param at its value."""
    program = analysis.program
    symbols = {}
    for role, name in (("batch", batch), ("prompt", prompt), ("context", context)):
        if name not in program.symbols:
            raise ServingError(f"the {role} size '{name}' is not a dim of the file: declare it free "
                               f"(`dim {name}`) or name another with --{role}-dim")
        symbols[role] = program.symbols[name].symbol

    def figure(func, target=None):
        return instance_figure(analysis, func, target)

    keep = set(symbols.values())
    bound = {k: v for k, v in analysis.bindings.items() if k not in keep}

    def fixed(e):
        e = e if isinstance(e, sympy.Basic) else sympy.Integer(e)
        return e.xreplace(bound) if bound else e

    for role, name in (("prefill", prefill), ("decode", decode)):
        if name not in program.instances:
            raise ServingError(f"the {role} step '{name}' is not a block instance of the file: name it "
                               f"with --{role}")
    p = fixed(figure("t_kernel", prefill))
    d = fixed(figure("t_kernel", decode))
    B, S, T = symbols["batch"], symbols["prompt"], symbols["context"]
    kv = sympy.simplify(fixed(figure("cache_bytes", decode)) / (B * T))
    if kv.free_symbols or not kv.is_positive:
        raise ServingError(f"the decode step's KV cache is not a fixed number of bytes per token of B·T "
                           f"({kv}): its cache must be [B, T]-shaped")
    if kv_memory is None:
        kv_memory = fixed(figure("capacity")) - fixed(figure("weight_bytes"))
        if kv_memory.free_symbols or not kv_memory.is_positive:
            raise ServingError("no memory is left for the KV cache after the weights")
    return StepModel(p, d, S, B, T, kv, _exact(kv_memory), analysis.hardware.tdp)


def instance_figure(analysis, func: str, target: Optional[str] = None) -> sympy.Expr:
    """`func(target)` as a query of the file would compute it (`t_kernel(prefill)`), its dims and
    params left as symbols."""
    from costlang.errors import Source, Span
    from costlang.ir.expr import Call, Name
    from costlang.queries.evaluate import evaluate_in
    text = f"{func}({target or ''})"
    span = Span(Source("<serving>", text), 1, 1, 1, len(text) + 1)
    args = (Name(target, span),) if target else ()
    return evaluate_in(analysis, Call(func, args, span, span)).expr


# --- the workload ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Workload:
    """Requests: arrival times (s, increasing), prompt and output tokens."""
    arrivals: np.ndarray
    prompts: np.ndarray
    outputs: np.ndarray

    def __post_init__(self):
        if not (len(self.arrivals) == len(self.prompts) == len(self.outputs)):
            raise ServingError("a workload needs one prompt and one output length per arrival")
        if len(self.arrivals) and (np.any(np.diff(self.arrivals) < 0) or self.arrivals[0] < 0):
            raise ServingError("arrival times must start at 0 or later and never decrease")
        if np.any(self.prompts < 1) or np.any(self.outputs < 1):
            raise ServingError("every request needs at least 1 prompt token and 1 output token")
        if len(self.prompts) and int((self.prompts + self.outputs).max()) > MAX_TOKENS:
            raise ServingError(f"a request of more than {MAX_TOKENS:,} tokens (prompt and output) cannot be "
                               "simulated: the step times are tabulated per token")


#: the most tokens (prompt and output) of one request
MAX_TOKENS = 4_000_000
#: the most requests one simulation takes (each costs a few dozen bytes in a handful of arrays)
MAX_REQUESTS = 10_000_000


def poisson_arrivals(rate: float, n: int, rng: np.random.Generator) -> np.ndarray:
    """n arrival times of a Poisson process of `rate` requests/s (exponential gaps), from t = 0."""
    if not rate > 0 or not math.isfinite(rate):
        raise ServingError("the arrival rate must be a positive number")
    if n > MAX_REQUESTS:
        raise ServingError(f"at most {MAX_REQUESTS:,} requests can be simulated, not {n:,}")
    return np.cumsum(rng.exponential(1.0 / rate, n))


def lengths(spec: str, n: int, rng: np.random.Generator) -> np.ndarray:
    """n token counts: `fixed:N`, `uniform:LO:HI` (inclusive), `lognormal:MEDIAN:SIGMA` (rounded,
    at least 1)."""
    kind, _, rest = spec.partition(":")
    parts = rest.split(":") if rest else []
    try:
        if kind == "fixed" and len(parts) == 1:
            return np.full(n, _positive_int(parts[0]), dtype=np.int64)
        if kind == "uniform" and len(parts) == 2:
            lo, hi = _positive_int(parts[0]), _positive_int(parts[1])
            if hi < lo:
                raise ValueError
            return rng.integers(lo, hi + 1, n, dtype=np.int64)
        if kind == "lognormal" and len(parts) == 2:
            median, sigma = float(parts[0]), float(parts[1])
            if not (median > 0 and sigma >= 0 and math.isfinite(median) and math.isfinite(sigma)):
                raise ValueError
            return np.maximum(1, np.rint(rng.lognormal(math.log(median), sigma, n))).astype(np.int64)
    except ValueError:
        pass
    raise ServingError(f"cannot read the length distribution {spec!r}: write fixed:N, uniform:LO:HI or "
                       "lognormal:MEDIAN:SIGMA with positive numbers")


def sampled_lengths(values: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """n token counts drawn uniformly, with replacement, from observed ones (a trace's column)."""
    if not len(values):
        raise ServingError("no lengths to sample from: the file has no requests")
    return rng.choice(np.asarray(values, dtype=np.int64), n, replace=True)


def _positive_int(text: str) -> int:
    v = int(text)
    if v < 1:
        raise ValueError
    return v


def read_trace(text: str, name: str) -> Workload:
    """A trace: CSV with a header naming `arrival`, `prompt` and `output` columns (seconds, tokens,
    tokens), or JSON lines with those keys. Read as data, never evaluated."""
    import csv
    import io
    import json
    rows = []
    stripped = text.lstrip()
    try:
        if stripped.startswith("{"):
            for line in text.splitlines():
                if line.strip():
                    d = json.loads(line)
                    rows.append((float(d["arrival"]), int(d["prompt"]), int(d["output"])))
        else:
            for d in csv.DictReader(io.StringIO(text)):
                rows.append((float(d["arrival"]), int(d["prompt"]), int(d["output"])))
    except (KeyError, ValueError, TypeError, json.JSONDecodeError) as e:
        raise ServingError(f"{name}: cannot read the trace (row {len(rows) + 1}): each row needs arrival "
                           f"(s), prompt and output (tokens) ({type(e).__name__})") from None
    if not rows:
        raise ServingError(f"{name}: the trace has no requests")
    for n, (_, prompt, output) in enumerate(rows, 1):
        if not (1 <= prompt <= MAX_TOKENS and 1 <= output <= MAX_TOKENS):
            raise ServingError(f"{name}: row {n} asks for {prompt} prompt and {output} output tokens: each must be "
                               f"from 1 to {MAX_TOKENS:,}")
    if len(rows) > MAX_REQUESTS:
        raise ServingError(f"{name}: at most {MAX_REQUESTS:,} requests can be simulated, not {len(rows):,}")
    arrivals = np.array([r[0] for r in rows], dtype=float)
    if not np.all(np.isfinite(arrivals)):
        raise ServingError(f"{name}: an arrival time is not a finite number")
    return Workload(arrivals, np.array([r[1] for r in rows], dtype=np.int64),
                    np.array([r[2] for r in rows], dtype=np.int64))


# --- the scheduler and the simulation --------------------------------------------------------------

@dataclass(frozen=True)
class Scheduler:
    max_batch: int = 256
    token_budget: Optional[int] = None   # tokens per step (prefill tokens + one per decoding sequence)
    chunked_prefill: bool = False
    block_size: int = 16
    #: requests arrive with their prompt already in the cache and their first token given (the
    #: decode pool of a disaggregated deployment): they join the decoding batch when admitted
    prefilled: bool = False


@dataclass
class Simulation:
    """Per request: arrival, admission (its first step starts), first token and finish times (s);
    NaN for requests that can never fit (more KV blocks than the cache holds: `rejected`)."""
    arrivals: np.ndarray
    admitted: np.ndarray
    first_token: np.ndarray
    finished: np.ndarray
    prompts: np.ndarray
    outputs: np.ndarray
    kv_blocks: int
    busy: float          # seconds with a step running (summed over the replicas)
    steps: int
    rejected: int
    replicas: int = 1    # copies of the server, each with its own cache (`kv_blocks` is one's)

    @property
    def utilisation(self) -> float:
        """The fraction of the replicas' time with a step running, up to the last finish."""
        return self.busy / (self.replicas * self.makespan) if self.makespan > 0 else 0.0

    @property
    def served(self) -> np.ndarray:
        return ~np.isnan(self.finished)

    @property
    def ttft(self) -> np.ndarray:
        return (self.first_token - self.arrivals)[self.served]

    @property
    def tpot(self) -> np.ndarray:
        """(finish − first token) / (output − 1), for requests of two or more output tokens."""
        m = self.served & (self.outputs > 1)
        return (self.finished - self.first_token)[m] / (self.outputs[m] - 1)

    @property
    def e2e(self) -> np.ndarray:
        return (self.finished - self.arrivals)[self.served]

    @property
    def queue_wait(self) -> np.ndarray:
        return (self.admitted - self.arrivals)[self.served]

    @property
    def makespan(self) -> float:
        return float(np.nanmax(self.finished)) if self.served.any() else 0.0

    def goodput(self, ttft_slo: Optional[float] = None, tpot_slo: Optional[float] = None) -> float:
        """Requests per second that met both SLOs (a missing SLO is met by every request)."""
        ok = self.served.copy()
        if ttft_slo is not None:
            ok &= (self.first_token - self.arrivals) <= ttft_slo
        if tpot_slo is not None:
            with np.errstate(invalid="ignore", divide="ignore"):
                tpot = np.where(self.outputs > 1, (self.finished - self.first_token) / np.maximum(self.outputs - 1, 1), 0.0)
            ok &= tpot <= tpot_slo
        return float(ok.sum()) / self.makespan if self.makespan > 0 else 0.0

    def mean_in_system(self) -> float:
        """The time-average number of requests in the system, integrated over the timeline of
        arrivals (+1) and departures (−1), from 0 to the last departure."""
        m = self.served
        times = np.concatenate([self.arrivals[m], self.finished[m]])
        steps = np.concatenate([np.ones(m.sum()), -np.ones(m.sum())])
        order = np.argsort(times, kind="stable")
        times, steps = times[order], steps[order]
        count = np.cumsum(steps)
        return float(np.sum(count[:-1] * np.diff(times)) / self.makespan) if self.makespan > 0 else 0.0


def percentiles(values: np.ndarray, qs: Sequence[float] = (50, 90, 99)) -> dict:
    return {q: (float(np.percentile(values, q)) if len(values) else float("nan")) for q in qs}


def simulate(model: StepModel, workload: Workload, scheduler: Scheduler = Scheduler(),
             progress=None) -> Simulation:
    """Run the workload through the scheduler on the step model (see the module's docstring)."""
    try:
        import simpy
    except ImportError:  # an optional dependency
        raise ServingError("the serving simulation needs SimPy: pip install \"costlang[simulate]\"") from None

    if scheduler.max_batch < 1 or scheduler.block_size < 1 or (
            scheduler.token_budget is not None and scheduler.token_budget < 1):
        raise ServingError("the maximum batch, the token budget and the block size must be at least 1")
    n = len(workload.arrivals)
    arrivals, prompts, outputs = workload.arrivals, workload.prompts, workload.outputs
    block = scheduler.block_size
    total_blocks = kv_blocks(model.kv_memory, model.kv_bytes_per_token, block)
    need = -(-(prompts + outputs) // block)          # blocks per request, reserved at admission
    admitted = np.full(n, np.nan)
    first = np.full(n, np.nan)
    finished = np.full(n, np.nan)
    model._prefill_table(int(prompts.max()) if n else 1)
    budget = scheduler.token_budget if scheduler.token_budget is not None else 1 << 62

    env = simpy.Environment()
    waiting: deque = deque()      # arrived, not admitted
    prefilling: deque = deque()   # admitted, prompt not finished: [request, tokens done]
    # the running (decoding) sequences: a heap of (decode step at which it finishes, request); a
    # sequence joining at step g with m tokens to go finishes at g + m. Their contexts' sum is kept.
    ends: list = []
    state = {"free": total_blocks, "busy": 0.0, "steps": 0, "rejected": 0, "wake": None, "next": 0,
             "g": 0, "ctx": 0, "done": 0}
    p_table = model._p_table

    def arrive():
        for i in range(n):
            delay = arrivals[i] - env.now
            if delay > 0:
                yield env.timeout(delay)
            state["next"] = i + 1
            if need[i] > total_blocks:
                state["rejected"] += 1
                continue
            waiting.append(i)
            wake = state["wake"]
            if wake is not None and not wake.triggered:
                wake.succeed()

    def admit():
        while waiting and len(ends) + len(prefilling) < scheduler.max_batch \
                and need[waiting[0]] <= state["free"]:
            i = waiting.popleft()
            state["free"] -= int(need[i])
            if scheduler.prefilled:
                admitted[i] = env.now
                join(i)
            else:
                prefilling.append([i, 0])

    def decoded(k: int) -> None:
        """k decode steps of every running sequence have ended now."""
        state["g"] += k
        state["ctx"] += k * len(ends)
        g, now = state["g"], env.now
        while ends and ends[0][0] == g:
            _, i = heapq.heappop(ends)
            finished[i] = now
            state["free"] += int(need[i])
            state["ctx"] -= int(prompts[i] + outputs[i])
            state["done"] += 1

    def first_token(i: int) -> None:
        """Request i has its first token now: it decodes from the next step on (or is done)."""
        first[i] = env.now
        join(i)

    def join(i: int) -> None:
        if outputs[i] <= 1:
            finished[i] = env.now
            state["free"] += int(need[i])
            state["done"] += 1
            return
        heapq.heappush(ends, (state["g"] + int(outputs[i]) - 1, i))
        state["ctx"] += int(prompts[i]) + 1

    def serve():
        while True:
            admit()
            b = len(ends)
            if not prefilling and b == 0:
                if state["next"] >= n and not waiting:
                    return
                state["wake"] = env.event()
                yield state["wake"]
                state["wake"] = None
                continue
            start = env.now
            if prefilling:
                # a step with prefill work: chunks (or whole prompts), plus the decodes when chunked
                decodes = b if scheduler.chunked_prefill else 0
                room = max(budget - decodes, 0)
                t = 0.0
                completed = []
                for entry in prefilling:
                    i, done_tokens = entry
                    left = int(prompts[i]) - done_tokens
                    if scheduler.chunked_prefill:
                        take = min(left, room)
                    else:  # whole prompts, as many as the budget allows, and always the first
                        take = left if (left <= room or entry is prefilling[0]) else 0
                    if take <= 0:
                        break
                    if done_tokens == 0:
                        admitted[i] = start
                    t += p_table[done_tokens + take] - p_table[done_tokens]
                    entry[1] += take
                    room -= take
                    if take == left:
                        completed.append(i)
                if decodes:
                    t += model.decode_time(b, state["ctx"])
                yield env.timeout(t)
                state["busy"] += t
                state["steps"] += 1
                if decodes:
                    decoded(1)
                for _ in completed:
                    prefilling.popleft()
                for i in completed:
                    first_token(i)
                continue
            # decode only: every step until the next event at once
            k = ends[0][0] - state["g"]
            times = model.decode_times(b, state["ctx"], k)
            cum = np.cumsum(times)
            if not waiting and state["next"] < n and b < scheduler.max_batch:
                # cut at the step that ends at or after the next arrival (it may be admitted then)
                j = int(np.searchsorted(cum, arrivals[state["next"]] - start, side="left")) + 1
                k = min(k, j)
            t = float(cum[k - 1])
            yield env.timeout(t)
            state["busy"] += t
            state["steps"] += k
            decoded(k)
            if progress is not None:
                progress(state["done"], n)

    env.process(arrive())
    env.process(serve())
    env.run()
    return Simulation(arrivals, admitted, first, finished, prompts, outputs, total_blocks, state["busy"],
                      state["steps"], state["rejected"])


def simulate_replicas(model: StepModel, workload: Workload, scheduler: Scheduler = Scheduler(),
                      replicas: int = 1, progress=None) -> Simulation:
    """`replicas` copies of the server, each with its own scheduler and cache; the requests are
    dealt round-robin in arrival order (request i to replica i mod replicas), as a load balancer
    without feedback does, so the replicas run independently."""
    if replicas == 1:
        return simulate(model, workload, scheduler, progress)
    n = len(workload.arrivals)
    parts = []
    for r in range(min(replicas, n)):
        idx = np.arange(r, n, replicas)
        parts.append((idx, simulate(model, Workload(workload.arrivals[idx], workload.prompts[idx],
                                                    workload.outputs[idx]), scheduler)))
        if progress is not None:
            progress(int(sum(len(i) for i, _ in parts)), n)
    blocks = kv_blocks(model.kv_memory, model.kv_bytes_per_token, scheduler.block_size)
    return _merged(workload.arrivals, workload, parts, blocks, replicas)


def _merged(arrivals, workload: Workload, parts, blocks: int, replicas: int) -> Simulation:
    """One Simulation of the workload (arriving at `arrivals`) from the replicas' (their requests'
    indices, simulation)."""
    n = len(arrivals)
    arrays = {k: np.full(n, np.nan) for k in ("admitted", "first_token", "finished")}
    for idx, sim in parts:
        for k, a in arrays.items():
            a[idx] = getattr(sim, k)
    return Simulation(arrivals, arrays["admitted"], arrays["first_token"], arrays["finished"],
                      workload.prompts, workload.outputs, blocks, sum(s.busy for _, s in parts),
                      sum(s.steps for _, s in parts), sum(s.rejected for _, s in parts), replicas)


@dataclass
class Disaggregated:
    """Prefill and decode on two pools: the prefill pool's simulation (each request's first token
    at the end of its prefill), the KV transfers over the link, and the decode pool's simulation;
    `combined` has the deployment's per-request times (its `busy` is the decode pool's)."""
    prefill: Simulation
    transfer_done: np.ndarray
    decode: Simulation
    combined: Simulation


def simulate_disaggregated(prefill_model: StepModel, decode_model: StepModel, workload: Workload,
                           prefill_scheduler: Scheduler, decode_scheduler: Scheduler,
                           link_bandwidth, link_latency=0, prefill_replicas: int = 1,
                           decode_replicas: int = 1) -> Disaggregated:
    """The prefill pool runs the prompts (its requests end with their first token); each prompt's
    KV cache, prompt · (KV bytes per token of the decode model) bytes, then crosses the network, in
    the order the prefills end, each latency + bytes / bandwidth (the α–β model of a
    point-to-point send); a transfer waits for its sender's and its receiver's network to be free.
    The decode pool admits it when it arrives and has pages for it, and decodes the remaining
    output − 1 tokens. With replicas, request i prefills on prefill replica i mod P and the k-th
    prefill to end decodes on decode replica k mod D (round-robin); with one of each, the
    transfers queue on one link."""
    ones = np.ones_like(workload.outputs)
    first = simulate_replicas(prefill_model, Workload(workload.arrivals, workload.prompts, ones),
                              dataclasses.replace(prefill_scheduler, prefilled=False), prefill_replicas)
    ready = first.finished
    order = np.argsort(np.where(np.isnan(ready), np.inf, ready), kind="stable")
    per_byte = 1.0 / float(link_bandwidth)
    kv = float(decode_model.kv_bytes_per_token)
    n = len(ready)
    done = np.full(n, np.nan)
    dest = np.full(n, -1)
    sender_free = np.zeros(prefill_replicas)
    receiver_free = np.zeros(decode_replicas)
    for k, i in enumerate(order):
        if np.isnan(ready[i]):
            break
        src, dst = i % prefill_replicas, k % decode_replicas
        start = max(ready[i], sender_free[src], receiver_free[dst])
        with np.errstate(all="ignore"):
            sender_free[src] = receiver_free[dst] = done[i] = \
                start + float(link_latency) + float(workload.prompts[i]) * kv * per_byte
        if not np.isfinite(done[i]):
            raise ServingError(f"a KV transfer of {int(workload.prompts[i]) * kv:,.0f} B over a link of "
                               f"{float(link_bandwidth):g} B/s takes longer than a float can count: give the link a "
                               "bandwidth it can have")
        dest[i] = dst
    parts = []
    for d in range(decode_replicas):
        idx = np.nonzero(dest == d)[0]
        if not len(idx):
            continue
        idx = idx[np.argsort(done[idx], kind="stable")]
        parts.append((idx, simulate(decode_model, Workload(done[idx], workload.prompts[idx], workload.outputs[idx]),
                                    dataclasses.replace(decode_scheduler, prefilled=True))))
    second = _merged(done, workload, parts,
                     kv_blocks(decode_model.kv_memory, decode_model.kv_bytes_per_token, decode_scheduler.block_size),
                     decode_replicas)
    finished = second.finished
    combined = Simulation(workload.arrivals, first.admitted.copy(),
                          np.where(np.isnan(finished), np.nan, first.first_token), finished, workload.prompts,
                          workload.outputs, second.kv_blocks, second.busy, first.steps + second.steps,
                          first.rejected + second.rejected, decode_replicas)
    return Disaggregated(first, done, second, combined)


# --- the steady state in closed form ---------------------------------------------------------------

@dataclass(frozen=True)
class SteadyState:
    """For fixed prompt and output lengths: the service time of one request alone S₁ (exact), the
    utilisation ρ = λ·S₁ one at a time, the largest stable rate one at a time λ₁* = 1/S₁, the batch
    the KV cache allows, and at that batch the largest stable rate λ_B* (solved from
    λ·(P(S) + (O − 1)·D(B, S + O/2)/B) = 1), and the M/D/1 mean wait and Little's L at λ."""
    service_one: sympy.Expr
    rate: sympy.Expr
    utilisation: sympy.Expr
    max_rate_one: sympy.Expr
    batch: int
    max_rate_batch: sympy.Expr
    md1_wait: Optional[sympy.Expr]
    little_l: Optional[sympy.Expr]


def service_time_one(model: StepModel, prompt: int, output: int) -> sympy.Expr:
    """P(prompt) + Σ_{j=1}^{output−1} D(1, prompt + j), exactly."""
    total = model.prefill.subs(model.S, prompt)
    d1 = model.decode.subs(model.B, 1)
    total += sum((d1.subs(model.T, prompt + j) for j in range(1, output)), sympy.Integer(0))
    return total


def steady_state(model: StepModel, prompt: int, output: int, rate, max_batch: int, block_size: int) -> SteadyState:
    lam = sympy.Symbol("lambda", positive=True)
    s1 = service_time_one(model, prompt, output)
    rate = _exact(rate)
    rho = rate * s1
    blocks = kv_blocks(model.kv_memory, model.kv_bytes_per_token, block_size)
    per = -(-(prompt + output) // block_size)
    batch = max(1, min(max_batch, blocks // per))
    work = model.prefill.subs(model.S, prompt) + (output - 1) * model.decode.subs(
        {model.B: batch, model.T: sympy.Rational(2 * prompt + output, 2)}) / batch
    (lam_b,) = sympy.solve(sympy.Eq(lam * work, 1), lam)
    (lam_1,) = sympy.solve(sympy.Eq(lam * s1, 1), lam)
    wait = little = None
    if rho < 1:
        wait = rho * s1 / (2 * (1 - rho))
        little = rate * (wait + s1)
    return SteadyState(s1, rate, rho, lam_1, batch, lam_b, wait, little)


# --- speculative decoding --------------------------------------------------------------------------

def speculative_tokens(alpha, k: int) -> sympy.Expr:
    """Expected tokens per verify step with k drafted tokens accepted each with probability α:
    (1 − α^(k+1)) / (1 − α) (Leviathan et al. 2023, eq. 1), k + 1 at α = 1."""
    alpha = _exact(alpha)
    if alpha == 1:
        return sympy.Integer(k + 1)
    return (1 - alpha ** (k + 1)) / (1 - alpha)


def speculative_tpot(draft_step, verify_step, alpha, k: int) -> sympy.Expr:
    """Time per output token: k draft steps and one verify step of k + 1 tokens, per expected
    accepted tokens. draft_step: one draft decode step's time; verify_step(k): the target's step
    over k + 1 tokens per sequence."""
    return (k * draft_step + verify_step(k)) / speculative_tokens(alpha, k)


def best_draft_length(draft_step, verify_step, alpha, largest: int = 16) -> tuple[int, sympy.Expr]:
    """The k in 1..largest with the least TPOT (compared exactly); ties go to the smaller k."""
    best = None
    for k in range(1, largest + 1):
        t = _exact(speculative_tpot(draft_step, verify_step, alpha, k))
        if best is None or t < best[1]:
            best = (k, t)
    return best


# --- energy and money ------------------------------------------------------------------------------

@dataclass(frozen=True)
class EnergyPrice:
    """Joules per output token, output tokens per second per watt and dollars per million output
    tokens, for `chips` chips drawing `power` W each over `seconds`, idle time included."""
    joules_per_token: sympy.Expr
    tokens_per_second_per_watt: sympy.Expr
    dollars_per_million_tokens: Optional[sympy.Expr]


def energy_and_cost(seconds, tokens, power, chips=1, price_per_chip_hour=None) -> EnergyPrice:
    seconds, tokens, power = (_exact(x) for x in (seconds, tokens, power))
    energy = power * chips * seconds
    dollars = None
    if price_per_chip_hour is not None:
        dollars = _exact(price_per_chip_hour) * chips * seconds / 3600 / tokens * 10 ** 6
    return EnergyPrice(energy / tokens, tokens / seconds / (power * chips), dollars)
