"""Fuzzing: whatever the input, only costlang's own errors escape, each with a position.

Two sources of inputs: programs generated from the grammar itself (`hypothesis.extra.lark`, with
names, numbers and units drawn from small pools so that many programs get past name resolution),
and the example and stdlib files mutated (tokens deleted, duplicated, swapped; random bytes
inserted). Each input goes through loading, analysis and both printers (or through the CLI);
a `CostlangError` must point inside the file it names, anything else fails the test, and so does
a case that runs longer than `CASE_SECONDS`.

The default suite runs a quarter of the CI-sized, derandomized sample; `.ci/run` runs the whole
sample again with COSTLANG_FUZZ=1 (about 740 cases; COSTLANG_FUZZ=2 doubles it). A long, random run:

    COSTLANG_FUZZ=long python -m pytest tests/tools/test_fuzz.py   # 50 times as many cases (about an hour)
    COSTLANG_FUZZ=5 python -m pytest tests/tools/test_fuzz.py      # any other multiple
"""
import functools
import os
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.lark import from_lark

from conftest import example_files, stdlib_files
from costlang import CostlangError, _resources, load, load_string
from costlang.budget import time_budget
from costlang.cli import main
from costlang.errors import BudgetError
from costlang.frontend.parser import build_parser
from costlang.printers.data.json import to_json
from costlang.printers.text.report import report

NAME = "fuzz.cost"
_SCALE = os.environ.get("COSTLANG_FUZZ", "")
#: the default suite runs a quarter of the CI-sized sample; COSTLANG_FUZZ=1 (which .ci/run adds) all of it
SCALE = 50 if _SCALE == "long" else int(_SCALE) if _SCALE.isdigit() and int(_SCALE) > 0 else 0.25
LONG = SCALE > 1
CASE_SECONDS = 20  # far above any legitimate case; a case this slow is a hang


