"""What-ifs are checked like edits.

A `--set`, a scenario, a solve or a sweep that changes a dim, a param or a dtype resolves the file
again with the change, so every shape, size and dtype rule holds as if the file had been edited,
and an error it causes points at the file's own span. Expected values are derived by hand below.
"""
import pytest
import sympy

from costlang import load_string
from costlang.queries.whatif import scenario_analysis
from costlang.frontend.settings import parse_settings
from costlang.cli import main
from costlang.errors import CostlangError

R = sympy.Rational

KJ = """use hardware chapter_gpu
dim M = 4096, N = 4096
dim K = 5, J = 5
input a: fp16[M, K]
weight w: fp16[J, N]
c = matmul(a, w)
"""


def run(tmp_path, capsys, text, *args, name="f.cost"):
    path = tmp_path / name
    path.write_text(text)
    status = main([args[0], str(path), *args[1:]])
    captured = capsys.readouterr()
    return status, captured.out, captured.err.replace(str(path), name)


# --- 9.3: shapes are checked again --------------------------------------------------------------

def test_set_that_breaks_a_matmul_is_an_error_at_the_matmul(tmp_path, capsys):
    status, _, err = run(tmp_path, capsys, KJ, "run", "--set", "K=7")
    assert status == 2
    assert err.splitlines()[:3] == [
        "f.cost:6:5: error: matmul: inner dimensions differ: a[M, K] · w[J, N] (with K=7)",
        " 6 | c = matmul(a, w)",
        "   |     ^^^^^^^^^^^^"]
    assert "hint: the last dimension of a (K = 7) must equal the first matrix dimension of w (J = 5)" in err


def test_setting_both_sizes_keeps_the_product_valid(tmp_path, capsys):
    # K = J = 7: 2·4096·4096·7 FLOP
    m = load_string(KJ)
    a = m.analyze(settings={"K": 7, "J": 7})
    assert a.value(a.totals.flops) == 2 * 4096 * 4096 * 7


def test_scenario_and_compare_check_shapes_too(tmp_path, capsys):
    text = KJ + "scenario wide { K = 7 }\ncompare baseline, wide\n"
    status, _, err = run(tmp_path, capsys, text, "run")
    assert status == 2 and err.startswith("f.cost:6:5: error: matmul: inner dimensions differ")
    status, _, err = run(tmp_path, capsys, KJ, "compare", "--scenario", "K=7")
    assert status == 2 and "(with K=7)" in err


def test_solve_for_a_size_that_must_agree_ties_the_other_one():
    # Solving for K frees K; J must equal K (the matmul), so J follows K: w is K·N, not 5·N.
    # I = 2·M·N·K / (2·(M·K + K·N + M·N)) = 500 with M = N = 4096:
    # K·(M·N − 500·M − 500·N) = 500·M·N → K* = 500·4096 / (4096 − 1000) = 2048000/3096 = 256000/387.
    a = load_string(KJ + "solve intensity(c) = critical_intensity(c) for K\n").analyze()
    (s,) = a.solves
    assert s.values == (R(256000, 387),)
    K = sympy.Symbol("K", positive=True, integer=True)
    assert s.ties == (("J", K),)


def test_sweep_over_a_tied_size_moves_both():
    # K = J = 1024: 2·4096²·1024 FLOP over 2·(4096·1024·2 + 4096²) B = I = 4096·1024/(2·1024 + 4096)
    # = 2048/3 ≈ 682.7 FLOP/B (with J left at 5 it would be 2·4096²·1024 / 2·(4096·1024 + 5·4096 + 4096²)).
    from costlang.queries.sweep import parse_axis, sweep
    base = load_string(KJ).analyze()
    result = sweep(base, [parse_axis(base.program, "K=1024..1024")], ["intensity()"])
    assert result.columns[0][0] == pytest.approx(2048 / 3)


def test_solve_for_a_size_fixed_by_a_literal_says_so(tmp_path, capsys):
    # w is [5, N]: K cannot vary, and the solve's error points at the matmul and names the freed K
    text = KJ.replace("weight w: fp16[J, N]", "weight w: fp16[5, N]") + \
        "solve intensity(c) = critical_intensity(c) for K\n"
    status, _, err = run(tmp_path, capsys, text, "run")
    assert status == 2
    assert err.startswith("f.cost:6:5: error: matmul: inner dimensions differ: a[M, K] · w[5, N] (with K free)")


