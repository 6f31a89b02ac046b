"""Readable output: expressions print as a person writes them, never as raw sympy.

Each expected string below is derived by hand in its comment, not taken from the printer.
"""
import contextlib
import io

import sympy
from sympy import Integer, Max, Min, Rational, oo

from costlang.printers.numbers import exact_or_approx, expr_text, human, no_empty_equals
from costlang.units import BYTE, SECOND

K, M, N, B, d, s = sympy.symbols("K M N B d s", positive=True)


def test_max_and_min_print_lowercase_with_middle_dots_and_carets():
    # max(N, 2·N²) / 3 keeps both branches (neither dominates for every N > 0); ** is ^ and * is ·
    assert expr_text(Max(2 * N ** 2, N) / 3) == "max(N, 2·N^2)/3"
    # min(10, B): a bound and a symbol
    assert expr_text(Min(10, B)) == "min(10, B)"


def test_common_factors_cancel():
    # 2KMN / (2KM + 2KN + 2MN): a factor 2 top and bottom
    assert expr_text(2 * K * M * N / (2 * K * M + 2 * K * N + 2 * M * N)) == "K·M·N/(K·M + K·N + M·N)"
    # 2n³ / (6n²) = n/3
    assert expr_text(2 * N ** 3 / (6 * N ** 2 + 0)) == "N/3"
    # (2N³ + 2^31)/(6N² + 6·2^20): 2 out of both → (N³ + 2^30)/(3N² + 3·2^20); 2^30 = 1073741824,
    # 3·2^20 = 3145728
    assert expr_text((2 * N ** 3 + 2 ** 31) / (6 * N ** 2 + 6 * 2 ** 20)) == "(N^3 + 1073741824)/(3·N^2 + 3145728)"


def test_no_fraction_is_negated_top_and_bottom():
    # s·d / (2·(d − s)): cancelling gives −d·s/(2s − 2d); negated top and bottom it reads d·s/(2d − 2s)
    text = expr_text(s * d / (2 * (d - s)))
    assert not text.startswith("-") and text in ("d·s/(2·d - 2·s)", "d·s/(-2·s + 2·d)")
    # (−d)/(−B − 1) = d/(B + 1)
    assert expr_text(-d / (-B - 1)) == "d/(B + 1)"
    # a denominator of negative terms only: (31368208·b − 312500000)/(−517·S·b − 256·K·b), both
    # parts negated, = (312500000 − 31368208·b)/(517·S·b + 256·K·b)
    bb = sympy.Symbol("b", positive=True)
    assert expr_text((31368208 * bb - 312500000) / (-517 * s * bb - 256 * K * bb)) == \
        "(312500000 - 31368208·b)/(256·K·b + 517·b·s)"


def test_no_fraction_is_negated_in_text_or_latex():
    # The lecture MLP's B* as d → ∞: sympy holds
    # −b·f·I*/(b·I* − 2f); moving the sign into the sum gives b·f·I*/(2f − b·I*), the same value
    # (−x/(y − z) = x/(z − y)), and the sum starts with its positive term.
    from costlang.printers.derivation.mathtex import CostLatexPrinter
    b, f, istar = sympy.symbols("b f Istar", positive=True)
    e = -b * f * istar / (b * istar - 2 * f)
    assert expr_text(e) == "Istar·b·f/(2·f - Istar·b)"
    assert CostLatexPrinter().doprint(e) == r"\frac{Istar \cdot b \cdot f}{2 \cdot f - Istar \cdot b}"
    # (2 − d)/(3 − d): both parts negated read (d − 2)/(d − 3); the structure is otherwise kept
    assert CostLatexPrinter().doprint((2 - d) / (3 - d)) == r"\frac{d - 2}{d - 3}"
    assert CostLatexPrinter().doprint(-1 / (d - 2)) == r"\frac{1}{2 - d}"


def test_no_golden_derivation_holds_a_negated_fraction():
    from pathlib import Path
    import re
    root = Path(__file__).resolve().parents[2] / "examples"
    negated = re.compile(r"- \\frac\{[^{}]*\}\{- ")   # −a/(−b + c) in LaTeX
    found = [p.name for p in root.rglob("*.md") if negated.search(p.read_text(encoding="utf-8"))]
    assert found == []
    lecture = (root / "lecture" / "_generated" / "mlp_decode.en.md").read_text(encoding="utf-8")
    assert r"\frac{b \cdot f \cdot I^{*}}{2 \cdot f - b \cdot I^{*}}" in lecture


