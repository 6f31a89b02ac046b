"""Explore: the best configuration of a program over structural and numeric choices, under constraints.

Input: a `Search`: the file's text, the `--set` settings it runs under, structural `choices` (settings
such as `hardware = h100_sxm, h200_sxm` or `n = 1, 2, 4, 8`: each combination is a program of its own,
resolved and analysed once), numeric axes (`B=1..512:pow2`: swept on each structure's analysed
expressions with the vectorised evaluator, never re-analysed), constraints (`fits`, `t_kernel(prefill)
<= 1 s`) and objectives (`maximize tokens/s per chip`). Output: `Exploration`, data only: every
configuration (structure × grid point) with its objectives, feasible or with the first constraint that
rejected it, the best configuration per objective (its value exact), and the Pareto front of the first two
objectives. A structure the file itself rejects (a degree that does not divide the heads) carries the
error's sentence; one whose weights alone exceed the chip's capacity is rejected before it is analysed.

`evaluate_structure` is a function of plain data, so a Dask cluster runs it on its workers (`run_search`
with a `Client`); results are put back in configuration order, so a distributed search answers exactly
what a serial one does.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Callable, Optional, Sequence

import numpy as np
import sympy

from costlang.queries.vectorised import SweepError

from costlang.errors import BudgetError, CostlangError, SemanticError, Source, Span

__all__ = ["Choice", "Constraint", "Objective", "Search", "StructureResult", "Config", "Exploration",
           "parse_choice", "parse_constraint", "parse_objective", "structures", "evaluate_structure",
           "run_search", "explore", "MAX_STRUCTURES", "MAX_CONFIGURATIONS", "FITS"]

#: structural choices are analyses (about a second each for a zoo model): a grid is capped
MAX_STRUCTURES = 10_000
#: configurations in all (structures × numeric grid points) that one search may hold in memory
MAX_CONFIGURATIONS = 2_000_000
#: the constraint `fits`: the footprint per chip within the chip's capacity
FITS = "footprint() <= capacity()"

_OPERATORS = ("<=", ">=", "<", ">")


def arg_span(flag: str, text: str) -> Span:
    return Span(Source(flag, text), 1, 1, 1, max(len(text), 1) + 1)


class ExploreError(SemanticError):
    """A search that cannot be set up (a bad choice, constraint or objective), at its argument."""


@dataclass(frozen=True)
class Choice:
    """One structural choice: a setting name and the values it takes (each a costlang value text)."""
    name: str
    values: tuple[str, ...]
    text: str = ""


@dataclass(frozen=True)
class Constraint:
    text: str            # as the user wrote it (`fits` stays `fits`)
    left: str
    op: str
    right: str


@dataclass(frozen=True)
class Objective:
    text: str
    sense: str           # "max" or "min"


@dataclass(frozen=True)
class Search:
    """Everything a worker needs, as plain data: the file's text and name, not a parsed program."""
    source: str
    name: str
    settings: tuple[str, ...] = ()
    choices: tuple[Choice, ...] = ()
    axes: tuple[str, ...] = ()
    constraints: tuple[Constraint, ...] = ()
    objectives: tuple[Objective, ...] = ()
    fusion: Optional[str] = None
    hardware: Optional[str] = None
    train: Optional[str] = None
    budget: Optional[float] = None     # CPU seconds per symbolic operation (None: the default)


@dataclass(frozen=True)
class Rejection:
    """Why configurations were rejected, as data (printers say it): `kind` is "constraint" (the first
    that does not hold), "weights" (the weights alone exceed one chip's capacity: not analysed), "file"
    (the file refuses these settings; `message` is its error's sentence, `where` its file:line) or
    "error" (a budget ran out, or a worker failed: `message` says which)."""
    kind: str
    constraint: Optional[Constraint] = None
    weights: Optional[sympy.Expr] = None
    capacity: Optional[sympy.Expr] = None
    hardware: str = ""
    message: str = ""
    where: str = ""


