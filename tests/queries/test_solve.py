"""Solve: closed forms, values, regimes, no-crossing reasons and errors, each derived by hand.

The decode GEMM y[B,d] = x[B,d]·W[d,d] (bf16, b = 2 B) on the chapter GPU with a bf16 peak of
1000 TFLOP/s (I* = 1e15 / 2e12 = 500):
  FLOPs = 2·B·d², bytes = b·d·(2B + d), I(B) = 2·B·d / (b·(2B + d)).
  I = I*  ⇔  2·B·d = I*·b·(2B + d)  ⇔  B* = I*·b·d / (2·(d − I*·b)).
  d = 8192: B* = 500·2·8192 / (2·7192) = 512000/899 ≈ 569.5; with b = 2 and I* = 500 the closed
  form in d alone is B* = 500·d / (d − 1000). As B → ∞, I → d/b; as d → ∞, B* → I*·b/2 = 500.
"""
import pytest
import sympy
from hypothesis import given, settings, strategies as st

from costlang import load_string
from costlang.queries.solve import RegimeMap
from costlang.printers.words.solve import case_words
from costlang.errors import CostlangError, SolveError, UnitError

R = sympy.Rational
Istar, b = sympy.symbols("Istar b", positive=True)
d = sympy.Symbol("d", positive=True, integer=True)

GEMM = """
hardware chapter_bf16 : chapter_gpu {{ peak bf16 = 1000 TFLOP/s }}
use hardware chapter_bf16
dim d = {d}
dim B{bind}
input x: bf16[B, d]
weight W: bf16[d, d]
output y = matmul(x, W)
"""


def solves(analysis):
    return {r.name: r for r in analysis.solves}


def same(a, b_):
    return sympy.simplify(a - b_) == 0


def test_decode_crossing_closed_form_value_and_whole_batches(analyze_example):
    r = solves(analyze_example("queries/decode_crossing.cost"))["B*"]
    (root,), (general,), (value,) = r.roots, r.general, r.values
    assert same(root, 500 * d / (d - 1000))
    assert same(general, Istar * b * d / (2 * (d - Istar * b)))
    assert value == R(512000, 899)
    assert {(i.symbol.name, i.value) for i in r.legend} == {("b", 2), ("Istar", 500)}
    assert [(g.side, g.lower, g.upper) for g in r.regimes] == [
        ("memory-bound", None, R(512000, 899)), ("compute-bound", R(512000, 899), None)]
    assert [(w.rounding, w.value) for w in r.whole] == [("floor", 569), ("ceil", 570)]
    assert r.given == ((d, 8192),)


def test_decode_crossing_limit_and_approximation(analyze_example):
    r = solves(analyze_example("queries/decode_crossing.cost"))["B*"]
    (limit,) = r.limits
    assert limit.general == d / b and limit.value == 4096          # sup of I = d/b = 8192/2
    (approx,) = r.approximations
    assert approx.symbol == d and same(approx.expr, Istar * b / 2) and approx.value == 500


def test_inequality_gives_the_compute_bound_batches(analyze_example):
    r = solves(analyze_example("queries/decode_crossing.cost"))["compute-bound batches"]
    assert r.solution == sympy.Interval(R(512000, 899), sympy.oo)


def test_no_crossing_says_why_with_the_supremum(analyze_example):
    # d = 512: I(B) < sup I = d/b = 256 < 500 for every B; B* = 500·d/(d − 1000) < 0.
    r = solves(analyze_example("queries/no_crossing.cost"))["B*"]
    assert r.values == () and r.roots == ()
    n = r.no_crossing
    assert (n.extremum, n.value, n.at, n.approached, n.other_value) == ("sup", 256, sympy.oo, True, 500)
    assert n.general == d / b
    conditions = {str(c) for _, c in n.conditions}
    assert conditions == {"d > 1000", "d > Istar*b"}
    assert [g.side for g in r.regimes] == ["memory-bound"]


def test_inverse_hardware_questions(analyze_example):
    # B = 64, d = 8192: I = 2·64·8192 / (2·8320) = 4096/65.
    # BW* = peak / I = 1e15·65/4096; PEAK* = I·BW = 2e12·4096/65.
    rs = solves(analyze_example("queries/inverse_hardware.cost"))
    bw = rs["bandwidth for compute-bound"]
    assert bw.values == (R(10 ** 15 * 65, 4096),) == (15869140625000,)
    assert [g.side for g in bw.regimes] == ["memory-bound", "compute-bound"]
    peak = rs["peak for compute-bound"]
    assert peak.values == (R(2 * 10 ** 12 * 4096, 65),)
    assert [g.side for g in peak.regimes] == ["compute-bound", "memory-bound"]


def test_exercise_2b_n_star(analyze_example):
    # I(n) = 2n³ / (6n²) = n/3 = 500 at n = 1500; in general I = 2n/(3b), n* = 3·b·I*/2.
    r = solves(analyze_example("roofline/exercises/ex2_gemm_1024.cost"))["n*"]
    assert r.values == (1500,) and r.roots == (1500,)
    assert same(r.general[0], 3 * Istar * b / 2)
    assert [(w.rounding, w.value) for w in r.whole] == [("minus_one", 1499), ("plus_one", 1501)]


def test_exercise_3_ratio_is_four_for_any_parameter_count(analyze_example):
    from conftest import query
    assert query(analyze_example("roofline/exercises/ex3_decode_130b_int4.cost"),
                 "fp16 / int4 time ratio, any p") == 4


def test_a_bound_symbol_is_freed_for_the_solve():
    a = load_string(GEMM.format(d=8192, bind=" = 64") + "solve intensity(y) = critical_intensity(y) for B\n").analyze()
    (r,) = a.solves
    assert r.values == (R(512000, 899),) and r.was_bound == 64


