"""The speed benchmarks: `python -m benchmarks [--repeat N] [--quick]`.

Prints one table: case, median CPU seconds (user + system, of the whole process where the case
is a process; CPU rather than wall time because the machine may be shared), the ratio to the import
floor (`python -c "import sympy, lark, networkx"`, measured in the same run), and the goal. Then
it checks that the fast paths changed no answer (`benchmarks.checks`). Cases:

- start-up: `costlang run` on the chapter's examples;
- the unrolled transformer (`benchmarks/transformer.py`), L = 1, 8, 32, 80, sizes bound and free;
- a 12-scenario `compare` of the 8-layer model against one run of it;
- a training step of the zoo's Llama-3-70B (80 layers, one `repeat`) against its forward step;
- a 10⁶-point sweep (1000 × 1000), after start-up, in process; and written as CSV, whole processes;
- every zoo example's `costlang run` against the import floor, and 1 and 8 numeric what-ifs
  (`compare --scenario`) of Llama-3-70B decode against one run of it;
- an `explore` search, configurations per second, serially and on a local Dask cluster of 2 workers
  (wall-clock seconds: the point of the workers is the wall clock; the cluster's start is left out);
- `costlang simulate`'s simulation of 100,000 requests on Llama-3-8B (one H100), in process;
- llm-analysis and GenZ (optional: `pip install llm-analysis genz-llm`), decode latency of Llama-2-70B for batch
  1..100, per configuration, against costlang's sweep of the same question.
"""
from __future__ import annotations

import argparse
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .transformer import transformer

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


#: children run as an installed wheel does: with its bytecode compiled (pip compiles it on install),
#: whatever PYTHONDONTWRITEBYTECODE says here; `_warm_up` compiles it once before any measurement
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
#: and with the command line's cache off: each process row measures the analysis, never an answer
#: read back; the rows of a sweep asked again (`_asked_again`) give their children a cache folder
ENV["COSTLANG_CACHE"] = "off"


def _warm_up() -> None:
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "costlang")], env=ENV,
                   stdout=subprocess.DEVNULL, check=True)


def _cpu_of(cmd: list[str], cwd=None, env=None) -> float:
    """CPU seconds (user + system) of one child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(cmd, cwd=cwd, env=env or ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"benchmark command failed: {' '.join(cmd)}\n{done.stderr}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


#: a `costlang run` that also reports, on its last line of stderr, the CPU seconds spent after
#: start-up (after the interpreter started and `costlang.cli` was imported): the part of a run
#: that grows with the file, without the import floor's run-to-run noise. It runs as the
#: `costlang` program does (`cli.command`): garbage collected less often, then `main`
_TIMED_RUN = ("import os, sys, time\n"
              "import costlang.cli as cli\n"
              "start = time.process_time()\n"
              "cli._collect_less()\n"
              "code = cli.main(sys.argv[1:])\n"
              "sys.stdout.flush()\n"
              "print(f'beyond start-up: {time.process_time() - start!r}', file=sys.stderr, flush=True)\n"
              "os._exit(code or 0)\n")


#: the same run, counting the Python function calls made after start-up (cProfile): a count does
#: not drift with the machine's speed, so it shows whether the work itself is linear in L
_COUNTED_RUN = ("import cProfile, io, os, pstats, sys\n"
                "import costlang.cli as cli\n"
                "profile = cProfile.Profile()\n"
                "sys.stdout = io.StringIO()\n"
                "profile.enable()\n"
                "cli.main(sys.argv[1:])\n"
                "profile.disable()\n"
                "print(f'calls: {pstats.Stats(profile).total_calls}', file=sys.stderr, flush=True)\n"
                "os._exit(0)\n")


def _calls_of(args: list[str]) -> int:
    # one hash seed for every counted run: sympy's paths follow the order of its sets, which
    # follows the seed, and moved a count by about 30,000 calls (1.5 % of a layer's) run to run
    done = subprocess.run([sys.executable, "-c", _COUNTED_RUN, *args, "--time-budget", "1000"],
                          env={**ENV, "PYTHONHASHSEED": "0"},
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if "calls: " not in done.stderr:
        raise SystemExit(f"benchmark command failed: costlang {' '.join(args)}\n{done.stderr}")
    return int(done.stderr.rsplit("calls: ", 1)[1].split()[0])


def _cpu_and_work(args: list[str]) -> tuple[float, float]:
    """(CPU seconds of the whole process, CPU seconds beyond its start-up) of one `costlang` run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    cmd = [sys.executable, "-c", _TIMED_RUN, *args, "--time-budget", "1000"]
    done = subprocess.run(cmd, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0 or "beyond start-up: " not in done.stderr:
        raise SystemExit(f"benchmark command failed: costlang {' '.join(args)}\n{done.stderr}")
    work = float(done.stderr.rsplit("beyond start-up: ", 1)[1].split()[0])
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), work


