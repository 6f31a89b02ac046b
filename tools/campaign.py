"""The hardening campaign: mutated examples and stdlib files through a random subcommand with random flags.

    python -m tools.campaign --cases 5000 -j 2 [--mode fork|subprocess] [--wall 60] [--memory-mb 2048]
                             [--out campaign-out] [--first 0]

Input: the `.cost` files under `examples/` and the stdlib (the paths given, if any). Each case is a
seed; from it come a main file (a source mutated one to four times by `tools.fuzz`'s mutator: tokens
deleted, duplicated or swapped, numbers made 0, -1, 10^400 or 2^99999, identifiers swapped, lines
shuffled, repeated or cut, hostile text inserted), the source's sibling files (so its quoted
imports resolve) and one command line: any of fourteen subcommands with flags drawn at random, or
`serve`, one request to the playground's HTTP API (hostile bodies, names and paths),
(`--set`, `--over`, `--scenario`, `--show`, `--sweep`, `-o`, `--suffix`, `--hardware`, `--lang`,
`--format`, `--instances`, ...), their values drawn from ordinary and hostile ones.

Each case runs in a child with a wall-clock limit (`--wall`, default 60 s) and an address-space
limit (`--memory-mb`, default 2048): `fork` mode forks a warm child that calls `costlang.cli.main`
(no interpreter start per case); `subprocess` mode runs `python -m costlang` (what a user runs).
`-j N` runs N cases side by side.

Output: counts per class per subcommand (a table; `--json` for a JSON object), and each failure,
one JSON line in `OUT/failures.jsonl` with what reproduces it. The classes:

- answers: exit 0, output free of control characters (and valid JSON, without NaN, for `--json`);
- positioned: exit 2, the error's first line starts with `file:line:col: error:`, `--flag:1:1: error:`
  (or `--scenario NAME:1:1`) or `costlang COMMAND: error:`;
- usage: exit 2 from argparse (`usage: ...`, which names the command);
and the failures: `unpositioned` (exit 2 without a position), `internal` (exit 1, "internal error", a
traceback, any other status), `memory` (a MemoryError or a child killed at the memory limit), `timeout`
(past the wall-clock limit), `escape` (a raw control character in stdout or stderr), `json` (bad JSON).
The exit status is 1 when any case failed.
"""
from __future__ import annotations

import argparse
import io
import json
import os
import random
import re
import shutil
import signal
import sys
import tempfile
import time
from collections import Counter, defaultdict
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

from tools.fuzz import _mutate, default_sources

__all__ = ["Case", "make_case", "classify", "run_cases", "CLASSES", "FAILURES", "main"]

SUBCOMMANDS = ("run", "check", "derive", "plot", "sweep", "compare", "hardware", "validate", "calibrate",
               "ops", "completion", "editor", "explore", "simulate", "serve")
_WEIGHTS = (14, 8, 12, 6, 8, 8, 3, 3, 3, 2, 1, 1, 6, 6, 4)
#: `serve`: one request to the playground's HTTP API (costlang.web.app, through Starlette's test
#: client, in the case's folder): route and variant, the body made from the case's mutated text
_SERVE = (("analyze", "en"), ("analyze", "ko"), ("analyze", "lang"), ("analyze", "name"), ("analyze", "huge"),
          ("analyze", "malformed"), ("analyze", "list"), ("point", "ok"), ("point", "huge_value"),
          ("point", "bad_value"), ("file", "main"), ("file", "parent"), ("file", "absolute"), ("file", "link"),
          ("file", "zoo"), ("file", "zoo_escape"), ("files", ""), ("keywords", ""), ("static", "escape"))