def test_regime_map_per_kernel():
    # z = relu(y) is elementwise (1 FLOP per 4 B in bf16): its times grow with B, but it stays
    # memory-bound whatever B is, so it has no crossing and one regime.
    text = GEMM.format(d=8192, bind="") + "output z = relu(y)\nfusion none\nsolve regimes for B\n"
    (m,) = load_string(text).analyze().solves
    assert isinstance(m, RegimeMap)
    kernels = dict(m.kernels)
    assert kernels["y"].values == (R(512000, 899),)
    assert kernels["z"].values == () and [g.side for g in kernels["z"].regimes] == ["memory-bound"]


def test_footprint_fits_up_to_floor(analyze_example):
    # fp8 weights: 70e9 + B·1342177280 ≤ 80e9 ⇔ B ≤ 1e10 / (5·2^28) = 5^9 / 2^18.
    from costlang.frontend.edits import apply_settings
    from costlang.frontend.settings import parse_settings
    from costlang.queries.pipeline import analyze
    from costlang.queries.whatif import scenario_analysis
    base = analyze_example("queries/llm_decode_batch.cost")
    # a what-if column answers the root alone; `run --set weights=fp8` adds the whole numbers
    assert solves(scenario_analysis(base, parse_settings("weights = fp8")))["batches that fit"].whole == ()
    fp8 = analyze(apply_settings(base.program, parse_settings("weights = fp8")))
    r = solves(fp8)["batches that fit"]
    assert r.values == (R(5 ** 9, 2 ** 18),)
    assert [(w.largest, w.side, w.value) for w in r.whole][0] == (True, "fits", 7)
    none = solves(base)["batches that fit"].no_crossing      # fp16: 140 GB of weights > 80 GB
    assert (none.extremum, none.value, none.at, none.approached) == ("inf", 140 * 10 ** 9 + 1342177280, 1, False)


@pytest.mark.parametrize("line, kind, column, message", [
    ("solve intensity(y) = critical_intensity(y) for Q", SolveError, 48, "cannot solve for 'Q'"),
    ("solve flops(W2) = 3 for B", CostlangError, 13, "W2"),
])
def test_solve_errors_are_positioned(line, kind, column, message):
    with pytest.raises(CostlangError) as info:
        load_string(GEMM.format(d=8192, bind="") + line + "\n", "s.cost").analyze()
    (error,) = getattr(info.value, "errors", [info.value])
    assert isinstance(error, kind) and message in error.message
    assert (error.span.line, error.span.column) == (9, column)
    assert info.value.render().startswith(f"s.cost:9:{column}: error: ")


def test_nothing_to_solve_and_unit_mismatch():
    base = GEMM.format(d=8192, bind="")
    with pytest.raises(SolveError, match="neither side depends on d"):
        load_string(base + "solve critical_intensity(y) = 3 for d\n").analyze()
    with pytest.raises(UnitError, match="differ"):
        load_string(base + "solve intensity(y) = t_kernel(y) for B\n").analyze()


# --- property: the symbolic answer agrees with a numeric root finder ---------------------------

def _bisect(f, lo, hi):
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if f(mid) < 0 else (lo, mid)
    return (lo + hi) / 2


@settings(max_examples=8, deadline=None, derandomize=True)
@given(dd=st.integers(1100, 60000), bw=st.integers(1, 8), peak=st.integers(100, 1900))
def test_closed_form_matches_numeric_root(dd, bw, peak):
    text = (f"hardware hw : chapter_gpu {{ peak bf16 = {peak} TFLOP/s; memory HBM {{ bandwidth = {bw} TB/s }} }}\n"
            f"use hardware hw\ndim d = {dd}\ndim B\ninput x: bf16[B, d]\nweight W: bf16[d, d]\n"
            "output y = matmul(x, W)\nsolve intensity(y) = critical_intensity(y) for B\n")
    a = load_string(text).analyze()
    (r,) = a.solves
    istar = R(peak, bw)           # peak / bandwidth, both in units of 10^12
    if dd <= 2 * istar:           # sup I = d/b = d/2 ≤ I*: no crossing, and the supremum says so
        assert r.values == () and r.no_crossing.value == R(dd, 2)
        return
    assert r.values == (istar * dd / (dd - 2 * istar),)   # B* = I*·b·d / (2·(d − I*·b)), b = 2
    k = a.kernels[0]
    (sym,) = k.t_memory.free_symbols - set(a.bindings)
    f = sympy.lambdify(sym, (k.intensity - k.critical_intensity).xreplace(a.bindings))
    numeric = _bisect(lambda v: float(f(v)), 1e-9, 1e12)
    assert float(r.values[0]) == pytest.approx(numeric, rel=1e-9)


# --- target times and rates: T_kernel = launch + max(T_compute, T_memory) -------------------------

def test_kernel_time_targets_on_an_elementwise_kernel(analyze_example):
    # relu on fp16[N], chapter GPU: 4N bytes at 2 TB/s, N FLOP at 1000 TFLOP/s, so
    # T_kernel = max(N/1e15, 4N/2e12) = N/5e11 s; T = 1 ms ⇔ N* = 5e8; 1/T = 100 ⇔ N* = 5e9;
    # in general N* = T·BW/(2·b) = BW/(2000·b). These crashed in sympy.limit (NotImplementedError).
    rs = solves(analyze_example("queries/kernel_time_target.cost"))
    one_ms = rs["N for 1 ms"]
    assert one_ms.values == (5 * 10 ** 8,) and one_ms.roots == (5 * 10 ** 8,)
    BW = sympy.Symbol("BW", positive=True)
    assert same(one_ms.general[0], BW / (2000 * b))
    assert [g.side for g in one_ms.regimes] == ["below", "above"]
    assert rs["N for 100 runs per second"].values == (5 * 10 ** 9,)
    assert rs["N within 1 ms"].solution == sympy.Interval(0, 5 * 10 ** 8, left_open=True)


def test_one_second_as_a_plain_number():
    text = "use hardware chapter_gpu\ndim N\ninput x: fp16[N]\noutput y = relu(x)\nsolve t_kernel(y) = 1 for N\n"
    (r,) = load_string(text).analyze().solves
    assert r.values == (5 * 10 ** 11,)                                 # 4N / 2e12 = 1 s