def test_a_quotient_with_a_symbolic_power_is_not_rewritten():
    # cancelling would turn (3/4)^B into 3^B/4^B: left as written
    text = expr_text(B / (1 - Rational(3, 4) ** B))
    assert "(3/4)^B" in text and "4^B" not in text.replace("(3/4)^B", "")


def test_infinity_booleans_and_conditions_are_words_and_symbols():
    assert expr_text(oo) == "∞" and expr_text(-oo) == "-∞"
    assert human(oo, SECOND) == "∞"
    # ≤ and ≥ for <= and >=, `and` for &, never True/False
    assert expr_text(B <= 4) == "B ≤ 4" and expr_text(B >= 4) == "B ≥ 4"
    assert expr_text(sympy.And(B <= 4, B > 1)) == "B ≤ 4 and B > 1"
    assert expr_text(sympy.Or(B < 1, B > 4)) in ("B < 1 or B > 4", "B > 4 or B < 1")  # sympy's order
    assert expr_text(sympy.true) == "always" and expr_text(sympy.false) == "never"
    # a piecewise reads `(B if B < 3; otherwise 2·B)`
    assert expr_text(sympy.Piecewise((B, B < 3), (2 * B, True))) == "(B if B < 3; otherwise 2·B)"
    # ceiling is the language's ceil
    assert expr_text(sympy.ceiling(M / 256)) == "ceil(M/256)"


def test_a_symbolic_sum_with_a_unit_is_parenthesised():
    # (B/48828125 + 16384/244140625) s, not `B/48828125 + 16384/244140625 s` (the unit binds to the sum)
    assert human(B / 48828125 + Rational(16384, 244140625), SECOND) == "(B/48828125 + 16384/244140625) s"
    assert human(2 * N ** 2, BYTE) == "2·N^2 B"


def test_an_irrational_value_shows_its_closed_form_beside_the_decimal():
    # 2^(33/125) = e^(0.264·ln 2) = e^0.18299 ≈ 1.20080, × 2048 ≈ 2459.2
    assert exact_or_approx(2048 * Integer(2) ** Rational(33, 125)) == "2048·2^(33/125) ≈ 2459"
    # sqrt(2) ≈ 1.41421
    assert exact_or_approx(sympy.sqrt(2)) == "sqrt(2) ≈ 1.414"


def test_an_irrational_value_with_a_unit_keeps_its_closed_form():
    # log2(3) = ln 3/ln 2 = 1.0986/0.69315 ≈ 1.58496: sympy holds it as log(3)/log(2), printed as the
    # language's log2; with a unit the exact form stands beside the SI-prefixed decimal
    from costlang.printers.derivation.mathtex import CostLatexPrinter
    from costlang.units import FLOP_PER_S
    log2_3 = sympy.log(3) / sympy.log(2)
    assert human(log2_3, SECOND) == "log2(3) s ≈ 1.585 s"
    assert human(log2_3 / 1000, SECOND) == "log2(3)/1000 s ≈ 1.585 ms"
    # √2·10^12 FLOP/s ≈ 1.41421e12 = 1.414 TFLOP/s
    assert human(sympy.sqrt(2) * 10 ** 12, FLOP_PER_S) == "1000000000000·sqrt(2) FLOP/s ≈ 1.414 TFLOP/s"
    assert exact_or_approx(log2_3) == "log2(3) ≈ 1.585"
    assert CostLatexPrinter().doprint(log2_3) == r"\log_{2}\left(3\right)"
    # a rational value with a unit is only rounded (its exact form is for --exact): 3/2500 s = 1.2 ms
    assert human(Rational(3, 2500), SECOND) == "1.2 ms"


def test_a_query_in_log2_seconds_prints_its_closed_form(tmp_path):
    f = tmp_path / "log.cost"
    f.write_text("use hardware note_virtual\nquery t = log2(3) * 1 s\n")
    assert "t = log2(3) s ≈ 1.585 s" in _cli("run", str(f))


