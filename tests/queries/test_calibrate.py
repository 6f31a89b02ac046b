"""`costlang validate` and `costlang calibrate`: signed errors, MAPE, least-squares factors,
leave-one-out, the lower-bound flag, and the calibrated hardware written as a `.cost` file.
Every expected value is derived by hand in the comment above it."""
from fractions import Fraction as F

import sympy

from conftest import EXAMPLES
from costlang import load, load_string
from costlang.queries.calibrate import Point, fit, leave_one_out, mape, points, signed_error
from costlang.cli import main

R = sympy.Rational
V = EXAMPLES / "validation"
ADD = str(V / "h100_elementwise_add.cost")
# fp32 add: 12 B per element at 3.35 TB/s
TM1, TM2 = F(12 * 2 ** 30, 335 * 10 ** 10), F(12 * 65536, 335 * 10 ** 10)
M1, M2 = F(41, 10 ** 4), F(15, 10 ** 7)          # 4.1 ms, 1.5 µs


def add_points():
    return points(load(ADD).analyze(), ADD)


def test_roofline_prediction_and_signed_error():
    p1, p2 = add_points()
    # 12·2^30 / 3.35e12 ≈ 3.846 ms; (3.846 − 4.1) / 4.1 ≈ −6.2 %; 12·65536 / 3.35e12 ≈ 234.8 ns, −84.3 %
    assert (p1.predicted, p2.predicted) == (R(TM1.numerator, TM1.denominator), R(TM2.numerator, TM2.denominator))
    assert abs(float(signed_error(p1.predicted, p1.measured)) - (-0.06188)) < 1e-4
    assert abs(float(signed_error(p2.predicted, p2.measured)) - (-0.84345)) < 1e-4
    assert p1.memory_bound and p1.holds and p2.holds
    # MAPE = (|e1| + |e2|) / 2
    expected = (abs(TM1 - M1) / M1 + abs(TM2 - M2) / M2) / 2
    assert mape([(p1.predicted, p1.measured), (p2.predicted, p2.measured)]) == R(expected.numerator,
                                                                                 expected.denominator)


def test_two_points_fit_launch_and_bandwidth_exactly():
    # L + a·TM1 = M1, L + a·TM2 = M2  →  a = (M1 − M2)/(TM1 − TM2), L = M2 − a·TM2
    a = (M1 - M2) / (TM1 - TM2)
    launch = M2 - a * TM2
    f = fit(add_points())
    assert f.fitted == ("launch", "memory")
    assert f.memory_factor == R(a.numerator, a.denominator) and f.launch == R(launch.numerator, launch.denominator)
    assert abs(float(f.efficiency_memory) - 0.9384) < 1e-4 and abs(float(f.launch) - 1.2497e-6) < 1e-9
    assert all(res == 0 for _, _, res in f.residuals())


def _memory_points(pairs):
    """Memory-bound points (T_compute 0, the hardware's launch overhead 0): (T_memory, measured)."""
    return [Point("f.cost", f"k{i}", "hw", R(0), R(x), R(0), R(x), R(y)) for i, (x, y) in enumerate(pairs)]


def test_a_negative_launch_intercept_is_refitted_at_zero():
    # (T_memory, measured) = (1, 1), (2, 3), (3, 5): the line through them is y = 2·x − 1, a launch of
    # −1 s. Refitted through the origin on relative residuals (a·x/y − 1), with r = x/y = 1, 2/3, 3/5:
    # a = Σr / Σr² = (34/15) / (406/225) = 510/406 = 255/203.
    f = fit(_memory_points([(1, 1), (2, 3), (3, 5)]))
    assert f.fitted == ("memory",)
    assert f.launch == 0
    assert f.memory_factor == R(255, 203)


def test_a_launch_intercept_of_exactly_zero_is_kept():
    # (1, 2), (2, 4), (3, 6): y = 2·x, the intercept 0 is not negative: launch fitted (0) and a = 2
    f = fit(_memory_points([(1, 2), (2, 4), (3, 6)]))
    assert f.fitted == ("launch", "memory")
    assert f.launch == 0 and f.memory_factor == 2


def test_leave_one_out_needs_more_kernels_than_factors():
    # Leaving one of two out leaves one kernel for one factor: an exact fit that validates nothing.
    assert [cal for _, cal in leave_one_out(add_points())] == [None, None]