@dataclass(frozen=True)
class StructureResult:
    """One structure's answer: `status` is "ok", "pruned" (weights alone do not fit), "rejected" (the
    file refuses these settings: `reason` is its error) or "error" (a budget or a failure on a worker)."""
    index: int
    settings: tuple[tuple[str, str], ...]
    status: str
    reason: Optional[Rejection] = None
    symbols: tuple[str, ...] = ()
    grid: tuple[np.ndarray, ...] = ()          # per numeric symbol, its value at every point
    objectives: tuple[np.ndarray, ...] = ()    # per objective, its value at every point (SI units)
    failed: Optional[np.ndarray] = None        # per point: index of the first violated constraint, or -1
    units: tuple = ()                          # per objective, its `Unit`
    exact_best: tuple = ()                     # per objective: (point index, exact value) of the best feasible


@dataclass(frozen=True)
class Config:
    structure: int
    point: int
    settings: tuple[tuple[str, str], ...]
    values: tuple[tuple[str, float], ...]      # the numeric symbols at this point
    objectives: tuple[float, ...]
    feasible: bool
    reason: Optional[Rejection]                # None when feasible


@dataclass(frozen=True)
class Best:
    objective: Objective
    config: Optional[Config]
    exact: Optional[sympy.Expr]                # the objective's exact value there
    unit: object = None                         # its `Unit`


@dataclass(frozen=True)
class Exploration:
    search: Search
    results: tuple[StructureResult, ...]
    best: tuple[Best, ...]
    front: tuple[Config, ...]                  # non-dominated feasible configurations, first objective's order
    rejected: tuple[tuple[Rejection, int], ...]  # (reason, configurations) in order of first appearance
    evaluated: int                             # configurations evaluated (pruned and rejected structures count theirs)
    workers: int = 1

    def configs(self):
        """Every configuration, in order (structure, then grid point)."""
        for r in self.results:
            yield from _configs(self.search, r)


# --- parsing the command line's parts ---------------------------------------------------------------

def parse_choice(text: str) -> Choice:
    """`NAME=V1,V2,...`: a setting and its values; each value is checked when its structure resolves."""
    name, sep, rest = text.partition("=")
    values = tuple(v.strip() for v in rest.split(",")) if sep else ()
    if not (sep and name.strip().isidentifier() and values and all(values)):
        raise ExploreError(f"expected a choice such as hardware=h100_sxm,h200_sxm, not {text!r}",
                           arg_span("--choose", text), "a setting, '=', and its values separated by commas")
    if len(set(values)) != len(values):
        raise ExploreError(f"a value of {name.strip()} is listed twice", arg_span("--choose", text))
    return Choice(name.strip(), values, text)


def parse_constraint(text: str) -> Constraint:
    """`LEFT <= RIGHT` (or >=, <, >) with costlang expressions or query names on each side; `fits`
    is `footprint() <= capacity()`."""
    if text.strip() == "fits":
        left, op, right = FITS.partition(" <= ")
        return Constraint("fits", left, "<=", right)
    for op in _OPERATORS:
        left, sep, right = text.partition(op)
        if sep and left.strip() and right.strip() and not right.startswith(("=", "<", ">")):
            return Constraint(text.strip(), left.strip(), op, right.strip())
    raise ExploreError(f"expected a constraint such as `t_kernel(prefill) <= 1 s` or `fits`, not {text!r}",
                       arg_span("--require", text), "two quantities with <=, >=, < or > between them")


def parse_objective(text: str, sense: str) -> Objective:
    if not text.strip():
        raise ExploreError("an objective names a query of the file or an expression",
                           arg_span(f"--{sense}imize", text))
    return Objective(text.strip(), sense)


def structures(choices: Sequence[Choice]) -> list[tuple[tuple[str, str], ...]]:
    """Every combination of the choices' values, the first choice varying slowest."""
    count = math.prod(len(c.values) for c in choices)
    if count > MAX_STRUCTURES:
        raise ExploreError(f"a search analyses at most {MAX_STRUCTURES} structures, not "
                           f"{' × '.join(str(len(c.values)) for c in choices)} = {count}",
                           arg_span("--choose", choices[-1].text),
                           "make a numeric choice an --over range (swept without a new analysis), or split "
                           "the search")
    return [tuple(zip((c.name for c in choices), combo)) for combo in
            itertools.product(*(c.values for c in choices))]