def _median(fn, repeat: int) -> float:
    return statistics.median(fn() for _ in range(repeat))


def _costlang(*args: str) -> list[str]:
    return [sys.executable, "-m", "costlang", *args, "--time-budget", "1000"]


class Table:
    def __init__(self, floor: float):
        self.floor, self.rows = floor, []

    def add(self, case: str, seconds: float, goal: str, ok: bool | None = None, ratio: float | None = None,
            digits: int = 2):
        ratio = seconds / self.floor if ratio is None else ratio
        self.rows.append((case, f"{seconds:.3f}", f"{ratio:.{digits}f}", goal,
                          "" if ok is None else ("yes" if ok else "NO")))

    def text(self) -> str:
        header = ("case", "median CPU s", "× floor", "goal", "met")
        widths = [max(len(r[i]) for r in [header, *self.rows]) for i in range(5)]
        line = lambda r: "| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |"  # noqa: E731
        return "\n".join([line(header), "|" + "|".join("-" * (w + 2) for w in widths) + "|",
                          *map(line, self.rows)])


#: the import floor: what any process that analyses a file imports
FLOOR = [sys.executable, "-c", "import sympy, lark, networkx"]
#: the sections of the table, in order (`--only` picks some)
SECTIONS = ("startup", "transformer", "scenarios", "training", "csv", "zoo", "sweep", "explore", "serving", "peer")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=5, help="runs per case (the median is shown)")
    p.add_argument("--quick", action="store_true", help="L = 1, 8, 16, 32 only; 3 runs per case")
    p.add_argument("--instructions", action="store_true",
                   help="also count the machine instructions of the bound transformer at L = 1, 40, 80 "
                        "(valgrind's cachegrind; about 5 minutes; skipped without valgrind)")
    p.add_argument("--only", nargs="+", choices=SECTIONS, metavar="SECTION",
                   help=f"run only these sections (the import floor always): {', '.join(SECTIONS)}")
    args = p.parse_args(argv)
    repeat = 3 if args.quick else args.repeat
    chosen = set(args.only or SECTIONS)
    _warm_up()
    floor = _median(lambda: _cpu_of(FLOOR), repeat)
    t = Table(floor)
    t.add("import floor: python -c 'import sympy, lark, networkx'", floor, "reference")
    if "startup" in chosen:
        for rel in ("roofline/vector_add_fp16.cost", "roofline/gemm_4096.cost", "roofline/llm_decode_70b.cost"):
            s = _median(lambda: _cpu_of(_costlang("run", str(EXAMPLES / rel))), repeat)
            t.add(f"costlang run examples/{rel}", s, "≤ 1.3× floor", s <= 1.3 * floor)
    with tempfile.TemporaryDirectory() as tmp:
        if "transformer" in chosen:
            _transformers(t, Path(tmp), repeat, args.quick)
            if args.instructions and not args.quick:
                _instructions(t, Path(tmp))
        if "scenarios" in chosen:
            _scenarios(t, Path(tmp), repeat)
        if "training" in chosen:
            _training(t, Path(tmp), repeat)
    for name, section in (("csv", lambda: _csv_sweep(t, repeat)), ("zoo", lambda: _zoo(t, floor, repeat)),
                          ("sweep", lambda: _sweep(t)), ("explore", lambda: _explore(t)),
                          ("serving", lambda: _serving(t)), ("peer", lambda: _peer(t))):
        if name in chosen:
            section()
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs, {platform.processor() or platform.platform()}, "
          f"Python {platform.python_version()}; load average {os.getloadavg()[0]:.1f}")
    print(t.text())
    from .checks import run_checks
    failures = run_checks()
    print("outputs unchanged and exact: " + ("yes" if not failures else "NO\n  " + "\n  ".join(failures)))
    return 1 if failures else 0


