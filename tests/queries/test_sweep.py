"""Sweep: the vectorised table agrees with exact point evaluation; crossings are marked.

Hand values (llm_decode_batch.cost, fp16 weights): tokens/s = B / max(P·b/BW, 2·P·B/peak)
= B·100/7 for B < 500 (B = 1: 14.29, B = 64: 914.3), then peak/(2·P) = 50000/7 ≈ 7143.
"""
import functools

import pytest

from conftest import EXAMPLES
from costlang import load, load_string
from costlang.analysis.bounds import BALANCED, COMPUTE, MEMORY
from costlang.queries.sweep import Mark, parse_axis, sweep
from costlang.printers.words.comparisons import mark_text
from costlang.queries.whatif import scenario_analysis
from costlang.frontend.settings import parse_settings
from costlang.cli import main
from costlang.errors import CostlangError


@functools.lru_cache(maxsize=None)
def analysed(rel):
    """Each example analysed once for the whole file (a sweep never changes its analysis)."""
    return load(EXAMPLES / rel).analyze()


def run_sweep(rel, over, shows):
    a = analysed(rel)
    return a, sweep(a, [parse_axis(a.program, o) for o in over], shows)


def test_tokens_per_second_over_batch():
    _, sw = run_sweep("queries/llm_decode_batch.cost", ["B=1..1024:pow2"], ["tokens/s"])
    assert [p[0] for p in sw.points] == [2.0 ** k for k in range(11)]
    tokens = dict(zip([p[0] for p in sw.points], sw.columns[0]))
    assert tokens[1] == pytest.approx(100 / 7) and tokens[64] == pytest.approx(6400 / 7)
    assert tokens[512] == pytest.approx(50000 / 7) and tokens[1024] == pytest.approx(50000 / 7)
    assert sw.marks[9] == (Mark("step", COMPUTE),)       # B = 512, first past B* = 500
    assert mark_text(sw.marks[9]) == "← step compute-bound from here"
    assert [c.value for c in sw.crossings] == [500]


def test_sweep_agrees_with_point_evaluation():
    a, sw = run_sweep("queries/decode_crossing.cost", ["B=1..4096:log:9"], ["I(B)", "1 / t_kernel()"])
    for i, (b,) in enumerate(sw.points):
        point = scenario_analysis(a, parse_settings(f"B = {int(b)}"))
        assert sw.columns[0][i] == pytest.approx(float(point.value(point.kernels[0].intensity)), rel=1e-12)
        assert sw.columns[1][i] == pytest.approx(float(1 / point.value(point.totals.t_kernel)), rel=1e-12)


def test_two_symbols_make_a_grid():
    # x[B,d]·W[d,d]: I = 2·B·d / (2·(2B + d)) = B·d / (2B + d); B = d = 64 gives 64/3.
    _, sw = run_sweep("queries/decode_crossing.cost", ["B=1..64:pow2", "d=64..4096:pow2"], ["I(B)"])
    assert len(sw.points) == 7 * 7
    values = {p: v for p, v in zip(sw.points, sw.columns[0])}
    assert values[(64.0, 64.0)] == pytest.approx(64 / 3)