def test_leave_one_out_is_relative_least_squares_on_the_others():
    pts = []
    for name in ("flash_attention_gpt2.cost", "kipply_13b_a100.cost"):
        pts += points(load(str(V / name)).analyze(), name)
    # all memory-bound on a100_40gb: T_memory = bytes / 1.555e12; predict step_2gpu from the other three
    # on relative residuals: minimise Σ (L/y + a·x/y − 1)², i.e. u = 1/y, v = x/y regressed on 1 with no
    # intercept; normal equations [Σu² Σuv; Σuv Σv²]·(L, a) = (Σu, Σv), solved by Cramer's rule.
    bw = F(1555 * 10 ** 9)
    xs = [F(403, 10) * 10 ** 9 / bw, F(44, 10) * 10 ** 9 / bw, 26 * 10 ** 9 / bw]
    ys = [F(417, 10 ** 4), F(73, 10 ** 4), F(22, 10 ** 3)]
    us, vs = [1 / y for y in ys], [x / y for x, y in zip(xs, ys)]
    suu, suv, svv = sum(u * u for u in us), sum(u * v for u, v in zip(us, vs)), sum(v * v for v in vs)
    su, sv = sum(us), sum(vs)
    det = suu * svv - suv * suv
    launch, a = (su * svv - suv * sv) / det, (suu * sv - suv * su) / det
    expected = launch + a * 13 * 10 ** 9 / bw
    loo = dict((p.kernel, cal) for p, cal in leave_one_out(pts))
    assert loo["step_2gpu"] == R(expected.numerator, expected.denominator)


def test_compute_bound_kernel_fits_compute_efficiency():
    # 4096³ fp16 GEMM on chapter_gpu: T_compute = 2·4096³ / 1e15 ≈ 137.4 µs > T_memory; measured 200 µs:
    # one kernel, one factor, no launch: c = 200e-6 / T_compute, η_compute = T_compute / 200e-6 ≈ 0.6872
    a = load_string("use hardware chapter_gpu\ndim n = 4096\ninput X: fp16[n, n]\ninput Y: fp16[n, n]\n"
                    "Z = matmul(X, Y)\nmeasure Z { time = 200 us }").analyze()
    f = fit(points(a, "<string>"))
    assert f.fitted == ("compute",) and f.efficiency_compute == R(2 * 4096 ** 3, 10 ** 15) / R(2, 10 ** 4)
    assert f.memory_factor == 1 and f.launch == 0


def test_validate_prints_errors_mape_and_flags_a_broken_bound(tmp_path, capsys):
    assert main(["validate", ADD]) == 0
    out = capsys.readouterr().out
    assert "-6.2 %" in out and "-84.3 %" in out and "MAPE: roofline 45.3 %" in out
    assert "lower bound: holds for every kernel" in out
    # measured 100 ns < the 234.8 ns roofline: the lower bound is broken, and the line is flagged
    f = tmp_path / "fast.cost"
    f.write_text("use hardware h100_sxm\ndim N = 65536\ninput A: fp32[N]\ninput B: fp32[N]\n"
                 "output C = add(A, B)\nmeasure C { time = 100 ns }\n")
    assert main(["validate", str(f)]) == 3      # a broken lower bound: status 3 (docs/calibration.md)
    out = capsys.readouterr().out
    assert "FLAGGED: predicted > measured" in out and "lower bound: VIOLATED by 1: C" in out


def test_validate_without_measurements_is_an_input_error(capsys):
    assert main(["validate", str(EXAMPLES / "validation" / "cos_cos.cost")]) == 2
    assert "no file has a `measure` block" in capsys.readouterr().err


def test_calibrated_hardware_file_loads_and_applies_its_factors(tmp_path, capsys):
    out = tmp_path / "cal.cost"
    assert main(["calibrate", ADD, "-o", str(out)]) == 0
    assert "η_memory: 0.9384 (fitted)" in capsys.readouterr().out
    text = out.read_text()
    assert 'efficiency HBM = 0.9384 "costlang calibrate' in text and "launch = 1.25 us" in text
    user = tmp_path / "use.cost"
    user.write_text('import "cal.cost"\nuse hardware h100_sxm_calibrated\ndim N = 2^30\n'
                    "input A: fp32[N]\ninput B: fp32[N]\noutput C = add(A, B)\n")
    k = load(user).analyze().kernels[0]
    # T_kernel = 1.25 µs + (12·2^30 / 3.35e12) / 0.9384 ≈ 4.099 ms (the rounded factors)
    expected = R(125, 10 ** 8) + R(12 * 2 ** 30, 335 * 10 ** 10) / R(9384, 10 ** 4)
    assert k.t_kernel.xreplace(load(user).program.bindings) == expected