def _instructions_of(f: Path) -> int:
    """Machine instructions of one whole `costlang run` (valgrind's cachegrind), under one hash seed:
    a count the machine's speed, its caches and its other tenants cannot move."""
    with tempfile.NamedTemporaryFile(suffix=".cg") as out:
        # under valgrind a run is about 50× slower: the time budget is raised to match
        done = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no", f"--cachegrind-out-file={out.name}",
                               sys.executable, "-m", "costlang", "run", str(f), "--time-budget", "100000"],
                              env={**ENV, "PYTHONHASHSEED": "0"}, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
    refs = [line for line in done.stderr.splitlines() if "I   refs:" in line or "I refs:" in line]
    if done.returncode != 0 or not refs:
        raise SystemExit(f"benchmark command failed under valgrind: {f}\n{done.stderr[-2000:]}")
    return int(refs[-1].rsplit(":", 1)[1].replace(",", "").strip())


def _instructions(t: Table, tmp: Path) -> None:
    """Instructions per extra layer at L = 80 against L = 40 (the bound transformer): whether the
    work itself is linear, apart from how fast the machine runs it."""
    if shutil.which("valgrind") is None:
        print("valgrind is not installed: the instruction count is skipped", file=sys.stderr)
        return
    counts = {L: _instructions_of(tmp / f"t{L}.cost") for L in (1, 40, 80)}
    per = lambda L: (counts[L] - counts[1]) / (L - 1)  # noqa: E731
    # linear within 1 %: a count moves by about 0.1 % from run to run (a table that doubles, the
    # allocator); any part of the work quadratic in L doubles its share of a layer from 40 to 80
    t.add("  bound, instructions per extra layer, L=80 against L=40 (×; column 2: instructions/10⁹)",
          per(80) / 1e9, "linear: × ≤ 1.01", per(80) <= 1.01 * per(40), ratio=per(80) / per(40), digits=4)


def _transformers(t: Table, tmp: Path, repeat: int, quick: bool) -> None:
    times, work = {}, {}
    for layers in (1, 8, 16, 32) if quick else (1, 8, 32, 40, 80):
        for free in (False, True):
            if free and layers in (16, 40):
                continue  # the doubling check's halves: sizes bound only
            f = tmp / f"t{layers}{'f' if free else ''}.cost"
            f.write_text(transformer(layers, free), encoding="utf-8")
            runs = [_cpu_and_work(["run", str(f)]) for _ in range(repeat)]
            times[layers, free] = s = statistics.median(r[0] for r in runs)
            work[layers, free] = statistics.median(r[1] for r in runs)
            goal, ok = "", None
            if layers == 80:
                goal, ok = ("≤ 4 s", s <= 4) if free else ("≤ 2 s", s <= 2)
            t.add(f"transformer L={layers} ({34 * layers} ops), {'B, S free' if free else 'bound'}", s,
                  goal or "linear in L", ok)
    top, half, ref = (32, 16, 8) if quick else (80, 40, 32)
    # The goal: doubling L at most doubles the time beyond start-up. Measured in each process after
    # its imports (`_TIMED_RUN`), so the import floor's noise (±0.1 s a run here) is not in it.
    doubling = work[top, False] / work[half, False]
    t.add(f"  bound, beyond start-up: L={top} against L={half} (×)", work[top, False],
          "doubling L ≤ doubles it (× ≤ 2)", doubling <= 2.0, ratio=doubling)
    # Stricter: the time per layer beyond the one-layer run (which holds the fixed costs: the
    # prelude, the first layer's shapes and costs), at L = top against L = ref
    per_layer = lambda L: (work[L, False] - work[1, False]) / (L - 1)  # noqa: E731
    growth = per_layer(top) / per_layer(ref) if per_layer(ref) > 0 else float("nan")
    t.add(f"  bound, per extra layer at L={top} (× = vs L={ref})", per_layer(top),
          "(stricter: × ≤ 1)", None, ratio=growth)
    # The work itself, without the machine's speed: Python function calls per extra layer
    calls = {L: _calls_of(["run", str(tmp / f"t{L}.cost")]) for L in (1, half, top)}
    per = lambda L: (calls[L] - calls[1]) / (L - 1)  # noqa: E731
    t.add(f"  bound, function calls per extra layer, L={top} against L={half} (×; column 2: calls/10⁶)",
          per(top) / 1e6, "linear: × ≤ 1", per(top) <= per(half), ratio=per(top) / per(half))