#: trace files each case's folder holds for `simulate --trace` (hostile ones too): name → text
_TRACES = {
    "t_ok.csv": "arrival,prompt,output\n0,100,3\n0,100,3\n0.5,2000,40\n",
    "t_neg.csv": "arrival,prompt,output\n-1,100,3\n",
    "t_nan.csv": "arrival,prompt,output\nnan,100,3\n0,nan,inf\n",
    "t_missing.csv": "arrival,prompt\n0,100\n",
    "t_order.csv": "arrival,prompt,output\n2,100,3\n1,100,3\n",
    "t_huge.csv": "arrival,prompt,output\n0,99999999999999999999,3\n",
    "t_ok.jsonl": '{"arrival": 0, "prompt": 100, "output": 3}\n{"arrival": 1e-3, "prompt": 7, "output": 1}\n',
    "t_bad.jsonl": '{"arrival": 0, "prompt": 100}\n[1, 2]\n{"arrival": "x", "prompt": 1, "output": 1}\n',
    "t_escape.csv": "arrival,prompt,output\n0,\x1b]0;t\x07,3\n",
}
_ONLY: list = []   # `--only`: the subcommands drawn (all, by their weights, when empty)
ANSWER, POSITIONED, USAGE = "answer", "positioned", "usage"
FAILURES = ("unpositioned", "internal", "memory", "timeout", "escape", "json")
CLASSES = (ANSWER, POSITIONED, USAGE) + FAILURES

_HOSTILE_ARGS = ["\x1b]0;title\x07", "\x1b[31mred", "\u202e", "한국어", "[l](javascript:alert(1))", "$x$",
                 "\\input{/etc/passwd}", "", " ", "=", "..", ":", "a" * 300]
_NUMBERS = ["1", "0", "-1", "2", "1/3", "0.5", "1e300", "1e-300", "10^400", "2^64", "65536*65536*65536",
            "1e8", "4096", "-3"]
_DTYPES = ["fp16", "bf16", "fp32", "fp8", "int8", "int4", "fp4", "tf32"]
_HARDWARE = ["h100_sxm", "a100_sxm", "chapter_gpu", "note_gpu", "tpu_v5e", "nope", "chapter_80gb"]


@dataclass(frozen=True)
class Case:
    seed: int
    source: str
    text: str
    argv: tuple               # FILE: the main file; OUT: a folder for written files; OTHER: a sibling
    mutations: tuple = ()

    @property
    def subcommand(self) -> str:
        return self.argv[0] if self.argv else "?"


# --- making cases ------------------------------------------------------------------------------------

def _names(text: str, keyword: str) -> list[str]:
    return re.findall(rf"^\s*{keyword}\s+([A-Za-z_]\w*)", text, re.MULTILINE)


def _symbols(text: str) -> list[str]:
    found = re.findall(r"^\s*(?:dim|param)\s+([A-Za-z_]\w*)", text, re.MULTILINE)
    found += re.findall(r"^\s*(?:dim|param)\s+[^#\n]*?,\s*([A-Za-z_]\w*)", text, re.MULTILINE)
    return found or ["N", "B"]


def _value(rng: random.Random) -> str:
    return rng.choice(_NUMBERS) if rng.random() < 0.9 else rng.choice(_HOSTILE_ARGS)


def _setting(rng: random.Random, symbols: list[str]) -> str:
    kind = rng.random()
    if kind < 0.55:
        return f"{rng.choice(symbols)}={_value(rng)}"
    if kind < 0.7:
        return f"{rng.choice(['weights', 'kv', 'activations', 'cache'])}={rng.choice(_DTYPES)}"
    if kind < 0.8:
        return rng.choice(["bandwidth=2*bandwidth()", "bandwidth=3 TB/s", "hw=" + rng.choice(_HARDWARE),
                           "fusion=none", "fusion=" + rng.choice(["elementwise", "epilogue", "all", "zz"])])
    if kind < 0.9:
        return f"{rng.choice(symbols)}={rng.choice(symbols)}*2"
    return rng.choice(_HOSTILE_ARGS)


def _range(rng: random.Random, symbols: list[str]) -> str:
    s = rng.choice(symbols)
    return rng.choice([
        f"{s}=1..64:pow2", f"{s}=1..1024", f"{s}=1..1e300", f"{s}=1e300..1e400:log:0", f"{s}=1e400..1e6:lin:100000",
        f"{s}=3..3:lin:100000", f"{s}=1,2,3", f"{s}=0..5", f"{s}=2..100000:lin", f"{s}=1..10^400",
        f"{s}=1..8:log:3", f"{s}=5..1", f"{s}=1..2:lin:1000000", f"{s}={_value(rng)}..{_value(rng)}",
        rng.choice(_HOSTILE_ARGS)])


