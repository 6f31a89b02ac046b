"""The mutation fuzzer: every example and stdlib file, mutated, through every subcommand, in-process.

    python -m tools.fuzz --cases 20000 --jobs 2 --out fuzz-out [--minimize]

Input: the `.cost` files under `examples/` and the stdlib (or the paths given). Each case is a
seed; from it come a source file, one to four mutations (tokens deleted, duplicated or swapped;
numbers replaced with 0, -1, 1/3, 1e400, 2^99999 or 10^400; identifiers swapped; lines shuffled,
repeated or cut; hostile text such as terminal escapes, `\\input{...}`, `<script>`, wide
characters inserted) and one command line (`check`, `run` in text and `--json`, `derive` in
md and latex, en and ko, `plot`, `sweep`, `compare`, and CSV). Output: counts by outcome, and for every
failure its command, its text and (with --minimize) a minimal text that fails the same way.

Cases run in forked worker processes that call `costlang.cli.main` directly (no new interpreter
per case). A case fails when it ends in an internal error (exit 1 or an exception out of `main`),
when it uses more than `--cpu-limit` seconds of CPU time (or waits 20 times that in wall time: a
hang outside the CPU, e.g. on a pipe; time runnable but starved by a busy machine does not count),
when `--json` output holds NaN or Infinity, when output carries a terminal control character, or
when an input error (exit 2) does not start with `file:line:col` (or `--flag:1:1`).
Workers run with a memory limit, so a blow-up is a MemoryError (an internal error) rather than
the machine's out-of-memory killer.
"""
from __future__ import annotations

import argparse
import io
import json
import os
import random
import re
import sys
import time
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional, Sequence

__all__ = ["Case", "Result", "make_case", "run_case", "Campaign", "default_sources", "minimize", "main"]

OK, INPUT, INTERNAL, TIMEOUT, BAD_OUTPUT = "exit 0", "exit 2", "internal error", "timeout", "bad output"
OUTCOMES = (OK, INPUT, INTERNAL, TIMEOUT, BAD_OUTPUT)
MEMORY_LIMIT = 3 * 2 ** 30  # bytes of address space per worker

_TOKEN = re.compile(r"\s+|\w+|[^\w\s]")
_NUMBER = re.compile(r"\d[\d_]*(\.\d*)?([eE][+-]?\d+)?")
_IDENT = re.compile(r"[A-Za-z_]\w*")
_NUMBERS = ["0", "-1", "1", "1/3", "0.5", "1e400", "2^99999", "10^400", "1e-400", "4096", "N - 4",
            "99999999999999999999", "2^64"]
_HOSTILE = ["\x1b]52;c;aGk=\x07", "\x1b[31m", "\x00", "\u202e", "한국어", "\\input{/etc/passwd}",
            "\\write18{ls}", "<script>alert(1)</script>", "$x$", "^", "\\", "%", "&", "#", "_",
            "\"lib.cost\"", "\"" + "a/" * 300 + "x.cost\"", "{", "}", "..", "\t", "\r"]
_IDENTS = ["N", "M", "K", "B", "x", "y", "A", "C", "max", "min", "floor", "ceil", "sqrt", "log",
           "attainable", "fraction_of_peak", "with_fusion", "none", "t_kernel", "intensity", "relu",
           "matmul", "fp16", "int4", "bandwidth", "peak", "launch", "HBM", "capacity", "chapter_gpu"]


@dataclass(frozen=True)
class Case:
    seed: int
    source: str            # the file it was mutated from
    text: str              # the mutated text
    argv: tuple            # the command line, with FILE standing for the mutated file
    mutations: tuple = ()

    def command(self, path: str, out_dir: str) -> list[str]:
        return [a.replace("FILE", path).replace("OUT", out_dir) for a in self.argv]


@dataclass
class Result:
    outcome: str
    status: Optional[int] = None
    detail: str = ""
    cpu: float = 0.0


# --- making cases ------------------------------------------------------------------------------

def default_sources() -> list[Path]:
    """The example and stdlib `.cost` files of a source checkout (the stdlib alone when installed)."""
    from costlang import _resources
    stdlib = _resources.stdlib_files()
    examples = _resources.stdlib_dir().parent / "examples"
    return (sorted(examples.rglob("*.cost")) if examples.is_dir() else []) + stdlib


def _names(text: str, keyword: str) -> list[str]:
    return re.findall(rf"^\s*{keyword}\s+([A-Za-z_]\w*)", text, re.MULTILINE)