# --- 17.6: sizes are checked again --------------------------------------------------------------

NEG = "use hardware chapter_gpu\ndim N, M = 10\ninput x: fp16[N - M]\ny = relu(x)\n"


@pytest.mark.parametrize("text,setting,message", [
    # N − M = 5 − 10 = −5 elements
    (NEG, "N=5", "f.cost:3:15: error: a dimension must be a positive whole number, not -5 (with N=5)"),
    # N − M = 0 elements: zero is not a size either (the boundary)
    (NEG, "N=10", "f.cost:3:15: error: a dimension must be a positive whole number, not 0 (with N=10)"),
    # N / 3 = 4/3 elements
    ("use hardware chapter_gpu\ndim N = 3\ninput x: fp16[N / 3]\ny = relu(x)\n", "N=4",
     "f.cost:3:15: error: a dimension must be a positive whole number, not 4/3 (with N=4)"),
    # a param used as a size takes 1/2
    ("use hardware chapter_gpu\nparam p = 2\ninput x: fp16[p]\ny = relu(x)\n", "p=0.5",
     "f.cost:3:15: error: a dimension must be a positive whole number, not 1/2 (with p=0.5)"),
])
def test_set_that_makes_a_size_negative_zero_or_fractional(tmp_path, capsys, text, setting, message):
    status, out, err = run(tmp_path, capsys, text, "run", "--set", setting)
    assert status == 2 and out == ""
    assert err.splitlines()[0] == message
    assert err.splitlines()[2].endswith("^" * len(err.splitlines()[1].split("fp16[")[1].rstrip("]")))


def test_set_that_keeps_the_size_positive_gives_its_values():
    # N − M = 11 − 10 = 1 element (the smallest size): relu 1 FLOP, 2 + 2 B
    a = load_string(NEG).analyze(settings={"N": 11})
    assert (a.value(a.totals.flops), a.value(a.totals.bytes)) == (1, 4)


# --- 9.6: nbytes follows a dtype what-if ----------------------------------------------------------

NBYTES = """use hardware h100_sxm
weight W: bf16[1e9]
k = custom(W) { flops = 1e9; reads = nbytes(W); writes = 0; math = bf16 }
query stated = nbytes(W)
"""


def test_custom_reads_of_nbytes_follow_a_dtype_setting():
    # bf16: 2·10^9 B; int8: 1·10^9 B = 1 GB, in the stated reads, in bytes(k) and in nbytes(W)
    base = load_string(NBYTES).analyze()
    assert base.value(base.kernels[0].bytes) == 2 * 10 ** 9
    a = load_string(NBYTES).analyze(settings={"W": "int8"})
    assert a.value(a.kernels[0].bytes) == 10 ** 9
    assert a.value(a.queries[0].value.expr) == 10 ** 9


# --- 9.8: mixed precision does not depend on the operand order -----------------------------------

XW = """use hardware h100_sxm
dim B = 16, D = 4096
input x: fp16[B, D]
weight W: fp8[D, D]
y = matmul(x, W)
"""
WX = """use hardware h100_sxm
dim B = 16, D = 4096
input x: fp16[D, B]
weight W: fp8[D, D]
y = matmul(W, x)
"""


@pytest.mark.parametrize("text", [XW, WX])
def test_matmul_of_fp8_weights_and_fp16_activations_computes_and_stores_fp16(text):
    # The math runs in the wider fp16 (H100 989.5 TFLOP/s over 3.35 TB/s: I* = 19790/67), and y
    # (16·4096 elements) is stored in fp16: 131072 B written, whichever operand comes first.
    a = load_string(text).analyze()
    (k,) = a.kernels
    assert k.cost.math_dtype == "fp16"
    assert a.value(k.critical_intensity) == R(19790, 67)
    assert a.value(k.bytes_written) == 16 * 4096 * 2