def _show(rng: random.Random, text: str) -> str:
    queries = re.findall(r"^\s*query\s+\"([^\"\n]*)\"", text, re.MULTILINE)
    return rng.choice(queries + ["t_kernel()", "intensity()", "1 / (N - 4)", "attainable()", "flops()",
                                 "tokens/s, int4", rng.choice(_HOSTILE_ARGS)])


def _flags(rng: random.Random, sub: str, text: str) -> list[str]:
    symbols = _symbols(text)
    pick = rng.random
    out: list[str] = []

    def maybe(p, *args):
        if pick() < p:
            out.extend(args)

    if sub in ("run", "derive", "plot", "sweep", "compare"):
        for _ in range(rng.choice([0, 0, 1, 1, 2, 3])):
            if sub != "compare":
                out += ["--set", _setting(rng, symbols)]
    if sub == "run":
        maybe(0.2, rng.choice(["--json", "--csv"]))
        maybe(0.15, "--instances")
        maybe(0.1, "--compare-fusion")
        maybe(0.1, "--fusion", rng.choice(["none", "elementwise", "epilogue"]))
        maybe(0.1, "--units", "binary")
        maybe(0.1, "--exact")
        maybe(0.1, "--hardware", rng.choice(_HARDWARE))
        maybe(0.1, "--train", rng.choice(["optimizer = adamw", "zero = 3", "recompute = full", "recompute = selective",
                                          "optimizer = sgd; micro_batches = 4", "zz = 1", "micro_batches = 0",
                                          "optimizer = adamw; zero = 1; recompute = none"]))
    elif sub == "check":
        maybe(0.2, "--hardware", rng.choice(_HARDWARE))
    elif sub == "derive":
        maybe(0.4, "--format", "latex")
        maybe(0.3, "--lang", "ko")
        maybe(0.2, "--standalone")
        maybe(0.1, "--compare-fusion")
        maybe(0.1, "--steps", rng.choice(["bytes,flops", "verdict", "zz", "", "intensity,times"]))
        maybe(0.1, "--hardware", rng.choice(_HARDWARE))
        if pick() < 0.2:
            out += ["-o", rng.choice(["OUT/d.md", "FILE", "OTHER", "OUT/link/d.md"])]
            maybe(0.5, "--force")
    elif sub == "plot":
        out += ["-o", rng.choice(["OUT/p.svg", "OUT/p.png", "OUT/p.pdf", "OUT/p.txt", "FILE"])]
        if pick() < 0.5:
            out += ["--sweep", _show(rng, text)]
            maybe(0.2, "--against", rng.choice(["istar", _show(rng, text)]))
        maybe(0.5, "--over", _range(rng, symbols))
        maybe(0.1, "--linear")
        maybe(0.1, "--style", "slides")
        maybe(0.1, "--compare-fusion")
        maybe(0.1, "--hardware", rng.choice(_HARDWARE))
    elif sub == "sweep":
        for _ in range(rng.choice([1, 1, 1, 2, 3])):
            out += ["--over", _range(rng, symbols)]
        for _ in range(rng.choice([0, 1, 1, 2])):
            out += ["--show", _show(rng, text)]
        maybe(0.3, rng.choice(["--json", "--csv"]))
    elif sub == "compare":
        for _ in range(rng.choice([0, 1, 1, 2, 3])):
            name = rng.choice(["", "a: ", "big: ", "\x1b[31m: ", "a b: "])
            out += ["--scenario", name + ", ".join(_setting(rng, symbols) for _ in range(rng.randint(1, 2)))]
        maybe(0.3, rng.choice(["--json", "--csv"]))
    elif sub == "calibrate":
        maybe(0.3, "OTHER")
        if pick() < 0.5:
            out += ["-o", rng.choice(["OUT/c.cost", "FILE", "OTHER"])]
            maybe(0.5, "--force")
        maybe(0.3, "--suffix", rng.choice(["_fit", "", "\x1b[31m", "-x", "_2", "a b"]))
    elif sub == "validate":
        maybe(0.3, "OTHER")
    elif sub == "explore":
        for _ in range(rng.choice([0, 1, 1, 2, 3])):
            name = rng.choice(symbols + ["hardware", "weights", "fusion", "recompute", "zz", ""])
            values = rng.choice([[_value(rng)], [_value(rng), _value(rng)], _HARDWARE[:3],
                                 [str(2 ** i) for i in range(rng.choice([3, 120]))], ["", ""],
                                 [rng.choice(_HOSTILE_ARGS)]])
            out += ["--choose", f"{name}={','.join(values)}"]
        for _ in range(rng.choice([0, 1, 1, 2])):
            out += ["--over", _range(rng, symbols)]
        for _ in range(rng.choice([0, 1, 2])):
            out += ["--require", rng.choice(["fits", f"{_show(rng, text)} <= 1 s", "t_kernel() < 0 s",
                                             "footprint() >= capacity()", "flops() <= 1 s", _show(rng, text)])]
        for _ in range(rng.choice([0, 1, 1, 2])):
            out += [rng.choice(["--maximize", "--minimize"]), _show(rng, text)]
        maybe(0.2, rng.choice(["--json", "--csv"]))
        if pick() < 0.1:
            out += ["--plot", rng.choice(["OUT/f.png", "OUT/f.txt", "FILE"])]
        if pick() < 0.1:
            out += ["-o", rng.choice(["OUT/best.cost", "FILE", "OTHER"])]
            maybe(0.5, "--force")
    elif sub == "simulate":
        def v(valid, hostile):   # mostly valid values, so that cases get past the argument parser
            return rng.choice(valid) if pick() < 0.9 else rng.choice(hostile)
        if pick() < 0.6:
            out += ["--rate", v(["5", "40", "1/3", "1000"], ["0", "-1", "nan", "1e308", "1e-300", "abc"])]
            maybe(0.8, "--requests", v(["50", "200", "2000"], ["0", "1e9", "x", "20000"]))
        else:
            out += ["--trace", rng.choice(sorted(_TRACES) + ["nope.csv", "OUT", "FILE"])]
        for flag in ("--prompt-len", "--output-len"):
            maybe(0.3, flag, v(["fixed:100", "uniform:1:500", "lognormal:512:0.5", "fixed:1", "sample:t_ok.csv"],
                               ["fixed:0", "lognormal:-1:2", "uniform:9:1", "sample:t_nan.csv", "sample:nope.csv",
                                "zz", "fixed:4000001"]))
        maybe(0.3, "--max-batch", v(["1", "64", "256"], ["0", "1000000000"]))
        maybe(0.2, "--token-budget", v(["1", "150", "8192"], ["0", "-5"]))
        maybe(0.2, "--chunked-prefill")
        maybe(0.2, "--block-size", v(["1", "16"], ["0", "99999999"]))
        maybe(0.1, "--kv-memory", v(["1", "1e9"], ["0", "1e400"]))
        if pick() < 0.15:
            out += ["--decode-file", rng.choice(["OTHER", "FILE"])]
            maybe(0.8, "--link-bandwidth", v(["50e9", "1e-300"], ["0", "x"]))
            maybe(0.3, "--link-latency", v(["1e-5", "0"], ["-1"]))
        if pick() < 0.1:
            out += ["--draft", rng.choice(["decode", "draft", "zz"]), "--verify", rng.choice(["decode", "verify"]),
                    "--alpha", v(["0", "0.6", "1"], ["2", "-0.1"])]
            maybe(0.3, "--context", v(["1", "1024"], ["0"]))
        maybe(0.2, "--slo-ttft", v(["1", "1e-300"], ["0"]))
        maybe(0.1, "--slo-tpot", v(["0.05"], ["nan"]))
        maybe(0.2, "--power", v(["700", "1e308"], ["0"]))
        maybe(0.2, "--price", v(["2", "1e308"], ["-1"]))
        maybe(0.1, "--chips", v(["1", "8"], ["0"]))
        maybe(0.1, "--seed", v(["0", "7"], ["-1", "99999999999999999999"]))
        maybe(0.3, "--json")
        maybe(0.05, "--progress")
        for _ in range(rng.choice([0, 0, 1])):
            out += ["--set", _setting(rng, symbols)]
    maybe(0.05, "--time-budget", rng.choice(["0.05", "1e308", "0", "-1", "nan"]))
    maybe(0.02, "--debug")
    return out