def test_tokens_per_second_target_and_its_branch(analyze_example):
    # fp16 decode: tokens/s = B / max(P·b/BW, 2·P·B/peak) = 100·B/7 while memory-bound, so
    # 5000 tokens/s at B* = 350 (< 500, the crossing: memory-bound there); with int4 weights
    # 400·B/7 = 5000 at B* = 175/2. Never above peak/(2·P) = 50000/7 ≈ 7143.
    a = analyze_example("queries/llm_decode_batch.cost")
    r = solves(a)["batch for 5000 tokens/s"]
    assert r.values == (350,) and tuple(map(case_words, r.cases)) == ("step is memory-bound there",)
    assert [(w.rounding, w.value) for w in r.whole] == [("minus_one", 349), ("plus_one", 351)]
    (limit,) = r.limits
    assert limit.value == R(50000, 7)
    text = GEMM_DECODE + 'solve "fast": B / t_kernel(step) = 8000 for B\nsolve "T": t_kernel(step) = 0.1 s for B\n'
    rs = solves(load_string(text).analyze())
    n = rs["fast"].no_crossing                                        # 8000 > 50000/7: no batch
    assert (n.extremum, n.value, n.at, n.approached) == ("sup", R(50000, 7), sympy.oo, True)
    assert rs["fast"].values == () and [g.sign for g in rs["fast"].regimes] == [-1]
    # 0.1 s: the memory time is 0.07 s, so the compute branch 2·P·B/1e15 = 0.1 gives B* = 5000/7
    assert rs["T"].values == (R(5000, 7),) and tuple(map(case_words, rs["T"].cases)) == ("step is compute-bound there",)


GEMM_DECODE = """
hardware chapter_80gb : chapter_gpu { memory HBM { capacity = 80 GB } }
use hardware chapter_80gb
param P = 70e9
dim B
weight W: fp16[P]
step = custom(W) { flops = 2 * P * B; math = fp16 }
"""


def test_kernel_time_with_another_free_symbol_keeps_both_branches():
    # d free: T_compute = 2·B·d²/1e15 = 1 ms at B = 5e11/d² (if compute-bound there);
    # T_memory = 2·d·(2B + d)/2e12 = 1 ms at B = 5e8/d − d/2 (if memory-bound there).
    from costlang.budget import limit
    text = FREE_D + 'solve "T": t_kernel(y) = 1 ms for B\n'
    with limit(30):  # about 4 s of CPU alone, past the default 5 s in a busy test worker's heap
        (r,) = load_string(text).analyze().solves
    forms = dict(zip(map(case_words, r.cases), r.roots))
    assert set(forms) == {"if y is compute-bound there", "if y is memory-bound there"}
    assert same(forms["if y is compute-bound there"], 5 * 10 ** 11 / d ** 2)
    assert same(forms["if y is memory-bound there"], 5 * 10 ** 8 / d - d / 2)
    from costlang.printers.text.whatif import solve_lines
    assert [line for line in solve_lines(r) if line.startswith("    B*")] == [
        "    B* = 500000000000/d^2   (if y is compute-bound there)",
        "    B* = 500000000/d - d/2   (if y is memory-bound there)"]
    # each holds where its branch is taken: compute-bound at B = 5e11/d² ⇔ 1e-3 ≥ d·(2·5e11/d² + d)/1e12
    # = 1/d + d²/1e12 ⇔ (multiplied by 1e12·d > 0) 1e9·d − d³ − 1e12 ≥ 0; the memory branch the reverse
    assert [str(c) for cs in r.validity for c in cs] == ["-d**3 + 1000000000*d - 1000000000000 >= 0",
                                                         "d**3 - 1000000000*d + 1000000000000 >= 0"]


FREE_D = GEMM.format(d="", bind="").replace("dim d = ", "dim d")


@pytest.mark.parametrize("failure", [NotImplementedError("MRV set"), ValueError("v"), TypeError("t"),
                                     ZeroDivisionError("z")])
def test_an_extra_that_sympy_cannot_compute_is_left_out(failure):
    from costlang.queries.solve import _best_effort

    def extra():
        raise failure
    undecided = []
    assert _best_effort(extra, (), None, "limits", undecided) == () and undecided == ["limits"]


# --- regime maps with other symbols free ---------------------------------------------------------

def test_regime_map_with_another_free_symbol_gives_the_closed_form():
    # T_memory − T_compute = d·(2B + d)/1e12 − 2·B·d²/1e15 = 0 ⇔ B* = 500·d/(d − 1000), positive
    # only for d > 1000; below B* (B → 0: d²/1e12 > 0) memory-bound. relu z: 4·B·d bytes vs B·d
    # FLOPs, T_memory − T_compute = B·d·(2e-12 − 1e-15) > 0: memory-bound for every B.
    text = FREE_D + "output z = relu(y)\nfusion none\nsolve regimes for B\n"
    (m,) = load_string(text).analyze().solves
    y, z = dict(m.kernels)["y"], dict(m.kernels)["z"]
    (root,) = y.roots
    assert same(root, 500 * d / (d - 1000))
    assert [(g.side, g.lower, g.upper) for g in y.regimes] == [("memory-bound", None, root),
                                                                ("compute-bound", root, None)]
    assert [str(c) for _, c in y.conditions] == ["d > 1000"]
    assert z.roots == () and [(g.side, g.lower, g.upper) for g in z.regimes] == [("memory-bound", None, None)]
    from costlang.printers.text.whatif import solve_lines
    assert solve_lines(m) == [
        "  regimes for B: where each kernel turns from one bound to the other",
        "    y: memory-bound for B < B*, compute-bound for B > B* (B* = 500·d/(d - 1000))",
        "      (500·d/(d - 1000) is positive only when d > 1000; otherwise memory-bound for every B)",
        "    z: memory-bound for every B",
    ]