def test_math_option_chooses_the_dtype_and_the_result_follows():
    # { math = fp8 }: fp8 peak (1979 TFLOP/s: I* = 39580/67), y stored in fp8: 65536 B written
    a = load_string(XW.replace("matmul(x, W)", "matmul(x, W) { math = fp8 }")).analyze()
    (k,) = a.kernels
    assert (k.cost.math_dtype, a.value(k.critical_intensity)) == ("fp8", R(39580, 67))
    assert a.value(k.bytes_written) == 16 * 4096
    # ... and `as` still changes only the stored dtype: fp8 math, fp32 result (4 B per element)
    b = load_string(XW.replace("matmul(x, W)", "matmul(x, W) as fp32 { math = fp8 }")).analyze()
    assert (b.kernels[0].cost.math_dtype, b.value(b.kernels[0].bytes_written)) == ("fp8", 16 * 4096 * 4)


def test_two_dtypes_of_one_size_need_a_math_option(tmp_path, capsys):
    text = XW.replace("weight W: fp8[D, D]", "weight W: bf16[D, D]")
    status, _, err = run(tmp_path, capsys, text, "run")
    assert status == 2
    assert err.splitlines()[0] == ("f.cost:5:5: error: matmul: x is fp16 and W is bf16, and neither is "
                                   "wider, so the dtype of the math is not clear")
    assert "hint: say which with `{ math = fp16 }` after the call" in err


# --- what-if = edit, over a few cases ------------------------------------------------------------

EDITABLE = """use hardware h100_sxm
dim B = 16, D = 4096
input x: fp16[B, D]
weight W: fp8[D, D]
h = matmul(x, W)
y = relu(h)
"""


@pytest.mark.parametrize("setting,edit", [
    ("W=int8", ("weight W: fp8", "weight W: int8")),
    ("W=fp32", ("weight W: fp8", "weight W: fp32")),        # now W is wider: math and h in fp32
    ("x=fp32", ("input x: fp16", "input x: fp32")),
    ("weights=bf16", ("weight W: fp8", "weight W: bf16")),  # the same size as x, a different dtype: error
    ("B=1", ("dim B = 16", "dim B = 1")),
    ("D=1024", ("dim B = 16, D = 4096", "dim B = 16, D = 1024")),
])
def test_what_if_gives_what_editing_the_file_gives(setting, edit):
    def figures(thunk):
        try:
            a = thunk()
        except CostlangError as e:
            return e.message.split(" (with ")[0]
        t = a.totals
        return [a.value(v) for v in (t.flops, t.bytes, t.t_kernel, t.critical_intensity)] + \
            [k.cost.math_dtype for k in a.kernels] + [a.program.tensors[n].dtype.name for n in ("h", "y")]
    name, value = setting.split("=")
    by_setting = figures(lambda: load_string(EDITABLE).analyze(settings={name: value}))
    by_edit = figures(lambda: load_string(EDITABLE.replace(*edit)).analyze())
    assert by_setting == by_edit


# --- 9.9: a view cannot change the dtype ---------------------------------------------------------

def test_a_view_stating_another_dtype_is_an_error(tmp_path, capsys):
    text = "use hardware chapter_gpu\ninput x: fp16[4, 8]\ny = reshape(x) -> fp32[8, 4]\nz = relu(y)\n"
    status, _, err = run(tmp_path, capsys, text, "check")
    assert status == 2
    assert err.splitlines() == [
        "f.cost:3:19: error: reshape: x is fp16, so its view is fp16, not fp32",
        " 3 | y = reshape(x) -> fp32[8, 4]",
        "   |                   ^^^^",
        "  = hint: a view moves no bytes and cannot convert; write `-> fp16[...]`, or convert with an op "
        "and `as fp32` (e.g. `cast(x) as fp32`)"]


def test_a_view_follows_a_dtype_setting_of_what_it_views():
    # x fp16 → fp32 by a what-if: the view written `-> fp16[8, 4]` follows (relu reads 32·4 B)
    text = "use hardware h100_sxm\ninput x: fp16[4, 8]\ny = reshape(x) -> fp16[8, 4]\nz = relu(y)\n"
    a = load_string(text).analyze(settings={"x": "fp32"})
    assert a.value(a.kernels[0].bytes_read) == 32 * 4