# --- one structure (runs on a worker) ---------------------------------------------------------------

def evaluate_structure(search: Search, index: int, settings: tuple[tuple[str, str], ...]) -> StructureResult:
    """Resolve and analyse the file under these settings, then evaluate the objectives and constraints
    on the numeric grid. Never raises for what the file or a budget refuses: that is the result."""
    try:
        return _evaluate(search, index, settings)
    except (ExploreError, SweepError):
        raise                   # the search itself is wrong (a constraint's units): every structure would say so
    except CostlangError as e:
        kind = "error" if isinstance(e, BudgetError) else "file"
        return StructureResult(index, settings, "rejected", Rejection(kind, message=e.message, where=_where(e)))
    except (MemoryError, RecursionError) as e:
        return StructureResult(index, settings, "error", Rejection("error", message=type(e).__name__))


def _where(e: CostlangError) -> str:
    if e.span is None or e.span.source is None:
        return ""
    return f"{e.span.source.name}:{e.span.line}:{e.span.column}"


def _evaluate(search, index, settings) -> StructureResult:
    from costlang.queries.pipeline import build
    from costlang.budget import DEFAULT_SECONDS, limit, running
    from costlang.frontend.edits import apply_settings
    from costlang.frontend.settings import parse_settings
    from costlang.queries.pipeline import analyze

    from costlang.frontend.training import SETTINGS as TRAIN_SETTINGS
    # a training setting (recompute, zero, optimizer ...) is a choice of the `train` statement it joins
    trained = [f"{n} = {v}" for n, v in settings if n in TRAIN_SETTINGS]
    train = search.train
    if trained:
        train = "; ".join(t for t in ((search.train or "").strip(), *trained) if t)
    base = build(search.source, search.name, None, train=train)
    options = [o for t in search.settings for o in parse_settings(t)]
    label = "; ".join(f"{n} = {v}" for n, v in settings)
    options += [o for n, v in settings if n not in TRAIN_SETTINGS for o in parse_settings(f"{n} = {v}", "--choose")]
    with limit(search.budget or DEFAULT_SECONDS), running(f"exploring {label or 'the file'}", None):
        program = apply_settings(base, options) if options else base
        pruned = _weights_exceed(program)
        if pruned is not None:
            return StructureResult(index, settings, "pruned", pruned)
        analysis = analyze(program, fusion=search.fusion, hardware=search.hardware)
        return _on_grid(search, index, settings, analysis)


def _weights_exceed(program) -> Optional[Rejection]:
    """Why the weights alone cannot fit one chip (None when they may): checked before any analysis, on
    the resolved per-chip program (the weights each chip holds after sharding)."""
    from costlang.analysis.composition import weight_bytes

    class _Bare:  # weight_bytes reads only the program
        pass
    bare = _Bare()
    bare.program = program
    name = program.selected_hardware or (program.system.chip if program.system is not None else None)
    hw = program.hardware.get(name) if name else None
    memory = hw.main_memory if hw is not None else None
    if memory is None or memory.capacity is None:
        return None
    bound = {d.symbol: d.value for d in program.symbols.values() if d.value is not None}
    weights = weight_bytes(bare).xreplace(bound)
    if weights.free_symbols or not (weights > memory.capacity) == sympy.true:
        return None
    return Rejection("weights", weights=weights, capacity=memory.capacity, hardware=hw.name)