def _scenarios(t: Table, tmp: Path, repeat: int) -> None:
    base = transformer(8)
    names = [f"b{2 ** i}" for i in range(11)] + ["s8k"]
    scenarios = [f"scenario b{2 ** i} {{ B = {2 ** i} }}" for i in range(11)] + ["scenario s8k { S = 8192 }"]
    one, many = tmp / "one.cost", tmp / "many.cost"
    query = 'query "tokens/s" = B * S / t_kernel()\n'
    one.write_text(base + query, encoding="utf-8")
    many.write_text(base + query + "\n".join(scenarios) + "\ncompare baseline, " + ", ".join(names) + "\n",
                    encoding="utf-8")
    single = _median(lambda: _cpu_of(_costlang("run", str(one))), repeat)
    twelve = _median(lambda: _cpu_of(_costlang("run", str(many))), repeat)
    t.add("transformer L=8, one run (the reference below)", single, "")
    t.add("  same file with 12 scenarios and a compare", twelve, "≤ 1.5× one run", twelve <= 1.5 * single,
          ratio=twelve / single)


#: the zoo's 80-layer Llama-3-70B prefill step (a `repeat(80)`: analysed once), and the same with `train`
_FORWARD_70B = ("import llama3_70b\nuse hardware h100_sxm\ndim B = 1\ndim S = 4096\ninput ids: int32[B, S]\n"
                "y = llama3_70b_prefill(ids, wt = bf16, kt = bf16, at = bf16, it = int32)\n")


def _training(t: Table, tmp: Path, repeat: int) -> None:
    """The training step (forward, the backward derived from it) against the forward alone, both
    measured beyond start-up: the goal is at most twice the forward's analysis time."""
    forward, train = tmp / "forward70b.cost", tmp / "train70b.cost"
    forward.write_text(_FORWARD_70B, encoding="utf-8")
    train.write_text(_FORWARD_70B + "train { }\n", encoding="utf-8")
    fwd = statistics.median(_cpu_and_work(["run", str(forward)])[1] for _ in range(repeat))
    step = statistics.median(_cpu_and_work(["run", str(train)])[1] for _ in range(repeat))
    t.add("Llama-3-70B forward step (80 layers), beyond start-up", fwd, "")
    t.add("  its training step (forward + derived backward), × = vs forward", step, "≤ 2× forward",
          step <= 2 * fwd, ratio=step / fwd)


#: the zoo examples (files that import a model of the zoo), each run once as `costlang run` runs it
ZOO_EXAMPLES = ("llm/baseten_llama2_7b_a10.cost", "llm/llama3_70b_h100_decode.cost", "llm/mixtral_decode_experts.cost",
                "llm/serving_llama3_8b_h100.cost", "serving/llama3_8b_h100.cost", "serving/llama3_8b_pools.cost",
                "serving/speculative_llama2_7b.cost", "parallel/zoo_llama3_70b_3d.cost",
                "parallel/zoo_mixtral_expert.cost", "parallel/llama3_70b_nodes.cost", "training/six_nd.cost",
                "explore/llama3_8b_training.cost", "explore/llama3_70b_serving.cost", "parallel/llama3_70b_pods.cost")
#: eight numeric what-ifs of the Llama-3-70B decode example: other chips, other context lengths
WHAT_IFS = ("a: hardware=h200", "b: T=8192", "c: T=2048", "d: hardware=b200", "e: T=16384", "f: T=1024",
            "g: hardware=a100_80gb", "h: T=512")