def _commands(rng: random.Random, text: str) -> tuple:
    dims = _names(text, "dim") or ["N"]
    d = rng.choice(dims)
    queries = re.findall(r"^\s*query\s+\"([^\"\n]*)\"", text, re.MULTILINE)
    show = rng.choice(queries + ["t_kernel()", "intensity()", "1 / (N - 4)", "attainable()"])
    choices = [
        ("check", "FILE"), ("run", "FILE"), ("run", "--json", "FILE"), ("run", "--compare-fusion", "FILE"),
        ("run", "FILE", "--set", f"{d}={rng.choice(['1', '0', '5', '-3', '1/2', '10^400'])}"),
        ("run", "--json", "--fusion", rng.choice(["none", "elementwise", "epilogue"]), "FILE"),
        ("derive", "FILE"), ("derive", "--lang", "ko", "FILE"), ("derive", "--format", "latex", "FILE"),
        ("derive", "--format", "latex", "--lang", "ko", "--standalone", "FILE"),
        ("derive", "--compare-fusion", "FILE", "-o", "OUT/derived.md"),
        ("sweep", "FILE", "--over", f"{d}=1..{rng.choice(['64:pow2', '10^400', '100:lin:5', '8:log:3'])}"),
        ("sweep", "--json", "FILE", "--over", f"{d}=1..16:pow2", "--show", show),
        ("compare", "FILE", "--scenario", f"x: {d}=2"),
        ("compare", "--json", "FILE", "--scenario", "bw: bandwidth=2*bandwidth()"),
        ("plot", "FILE", "-o", "OUT/plot.svg"),
        ("plot", "FILE", "-o", "OUT/p.png", "--sweep", show, "--over", f"{d}=1..64"),
        ("run", "--csv", "FILE"), ("sweep", "--csv", "FILE", "--over", f"{d}=1,2,3"),
        ("compare", "--csv", "FILE", "--scenario", f"{d}=3"),
    ]
    weights = [6, 8, 6, 2, 3, 2, 4, 3, 3, 2, 1, 2, 2, 2, 1, 1, 1, 1, 1, 1]
    return rng.choices(choices, weights)[0]


def _mutate(rng: random.Random, text: str) -> tuple[str, str]:
    kind = rng.choice(["delete", "duplicate", "swap", "number", "number", "ident", "lines", "repeat",
                       "truncate", "hostile", "hostile"])
    tokens = _TOKEN.findall(text) or [""]
    i = rng.randrange(len(tokens))
    if kind == "delete":
        del tokens[i]
    elif kind == "duplicate":
        tokens.insert(i, tokens[i])
    elif kind == "swap":
        j = rng.randrange(len(tokens))
        tokens[i], tokens[j] = tokens[j], tokens[i]
    elif kind == "number":
        spots = [k for k, t in enumerate(tokens) if _NUMBER.fullmatch(t)]
        tokens[rng.choice(spots) if spots else i] = rng.choice(_NUMBERS)
    elif kind == "ident":
        spots = [k for k, t in enumerate(tokens) if _IDENT.fullmatch(t)]
        pool = [t for t in tokens if _IDENT.fullmatch(t)] + _IDENTS
        tokens[rng.choice(spots) if spots else i] = rng.choice(pool)
    elif kind == "hostile":
        tokens.insert(i, rng.choice(_HOSTILE))
    else:
        lines = text.split("\n")
        j = rng.randrange(len(lines))
        if kind == "lines":
            k = rng.randrange(len(lines))
            lines[j], lines[k] = lines[k], lines[j]
        elif kind == "repeat":
            lines[j:j] = [lines[j]] * rng.randint(1, 40)
        else:
            lines = lines[:j]
        return kind, "\n".join(lines)
    return kind, "".join(tokens)


def make_case(seed: int, sources: Sequence[tuple[str, str]]) -> Case:
    """Case number `seed`: the same seed gives the same case."""
    rng = random.Random(seed)
    name, text = sources[rng.randrange(len(sources))]
    kinds = []
    for _ in range(rng.randint(1, 4)):
        kind, text = _mutate(rng, text)
        kinds.append(kind)
    return Case(seed, name, text, _commands(rng, text), tuple(kinds))


# --- running one case (inside a worker) -----------------------------------------------------------

_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f\u202a-\u202e\u2066-\u2069]")


def run_case(argv: list[str]) -> Result:
    """Run one command line in this process and classify what happened."""
    from costlang.cli import main as cli_main
    out, err = io.StringIO(), io.StringIO()
    try:
        with redirect_stdout(out), redirect_stderr(err):
            status = cli_main(argv)
    except SystemExit as e:  # argparse refusing an argument
        status = e.code if isinstance(e.code, int) else 2
    except BaseException as e:  # noqa: BLE001 - anything out of main is a bug
        return Result(INTERNAL, None, f"{type(e).__name__}: {e}"[:2000])
    text, errors = out.getvalue(), err.getvalue()
    if status == 1 or "internal error" in errors or "Traceback" in errors:
        return Result(INTERNAL, status, errors[-2000:])
    if status not in (0, 2):
        return Result(INTERNAL, status, f"exit status {status}")
    bad = _bad_output(argv, text, errors, status)
    if bad:
        return Result(BAD_OUTPUT, status, bad)
    return Result(OK if status == 0 else INPUT, status)