def test_symbolic_inequality_says_where_it_holds():
    text = FREE_D + "solve intensity(y) >= critical_intensity(y) for B\n"
    (r,) = load_string(text).analyze().solves
    assert r.solution == sympy.Interval(500 * d / (d - 1000), sympy.oo)


# --- approximations: only when close to the exact answer ------------------------------------------

def test_approximations_far_from_the_exact_answer_are_left_out(analyze_example):
    # B = 64, d = 8192. BW* = 1e15·(2B + d)/(B·d): B → ∞ gives 2e15/d = 244.1 GB/s, 98.5 % low
    # (left out); d → ∞ gives 1e15/B, (1e15/64)/(1e15·65/4096) − 1 = 64/65 − 1 = −1/65 (kept).
    # PEAK* = 2e12·B·d/(2B + d): B → ∞ gives 1e12·d, 6400 % high (left out); d → ∞ gives 2e12·B,
    # 64·65/4096 − 1 = 1/64 (kept).
    rs = solves(analyze_example("queries/inverse_hardware.cost"))
    (bw,) = rs["bandwidth for compute-bound"].approximations
    assert bw.symbol.name == "d" and bw.error == R(-1, 65)
    (peak,) = rs["peak for compute-bound"].approximations
    assert peak.symbol.name == "d" and peak.error == R(1, 64)


def test_approximation_with_free_sizes_is_kept():
    # d free: B* = 300·d/(d − 600) → 300 as d → ∞; no values to compare, so it is shown.
    text = FREE_D + "solve intensity(y) = 300 for B\n"
    (r,) = load_string(text).analyze().solves
    (ap,) = r.approximations
    assert ap.expr == 300 and ap.value == 300 and ap.exact is None and ap.error is None


# --- printed text ----------------------------------------------------------------------------------

def test_limits_print_infinity_not_oo(analyze_example):
    from costlang.printers.text.whatif import solve_lines
    rs = solves(analyze_example("queries/inverse_hardware.cost"))
    lines = solve_lines(rs["peak for compute-bound"])
    assert "    as PEAK → ∞: critical_intensity(y) → ∞" in lines     # PEAK/BW grows without bound
    assert not any("oo" in line for line in lines)


def test_an_unlabelled_solve_prints_its_equation_once():
    from costlang.printers.text.whatif import solve_lines
    (r,) = load_string(GEMM.format(d=8192, bind="") + "solve intensity(y) = 300 for B\n").analyze().solves
    assert r.name == "intensity(y) = 300 for B"
    assert solve_lines(r)[0] == "  intensity(y) = 300, for B"
    (r,) = load_string(GEMM.format(d=8192, bind="") + 'solve "I300": intensity(y) = 300 for B\n').analyze().solves
    assert solve_lines(r)[0] == "  I300: intensity(y) = 300, for B"


def test_the_approximation_line_states_its_error_and_the_rule(analyze_example):
    # d → ∞: B* ≈ I*·b/2 = 500 against 512000/899: 500·899/512000 − 1 = −0.1221 (12.2 % low).
    from costlang.printers.text.whatif import solve_lines
    r = solves(analyze_example("queries/decode_crossing.cost"))["B*"]
    assert r.approximations[0].error == R(500 * 899, 512000) - 1
    assert solve_lines(r)[-1] == ("    approximation for d ≫ B* (d → ∞): B* ≈ Istar·b/2 = 500 "
                                  "(exact 512000/899 ≈ 569.5; 12.2 % low; shown when within 25 %)")


def solve_in(text):
    (r,) = load_string(text, "t.cost").analyze().solves
    return r


CUBIC = ("use hardware chapter_gpu\ndim n\ninput x: fp16[n]\ny = custom(x) { flops = 501*n^3 - 600*n^2 + "
         "90000*n + 4996000000; reads = n^3; writes = 10^7 }\n")


def test_a_touching_root_does_not_change_the_whole_number_answers():
    # I − I* = (n − 100)²·(n − 400)/(n³ + 10⁷) (I* = 500): memory-bound below 400
    # (balanced at the touching root 100), compute-bound above: 399 and 401, not 99 and 101
    r = solve_in(CUBIC + "solve intensity(y) = critical_intensity(y) for n\n")
    assert r.values == (100, 400)
    assert [(g.upper, g.side) for g in r.regimes] == [(400, "memory-bound"), (None, "compute-bound")]
    assert [(w.largest, w.side, w.value) for w in r.whole] == [(True, "memory-bound", 399),
                                                             (False, "compute-bound", 401)]
    below = solve_in(CUBIC + "solve intensity(y) < critical_intensity(y) for n\n")
    # strictly below only where I < I*: (0, 400) without the touching root n = 100
    assert below.solution == sympy.Union(sympy.Interval.open(0, 100), sympy.Interval.open(100, 400))
    at_most = solve_in(CUBIC + "solve intensity(y) <= critical_intensity(y) for n\n")
    assert at_most.solution == sympy.Interval.Lopen(0, 400)


FITS = ("hardware big : chapter_gpu { memory HBM { capacity = 80 GB } }\nuse hardware big\nparam P = 70e9\n"
        "dim B\nweight W: fp8[P]\ninput kv: fp8[B, 1000000000]\ny = custom(W, kv) { flops = 2 * P * B; "
        "math = fp16 }\n")


def test_fitting_is_the_same_whichever_way_round_the_relation_is_written():
    # 70e9 fp8 weights (70 GB) + B·10⁹ B of cache in 80 GB: B* = 10 fits exactly
    for text in ("solve capacity() >= footprint() for B", "solve footprint() <= capacity() for B"):
        r = solve_in(FITS + text + "\n")
        assert r.values == (10,) and r.solution == sympy.Interval.Lopen(0, 10)
        assert [(w.largest, w.value) for w in r.whole] == [(True, 10), (False, 11)]
        assert r.whole[0].side == "fits" and r.whole[1].side == "does-not-fit"


