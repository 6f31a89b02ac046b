"""The large-sweep CSV writer (polars, the `fast` extra) writes exactly what the repr writer writes."""
import math

import numpy as np
import pytest

from costlang.printers.data import sweep as csv_printer

polars = pytest.importorskip("polars", reason="the compiled CSV writer needs polars (pip install 'costlang[fast]')")


class _Sweep:
    """What `csv_text` reads of a sweep: its symbols, labels, grid, columns and crossing marks."""

    def __init__(self, grid, columns, marks):
        self.symbols, self.labels = ["B"], ["t"]
        self.grid, self.columns, self.marks = grid, columns, marks


# the ranges where polars spells a float otherwise than repr (0.00001 for 1e-05, 1.5e-7 for
# 1.5e-07, NaN for nan), both ends of the positional range (1e-4, 1e16), the subnormals and the
# infinities: each must come out as repr writes it
HOSTILE = [1e-05, 9.99e-05, 1e-4, 1.5e-07, 1e-09, 1.2e-10, 5e-324, 1e-320, float("nan"), float("inf"),
           -float("inf"), -0.0, 0.0, 1e16, 9999999999999998.0, 1e15, 0.1, 1 / 3, 2.5e-300, 1e300, -1e-05]


def test_compiled_writer_equals_repr_writer():
    rng = np.random.default_rng(7)
    n = csv_printer.COMPILED_FROM   # the smallest sweep that takes the compiled path
    grid = np.arange(1, n + 1, dtype=float)
    column = np.exp(rng.uniform(-60, 60, n)) * rng.choice([-1, 1], n)
    column[: len(HOSTILE)] = HOSTILE
    marks = [None] * n
    marks[3] = None
    sw = _Sweep([grid], [column], marks)
    compiled = csv_printer.csv_text(sw)
    lines = compiled.splitlines()
    assert lines[0] == "B,t,crossing" and len(lines) == n + 1
    # the repr writer, row by row: B, t and an empty crossing cell
    assert lines[1:] == [f"{b!r},{t!r}," for b, t in zip(grid.tolist(), column.tolist())]
    assert lines[1 + HOSTILE.index(1e-05)] == "1.0,1e-05," and "nan," in lines[1 + 8]
    assert math.isnan(float(lines[9].split(",")[1]))


def test_one_point_short_of_the_compiled_path_is_written_by_repr(monkeypatch):
    n = csv_printer.COMPILED_FROM - 1
    called = []
    monkeypatch.setattr(csv_printer, "_compiled_body", lambda *a: called.append(1))
    sw = _Sweep([np.arange(1, n + 1, dtype=float)], [np.full(n, 1e-05)], [None] * n)
    out = csv_printer.csv_text(sw).splitlines()
    assert not called and out[1] == "1.0,1e-05,"


def _both_writers(monkeypatch, capsys, *args) -> str:
    """`costlang sweep` of the decode example with `args` and --csv, written by the compiled writer
    and by the repr writer: the two texts must be equal (the repr writer's is returned)."""
    from conftest import EXAMPLES
    from costlang.cli import main
    argv = ["sweep", str(EXAMPLES / "queries" / "llm_decode_batch.cost"), *args, "--csv"]
    assert main(argv) == 0
    compiled = capsys.readouterr().out
    monkeypatch.setattr(csv_printer, "_compiled_body", lambda *a: None)
    assert main(argv) == 0
    plain = capsys.readouterr().out
    assert compiled == plain
    return plain


def test_a_real_sweep_with_crossings_is_written_alike(monkeypatch, capsys):
    """65,536 batches of the decode example: the compiled and the repr writers give the same text,
    the crossing cells included. I = 2·P·B / (P·2 B) = B FLOP/B against the chapter GPU's I* = 500,
    so B = 500 is balanced and B = 501 the first compute-bound batch."""
    plain = _both_writers(monkeypatch, capsys, "--over", "B=1..65536:lin:65536", "--show", "t_kernel()")
    marked = [line for line in plain.splitlines()[1:] if not line.endswith(",")]
    assert [m.split(",")[0] for m in marked] == ["500.0", "501.0"]


def test_a_two_symbol_grid_is_written_alike(monkeypatch, capsys):
    """256 batches × 256 sizes (65,536 points): each grid column is its symbol's values written once
    and gathered; the text equals the repr writer's. At B = 1, P = 1e9 on the chapter GPU the decode
    step reads the 2P bytes of fp16 weights at 2 TB/s: 2e9 / 2e12 = 1 ms, so 1000 tokens/s."""
    plain = _both_writers(monkeypatch, capsys, "--over", "B=1..256:lin:256", "--over", "P=1e9..1e11:log:256",
                          "--show", "tokens/s")
    lines = plain.splitlines()
    assert len(lines) == 65537 and lines[1] == "1.0,1000000000.0,1000.0,"
    # row 257 is B = 2 at P = 1e9 again (P varies fastest): 2 tokens per 1 ms step
    assert lines[257] == "2.0,1000000000.0,2000.0,"