def _command(rng: random.Random, text: str, sub: str) -> tuple:
    if sub == "hardware":
        argv = ["hardware"] + rng.choice([[], ["--file", "FILE"], ["show", rng.choice(_HARDWARE)],
                                          ["show", rng.choice(_HARDWARE), "--file", "FILE"], ["show"]])
    elif sub == "ops":
        argv = ["ops"] + rng.choice([[], ["FILE"], ["FILE", "--json"], ["--json"]])
    elif sub == "completion":
        argv = ["completion", rng.choice(["bash", "zsh", "fish"])]
    elif sub == "editor":
        argv = ["editor", "vscode", rng.choice(["OUT/ext", "OUT", "FILE"])]
    elif sub == "serve":
        route, variant = rng.choice(_SERVE)
        argv = ["serve", route, variant, "FILE"]
    else:
        argv = [sub, "FILE"] + _flags(rng, sub, text)
    return tuple(argv)


def make_case(seed: int, sources: Sequence[tuple[str, str]]) -> Case:
    """Case number `seed`: the same seed gives the same case."""
    rng = random.Random(seed)
    sub = rng.choices(SUBCOMMANDS, _WEIGHTS)[0] if not _ONLY else rng.choice(_ONLY)
    pool = sources
    if sub == "simulate":   # mostly files with the prefill and decode instances a simulation needs
        serving = [s for s in sources if re.search(r"^\s*decode\s*=", s[1], re.MULTILINE)]
        if serving and rng.random() < 0.8:
            pool = serving
    name, text = pool[rng.randrange(len(pool))]
    kinds = []
    for _ in range(rng.randint(0, 4)):  # an unmutated file with random flags is a case too
        kind, text = _mutate(rng, text)
        kinds.append(kind)
    return Case(seed, name, text, _command(rng, text, sub), tuple(kinds))