def _on_grid(search, index, settings, analysis) -> StructureResult:
    from costlang.queries.sweep import parse_axis, grid_values
    from costlang.frontend.expr import unit_words

    axes = [parse_axis(analysis.program, t) for t in search.axes]
    shows = [o.text for o in search.objectives]
    for c in search.constraints:
        shows += [c.left, c.right]
    syms, grid, values, columns = grid_values(analysis, axes, shows)
    exprs = [(v.expr, v.unit) for v in values]
    k = len(search.objectives)
    n = len(grid[0]) if grid else 1
    failed = np.full(n, -1, dtype=np.int64)
    for i, c in enumerate(search.constraints):
        (lv, lu), (rv, ru) = exprs[k + 2 * i], exprs[k + 2 * i + 1]
        if lu != ru:
            raise ExploreError(f"the two sides of {c.text!r} are in different units ({unit_words(lu)} and "
                               f"{unit_words(ru)})", arg_span("--require", c.text))
        ok = _holds(c.op, columns[k + 2 * i], columns[k + 2 * i + 1], lv - rv, syms, grid)
        failed[(failed < 0) & ~ok] = i
    objectives = tuple(np.asarray(columns[j], dtype=float) for j in range(k))
    best = []
    for j, o in enumerate(search.objectives):
        i = _best_index(objectives[j], failed, o.sense)
        exact = None if i is None else _exact_at(exprs[j][0], syms, grid, i)
        best.append(None if exact is None else (i, exact))
    symbols = tuple(a.name for a in axes)
    return StructureResult(index, settings, "ok", "", symbols, tuple(grid), objectives, failed,
                           tuple(exprs[j][1] for j in range(k)), tuple(best))


def _holds(op, left, right, gap, syms, grid) -> np.ndarray:
    """Where LEFT op RIGHT holds; a point where the floats are within rounding of each other is decided
    on the exact difference (so a capacity met exactly fits)."""
    left, right = np.asarray(left, dtype=float), np.asarray(right, dtype=float)
    out = {"<=": left <= right, ">=": left >= right, "<": left < right, ">": left > right}[op]
    close = np.nonzero(np.abs(left - right) <= 1e-9 * np.maximum(np.abs(left), np.abs(right)))[0]
    for i in close.tolist():
        d = _exact_at(gap, syms, grid, i)
        if d is None or not (d.is_real and d.is_finite):   # no value there (0/0 inside a max()):
            out[i] = False                                   # no requirement holds
            continue
        sign = sympy.sign(d)
        out[i] = {"<=": sign <= 0, ">=": sign >= 0, "<": sign < 0, ">": sign > 0}[op] == sympy.true
    return out


def _exact_at(expr, syms, grid, i) -> Optional[sympy.Expr]:
    """The exact expression at grid point i (a symbol at a whole number is that Integer; otherwise the
    float's exact binary value); None where it has no value (a max() of 0/0: sympy refuses to
    compare nan)."""
    subs = {}
    for s, g in zip(syms, grid):
        v = float(g[i])
        subs[s] = sympy.Integer(int(v)) if v == int(v) else sympy.Rational(v)
    if not subs:
        return expr
    try:
        value = sympy.simplify(expr.xreplace(subs))
    except (ValueError, TypeError):
        return None
    return None if value.has(sympy.nan, sympy.zoo) else value


def _best_index(values, failed, sense) -> Optional[int]:
    ok = (failed < 0) & np.isfinite(values)
    if not ok.any():
        return None
    masked = np.where(ok, values, -np.inf if sense == "max" else np.inf)
    return int(np.argmax(masked) if sense == "max" else np.argmin(masked))   # the first of equals


# --- the whole search -------------------------------------------------------------------------------

def run_search(search: Search, client=None, progress: Optional[Callable[[int, int], None]] = None) -> Exploration:
    """Evaluate every structure (serially, or on a Dask `client`'s workers) and gather the answer."""
    combos = structures(search.choices)
    _check_size(search, len(combos))
    if client is None:
        results = []
        for i, s in enumerate(combos):
            results.append(evaluate_structure(search, i, s))
            if progress:
                progress(i + 1, len(combos))
        workers = 1
    else:
        results, workers = _distributed(client, search, combos, progress)
    return explore(search, results, workers)