def test_a_value_known_only_approximately_is_never_written_equals_approx():
    # 262144/1048577 ≈ 0.2499998 (its exact form is too long to show): `x ≈ 0.25`, not `x = ≈ 0.25`
    assert exact_or_approx(Rational(262144, 1048577)) == "≈ 0.25"
    assert no_empty_equals(f"I* = {exact_or_approx(Rational(262144, 1048577))} FLOP/B") == "I* ≈ 0.25 FLOP/B"


def _cli(*argv):
    from costlang.cli import main
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(list(argv)) == 0
    return out.getvalue()


def test_the_run_report_prints_max_and_powers_readably():
    # ex2: Z = X·Y with n free, bf16 on the chapter GPU: T_compute = 2n³/10^15, T_memory = 6n²/(2·10^12)
    # = 3n²/10^12, T_kernel = max of the two (no launch)
    text = _cli("run", "examples/roofline/exercises/ex2_gemm_1024.cost")
    assert "max(3·n^2/1000000000000, n^3/500000000000000) s" in text
    # the verdict's condition (`memory-bound when …`) is the verdict printer's: tests/printers/test_no_raw_sympy.py
    figures = "\n".join(line.split("-bound when")[0] for line in text.splitlines())
    assert "Max(" not in figures and "**" not in figures


def test_a_long_comparison_cell_moves_to_a_legend():
    # llm_decode_batch with B free: T_kernel = max(7/100, 7·B/50000) (140 GB / 2 TB/s = 70 ms; 140e9·B
    # FLOP / 1e15 FLOP/s = 7B/50000 s); under fp8 the weights take 70 GB, 35 ms: the speed-up
    # max(7/100, 7·B/50000)/max(7/200, 7·B/50000) is 43 characters, longer than 40: a legend entry
    text = _cli("compare", "examples/queries/llm_decode_batch.cost", "--scenario", "fp8: weights=fp8")
    lines = text.splitlines()
    speedup = next(line for line in lines if line.startswith("speed-up vs baseline"))
    name = speedup.split()[-1]
    assert f"{name} max(7/100, 7·B/50000)/max(7/200, 7·B/50000)" in lines
    # the verdicts (B* = I*·b/2 = 500, and 250 under fp8) are long too: legend entries [1] and [2]
    assert "[1] memory-bound when B < 500, balanced at B = 500, else compute-bound" in lines
    assert "[2] memory-bound when B < 250, balanced at B = 250, else compute-bound" in lines
    # every cell is at most 40 characters: a row is at most the label column
    # ("tokens/s while memory-bound, B·BW/(P·b)", 39) + 2 columns × (2 + 40) = 123 characters
    assert max(len(line) for line in lines) <= 39 + 2 * 42


# --- a query names its unit (`in tokens/s`) ------------------------------------------------------

_DECODE = """hardware chapter_80gb : chapter_gpu { memory HBM { capacity = 80 GB } }
use hardware chapter_80gb
param P = 70e9
dim B = 64
weight W: fp16[P]
step = custom(W) { flops = 2 * P * B; math = fp16 }
"""


def _run_text(tmp_path, body, *extra):
    path = tmp_path / "q.cost"
    path.write_text(_DECODE + body)
    from costlang.cli import main
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(["run", str(path), *extra])
    return rc, out.getvalue(), err.getvalue()


def test_a_query_prints_in_the_unit_it_names(tmp_path):
    # step reads 70e9 fp16 = 140 GB at 2 TB/s: 70 ms; 2·70e9·64 FLOP at 1e15 FLOP/s = 8.96 ms: memory-bound,
    # T = 7/100 s. 64 / (7/100) = 6400/7 ≈ 914.3 tokens/s; per ms: 6400/7/1000 = 32/35 ≈ 0.9143
    rc, out, _ = _run_text(tmp_path, 'query "rate" = B / t_kernel(step) in tokens/s\n'
                                     'query "per ms" = B / t_kernel(step) in tokens/ms\n'
                                     'query "batch" = B in sequences\n'
                                     'query "bare" = B / t_kernel(step)\n')
    assert rc == 0
    assert "  rate = 6400/7 ≈ 914.3 tokens/s" in out
    assert "  per ms = 32/35 ≈ 0.9143 tokens/ms" in out
    assert "  batch = 64 sequences" in out
    assert "  bare = 6400/7 ≈ 914.3 1/s" in out   # no unit named: the dimensions