def _zoo(t: Table, floor: float, repeat: int) -> None:
    """Interactive at zoo scale: each zoo example's run against the import floor, and what-ifs on
    Llama-3-70B decode against one run of it."""
    for rel in ZOO_EXAMPLES:   # each run beside a floor of its own: a machine whose speed drifts moves both
        runs, floors = [], []
        for _ in range(repeat):
            floors.append(_cpu_of(FLOOR))
            runs.append(_cpu_of(_costlang("run", str(EXAMPLES / rel))))
        s, beside = statistics.median(runs), statistics.median(floors)
        t.add(f"costlang run examples/{rel} (× its floor beside it)", s, "≤ 3× floor", s <= 3 * beside,
              ratio=s / beside)
    decode = str(EXAMPLES / "llm/llama3_70b_h100_decode.cost")
    single = _median(lambda: _cpu_of(_costlang("run", decode)), repeat)
    one = _median(lambda: _cpu_of(_costlang("compare", decode, "--scenario", WHAT_IFS[0])), repeat)
    eight = _median(lambda: _cpu_of(_costlang("compare", decode, *[a for w in WHAT_IFS for a in ("--scenario", w)])),
                    repeat)
    t.add("Llama-3-70B decode, one run (the reference below)", single, "")
    t.add("  compare --scenario 'hardware=h200' (H100 → H200)", one, "≤ 1.5× one run", one <= 1.5 * single,
          ratio=one / single)
    t.add("  compare with 8 scenarios (4 chips, 4 context lengths)", eight, "≤ 2× one run", eight <= 2 * single,
          ratio=eight / single)


def _csv_sweep(t: Table, repeat: int) -> None:
    """A 10⁶-point sweep written as CSV (`sweep ... --over B --over P --show tokens/s --csv`), against the same sweep of one point:
    the difference is the evaluation and the writing of 10⁶ rows."""
    f = str(EXAMPLES / "queries/llm_decode_batch.cost")

    def run(b: str, p: str, form: str = "--csv") -> float:   # to /dev/null: formatted and written all the same
        return _cpu_of(_costlang("sweep", f, "--over", b, "--over", p, "--show", "tokens/s", form))
    big = _median(lambda: run("B=1..1000:lin:1000", "P=1e9..1e11:log:1000"), repeat)
    small = _median(lambda: run("B=1..1:lin:1", "P=1e9..1e9:lin:1"), repeat)
    as_json = _median(lambda: run("B=1..1000:lin:1000", "P=1e9..1e11:log:1000", "--json"), repeat)
    rows = 1000 * 1000
    t.add("sweep B × P = 10⁶ points to CSV (whole process; polars installed: "
          f"{'yes' if _has('polars') else 'no'})", big, "")
    t.add("  beyond the same sweep of 1 point (× = vs 1 s)", big - small, "≤ 1 s", big - small <= 1,
          ratio=big - small)
    t.add(f"  = rows written per CPU second ({rows} rows, × = vs 10⁶)", (big - small) / rows * 1e6,
          "≥ 10⁶ rows/s", rows / (big - small) >= 1e6, ratio=rows / (big - small) / 1e6)
    t.add("  the same sweep as JSON (84 MB), beyond the sweep of 1 point", as_json - small, "", ratio=as_json - small)
    again = _asked_again(["sweep", f, "--over", "B=1..1000:lin:1000", "--over", "P=1e9..1e11:log:1000", "--show",
                          "tokens/s", "--csv"], repeat)
    t.add("  the same sweep asked again (its compiled plan read back), × = first / again", again, "",
          ratio=big / again)


def _asked_again(args: list[str], repeat: int) -> float:
    """CPU seconds of a `costlang` command run again with its cache filled by a first run (one
    fresh cache folder, removed after)."""
    with tempfile.TemporaryDirectory() as folder:
        env = {**ENV, "COSTLANG_CACHE": folder}
        _cpu_of(_costlang(*args), env=env)   # the first run keeps the compiled plan
        return _median(lambda: _cpu_of(_costlang(*args), env=env), repeat)


def _has(module: str) -> bool:
    import importlib.util
    return importlib.util.find_spec(module) is not None


def _in_process_cpu(fn) -> float:
    start = time.process_time()
    fn()
    return time.process_time() - start


def _repeated_cpu(fn, at_least: float = 0.2) -> float:
    """CPU seconds per call of fn, over as many calls as take `at_least` seconds: the process
    clock may advance in steps of milliseconds, longer than one short call."""
    calls, start = 0, time.process_time()
    while True:
        fn()
        calls += 1
        spent = time.process_time() - start
        if spent >= at_least:
            return spent / calls