def _check_size(search, count) -> None:
    """Configurations in all are capped before anything is analysed (a grid of 10^6 structures × points
    would hold its columns in memory)."""
    if not search.axes:
        return
    from costlang.queries.sweep import MAX_GRID
    points = 1
    for text in search.axes:   # an upper bound from the text alone: the count after ':' or a list's length
        spec = text.partition("=")[2]
        _, _, mode = spec.partition(":")
        n = mode.partition(":")[2]
        points *= int(n) if n.isdigit() else (spec.count(",") + 1 if "," in spec else 64)
    if count * min(points, MAX_GRID) > MAX_CONFIGURATIONS:
        raise ExploreError(f"a search holds at most {MAX_CONFIGURATIONS:,} configurations, not about "
                           f"{count:,} structures × {points:,} points", arg_span("--over", search.axes[-1]),
                           "use fewer points per symbol or fewer choices")


def _distributed(client, search, combos, progress):
    """Each structure a Dask task; results kept in configuration order. A task whose worker failed is an
    'error' result naming the failure, never dropped."""
    from dask.distributed import as_completed
    futures = [client.submit(evaluate_structure, search, i, s, pure=False, key=f"costlang-structure-{i}")
               for i, s in enumerate(combos)]
    index = {f.key: i for i, f in enumerate(futures)}
    results: list = [None] * len(futures)
    done = 0
    for future in as_completed(futures):
        i = index[future.key]
        try:
            results[i] = future.result()
        except Exception as e:   # a worker died, or the task raised something unforeseen: say so
            results[i] = StructureResult(i, combos[i], "error",
                                         Rejection("error", message=f"{type(e).__name__}: {e}"))
        done += 1
        if progress:
            progress(done, len(futures))
    workers = len(client.scheduler_info().get("workers", {})) or 1
    return results, workers


def explore(search: Search, results: Sequence[StructureResult], workers: int = 1) -> Exploration:
    """The best per objective, the Pareto front and the rejections, from the structures' results."""
    results = tuple(sorted(results, key=lambda r: r.index))
    configs = [c for r in results for c in _configs(search, r)]
    best = []
    for j, o in enumerate(search.objectives):
        best.append(_global_best(search, results, j, o))
    front = tuple(_front(search, [c for c in configs if c.feasible])) if len(search.objectives) >= 2 else ()
    rejected: dict = {}
    for c in configs:
        if not c.feasible:
            rejected[c.reason] = rejected.get(c.reason, 0) + 1
    return Exploration(search, results, tuple(best), front, tuple(rejected.items()), len(configs), workers)


def _configs(search, r: StructureResult):
    if r.status != "ok":   # not analysed: one configuration stands for the structure
        yield Config(r.index, 0, r.settings, (), tuple(math.nan for _ in search.objectives), False, r.reason)
        return
    n = len(r.failed)
    for p in range(n):
        f = int(r.failed[p])
        yield Config(r.index, p, r.settings, tuple((s, float(g[p])) for s, g in zip(r.symbols, r.grid)),
                     tuple(float(o[p]) for o in r.objectives), f < 0,
                     None if f < 0 else Rejection("constraint", constraint=search.constraints[f]))


def _global_best(search, results, j, o) -> Best:
    best, exact, unit = None, None, None
    for r in results:
        if r.status != "ok" or r.exact_best[j] is None:
            continue
        i, value = r.exact_best[j]
        if best is None or (value > exact if o.sense == "max" else value < exact) == sympy.true:
            best, exact, unit = (r, i), value, r.units[j]
    if best is None:
        return Best(o, None, None)
    r, i = best
    config = next(c for c in _configs(search, r) if c.point == i)
    return Best(o, config, exact, unit)


def _front(search, feasible: list) -> list:
    """Non-dominated configurations over the first two objectives (each maximised or minimised), in the
    first objective's order from best; equal points keep the first."""
    if not feasible:
        return []
    s0 = 1.0 if search.objectives[0].sense == "max" else -1.0
    s1 = 1.0 if search.objectives[1].sense == "max" else -1.0
    order = sorted(range(len(feasible)), key=lambda i: (-s0 * feasible[i].objectives[0],
                                                          -s1 * feasible[i].objectives[1], i))
    out, best1 = [], -math.inf
    for i in order:
        v = s1 * feasible[i].objectives[1]
        if v > best1:
            out.append(feasible[i])
            best1 = v
    return out