def test_a_query_unit_that_does_not_match_is_an_error(tmp_path):
    # B is a pure number; tokens/s is a count per second
    rc, _, err = _run_text(tmp_path, "query x = B in tokens/s\n")
    assert rc == 2 and "'B' is a pure number, but tokens/s is a count per s" in err and "^^^^^^^^" in err
    rc, _, err = _run_text(tmp_path, "query x = B / t_kernel(step) in tokens/parsec\n")
    assert rc == 2 and "'parsec' is not a unit" in err


def test_the_json_report_carries_the_named_unit(tmp_path):
    import json
    rc, out, _ = _run_text(tmp_path, 'query "rate" = B / t_kernel(step) in tokens/s\n', "--json")
    assert rc == 0
    assert [q["unit"] for q in json.loads(out)["queries"]] == ["tokens/s"]


def test_a_sweep_cell_carries_the_query_unit():
    # llm_decode_batch, fp16: at B = 1 the step is memory-bound, 140 GB / 2 TB/s = 70 ms: 1/0.07 = 14.29
    # tokens/s; the same in tokens/ms (an expression naming its unit on the command line): 0.01429
    text = _cli("sweep", "examples/queries/llm_decode_batch.cost", "--over", "B=1,2", "--show", "tokens/s",
                "--show", "B / t_kernel(step) in tokens/ms")
    row = text.splitlines()[2].split()
    assert row == ["1", "14.29", "tokens/s", "0.01429", "tokens/ms"]


# --- --units binary and --exact ------------------------------------------------------------------

def test_binary_units_print_bytes_in_powers_of_two():
    from costlang.printers.numbers import number_style
    from costlang.units import BYTE_PER_S
    with number_style(binary=True):
        # 80e9 B / 2^30 = 74.5058 GiB; 2e12 B/s / 2^40 = 1.81899 TiB/s; 1024 B = 1 KiB exactly; 1000 B < 1 KiB
        assert human(Integer(80 * 10 ** 9), BYTE) == "74.51 GiB"
        assert human(Integer(2 * 10 ** 12), BYTE_PER_S) == "1.819 TiB/s"
        assert human(Integer(1024), BYTE) == "1 KiB" and human(Integer(1000), BYTE) == "1000 B"
    assert human(Integer(80 * 10 ** 9), BYTE) == "80 GB"   # the style ends with the block


def test_run_units_binary_and_exact_on_the_4096_gemm():
    # C = A·B, fp16, 4096³: bytes 3·4096²·2 = 100663296 = 96·2^20 B = 96 MiB; FLOPs 2·4096³ = 137438953472;
    # T_compute = 137438953472 / 10^15 s = 4194304/30517578125 s (both ÷ 2^15) ≈ 137.4 µs
    binary = _cli("run", "examples/roofline/gemm_4096.cost", "--units", "binary")
    assert "  C     matmul  137.4 GFLOP  96 MiB" in binary and "binary byte units (1 GiB = 2^30 B" in binary
    exact = _cli("run", "examples/roofline/gemm_4096.cost", "--exact")
    assert "137438953472 FLOP  100663296 B" in exact and "4194304/30517578125 s ≈ 137.4 µs" in exact
    # I = 137438953472 / 100663296 = 4096/3 FLOP/B: shown once, exact then rounded (found by review:
    # it read "4096/3 FLOP/B ≈ 4096/3 ≈ 1365 FLOP/B")
    assert "  I = 4096/3 ≈ 1365 FLOP/B\n" in exact
    # the same flags on compare, sweep and derive
    assert "96 MiB" in _cli("compare", "examples/roofline/gemm_4096.cost", "--units", "binary")
    assert "137438953472 FLOP" in _cli("compare", "examples/roofline/gemm_4096.cost", "--exact")
    assert r"96\,\mathrm{MiB}" in _cli("derive", "examples/roofline/gemm_4096.cost", "--units", "binary")
    sweep = _cli("sweep", "examples/queries/decode_crossing.cost", "--over", "B=1,2", "--show", "bytes()",
                 "--units", "binary")
    # decode_crossing at B = 1: bytes = 2·8192·(2 + 8192) = 134250496 B = 128.03 MiB
    assert "128 MiB" in sweep


# --- LaTeX ------------------------------------------------------------------------------------