def test_scenario_analysis_of_a_file_with_settings_keeps_earlier_ones():
    # --set B=1 then a scenario W=int8: both apply (x 1·4096·2 B, W 4096²·1 B, h 1·4096·2 B)
    m = load_string(EDITABLE)
    base = m.analyze(settings={"B": 1})
    a = scenario_analysis(base, parse_settings("W = int8"))
    h = next(k for k in a.kernels if "h" in k.ops)
    assert a.value(h.bytes_read) == 4096 * 2 + 4096 * 4096


# --- 17.6: a free size is assumed to be a positive whole number, and a sweep checks it ----------

def test_a_free_size_that_may_not_be_positive_is_stated_as_an_assumption(tmp_path, capsys):
    # N free, M = 10: x has N − 10 elements, a size only for N ≥ 11; p free (a param) is a size
    # only when whole. Sizes that are positive whole numbers for every N (2·N, N) are not listed.
    text = NEG + "param p\ninput z: fp16[p]\nw = relu(z)\ninput u: fp16[2 * N]\nv = relu(u)\n"
    status, out, _ = run(tmp_path, capsys, text, "run")
    assert status == 0
    assert "sizes assumed to be positive whole numbers: N - 10 (at 3:15); p (at 6:15)\n" in out
    status, out, _ = run(tmp_path, capsys, text, "run", "--json")
    import json
    assert json.loads(out)["assumed_sizes"] == ["N - 10", "p"]


def test_a_sweep_through_a_size_that_is_not_positive_is_an_error(tmp_path, capsys):
    # N = 1..20 (lin, 11 points: 1, 2.9, ...): at N = 1, N − 10 = −9 elements
    status, _, err = run(tmp_path, capsys, NEG, "sweep", "--over", "N=1..20")
    assert status == 2
    assert err.splitlines()[0] == ("f.cost:3:15: error: at N = 1, the size N - 10 is -9: a dimension must be a "
                                   "positive whole number")
    # N = 11..20:lin:10 gives 11, 12, ..., 20: sizes 1 (the smallest) to 10, all fine
    status, out, _ = run(tmp_path, capsys, NEG, "sweep", "--over", "N=11..20:lin:10")
    assert status == 0 and out.splitlines()[2].split()[0] == "11"


def test_equal_parts_of_a_split_must_be_whole(tmp_path, capsys):
    # x has 10 elements: three equal parts would have 10/3 each; with N = 12, 4 each (fine)
    text = "use hardware chapter_gpu\ndim N = 12\ninput x: fp16[N]\na, b, c = split(x)\ny = relu(a)\n"
    status, _, err = run(tmp_path, capsys, text, "run", "--set", "N=10")
    assert status == 2
    assert err.splitlines()[0] == "f.cost:4:11: error: split: a size of 10/3 along axis 0 of x[N] (with N=10)"
    a = load_string(text).analyze()
    assert a.value(a.totals.flops) == 4  # relu over the 4 elements of a


def test_an_efficiency_given_twice_in_one_hardware_is_an_error(tmp_path, capsys):
    text = ('hardware h : chapter_gpu {\n  efficiency HBM = 0.8 "a"\n  efficiency HBM = 0.9 "b"\n}\n'
            "use hardware h\ninput x: fp16[4]\ny = relu(x)\n")
    status, _, err = run(tmp_path, capsys, text, "check")
    assert status == 2
    assert err.splitlines()[0] == "f.cost:3:3: error: efficiency HBM is given twice (first at line 2)"


def test_a_tie_is_said_in_json_and_in_derivations(tmp_path, capsys):
    # the solve for K of KJ ties J to K: JSON names it, derivations say it (en, ko)
    text = KJ + "solve intensity(c) = critical_intensity(c) for K\n"
    status, out, _ = run(tmp_path, capsys, text, "run", "--json")
    import json
    assert status == 0 and json.loads(out)["solves"][0]["ties"] == [{"symbol": "J", "value": "K"}]
    status, out, _ = run(tmp_path, capsys, text, "derive")
    assert status == 0 and "The shapes need $J = K$, so it holds while $K$ varies." in out
    status, out, _ = run(tmp_path, capsys, text, "derive", "--lang", "ko")
    assert status == 0 and "모양이 맞도록, $K$가 바뀌는 동안 $J = K$다." in out