_POSITIONED = re.compile(r"[^\n]*?:\d+:\d+: |usage: ")  # FILE:line:col (or --flag:1:1), or argparse's usage


def _bad_output(argv: Sequence[str], text: str, errors: str, status: Optional[int] = None) -> str:
    if status == 2 and not _POSITIONED.match(errors):
        return f"an error without file:line:col: {errors[:300]!r}"
    if "--json" in argv and text:
        def refuse(constant):
            raise ValueError(f"JSON holds {constant}")
        try:
            json.loads(text, parse_constant=refuse)
        except ValueError as e:
            return f"invalid JSON: {e}"
    for stream, what in ((text, "output"), (errors, "error output")):
        m = _CONTROL.search(stream.replace("\t", ""))
        if m:
            return f"{what} carries the control character {m.group()!r}"
    return ""


def _worker(conn, workdir: str) -> None:
    import resource
    os.chdir(workdir)
    os.environ.setdefault("MPLBACKEND", "Agg")
    os.environ["COSTLANG_CACHE"] = os.path.join(workdir, "cache")   # the runs' own cache, never the user's
    try:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    except (ValueError, OSError):
        pass
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 1000))
    while True:
        job = conn.recv()
        if job is None:
            return
        text, argv = job
        path = Path(workdir, "case.cost")
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        for stale in Path(workdir, "out").glob("*"):
            stale.unlink()
        started = time.process_time()
        result = run_case(argv)
        result.cpu = time.process_time() - started
        conn.send(result)