def test_latex_prints_max_and_min_as_operators():
    from costlang.printers.derivation.mathtex import CostLatexPrinter
    assert CostLatexPrinter().doprint(Max(N, 2 * N ** 2)) == r"\max\left(N, 2 \cdot N^{2}\right)"
    assert CostLatexPrinter().doprint(Min(10, B)) == r"\min\left(10, B\right)"


def test_a_derivation_cancels_common_factors_in_the_general_form_and_the_value():
    # decode_crossing: y = x[B, d] · W[d, d], bf16, d = 8192: I = 2·B·d² / (2·(B·d + d² + B·d)) =
    # 2·B·d²/(2·d² + 4·B·d); cancelling 2·d: B·d/(d + 2·B); with d = 8192: 8192·B/(8192 + 2·B) = 4096·B/(4096 + B)
    from costlang import load
    from costlang.cli.derive import render_derivation
    text = render_derivation(load("examples/queries/decode_crossing.cost").analyze(), "md", "en")
    assert r"&= \frac{B \cdot d}{d + 2 \cdot B} \\" in text
    assert r"&= \frac{4096 \cdot B}{4096 + B}\,\mathrm{FLOP/B}" in text
    assert r"\frac{2 \cdot B \cdot d^{2}}{2 \cdot d^{2} + 4 \cdot B \cdot d}" not in text


def test_a_symbolic_fraction_of_peak_is_a_percentage_of_each_branch():
    # llm_decode_batch: P = min(10^15, 2·10^12·B) FLOP/s (BW × I with I = B); of a 10^15 peak,
    # in %: 100·min(10^15, 2·10^12·B)/10^15 = min(100, B/5)
    from costlang.printers.numbers import percent
    assert percent(Min(10 ** 15, 2 * 10 ** 12 * B) / 10 ** 15) == "min(100, B/5) %"


def test_a_size_symbol_named_B_is_not_set_beside_the_unit_B():
    # 8192·B bytes of a batch B: `8192·B B` would read as a unit twice; a sum keeps its parentheses
    assert human(8192 * B, BYTE) == "8192·B bytes"
    assert human(40960 * B + 134217728, BYTE) == "(40960·B + 134217728) bytes"
    # another symbol keeps the unit's short form
    assert human(8192 * N, BYTE) == "8192·N B"


def test_a_repeat_count_and_a_collective_formula_print_without_python_products():
    from costlang.printers.numbers import count_text
    L, n, p = sympy.symbols("L n p", positive=True)
    assert count_text(18 * sympy.Symbol("L", positive=True, integer=True)) == "18·L"
    assert count_text(Integer(3)) == "3"
    from costlang.printers.text.system import _formula
    # ring all-reduce: sent = 2·(p − 1)/p·n, printed with middle dots, never n*(2*p - 2)/p
    assert "*" not in _formula(n * (2 * p - 2) / p, "469.8 MB")
    # a tree's steps: ⌈log2 p⌉ is `ceil(log2(p))`, never ceiling(log(p)/log(2))
    assert _formula(sympy.ceiling(sympy.log(p) / sympy.log(2)), "3") == "ceil(log2(p)) = 3"


def test_a_relation_with_a_long_fraction_shows_its_decimal():
    from costlang.printers.words.verdicts import plain_relation
    # 6994757730304/21656425048828125 = 0.00032299... : no short decimal, so ≈ 0.000323 beside it
    rel = sympy.StrictGreaterThan(B / 130859375 + N, Rational(6994757730304, 21656425048828125))
    assert plain_relation(rel).endswith("> 6994757730304/21656425048828125 ≈ 0.000323")
    # 961/2 (= 480.5) is a short exact fraction: nothing beside it
    assert plain_relation(sympy.StrictLessThan(B + N, Rational(961, 2))) == "B + N < 961/2"


def test_a_crossing_condition_on_a_whole_symbol_is_a_whole_threshold():
    from costlang.printers.text.whatif import _condition
    T = sympy.Symbol("T", positive=True, integer=True)
    # Llama-3-70B decode on an H100: a crossing needs T < 674979116676629/593267532160; 593267532160 ·
    # 1137 = 674545184065920, 433932610709 short of the numerator, so the bound is 1137.73…: T ≤ 1137
    assert _condition(sympy.StrictLessThan(T, Rational(674979116676629, 593267532160))) == "T ≤ 1137"