# --- classifying what happened ---------------------------------------------------------------------

_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_POSITION = re.compile(r"(?:[^\n]*?:\d+:\d+: |costlang [a-z]+: )error: ")


def classify(status: Optional[int], out: str, err: str, argv: Sequence[str]) -> tuple[str, str]:
    """(class, detail) of one finished command."""
    if status == 1 or "internal error" in err or "Traceback" in err and "--debug" not in argv:
        kind = "memory" if "MemoryError" in err else "internal"
        return kind, err[-1500:]
    # `validate` exits 3 when a measurement beats the model's lower bound: an answer (docs/validation.md)
    if status not in (0, 2) and not (status == 3 and argv and argv[0] == "validate"):
        return "internal", f"exit status {status}: {err[-1000:]}"
    m = _CONTROL.search(out.replace("\t", "").replace("\r", "")) or _CONTROL.search(err.replace("\t", ""))
    if m:
        return "escape", f"a raw {m.group()!r} in the output"
    if status in (0, 3):
        if "--json" in argv and out.strip():
            def refuse(constant):
                raise ValueError(f"JSON holds {constant}")
            try:
                json.loads(out, parse_constant=refuse)
            except ValueError as e:
                return "json", str(e)
        return ANSWER, ""
    if err.startswith("usage: "):
        return USAGE, ""
    if "--debug" in argv:  # the traceback comes first; the message is its last lines
        err = "\n".join(line for line in err.split("\n") if _POSITION.match(line)) or err
    if _POSITION.match(err):
        return POSITIONED, ""
    return "unpositioned", err[:500]


# --- running cases ---------------------------------------------------------------------------------

def _prepare_folder(case: Case, folder: Path) -> list[str]:
    """The case's files in `folder` (the source's siblings, then the mutated main file): its argv."""
    src = Path(case.source)
    if src.parent.is_dir():
        for sibling in src.parent.glob("*.cost"):
            if sibling.is_file():
                shutil.copyfile(sibling, folder / sibling.name)
    main_name = "main_case.cost"
    (folder / main_name).write_text(case.text, encoding="utf-8", errors="surrogatepass")
    others = sorted(p.name for p in folder.glob("*.cost") if p.name != main_name)
    other = others[case.seed % len(others)] if others else "other.cost"
    if not (folder / other).exists():
        (folder / other).write_text(case.text, encoding="utf-8", errors="surrogatepass")
    for name, trace in _TRACES.items():
        (folder / name).write_text(trace, encoding="utf-8")
    out = folder / "out"
    out.mkdir()
    (out / "real").mkdir()
    (out / "link").symlink_to(out / "real")
    return [a.replace("FILE", main_name).replace("OTHER", other).replace("OUT", "out") for a in case.argv]