def _sweep(t: Table) -> None:
    from costlang import load
    from costlang.queries.sweep import parse_axis, sweep
    from costlang.budget import limit
    with limit(1000):
        a = load(EXAMPLES / "queries/llm_decode_batch.cost").analyze()
        axes = [parse_axis(a.program, "B=1..1000:lin:1000"), parse_axis(a.program, "S=1..1000:lin:1000")]
        shows = ["tokens/s", "t_kernel(step)"]
        sweep(a, axes, shows)  # the first sweep also fills the analysis caches
        s = statistics.median(_in_process_cpu(lambda: sweep(a, axes, shows)) for _ in range(3))
    rate = 10 ** 6 / s
    t.add("sweep 1000 × 1000 = 10⁶ points, 2 outputs, after start-up", s, "≤ 0.5 s", s <= 0.5)
    t.add(f"  = {rate / 1e6:.1f} M points/s per output", s / 2, "≥ 10⁷ points/s", rate >= 1e7)


#: 24 structures (8 widths × 3 chips), each swept over 11 batch sizes: 264 configurations
_EXPLORE = ("use hardware h100_sxm\ndim B = 8\ndim d = 512\ninput x: bf16[B, d]\nweight W: bf16[d, d]\n"
            "h = matmul(x, W)\ny = gelu(h)\nquery \"tokens/s\" = B / t_kernel() in tokens/s\n")


def _explore(t: Table) -> None:
    from costlang.budget import limit
    from costlang.queries.explore import Search, parse_choice, parse_constraint, parse_objective, run_search
    search = Search(_EXPLORE, "explore.cost", (),
                    (parse_choice("d=512,1024,2048,4096,8192,12288,16384,32768"),
                     parse_choice("hardware=h100_sxm,h200,b200")), ("B=1..1024:pow2",),
                    (parse_constraint("fits"),), (parse_objective("tokens/s", "max"),), budget=1000)
    with limit(1000):
        start = time.perf_counter()
        serial = run_search(search)
        one = time.perf_counter() - start
    rate = serial.evaluated / one
    t.add(f"explore, {serial.evaluated} configurations ({len(serial.results)} analyses), serial, wall s",
          one, f"{rate:.0f} configurations/s", ratio=1.0)
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        return
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        client.run(lambda: __import__("costlang.queries.explore"))   # the workers' imports are start-up too
        start = time.perf_counter()
        parallel = run_search(search, client)
        two = time.perf_counter() - start
    same = list(parallel.configs()) == list(serial.configs())
    t.add(f"  on 2 Dask workers, wall s (× = speed-up; same answer: {'yes' if same else 'NO'})", two,
          f"{parallel.evaluated / two:.0f} configurations/s; faster than serial", same and two < one,
          ratio=one / two)
def serving_case(n: int = 100_000):
    """The serving benchmark's step model and workload: Llama-3-8B on one H100, Poisson arrivals at
    20 requests/s, lognormal prompts (median 512, σ 0.5) and outputs (median 128, σ 0.5), seed 0."""
    import numpy as np

    from costlang import load
    from costlang.queries import serving as sv
    model = sv.step_model(load(EXAMPLES / "serving/llama3_8b_h100.cost").analyze())
    rng = np.random.default_rng(0)
    work = sv.Workload(sv.poisson_arrivals(20, n, rng), sv.lengths("lognormal:512:0.5", n, rng),
                       sv.lengths("lognormal:128:0.5", n, rng))
    return model, work, sv.Scheduler(max_batch=64, token_budget=8192)


def _serving(t: Table) -> None:
    from costlang.budget import limit
    from costlang.queries import serving as sv
    with limit(1000):
        model, work, scheduler = serving_case()
        s = _in_process_cpu(lambda: sv.simulate(model, work, scheduler))
    t.add("simulate 100,000 requests (continuous batching, Llama-3-8B on H100), after the step model",
          s, "≤ 10 s", s <= 10)