def fuzz_settings(examples: int):
    return settings(max_examples=max(1, int(examples * SCALE)), deadline=None,
                    derandomize=not LONG, database=None if not LONG else settings.default.database,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.filter_too_much,
                                           HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    """A fresh working directory: quoted imports in fuzzed files resolve here, not in the repository."""
    path = tmp_path_factory.mktemp("fuzz")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(path)
        yield path


# --- the property ---------------------------------------------------------------------------

def outcome(run):
    """The `CostlangError` that `run()` raised, or None; fails on a hang."""
    try:
        with time_budget(CASE_SECONDS, "the fuzz case"):
            try:
                run()
            except CostlangError as e:
                return e
    except BudgetError:  # only the budget above can escape the inner `except`
        pytest.fail("a fuzz case did not finish")
    return None


def analyze_and_print(text: str) -> None:
    analysis = load_string(text, NAME).analyze()
    report(analysis)
    to_json(analysis)


def assert_positioned(error: CostlangError) -> None:
    """Every error of the group points at a real line and column of the fuzzed file."""
    for e in getattr(error, "errors", [error]):
        span = e.span
        assert span is not None, e.render()
        assert span.file == NAME, e.render()
        lines = span.source.text.split("\n")
        assert 1 <= span.line <= len(lines), e.render()
        assert 1 <= span.column <= len(lines[span.line - 1]) + 1, e.render()
        assert (span.end_line, span.end_column) >= (span.line, span.column), e.render()
        assert e.render().startswith(f"{NAME}:{span.line}:{span.column}: error: ")


# --- programs from the grammar ----------------------------------------------------------------

_NAMES = ["A", "B", "C", "D", "N", "M", "p", "x", "fp16", "fp32", "int4", "add", "mul", "gelu",
          "matmul", "sum", "softmax", "reshape", "transpose", "custom", "chapter_gpu", "h100_sxm",
          "note_virtual", "flops", "bytes", "t_kernel", "bound", "intensity", "HBM", "bandwidth",
          "capacity", "peak", "launch", "time", "traffic", "axis", "math", "elementwise", "none",
          "epilogue", "sizeof", "numel", "nbytes", "max", "min", "log2", "sqrt", "with_fusion"]
_PRELUDES = ["", "use hardware chapter_gpu\n",
             "use hardware chapter_gpu\ndim N = 4\ninput A: fp16[N, N]\ninput B: fp16[N, N]\n"]


@functools.lru_cache(maxsize=1)
def _grammar_parser():
    """A parser built from the grammar text: hypothesis reads its grammar, which the shipped tables omit."""
    return build_parser(_resources.grammar_file().read_text(encoding="utf-8"))


def _ignored_terminals() -> list[str]:
    """The anonymous terminals of the grammar's `%ignore` lines other than COMMENT (whitespace)."""
    return [name for name in _grammar_parser().lexer_conf.ignore if name != "COMMENT"]


def _spaced(strategy):
    return strategy.map(lambda s: f" {s} ")


def _grammar_programs():
    keywords = {t.name: st.just(f" {t.pattern.value} ") for t in _grammar_parser().terminals
                if t.pattern.type == "str" and t.pattern.value.isidentifier()}
    explicit = dict(
        keywords,
        NAME=_spaced(st.sampled_from(_NAMES) | st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,6}", fullmatch=True)),
        NUMBER=_spaced(st.sampled_from(["0", "1", "2", "4", "0.5", "3.5", "1e3", "4096", "1e12", "2_048"])),
        UNIT=_spaced(st.sampled_from(["B", "GB", "GiB", "TB/s", "FLOP", "TFLOP/s", "s", "ms", "us"])),
        STRING=st.sampled_from(['"a"', '"t/s"', '"lib.cost"', '"x y"']),
        _NL=st.sampled_from(["\n", "\r\n"]),
        COMMENT=st.sampled_from(["# note", "#", "# \x0c\x1c\u2028 café"]),  # not line breaks for the lexer
        **{name: st.sampled_from([" ", "\t", "\x0c", "\\\n"]) for name in _ignored_terminals()})
    program = from_lark(_grammar_parser(), start="start", explicit=explicit)
    return st.tuples(st.sampled_from(_PRELUDES), program).map("".join)


@fuzz_settings(80)
@given(_grammar_programs())
def test_grammar_generated_programs_give_only_positioned_errors(workdir, text):
    error = outcome(lambda: analyze_and_print(text))
    if error is not None:
        assert error.span.source.text == text
        assert_positioned(error)


# --- mutated example files ----------------------------------------------------------------------

_SOURCES = [p.read_bytes() for p in example_files() + stdlib_files()]
_SOLVES = re.compile(rb"^\s*(solve|scenario|compare)\b", re.MULTILINE)
#: files with what-if statements take a second or more to analyse: they get fewer cases
SLOW_SOURCES = [s for s in _SOURCES if _SOLVES.search(s)]
FAST_SOURCES = [s for s in _SOURCES if not _SOLVES.search(s)]
_TOKEN = re.compile(rb"\s+|\w+|[^\w\s]")


@st.composite
def mutated_files(draw, sources=FAST_SOURCES) -> bytes:
    tokens = _TOKEN.findall(draw(st.sampled_from(sources)))
    for _ in range(draw(st.integers(1, 4))):
        i = draw(st.integers(0, len(tokens) - 1))
        kind = draw(st.sampled_from(["delete", "duplicate", "swap", "bytes", "token"]))
        if kind == "delete":
            del tokens[i]
        elif kind == "duplicate":
            tokens.insert(i, tokens[i])
        elif kind == "swap":
            j = draw(st.integers(0, len(tokens) - 1))
            tokens[i], tokens[j] = tokens[j], tokens[i]
        elif kind == "bytes":
            tokens.insert(i, draw(st.binary(min_size=1, max_size=4)))
        else:
            tokens[i] = draw(st.sampled_from([b"(", b")", b"{", b"}", b",", b";", b"\n", b"=", b"^",
                                              b"-", b"/", b"0", b"1e400", b"\"", b"#", b"B", b"fp16"]))
        if not tokens:
            tokens = [b""]
    return b"".join(tokens)


def check_mutated(path, data: bytes) -> None:
    path.write_bytes(data)

    def run():
        analysis = load(path, display=NAME).analyze()
        report(analysis)
        to_json(analysis)
    error = outcome(run)
    if error is not None:
        assert_positioned(error)


@fuzz_settings(200)
@given(mutated_files())
def test_mutated_examples_give_only_positioned_errors(workdir, data):
    check_mutated(workdir / "mutated.cost", data)


@fuzz_settings(6)
@given(mutated_files(SLOW_SOURCES))
def test_mutated_what_if_examples_give_only_positioned_errors(workdir, data):
    check_mutated(workdir / "mutated.cost", data)


@fuzz_settings(150)
@given(mutated_files())
def test_cli_on_mutated_examples_exits_0_or_2(workdir, capsys, data):
    path = workdir / "cli.cost"
    path.write_bytes(data)
    status = main(["run", "--json", str(path)])
    err = capsys.readouterr().err
    assert status in (0, 2), err
    assert "Traceback" not in err and "internal error" not in err
    assert (status == 0) == (err == "")
    if status == 2:
        assert err.startswith(f"{path}:"), err


@fuzz_settings(300)
@given(st.binary(max_size=200))
def test_random_bytes_give_only_positioned_errors(workdir, data):
    path = workdir / "bytes.cost"
    path.write_bytes(data)
    error = outcome(lambda: load(path, display=NAME).analyze())
    if error is not None:
        assert_positioned(error)