def _serve_request(argv: list[str]) -> int:
    """One request to the playground's API, served from the current folder: 0 when it answers (a
    2xx, or a 4xx whose body is a JSON error: errors are data there), 1 for a server error. The
    body goes to stdout, so that the classifier checks it for raw control characters and JSON."""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # Starlette's note on which httpx it prefers
        from starlette.testclient import TestClient
    from costlang.web.app import make_app
    _, route, variant, main_name = argv
    text = Path(main_name).read_text(encoding="utf-8", errors="replace")
    client = TestClient(make_app("."), raise_server_exceptions=False)
    if route == "analyze":
        body = {"text": text, "lang": {"ko": "ko", "lang": "xx"}.get(variant, "en")}
        if variant == "name":
            body["name"] = "../../\x1b]0;t\x07/etc/passwd"
        if variant == "huge":
            r = client.post("/api/analyze", content=b'{"text": "' + b"x" * 300_000 + b'"}')
        elif variant == "malformed":
            r = client.post("/api/analyze", content=b"{not json")
        elif variant == "list":
            r = client.post("/api/analyze", json=[text])
        else:
            r = client.post("/api/analyze", json=body)
    elif route == "point":
        value = {"ok": 64, "huge_value": 1e300, "bad_value": "x"}[variant]
        r = client.post("/api/point", json={"text": text, "values": {"B": value, "N": value}})
    elif route == "file":
        path = {"main": main_name, "parent": "../main_case.cost", "absolute": "/etc/passwd", "link": "out/link/../../" + main_name,
                "zoo": "zoo/llama3_8b", "zoo_escape": "zoo/../../etc/passwd"}[variant]
        r = client.get("/api/file", params={"path": path})
    elif route == "static":
        r = client.get("/static/../../costlang/web/app.py")
    else:
        r = client.get(f"/api/{route}")
    print(r.text)
    if r.status_code >= 500:
        print(f"internal error: HTTP {r.status_code}", file=sys.stderr)
        return 1
    if r.status_code >= 400 and route != "static":
        json.loads(r.text)   # an API error is a JSON body (a static file's is a plain "not found")
    return 0


def _in_child(argv: list[str], memory: int, out_path: str, err_path: str) -> int:
    """The body of a forked child: limits, then `costlang.cli.main` with its streams in files."""
    import resource
    try:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    except (ValueError, OSError):
        pass
    out, err = io.StringIO(), io.StringIO()
    try:
        from costlang.cli import main as cli_main
        with redirect_stdout(out), redirect_stderr(err):
            status = _serve_request(argv) if argv[0] == "serve" else cli_main(argv)
    except SystemExit as e:  # argparse
        status = e.code if isinstance(e.code, int) else 2
    except MemoryError:
        err.write("\ninternal error: MemoryError (escaped main)\n")
        status = 1
    except BaseException as e:  # noqa: BLE001 - anything out of main is a bug
        err.write(f"\ninternal error: {type(e).__name__} escaped main: {e}\n")
        status = 1
    for path, stream in ((out_path, out), (err_path, err)):
        with open(path, "w", encoding="utf-8", errors="surrogatepass") as f:
            f.write(stream.getvalue())
    return status


class _Running:
    def __init__(self, case: Case, folder: Path, pid: int, proc, started: float):
        self.case, self.folder, self.pid, self.proc, self.started = case, folder, pid, proc, started