def test_the_large_size_approximation_with_two_free_sizes():
    # bf16 [B,D]·[D,F], 197 TFLOP/s, 820 GB/s: I* = 197e12/820e9 = 9850/41 ≈ 240.2;
    # I = 2BDF / (2(BD + DF + BF)) = I* gives B* = 9850·D·F/(41·D·F − 9850·D − 9850·F), which tends
    # to I* = 9850/41 as D and F grow (each alone leaves the other in it)
    r = solve_in("hardware chip { peak bf16 = 197 TFLOP/s; memory HBM { bandwidth = 820 GB/s } }\n"
                 "use hardware chip\ndim B, D, F\ninput x: bf16[B, D]\nweight W: bf16[D, F]\ny = matmul(x, W)\n"
                 "solve intensity(y) = critical_intensity(y) for B\n")
    joint = [ap for ap in r.approximations if len(ap.growing) == 2]
    assert [(tuple(map(str, ap.growing)), ap.expr) for ap in joint] == [(("D", "F"), sympy.Rational(9850, 41))]
    from costlang.printers.text.whatif import solve_lines
    assert "    approximation for D, F ≫ B* (D, F → ∞): B* ≈ Istar = 9850/41 ≈ 240.2" in solve_lines(r)


TWO_ROOTS = ("use hardware chapter_gpu\ndim n\nparam c\ninput x: fp16[n]\n"
             "y = custom(x) { flops = 500*n + n^2 - 3*c*n + 2*c^2; reads = n; writes = 0 }\n"
             "solve intensity(y) = critical_intensity(y) for n\n")


def test_what_sympy_cannot_decide_is_said():
    # I − I* = (n² − 3cn + 2c²)/n = (n − c)(n − 2c)/n: two roots in the free c, so the sides of each
    # crossing are not decided: said so, not left out
    r = solve_in(TWO_ROOTS)
    c = sympy.Symbol("c", positive=True)
    assert set(r.roots) == {c, 2 * c} and r.regimes == () and r.undecided == ("regimes",)
    from costlang.printers.text.whatif import solve_lines
    assert "    sympy could not decide: the regimes on each side of the crossing" in solve_lines(r)


def test_an_extra_sympy_cannot_compute_is_said(monkeypatch):
    import costlang.queries.solve as solve_module

    def fails(*args):
        raise NotImplementedError("no method")
    monkeypatch.setattr(solve_module, "limits", fails)
    r = solve_in(CUBIC + "solve intensity(y) = critical_intensity(y) for n\n")
    assert r.limits == () and r.undecided == ("limits",) and r.values == (100, 400)


def test_a_solution_set_with_no_short_exact_end_is_rounded_inward():
    # 2 B · (517·1024 + 256·4096) B = 3,155,968·B ≤ 249,763,584 B ⇔ B ≤ 124881792/1577984 = 79.1402…
    # (no short exact form). The set printed "B ≤ ≈ 79.14"; rounded inward it stays true: an upper
    # end rounds down (79.14 < 79.1402), a lower end up (B ≥ 79.15 > 79.1402).
    from costlang.printers.text.report import report
    a = load_string("use hardware chapter_gpu\ndim B\ndim S = 1024\ndim T = 4096\n"
                    "input x: fp16[B, 517*S + 256*T]\noutput y = relu(x)\n"
                    'solve "fits": nbytes(x) <= 249763584 B for B\n'
                    'solve "big": nbytes(x) >= 249763584 B for B\n').analyze()
    assert a.value(a.solves[0].roots[0]) == sympy.Rational(124881792, 1577984)
    text = report(a)
    assert "    holds for B ≤ 79.14\n" in text and "    holds for B ≥ 79.15\n" in text
    assert "≈ 79.14\n" not in text.split("holds for")[1]


def test_a_regime_end_known_only_approximately_is_named_not_written_less_than_approx():
    from costlang.printers.text.report import report
    # I = (n³ + n)/2 FLOP/B against I* = 500: n³ + n = 1000, one real root (Cardano, too long to
    # print as the end of a range): 9.967³ + 9.967 ≈ 990.1 + 9.97 ≈ 1000. The range is stated by
    # the root's name, `n < n* ≈ 9.967`, never `n < ≈ 9.967`.
    a = load_string("use hardware chapter_gpu\ndim n\ninput x: fp16[n]\n"
                    "y = custom(x) { flops = n^3 + n; reads = 1; writes = 1 }\n"
                    "solve \"n*\": intensity(y) = critical_intensity(y) for n\n", "r.cost").analyze()
    lines = [ln.strip() for ln in report(a).splitlines()]
    assert "memory-bound for n < n* ≈ 9.967, compute-bound for n > n* ≈ 9.967" in lines
    assert not any("< ≈" in ln or "> ≈" in ln for ln in lines)


# --- whole answers obey the file's own constraints ---------------------------------------------------

SHARDED = """hardware chip {{ peak fp16 = 1 TFLOP/s; memory HBM {{ bandwidth = 2 TB/s; capacity = {cap} B }} }}
dim n
system s {{ chip = chip; axis g = n; link ICI over g {{ one_way = 1 TB/s }} }}
use system s
input x: fp16[10]
weight W: fp16[2800]
shard W: [g]
y = custom(x, W) -> fp16[10] {{ flops = 1 }}
solve "fewest": footprint() <= capacity() for n
"""


@pytest.mark.parametrize("cap, star, whole, rejected", [
    # per chip: W 2·2800/n B + x 20 B + y 20 B ≤ cap. cap = 1000: n* = 5600/960 = 35/6 ≈ 5.83;
    # floor 5 divides 2800 (560 each); ceil 6 does not (2800/6 = 466.7), so the first accepted above is 7.
    (1000, R(35, 6), [5, 7], [(), (6,)]),
    # cap = 900: n* = 5600/860 = 280/43 ≈ 6.51; floor 6 is rejected, so the largest that does not fit
    # and that the file accepts is 5; ceil 7 divides 2800 (400 each).
    (900, R(280, 43), [5, 7], [(6,), ()]),
    # cap = 740: n* = 5600/700 = 8 exactly, where footprint = capacity fits: largest not fitting is
    # n* − 1 = 7 (divides: 400), smallest fitting is 8 (divides: 350); nothing is stepped past.
    (740, 8, [7, 8], [(), ()]),
])
def test_whole_answers_step_past_values_the_file_rejects(cap, star, whole, rejected):
    r = solves(load_string(SHARDED.format(cap=cap)).analyze())["fewest"]
    assert r.values == (star,)
    assert [w.value for w in r.whole] == whole
    assert [tuple(v for v, _ in w.rejected) for w in r.whole] == rejected
    for w in r.whole:
        for _, reason in w.rejected:
            assert reason == "dimension 2800 of 'W' = 2800 does not divide over axis g of 6 chips"