def test_cli_csv_and_errors(capsys):
    path = str(EXAMPLES / "queries" / "decode_crossing.cost")
    assert main(["sweep", path, "--over", "B=1..4:pow2", "--show", "I(B)", "--csv"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "B,I(B),crossing" and len(lines) == 4
    assert lines[1].startswith("1.0,0.99975")                      # I(1) = d/(2 + d) = 4096/4097
    for bad in (["--over", "B=4..1"], ["--over", "Q=1..4"], ["--over", "B=1..4:cubic"],
                ["--over", "B=1..4", "--show", "bound(y)"], ["--over", "B=1..4", "--show", "d +"]):
        assert main(["sweep", path, *bad]) == 2
    assert "error" in capsys.readouterr().err


def test_a_free_symbol_left_unswept_is_an_error():
    a = load(EXAMPLES / "queries" / "decode_crossing.cost").analyze()
    with pytest.raises(CostlangError, match="depends on B") as e:
        sweep(a, [parse_axis(a.program, "d=512..1024:pow2")], ["I(B)"])
    # positioned at B's declaration (`dim B` on line 15), as every input error is (it had no position)
    assert (e.value.span.line, e.value.span.column) == (15, 5)


def test_table_cells_carry_their_units(capsys):
    # decode_crossing.cost at B = 1: T_memory = 2·8192·(2 + 8192) B / 2e12 B/s = 67.125 µs (T_compute
    # = 2·8192² FLOP / 1e15 = 0.134 µs); I = 8192/8194 ≈ 0.9998 FLOP/B; FLOPs = 2·8192² ≈ 134.2 MFLOP.
    path = str(EXAMPLES / "queries" / "decode_crossing.cost")
    assert main(["sweep", path, "--over", "B=1..2:pow2", "--show", "t_kernel()", "--show", "I(B)",
                 "--show", "flops()"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [cell.strip() for cell in lines[2].split("  ") if cell.strip()] == [
        "1", "67.13 µs", "0.9998 FLOP/B", "134.2 MFLOP"]
    # int4 decode at B = 1: tokens/s = BW/(P·b) = 2e12/(7e10·0.5) = 400/7 ≈ 57.14 per second
    path = str(EXAMPLES / "queries" / "llm_decode_batch.cost")
    assert main(["sweep", path, "--over", "B=1..1", "--show", "tokens/s", "--set", "weights=int4"]) == 0
    assert capsys.readouterr().out.splitlines()[2].split() == ["1", "57.14", "tokens/s"]  # the query names its unit


def test_sweep_over_an_explicit_list_of_points():
    # tokens/s = B·100/7 below B* = 500, then 50000/7: B = 1 → 100/7, 8 → 800/7, 500 → 50000/7
    _, sw = run_sweep("queries/llm_decode_batch.cost", ["B=1, 8, 500"], ["tokens/s"])
    assert [p[0] for p in sw.points] == [1, 8, 500]
    assert list(sw.columns[0]) == pytest.approx([100 / 7, 800 / 7, 50000 / 7])


@pytest.mark.parametrize("over, message", [
    ("B=8,1", "must be positive and increasing"),
    ("B=1,1", "must be positive and increasing"),
    ("B=0,4", "must be positive and increasing"),
    ("B=1,2.5", "B is a dim: its listed values must be whole numbers"),
])
def test_bad_point_lists_are_errors(over, message):
    a = analysed("queries/llm_decode_batch.cost")
    with pytest.raises(CostlangError, match=message):
        parse_axis(a.program, over)


def test_a_point_count_of_seven_digits_is_taken_at_its_word():
    # `:lin:N` once fell back to 11 points when N had 7 digits or more; now N points are made, or
    # a limit is named. 100000 is the per-symbol limit itself (a boundary: it is allowed).
    a = analysed("queries/llm_decode_batch.cost")
    assert len(parse_axis(a.program, "B=1..100000:lin:100000").values) == 100000
    with pytest.raises(CostlangError, match="1 to 100000 points per symbol, not 1000000"):
        parse_axis(a.program, "B=1..2000000:lin:1000000")
    with pytest.raises(CostlangError, match="must be a whole number"):
        parse_axis(a.program, "B=1..100:lin:1e3")
    assert len(parse_axis(a.program, "B=1..100:lin").values) == 11   # no count: the default


def test_a_million_point_grid_marks_each_crossing_once():
    # B = 1..1000 (1000 points) × S = 1..1000. The step turns compute-bound past B* = 500
    # (I = 2B/b = B with b = 2 B, I* = 500). Marks compare neighbours along the last axis (S) only,
    # and the step does not depend on S, so no row is marked; row 500·1000 is B = 501 (step 1).
    _, sw = run_sweep("queries/llm_decode_batch.cost", ["B=1..1000:lin:1000", "S=1..1000:lin:1000"],
                      ["tokens/s"])
    assert len(sw.columns[0]) == 10 ** 6
    marked = [i for i, m in enumerate(sw.marks) if m]
    assert marked == []   # each sweep line runs over S at one B: the bound never changes along it
    assert sw.grid[0][500 * 1000] == 501.0 and sw.columns[0][500 * 1000] == pytest.approx(50000 / 7)
    assert sw.columns[0][0] == pytest.approx(100 / 7)   # B = 1: B·100/7


def test_a_crossing_sympy_cannot_solve_is_left_out_not_a_crash():
    # examples/memory/flash_attention.cost: T_memory holds ceiling(1024/ceiling(M/256)) (the flash
    # tiling's T_c), which sympy cannot solve for M (found by the fuzz campaign: an internal error).
    # The table is still tabulated; only the exact crossing is missing.
    a, sw = run_sweep("memory/flash_attention.cost", ["M=1..16:pow2"], ["t_kernel()"])
    assert [p[0] for p in sw.points] == [2.0 ** k for k in range(5)]
    assert sw.crossings == ()


def test_a_touching_root_is_no_crossing():
    # I − I* = (n − 100)²·(n − 400)/(n³ + 10⁷) on chapter_gpu (I* = 500): memory-bound
    # on both sides of n = 100 (balanced there), compute-bound above 400: one crossing, at 400
    a = load_string("use hardware chapter_gpu\ndim n = 8\ninput x: fp16[n]\ny = custom(x) { flops = "
                    "501*n^3 - 600*n^2 + 90000*n + 4996000000; reads = n^3; writes = 10^7 }\n", "t.cost").analyze()
    sw = sweep(a, [parse_axis(a.program, "n=1..1000:lin:1000")], ["intensity(y)"])
    assert [(c.kernel, c.value) for c in sw.crossings] == [("y", 400)]


def test_floor_and_ceiling_are_applied_on_the_grid():
    # ceil(B / 3) and floor(B / 3) at B = 1..6: 1 1 1 2 2 2 and 0 0 1 1 1 2 (the evaluator once
    # returned B / 3 unrounded: a one-argument function was folded like a sum and never applied)
    _, sw = run_sweep("queries/llm_decode_batch.cost", ["B=1..6:lin:6"], ["ceil(B / 3)", "floor(B / 3)"])
    assert list(sw.columns[0]) == [1, 1, 1, 2, 2, 2]
    assert list(sw.columns[1]) == [0, 0, 1, 1, 1, 2]


def test_repeated_sweeps_rerun_no_pipeline(monkeypatch):
    # the second sweep over B (other values) reuses the first one's plan: no unbinding, no analysis
    a = load(EXAMPLES / "queries/llm_decode_batch.cost").analyze()
    sweep(a, [parse_axis(a.program, "B=1..1024:pow2")], ["tokens/s"])
    import costlang.queries.sweep as module

    def no_pipeline(*args, **kwargs):
        raise AssertionError("the sweep re-ran the pipeline")
    monkeypatch.setattr(module, "analyze_with_queries", no_pipeline)
    monkeypatch.setattr(module, "unbind", no_pipeline)
    sw = sweep(a, [parse_axis(a.program, "B=499,500,501")], ["tokens/s"])
    # tokens/s = B·100/7 below B* = 500, 50000/7 from it on (the module docstring)
    assert list(sw.columns[0]) == pytest.approx([49900 / 7, 50000 / 7, 50000 / 7], rel=1e-12)
    assert [c.value for c in sw.crossings] == [500]


# A cubic with a touching root: I − I* = (n − 100)²·(n − 400)/(n³ + 10⁷), so the kernel is
# memory-bound below 400 except at the touching root n = 100 (balanced, no change of bound),
# balanced at n = 400 and compute-bound above.
CUBIC = """use hardware chapter_gpu
dim n
input a: fp16[n]
output k = custom(a) -> fp16[n] { flops = 501*n^3 - 600*n^2 + 90000*n + 4996000000; reads = n^3; writes = 10^7; math = fp16 }
"""


def _cubic_sweep(values: str):
    a = load_string(CUBIC).analyze()
    return sweep(a, [parse_axis(a.program, f"n={values}")], ["intensity(k)"])


def test_a_row_at_the_crossing_is_balanced_and_the_change_starts_after_it():
    sw = _cubic_sweep("390,400,410")
    # n = 390: memory-bound (the first row, never marked); n = 400: I = I* exactly, balanced;
    # n = 410: compute-bound, the first row past the crossing
    assert sw.marks == ((), (Mark("k", BALANCED),), (Mark("k", COMPUTE),))
    assert [mark_text(m) for m in sw.marks] == ["", "← k balanced here", "← k compute-bound from here"]
    (c,) = sw.crossings
    assert (c.value, c.below, c.above) == (400, MEMORY, COMPUTE)


def test_a_touching_root_in_a_sweep_is_balanced_but_no_change_of_bound():
    sw = _cubic_sweep("90,100,110,399,400,401")
    # n = 100 is balanced, memory-bound on both sides: 110 is not marked; 401 is the change
    assert sw.marks == ((), (Mark("k", BALANCED),), (), (), (Mark("k", BALANCED),), (Mark("k", COMPUTE),))
    assert [c.value for c in sw.crossings] == [400]


def test_the_balanced_row_shows_in_the_table_and_json(tmp_path, capsys):
    f = tmp_path / "cubic.cost"
    f.write_text(CUBIC)
    assert main(["sweep", str(f), "--over", "n=390,400,410", "--show", "intensity(k)"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[3].startswith("400") and lines[3].endswith("← k balanced here")
    assert lines[4].startswith("410") and lines[4].endswith("← k compute-bound from here")
    assert lines[5] == ("crossing: k changes bound at n* = 400 "
                        "(memory-bound below, balanced there, compute-bound above)")
    assert main(["sweep", str(f), "--over", "n=390,400,410", "--show", "intensity(k)", "--json"]) == 0
    import json
    out = json.loads(capsys.readouterr().out)
    assert out["marks"] == [[], [{"kernel": "k", "bound": "balanced"}], [{"kernel": "k", "bound": "compute-bound"}]]
    assert out["crossings"] == [{"kernel": "k", "symbol": "n", "value": 400, "below": "memory-bound",
                                 "above": "compute-bound"}]


def test_a_sweep_reports_no_crossing_at_a_size_the_shapes_forbid():
    # I − I* = (N − 10)·(N − 500)/N² changes sign at 10 and 500, but fp16[N - 10] needs N ≥ 11:
    # only the crossing at 500 is a change of bound a program can have
    a = load_string("use hardware chapter_gpu\ndim N\ninput x: fp16[N - 10]\ny = custom(x) -> fp16[N - 10] "
                    "{ flops = 501*N^2 - 510*N + 5000; reads = N^2; writes = 0; math = fp16 }\n").analyze()
    sw = sweep(a, [parse_axis(a.program, "N=11,499,500,501")], ["intensity(y)"])
    assert [(c.value, c.below, c.above) for c in sw.crossings] == [(500, MEMORY, COMPUTE)]
    assert sw.marks == ((), (), (Mark("y", BALANCED),), (Mark("y", COMPUTE),))


def test_over_a_name_alone_sweeps_plots_default_range(capsys):
    # `sweep --over B` = `--over B=1..10000:log:21`, the range `plot` draws by default: 21 points
    # from 1 to 10000 geometrically (a dim: each rounded to a whole number, repeats dropped)
    from pathlib import Path
    from costlang.cli import main
    f = str(Path(__file__).resolve().parents[2] / "examples" / "queries" / "decode_crossing.cost")
    assert main(["sweep", f, "--over", "B", "--csv"]) == 0
    alone = capsys.readouterr().out
    assert main(["sweep", f, "--over", "B=1..10000:log:21", "--csv"]) == 0
    assert alone == capsys.readouterr().out
    rows = alone.strip().splitlines()[1:]
    assert rows[0].startswith("1.0,") and rows[-1].startswith("10000.0,") and len(rows) <= 21