def _start(case: Case, mode: str, memory: int, root: Path) -> _Running:
    folder = Path(tempfile.mkdtemp(prefix=f"c{case.seed}-", dir=root))
    argv = _prepare_folder(case, folder)
    out_path, err_path = str(folder / ".stdout"), str(folder / ".stderr")
    if mode == "subprocess":
        import subprocess

        def limit():
            import resource
            resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        proc = subprocess.Popen([sys.executable, "-m", "costlang", *argv], cwd=folder, preexec_fn=limit,
                                stdout=open(out_path, "wb"), stderr=open(err_path, "wb"),
                                env={**os.environ, "MPLBACKEND": "Agg"})
        return _Running(case, folder, proc.pid, proc, time.monotonic())
    pid = os.fork()
    if pid == 0:  # the child
        status = 1
        try:
            os.chdir(folder)
            status = _in_child(argv, memory, out_path, err_path)
        finally:
            os._exit(status if isinstance(status, int) and 0 <= status < 256 else 1)
    return _Running(case, folder, pid, None, time.monotonic())


def _finish(r: _Running, status: Optional[int], timed_out: bool, wall: float) -> dict:
    read = lambda p: (r.folder / p).read_text(encoding="utf-8", errors="replace") if (r.folder / p).exists() else ""
    out, err = read(".stdout"), read(".stderr")
    if timed_out:
        kind, detail = "timeout", f"ran past {wall:g} s of wall-clock time"
    elif status is not None and status < 0:  # killed by a signal
        kind = "memory" if status == -signal.SIGKILL else "internal"
        detail = f"killed by signal {-status}: {err[-500:]}"
    else:
        kind, detail = classify(status, out, err, r.case.argv)
    shutil.rmtree(r.folder, ignore_errors=True)
    return {"seed": r.case.seed, "subcommand": r.case.subcommand, "class": kind, "detail": detail,
            "source": r.case.source, "argv": list(r.case.argv), "mutations": list(r.case.mutations),
            "seconds": round(time.monotonic() - r.started, 2)}


def _warm() -> None:
    """Everything a child would build first, built once in the parent: every costlang module, the
    modules sympy imports on first use, the grammar's parser, the stdlib prelude's resolved state.
    A forked child starts from here; what it builds itself dies with it."""
    import importlib
    import pkgutil

    import costlang
    from costlang import api
    from costlang.frontend.parser import parser
    for info in pkgutil.walk_packages(costlang.__path__, "costlang."):
        if not info.name.endswith("__main__"):
            try:
                importlib.import_module(info.name)
            except ImportError:  # an optional extra that is not installed
                pass
    importlib.import_module("sympy.tensor.tensor")  # imported by sympy's Add on its first sum
    parser()
    with tempfile.TemporaryDirectory() as folder:
        tiny = Path(folder) / "warm.cost"
        tiny.write_text("dim n = 1\n", encoding="utf-8")
        api.load(tiny)  # resolves the prelude once: the resolver keeps its state per process
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot  # noqa: F401
    except ImportError:
        pass
    import gc
    gc.collect()
    gc.freeze()   # the children's collections leave the parent's objects (and their shared pages) alone


def run_cases(seeds: Sequence[int], sources: Sequence[tuple[str, str]], mode: str = "fork", jobs: int = 1,
              wall: float = 60.0, memory_mb: int = 2048, on_result=None) -> list[dict]:
    """Run the cases `seeds`, `jobs` at a time; each result is a dict (seed, subcommand, class, detail...)."""
    os.environ.setdefault("MPLBACKEND", "Agg")
    if mode == "fork":
        _warm()
    root = Path(tempfile.mkdtemp(prefix="costlang-campaign-"))
    os.environ["COSTLANG_CACHE"] = str(root / "cache")   # the cases share a cache of their own, never the user's
    memory = memory_mb * 2 ** 20
    pending = list(seeds)[::-1]
    running: list[_Running] = []
    results = []
    try:
        while pending or running:
            while pending and len(running) < jobs:
                running.append(_start(make_case(pending.pop(), sources), mode, memory, root))
            time.sleep(0.002)
            for r in list(running):
                elapsed = time.monotonic() - r.started
                if r.proc is not None:
                    status = r.proc.poll()
                    done = status is not None
                else:
                    pid, raw = os.waitpid(r.pid, os.WNOHANG)
                    done = pid != 0
                    status = (os.waitstatus_to_exitcode(raw) if done else None)
                timed_out = not done and elapsed > wall
                if timed_out:
                    os.kill(r.pid, signal.SIGKILL)
                    if r.proc is not None:
                        r.proc.wait()
                    else:
                        os.waitpid(r.pid, 0)
                if done or timed_out:
                    running.remove(r)
                    result = _finish(r, status, timed_out, wall)
                    results.append(result)
                    if on_result:
                        on_result(result)
    finally:
        for r in running:
            try:
                os.kill(r.pid, signal.SIGKILL)
            except OSError:
                pass
        shutil.rmtree(root, ignore_errors=True)
    return results