def test_whole_answer_text_says_what_the_file_rejects(tmp_path, capsys):
    from costlang.cli import main
    path = tmp_path / "f.cost"
    path.write_text(SHARDED.format(cap=1000))
    assert main(["run", str(path)]) == 0
    assert ("    smallest whole n that fits in memory: 7   (ceil(n*) = 6, but the file rejects n = 6: "
            "dimension 2800 of 'W' = 2800 does not divide over axis g of 6 chips)") in capsys.readouterr().out


TWO_SPLITS = """hardware chip { peak fp16 = 1 TFLOP/s; memory HBM { bandwidth = 2 TB/s; capacity = 1000 B } }
dim n
system s { chip = chip; axis g = n; link ICI over g { one_way = 1 TB/s } }
use system s
input x: fp16[10]
weight W: fp16[2800]
shard W: [g]
shard x: [g]
y = custom(x, W) -> fp16[10] { flops = 1 }
solve "fewest": footprint() <= capacity() for n
"""


def test_a_split_that_does_not_divide_rejects_a_value_without_resolving_the_file_again(monkeypatch):
    """A whole number is first checked against the splits the free symbol leaves undecided; the
    message is the one resolving the file with that value gives (its first error in file order)."""
    import costlang.frontend.edits as edits
    from costlang.frontend.settings import parse_settings
    from costlang.passes.shard import split_errors
    program = load_string(TWO_SPLITS, "t.cost").analyze().program
    n = program.symbols["n"].symbol
    # 10 and 2800 over n chips: both divide for n = 1, 2, 5, 10; n = 4 and 7 divide 2800 only
    # (10/4, 10/7 not whole), n = 3 neither (the W error first: its shard line comes first), n = 8
    # neither (2800/8 = 350 but 10/8 is not whole: x's error alone)
    expected = {1: None, 2: None, 3: "W", 4: "x", 5: None, 7: "x", 8: "x", 10: None}
    for value, tensor in expected.items():
        error = split_errors(program, {n: sympy.Integer(value)})
        try:
            edits.apply_settings(program, parse_settings(f"n={value}"))
            whole = None
        except CostlangError as e:
            whole = e.message
        assert (error.message if error else None) == whole
        size = 2800 if tensor == "W" else 10
        assert whole is None if tensor is None else \
            whole == f"dimension {size} of '{tensor}' = {size} does not divide over axis g of {value} chips"
    # the solve, per chip: W 2·2800/n B + x 2·10/n B + y 20 B (a custom op's output is not split)
    # ≤ 1000 B ⇔ 5620/n ≤ 980 ⇔ n ≥ 5620/980 = 281/49 ≈ 5.73; floor 5
    # (divides both), ceil 6 rejected (10/6), 7 rejected (10/7), 8 rejected, 9 rejected, 10 accepted.
    # Only the two accepted values are resolved again.
    calls = []
    real = edits.apply_settings
    monkeypatch.setattr(edits, "apply_settings", lambda p, s: calls.append(s) or real(p, s))
    r = solves(load_string(TWO_SPLITS, "t.cost").analyze())["fewest"]
    assert r.values == (R(281, 49),)
    assert [w.value for w in r.whole] == [5, 10]
    assert [tuple(v for v, _ in w.rejected) for w in r.whole] == [(), (6, 7, 8, 9)]
    assert len(calls) == 2


# --- a closed form carries the max() branch it was solved on ----------------------------------------

BRANCHES = """hardware hw { peak fp16 = 1000 TFLOP/s; memory HBM { bandwidth = 2 TB/s; capacity = 10 MB } }
use hardware hw
dim B
dim S = %d
input x: fp16[B, S]
weight W: fp16[S, 1024]
h = relu(x)
output y = matmul(h, W)
solve "batch": footprint() <= capacity() for B
"""


@pytest.mark.parametrize("size, closed, value, validity", [
    # footprint = W 2·1024·S + the peak live bytes: relu holds x and h, 2·B·S + 2·B·S = 4·B·S;
    # the matmul holds h and y, 2·B·S + 2·1024·B. 4·B·S ≥ 2·B·S + 2048·B ⇔ S ≥ 1024.
    # S = 2048, relu's branch: 2048·S + 4·B·S = 10^7 ⇔ B* = (2500000 − 512·S)/S = 1451424/2048 = 45357/64.
    (2048, (2500000 - 512 * sympy.Symbol("S")) / sympy.Symbol("S"), R(45357, 64), "S >= 1024"),
    # S = 512, the matmul's branch: 2048·S + B·(2·S + 2048) = 10^7 ⇔ B* = (5000000 − 1024·S)/(S + 1024)
    # = 4475712/1536 = 23311/8 (the relu formula would give 4371, the wrong branch).
    (512, (5000000 - 1024 * sympy.Symbol("S")) / (sympy.Symbol("S") + 1024), R(23311, 8), "S <= 1024"),
])
def test_closed_form_says_which_branch_of_max_it_holds_on(size, closed, value, validity):
    r = solves(load_string(BRANCHES % size).analyze())["batch"]
    S = next(s for s in r.roots[0].free_symbols if s.name == "S")
    assert r.values == (value,)
    assert same(r.roots[0], closed.xreplace({sympy.Symbol("S"): S}))
    assert [str(c) for c in r.validity[0]] == [validity]