def test_a_large_sweep_escapes_its_words_once_and_its_numbers_never(monkeypatch):
    # the compiled text is marked safe, so the output is not scanned again: a label and a crossing
    # word with an escape sequence must come out escaped all the same
    from costlang.printers.safe import Safe, terminal_safe
    n = csv_printer.COMPILED_FROM
    sw = _Sweep([np.arange(1, n + 1, dtype=float)], [np.full(n, 2.0)], [None] * n)
    sw.labels = ["t\x1b]0;x\x07"]
    monkeypatch.setattr(csv_printer, "mark_text", lambda mark: "k\x1b[31m")
    sw.marks[5] = object()
    out = csv_printer.csv_text(sw)
    assert isinstance(out, Safe) and terminal_safe(out) is out
    lines = out.splitlines()
    assert lines[0] == "B,t\\u001b]0;x\\u0007,crossing"
    assert lines[6] == "6.0,2.0,k\\u001b[31m" and lines[7] == "7.0,2.0,"
    assert "\x1b" not in out


# --- JSON: the grid's blocks written a column at a time, the same text as strict JSON's dumps -----

from hypothesis import given, settings, strategies as st  # noqa: E402

from costlang.analysis.bounds import BALANCED, COMPUTE, MEMORY  # noqa: E402
from costlang.printers.data.strict import dumps  # noqa: E402
from costlang.printers.safe import terminal_safe  # noqa: E402
from costlang.queries.tabulate import Mark, Sweep  # noqa: E402
from costlang.units import BYTE, SECOND, Unit  # noqa: E402

_FLOATS = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.sampled_from(HOSTILE))
_NAMES = st.text(alphabet=st.characters(codec="utf-8"), min_size=1, max_size=6)


@st.composite
def _sweeps(draw):
    axes = draw(st.integers(1, 2))
    n = draw(st.integers(1, 12))
    grid = tuple(np.array(draw(st.lists(_FLOATS, min_size=n, max_size=n))) for _ in range(axes))
    labels = tuple(draw(st.lists(_NAMES, min_size=0, max_size=3)))
    columns = tuple(np.array(draw(st.lists(_FLOATS, min_size=n, max_size=n))) for _ in labels)
    marks = tuple(tuple(Mark(draw(_NAMES), draw(st.sampled_from([MEMORY, COMPUTE, BALANCED])))
                        for _ in range(draw(st.integers(0, 2)))) for _ in range(n))
    units = tuple(draw(st.sampled_from([SECOND, BYTE, Unit(second=-1, label="tokens/s")])) for _ in labels)
    return Sweep(tuple(draw(_NAMES) for _ in range(axes)), labels, grid, columns, marks, (), units)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(sw=_sweeps(), crossings=st.lists(st.fixed_dictionaries({"kernel": _NAMES, "value": _FLOATS}), max_size=2))
def test_the_json_writer_writes_what_dumps_writes(sw, crossings):
    # labels, units and kernel names from the file: their unsafe characters as \\uXXXX, as on every output
    assert csv_printer.json_text(sw, crossings) == terminal_safe(dumps(csv_printer.json_data(sw, crossings)))


def test_the_json_writer_on_a_large_grid():
    # 300 × 300 points, a value repeated (the distinct-value path) and NaN and ∞ in the columns
    b, p = np.meshgrid(np.arange(1.0, 301.0), np.geomspace(1e9, 1e11, 300), indexing="ij")
    tokens = np.where(b.ravel() < 150, b.ravel() * 100 / 7, 50000 / 7)
    tokens[5], tokens[7] = float("nan"), float("inf")
    marks = [()] * tokens.size
    marks[150 * 300] = (Mark("step", COMPUTE),)
    sw = Sweep(("B", "P"), ("tokens/s",), (b.ravel(), p.ravel()), (tokens,), tuple(marks), (), (SECOND,))
    text = csv_printer.json_text(sw, [])
    assert text == dumps(csv_printer.json_data(sw, []))
    # B = 1 on the first 300 rows (B varies slowest): 100/7 tokens/s, NaN as null, +inf as "inf"
    assert f'      null,\n      {100 / 7!r},\n      "inf",\n' in text