def _cpu_seconds(pid: int) -> tuple[Optional[float], bool]:
    """CPU time (user + system) of a process, and whether it is waiting (not running or runnable),
    from /proc; (None, True) where /proc is not there."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK"), fields[0] != "R"
    except (OSError, IndexError, ValueError):
        return None, True


class Campaign:
    """Worker processes that run cases; one whose case runs past the limit is killed and replaced."""

    def __init__(self, workdir: Path, cpu_limit: float = 30.0):
        import multiprocessing
        self._mp = multiprocessing.get_context("fork")
        # absolute: the worker changes into it and then names its files by it
        self.workdir, self.cpu_limit = Path(workdir).resolve(), cpu_limit
        (self.workdir / "out").mkdir(parents=True, exist_ok=True)
        self._proc = None
        self._prepare()

    @staticmethod
    def _prepare() -> None:
        """Import and build everything once, so forked workers start warm."""
        from costlang import cli  # noqa: F401
        from costlang.frontend.parser import parser
        parser()

    def _start(self) -> None:
        self._conn, child = self._mp.Pipe()
        self._proc = self._mp.Process(target=_worker, args=(child, str(self.workdir)), daemon=True)
        self._proc.start()

    def stop(self) -> None:
        if self._proc is not None:
            if self._proc.is_alive():
                self._proc.kill()
            self._proc.join()
            self._proc = None

    def run(self, text: str, argv: Sequence[str]) -> Result:
        if self._proc is None or not self._proc.is_alive():
            self._start()
        self._conn.send((text, list(argv)))
        start_cpu = _cpu_seconds(self._proc.pid)[0] or 0.0
        started = last = time.monotonic()
        waited = 0.0  # wall time spent waiting (blocked on a pipe, say); time spent runnable on a busy
        while not self._conn.poll(0.05):  # machine, starved of CPU by other work, does not count
            cpu, waiting = _cpu_seconds(self._proc.pid)
            now = time.monotonic()
            waited, last, wall = waited + (now - last if waiting else 0.0), now, now - started
            if not self._proc.is_alive():
                self.stop()
                return Result(INTERNAL, None, "the worker died (out of memory, or a crash)")
            if (cpu is not None and cpu - start_cpu > self.cpu_limit) or waited > 20 * self.cpu_limit:
                self.stop()
                return Result(TIMEOUT, None, f"ran past {self.cpu_limit:g} s of CPU time ({wall:.0f} s wall)")
        try:
            return self._conn.recv()
        except EOFError:
            self.stop()
            return Result(INTERNAL, None, "the worker died (out of memory, or a crash)")

    def run_case(self, case: Case) -> Result:
        path = str(self.workdir / "case.cost")
        return self.run(case.text, case.command(path, str(self.workdir / "out")))


# --- minimizing ----------------------------------------------------------------------------------

def _signature(result: Result) -> tuple:
    """What must stay the same while a failure is minimized: outcome and exception type."""
    return (result.outcome, result.detail.split(":")[0] if result.outcome == INTERNAL else "")


def minimize(text: str, fails: Callable[[str], bool], max_tries: int = 400) -> str:
    """A smaller text for which `fails` still holds: lines, then tokens, removed in shrinking chunks."""
    tries = 0
    for split, join in ((lambda t: t.split("\n"), "\n"), (_TOKEN.findall, "")):
        parts = split(text)
        chunk = max(1, len(parts) // 2)
        while chunk >= 1 and tries < max_tries:
            i, changed = 0, False
            while i < len(parts) and tries < max_tries:
                candidate = parts[:i] + parts[i + chunk:]
                tries += 1
                if candidate and fails(join.join(candidate)):
                    parts, changed = candidate, True
                else:
                    i += chunk
            if not changed:
                chunk //= 2
        text = join.join(parts)
    return text


# --- the campaign --------------------------------------------------------------------------------

@dataclass
class Report:
    counts: dict = field(default_factory=lambda: {o: 0 for o in OUTCOMES})
    failures: list = field(default_factory=list)
    cases: int = 0

    def line(self) -> str:
        return f"{self.cases} cases: " + ", ".join(f"{self.counts[o]} {o}" for o in OUTCOMES)


def campaign(cases: Sequence[int], sources: Sequence[tuple[str, str]], workdir: Path,
             cpu_limit: float = 30.0, on_result: Optional[Callable] = None) -> Report:
    report = Report()
    runner = Campaign(workdir, cpu_limit)
    try:
        for seed in cases:
            case = make_case(seed, sources)
            result = runner.run_case(case)
            report.cases += 1
            report.counts[result.outcome] += 1
            if result.outcome not in (OK, INPUT):
                report.failures.append((case, result))
            if on_result:
                on_result(case, result, report)
    finally:
        runner.stop()
    return report


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.fuzz", description=__doc__.split("\n")[0])
    ap.add_argument("paths", nargs="*", help=".cost files to mutate (default: examples and stdlib)")
    ap.add_argument("--cases", type=int, default=1000)
    ap.add_argument("--first", type=int, default=0, help="the first case's seed")
    ap.add_argument("--jobs", type=int, default=1, help="this many campaigns side by side (seeds interleaved)")
    ap.add_argument("--cpu-limit", type=float, default=30.0, help="CPU seconds per case")
    ap.add_argument("--out", default="fuzz-out", help="folder for failures and the running counts")
    ap.add_argument("--minimize", action="store_true", help="shrink each failure's text")
    args = ap.parse_args(argv)
    paths = [Path(p) for p in args.paths] or default_sources()
    sources = [(str(p), p.read_text(encoding="utf-8")) for p in paths]
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    if args.jobs > 1:
        return _parallel(args, out)
    seeds = range(args.first, args.first + args.cases)
    log = (out / "failures.jsonl").open("a", encoding="utf-8")

    def record(case, result, report):
        if result.outcome not in (OK, INPUT):
            text = case.text
            if args.minimize:
                sig = _signature(result)
                shrinker = Campaign(out / "min", args.cpu_limit)
                try:
                    text = minimize(case.text, lambda t: _signature(
                        shrinker.run(t, case.command(str(out / "min" / "case.cost"), str(out / "min" / "out"))))
                        == sig)
                finally:
                    shrinker.stop()
            log.write(json.dumps({"seed": case.seed, "source": case.source, "argv": case.argv,
                                  "mutations": case.mutations, "outcome": result.outcome,
                                  "detail": result.detail, "minimal": text}, ensure_ascii=False) + "\n")
            log.flush()
        if report.cases % 10 == 0 or report.cases == args.cases:  # a campaign stopped early keeps its counts
            (out / "counts.txt").write_text(report.line() + "\n")

    report = campaign(seeds, sources, out / "work", args.cpu_limit, record)
    (out / "counts.txt").write_text(report.line() + "\n")
    print(report.line())
    return 1 if report.failures else 0


def _parallel(args, out: Path) -> int:
    import subprocess
    per = -(-args.cases // args.jobs)
    procs = []
    for j in range(args.jobs):
        cmd = [sys.executable, "-m", "tools.fuzz", *args.paths, "--cases", str(min(per, args.cases - j * per)),
               "--first", str(args.first + j * per), "--cpu-limit", str(args.cpu_limit), "--out", str(out / f"job{j}")]
        if args.minimize:
            cmd.append("--minimize")
        procs.append(subprocess.Popen(cmd, cwd=Path(__file__).resolve().parent.parent))  # `tools` is a folder of the checkout
    return max(p.wait() for p in procs)


if __name__ == "__main__":
    sys.exit(main())