def test_closed_form_at_a_tie_of_the_branches_holds_on_both():
    # S = 1024: 4·B·S = 2·B·S + 2048·B, both branches give B* = (10^7 − 2048·1024)/4096 = 7902848/4096
    # = 61741/32, and the condition of the branch taken (S ≥ 1024 or S ≤ 1024) holds there.
    r = solves(load_string(BRANCHES % 1024).analyze())["batch"]
    assert r.values == (R(61741, 32),)
    (cond,) = r.validity[0]
    assert str(cond) in ("S >= 1024", "S <= 1024")


def test_closed_form_validity_is_printed(tmp_path, capsys):
    from costlang.cli import main
    path = tmp_path / "f.cost"
    path.write_text(BRANCHES % 2048)
    assert main(["run", str(path)]) == 0
    assert ("       (this closed form holds only while S ≥ 1024; elsewhere another branch of max()/min() "
            "gives B*)") in capsys.readouterr().out.splitlines()


@pytest.mark.slow  # two analyses of the serving example; the branch rule is pinned fast by the relu → matmul cases above
def test_serving_batch_closed_form_holds_up_to_the_attention_branch(analyze_example):
    from costlang.frontend.settings import parse_settings
    # At S = 1024 the live peak is the lm_head's: logits and hidden, (128256 + 4096)·2 = 264,704 B
    # per token; the attention's scores and probabilities with the rest of its kernel hold
    # 128·B·S·(S + 80) B. 264704·B·S ≥ 128·B·S·(S + 80) ⇔ S ≤ 2068 − 80 = 1988.
    a = analyze_example("llm/serving_llama3_8b_h100.cost")
    (r,) = a.solves
    assert r.values == (R(975639, 12328),)           # 124881792/(517·1024 + 256·4096) ≈ 79.14
    assert "S <= 1988" in [str(c) for c in r.validity[0]]
    # Past S = 1988 the other branch: B* = 499527168/(S² + 80·S + 1024·T); at S = 8192, T = 4096:
    # 499527168/(67108864 + 655360 + 4194304) = 499527168/71958528 = 975639/140544 ≈ 6.942, where the
    # first closed form would give 124881792/(517·8192 + 256·4096) ≈ 23.63.
    from costlang.queries.whatif import scenario_analysis
    (far,) = scenario_analysis(a, parse_settings("S=8192")).solves
    assert far.values == (R(975639, 140544),)
    assert "S >= 1988" in [str(c) for c in far.validity[0]]


# --- where sympy cannot solve exactly: found numerically, or undecided -------------------------------

CUSTOM = """hardware hw { peak fp16 = 1000 TFLOP/s; memory HBM { bandwidth = 2 TB/s } }
use hardware hw
dim B
input x: fp16[B]
y = custom(x) -> fp16[B] { flops = %s; reads = %s }
solve "I": intensity(y) = critical_intensity(y) for B
"""


def test_exponential_in_the_size_is_solved_numerically_with_exact_whole_numbers():
    # I* = 1e15 / 2e12 = 500. bytes = 2·B written + 3000·(1 − (7/8)^B) read (an MoE-like touch count):
    # I = 2000·B / (2·B + 3000·(1 − (7/8)^B)) = 500 ⇔ 1000·B = 1500000·(1 − (7/8)^B)
    # ⇔ B = 1500·(1 − (7/8)^B): B* = 1500 − 1500·(7/8)^B* ≈ 1500 − 1.7e-84, just below 1500.
    # B = 1499: 1499 < 1500·(1 − (7/8)^1499) ≈ 1500, memory-bound; B = 1500: 1500 > 1500 − 1500·(7/8)^1500,
    # compute-bound by a hair (a relative 1e-87): the whole numbers come from exact signs, not from
    # rounding the decimal 1500.0.
    r = solves(load_string(CUSTOM % ("2000 * B", "3000 * (1 - (7 / 8) ^ B)")).analyze())["I"]
    (value,) = r.values
    assert r.numeric == (True,) and abs(value - 1500) < sympy.Rational(1, 10 ** 6)
    assert [(c.lower, c.upper) for c in r.scan.changes] == [(1499, 1500)]
    assert [g.side for g in r.regimes] == ["memory-bound", "compute-bound"]
    assert [(w.side, w.value) for w in r.whole] == [("memory-bound", 1499), ("compute-bound", 1500)]
    assert r.undecided == ()


def test_ceil_in_the_size_gives_every_crossing_exact_or_numeric():
    # I = 2000·B / (2·B + 300·c), c = ceil(B/256): I = 500 ⇔ 1000·B = 150000·c ⇔ B = 150·c.
    # c = 1 (B ≤ 256): B = 150, exact; c = 2 (256 < B ≤ 512): B = 300, exact; c ≥ 3: 150·c < 256·(c − 1),
    # no root. Between them the sign of B − 150·c jumps at B = 256 (c: 1 → 2): compute-bound up to 256
    # (256 > 150), memory-bound just above (257 < 300). For B > 300, B − 150·c ≥ B − 150·(B/256 + 1) > 0.
    r = solves(load_string(CUSTOM % ("2000 * B", "300 * ceil(B / 256)")).analyze())["I"]
    assert r.values[0] == 150 and r.values[2] == 300 and r.numeric == (False, True, False)
    assert [(c.lower, c.upper) for c in r.scan.changes if c.lower != c.upper] == [(256, 257)]
    assert [g.side for g in r.regimes] == ["memory-bound", "compute-bound", "memory-bound", "compute-bound"]
    # at B = 150 and 300 exactly I = I* (balanced): the neighbours are 149 | 151 and 299 | 301
    assert [w.value for w in r.whole] == [149, 151, 256, 257, 299, 301]