#: the question each peer answers: the decode step of a 70B model (4-bit weights on an A100 80GB,
#: 512 tokens of context) for batch 1..100, one configuration per batch
_LLM_ANALYSIS = ("import logging\nlogging.disable(logging.WARNING)\nfrom llm_analysis.analysis import infer\n"
                 "for b in range(1, 101):\n"
                 "    infer(model_name='upstage_Llama-2-70b-instruct-v2', gpu_name='a100-sxm-80gb',\n"
                 "          dtype_name='w4a16e16', batch_size_per_gpu=b, seq_len=512, num_tokens_to_generate=1,\n"
                 "          log_level='ERROR')\n")
_GENZ = ("import warnings\nwarnings.filterwarnings('ignore')\nfrom GenZ import decode_moddeling\n"
         "for b in range(1, 101):\n"
         "    decode_moddeling(model='meta-llama/Llama-2-70B', batch_size=b, input_tokens=512, output_tokens=1,\n"
         "                     system_name='A100_80GB_GPU', bits='int4')\n")
_PEERS = (("llm-analysis 0.2.2", "llm_analysis", _LLM_ANALYSIS), ("GenZ (genz-llm)", "GenZ", _GENZ))


def _llm_analysis_configs():
    import logging
    logging.disable(logging.WARNING)
    from llm_analysis.analysis import infer
    return lambda: [infer(model_name="upstage_Llama-2-70b-instruct-v2", gpu_name="a100-sxm-80gb",
                          dtype_name="w4a16e16", batch_size_per_gpu=b, seq_len=512, num_tokens_to_generate=1,
                          log_level="ERROR") for b in range(1, 101)]


def _genz_configs():
    import warnings
    warnings.filterwarnings("ignore")
    from GenZ import decode_moddeling
    return lambda: [decode_moddeling(model="meta-llama/Llama-2-70B", batch_size=b, input_tokens=512, output_tokens=1,
                                     system_name="A100_80GB_GPU", bits="int4") for b in range(1, 101)]


#: each peer's 100 configurations in process, after its imports
_IN_PROCESS = {"llm_analysis": _llm_analysis_configs, "GenZ": _genz_configs}


def _peer(t: Table) -> None:
    """Each installed peer against costlang on the same question, per configuration (in process,
    after the imports) and per process (the whole question: start-up, imports, 100 configurations)."""
    from costlang import load
    from costlang.queries.sweep import parse_axis, sweep
    a = load(EXAMPLES / "queries/llm_decode_batch.cost").analyze()
    ours = {}
    for n in (100, 100000):
        axes = [parse_axis(a.program, f"B=1..{n}:lin:{n}")]
        sweep(a, axes, ["t_kernel(step)"])
        ours[n] = statistics.median(_repeated_cpu(lambda: sweep(a, axes, ["t_kernel(step)"]))
                                    for _ in range(3)) / n
    question = ["sweep", str(EXAMPLES / "queries/llm_decode_batch.cost"), "--over", "B=1..100:lin:100", "--show",
                "t_kernel(step)"]
    process = _median(lambda: _cpu_of(_costlang(*question)), 3)
    again = _asked_again(question, 3)
    for name, module, script in _PEERS:
        if not _has(module):
            t.add(f"{name}: not installed, comparison skipped", 0.0, "", None, ratio=0)
            continue
        configs = _IN_PROCESS[module]()   # the peer's imports, outside the timing
        theirs = statistics.median(_in_process_cpu(configs) for _ in range(3)) / 100
        t.add(f"{name}: decode step of a 70B model, per configuration (batch 1..100)", theirs, "peer",
              ratio=theirs / t.floor)
        for n, s in ours.items():
            t.add(f"  costlang sweep, per configuration ({n} batches), × = peer / costlang", s,
                  "≥ 100× faster", theirs / s >= 100, ratio=theirs / s)
        whole = _median(lambda: _cpu_of([sys.executable, "-c", script]), 3)
        t.add(f"{name}: the whole question (batch 1..100) in one process", whole, "peer", ratio=whole / t.floor)
        t.add("  costlang sweep --over B=1..100 in one process, first asked, × = peer / costlang", process,
              "faster (× > 1)", whole > process, ratio=whole / process)
        t.add("  the same, asked again (its compiled plan read back), × = peer / costlang", again,
              "faster (× > 1)", whole > again, ratio=whole / again)


if __name__ == "__main__":
    sys.exit(main())