# --- reporting ----------------------------------------------------------------------------------------

def counts(results: Sequence[dict]) -> dict:
    """{subcommand: {class: count}} and a "total" row."""
    table: dict = defaultdict(Counter)
    for r in results:
        table[r["subcommand"]][r["class"]] += 1
        table["total"][r["class"]] += 1
    return {sub: {c: table[sub][c] for c in CLASSES} for sub in [*SUBCOMMANDS, "total"] if sub in table}


def table(results: Sequence[dict]) -> str:
    """The counts as a Markdown table."""
    rows = counts(results)
    head = "| subcommand | cases | " + " | ".join(CLASSES) + " |"
    lines = [head, "|" + "---|" * (len(CLASSES) + 2)]
    for sub, row in rows.items():
        lines.append(f"| {sub} | {sum(row.values())} | " + " | ".join(str(row[c]) for c in CLASSES) + " |")
    return "\n".join(lines)


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.campaign", description=__doc__.split("\n")[0])
    ap.add_argument("paths", nargs="*", help=".cost files to mutate (default: the examples and the stdlib)")
    ap.add_argument("--cases", type=int, default=1000)
    ap.add_argument("--first", type=int, default=0, help="the first case's seed")
    ap.add_argument("-j", "--jobs", type=int, default=1, help="cases run side by side")
    ap.add_argument("--mode", choices=("fork", "subprocess"), default="fork",
                    help="fork: warm children that call costlang.cli.main; subprocess: python -m costlang")
    ap.add_argument("--wall", type=float, default=60.0, help="wall-clock seconds per case")
    ap.add_argument("--memory-mb", type=int, default=2048, help="address space per case")
    ap.add_argument("--out", default="campaign-out", help="folder for failures.jsonl and counts.json")
    ap.add_argument("--json", action="store_true", help="print the counts as JSON instead of a table")
    ap.add_argument("--only", action="append", default=[], choices=SUBCOMMANDS, metavar="SUBCOMMAND",
                    help="draw only this subcommand (repeatable), e.g. a new surface")
    ap.add_argument("--replay", type=int, metavar="SEED",
                    help="write case SEED's files to OUT/case-SEED and print its command line; run nothing")
    args = ap.parse_args(argv)
    _ONLY[:] = args.only
    paths = [Path(p) for p in args.paths] or default_sources()
    sources = [(str(p), p.read_text(encoding="utf-8")) for p in paths]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.replay is not None:
        case = make_case(args.replay, sources)
        folder = out / f"case-{args.replay}"
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir()
        print(f"cd {folder} && costlang " + " ".join(map(repr, _prepare_folder(case, folder))))
        return 0
    failures = (out / "failures.jsonl").open("w", encoding="utf-8")
    seen: list = []

    def record(result):
        seen.append(result)
        if result["class"] in FAILURES:
            failures.write(json.dumps(result, ensure_ascii=True) + "\n")
            failures.flush()
        if len(seen) % 200 == 0:  # a campaign stopped early keeps its counts
            (out / "counts.json").write_text(json.dumps(counts(seen), indent=1))

    started = time.monotonic()
    results = run_cases(range(args.first, args.first + args.cases), sources, args.mode, args.jobs, args.wall,
                        args.memory_mb, record)
    failures.close()
    summary = counts(results)
    (out / "counts.json").write_text(json.dumps(summary, indent=1))
    print(json.dumps(summary, indent=1) if args.json else table(results))
    print(f"{len(results)} cases in {time.monotonic() - started:.0f} s; failures in {out / 'failures.jsonl'}",
          file=sys.stderr)
    return 1 if any(summary["total"][c] for c in FAILURES) else 0


if __name__ == "__main__":
    sys.exit(main())