def test_no_sign_change_found_is_undecided_never_a_regime(tmp_path, capsys):
    # flops = 500·B: I = 500·B / (2·B + 3000·(1 − (7/8)^B)) < 500·B / (2·B) = 250 < 500, so no crossing,
    # but sympy cannot prove it: the scan finds no sign change and the answer says undecided.
    text = CUSTOM % ("500 * B", "3000 * (1 - (7 / 8) ^ B)")
    r = solves(load_string(text).analyze())["I"]
    assert r.values == () and r.regimes == () and r.no_crossing is None and r.whole == ()
    assert "regimes" in r.undecided and r.scan.changes == ()
    from costlang.cli import main
    path = tmp_path / "f.cost"
    path.write_text(text)
    assert main(["run", str(path)]) == 0
    out = capsys.readouterr().out
    assert ("    undecided: sympy cannot solve this exactly, and intensity(y) - critical_intensity(y) does not "
            "change sign at any of 383 points from B = 1 to 2^50 (a scan, not a proof)") in out.splitlines()
    assert "for every B" not in out


def test_numeric_root_is_printed_as_found_numerically(tmp_path, capsys):
    from costlang.cli import main
    path = tmp_path / "f.cost"
    path.write_text(CUSTOM % ("2000 * B", "300 * ceil(B / 256)"))
    assert main(["run", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert ("    B* ≈ 256   (found numerically, by bisection on the exact expression: intensity(y) - "
            "critical_intensity(y) changes sign between B = 256 and 257)") in lines
    assert "    B* = 150" in lines and "    B* = 300" in lines


@pytest.mark.slow  # the stdlib MoE block; the same route is pinned fast by the (7/8)^B custom kernel above
def test_moe_experts_touched_crossing_is_found_numerically():
    # The stdlib moe with 8 experts, top 1: the batch touches 8·(1 − (7/8)^B) experts. Over the block
    # (router matmul, softmax, experts): FLOPs 352,481,320·B; bytes 24,640·B + 65,536
    # + 2,818,572,288·(1 − (7/8)^B); the block's I* (FLOP-weighted over its kernels' peaks) is
    # 116666999023830/394982373301 ≈ 295.37. With (7/8)^B ≈ 0 near the root:
    # B* ≈ I*·2,818,637,824 / (352,481,320 − 24,640·I*) ≈ 2411.76: memory-bound up to 2411.
    text = ("import llm\nuse hardware h100_sxm\ndim B\ninput x: bf16[B, 1, 4096]\n"
            "m = moe(x, experts = 8, top_k = 1, ffn = 14336, wt = bf16, at = bf16)\n"
            'solve "I": intensity(m) = critical_intensity(m) for B\n')
    r = solves(load_string(text).analyze())["I"]
    (value,) = r.values
    assert r.numeric == (True,) and abs(value - sympy.Float("2411.76285")) < sympy.Rational(1, 10 ** 4)
    assert [(w.side, w.value) for w in r.whole] == [("memory-bound", 2411), ("compute-bound", 2412)]


def test_a_param_is_scanned_over_positive_reals():
    # B = 1000: I = 2000·1000 / (2·1000 + 1000·r·(1 − (7/8)^r)) = 500 ⇔ r·(1 − (7/8)^r) = 2;
    # r = 4.458: (7/8)^4.458 = e^(4.458·ln 0.875) = e^(−0.5953) = 0.5514, 4.458·0.4486 = 2.000.
    # Below it the reads are smaller: compute-bound; above, memory-bound.
    text = CUSTOM.replace("dim B", "dim B = 1000\nparam r = 3") % ("2000 * B", "1000 * r * (1 - (7 / 8) ^ r)")
    r = solves(load_string(text.replace("for B", "for r")).analyze())["I"]
    (value,) = r.values
    assert r.numeric == (True,) and abs(value - sympy.Float("4.45822")) < sympy.Rational(1, 10 ** 4)
    assert [g.side for g in r.regimes] == ["compute-bound", "memory-bound"] and r.whole == ()
    assert r.scan.low == R(1, 2 ** 20) and r.scan.high == 2 ** 50


def test_a_footprint_solves_general_form_figures_no_kernel(monkeypatch):
    # 70e9 weights of b bytes + B·10⁹ cache elements of b bytes ≤ 80 GB: B* = (8e10 − P·b)/(10⁹·b),
    # 10 at b = 1 (fp8). Only memory is read, so the general form's analysis figures no kernel.
    from costlang.analysis import roofline
    from costlang.queries import solve as solve_module
    calls = []
    real = roofline.analyze_roofline

    def spy(*args, **kwargs):
        calls.append(kwargs.get("figures", True))
        return real(*args, **kwargs)
    monkeypatch.setattr(solve_module, "analyze_roofline", spy)
    r = solve_in(FITS + "solve footprint() <= capacity() for B\n")
    b = next(i.symbol for i in r.legend if i.symbol.name == "b")
    P = sympy.Symbol("P", positive=True)
    assert r.values == (10,) and calls == [False]
    assert same(r.general[0].xreplace({s: P for s in r.general[0].free_symbols if s.name == "P"}),
                (80 * 10 ** 9 - P * b) / (10 ** 9 * b))
    # a solve that reads a kernel's figure (its intensity against I*) keeps them
    calls.clear()
    solve_in(FITS + "solve intensity(y) = critical_intensity(y) for B\n")
    assert calls == [True]


def test_a_time_solves_general_form_works_out_no_footprint(monkeypatch, analyze_example):
    # decode_crossing.cost reads intensity and I* only. I = 2·B·d² / (b·(Bd + d² + Bd)) = 2Bd/(b(2B + d))
    # = I* ⇔ B* = I*·b·d / (2(d − I*·b)) (500d/(d − 1000) at b = 2, I* = 500): that general form
    # comes from an analysis that works out no footprint; the numeric analysis still has one
    from costlang.queries import solve as solve_module
    memory = []
    real = solve_module.analyze_roofline

    def spy(*args, **kwargs):
        memory.append(kwargs.get("memory", True))
        return real(*args, **kwargs)
    monkeypatch.setattr(solve_module, "analyze_roofline", spy)
    a = analyze_example("queries/decode_crossing.cost")
    r = solves(a)["B*"]
    assert memory == [False] and a.footprint is not None
    assert same(r.general[0], Istar * b * d / (2 * (d - Istar * b)))
