"""Plots: the roofline's and the sweep's content, read back from matplotlib objects."""
import subprocess
import sys
from pathlib import Path

import pytest
import sympy

import costlang
from costlang.analysis.bounds import Bound
from costlang.queries.curve import CURVE_POINTS, query_curve
from costlang.cli import main
from costlang.printers import plot

EX = Path(__file__).resolve().parents[2] / "examples"


def analysis(rel, **kw):
    return costlang.load(EX / rel).analyze(**kw)


def lines_by_label(ax):
    return {l.get_label(): l for l in ax.get_lines()}


def test_roofline_axes_slope_ceiling_and_point():
    p = plot.roofline([analysis("roofline/vector_add_fp16.cost")])
    ax = p.axes
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    lines = lines_by_label(ax)
    slope, ceiling, point = lines["HBM 2 TB/s"], lines["fp16 peak 1000 TFLOP/s"], lines["kernel C"]
    # slope P = BW·I: every vertex lies on 2e12·I, and it meets the ceiling at I* = 500
    for x, y in zip(*slope.get_data()):
        assert y == pytest.approx(2e12 * x)
    assert slope.get_xdata()[-1] == pytest.approx(500)
    assert list(ceiling.get_ydata()) == [1e15, 1e15] and ceiling.get_xdata()[0] == pytest.approx(500)
    # the kernel at (I, attainable) = (1/6, 1e12/3)
    assert point.get_xdata()[0] == pytest.approx(1 / 6) and point.get_ydata()[0] == pytest.approx(1e12 / 3)
    texts = [t.get_text() for t in ax.texts]
    assert "C" in texts and "I* = 500" in texts
    assert ax.get_xlabel() == "arithmetic intensity I (FLOP/B)"


def test_overlaid_hardware_and_fusion_arrows():
    a100 = analysis("roofline/gemm_4096.cost", hardware="a100_80gb")
    h100 = analysis("roofline/gemm_4096.cost", hardware="h100_sxm")
    labels = set(lines_by_label(plot.roofline([a100, h100]).axes))
    assert {"a100_80gb: HBM 2.04 TB/s", "a100_80gb: L2 7.22 TB/s", "h100_sxm: HBM 3.35 TB/s",
            "a100_80gb: fp16 peak 312 TFLOP/s", "h100_sxm: fp16 peak 990 TFLOP/s",
            "a100_80gb: kernel C", "h100_sxm: kernel C"} <= labels
    fused, unfused = analysis("roofline/exercises/ex4_fusion.cost"), \
        analysis("roofline/exercises/ex4_fusion.cost", fusion="none")
    ax = plot.roofline([fused], [unfused]).axes
    arrows = [t for t in ax.texts if t.arrow_patch is not None]
    assert len(arrows) == 3  # mul, add, tanh → the fused kernel
    fused_i = 0.375  # 3N FLOP / 8N B
    assert all(t.xy[0] == pytest.approx(fused_i) for t in arrows)
    assert sorted(t.xyann[0] for t in arrows) == pytest.approx([1 / 6, 1 / 6, 1 / 4])


def test_sweep_marks_the_crossing():
    # exercise 2(b): I(n) = n/3 for a square fp16 GEMM meets I* = 500 at n = 1500
    c = query_curve(analysis("roofline/exercises/ex2_gemm_1024.cost"), "I(n)", 64, 8192)
    assert c.symbol == "n" and c.reference_label == "I* of Z" and len(c.xs) == CURVE_POINTS
    assert c.crossings == ((1500, 500),)   # exact
    lines = lines_by_label(plot.sweep(c).axes)
    curve = lines["I(n)"]
    assert curve.get_xdata()[0] == pytest.approx(64) and curve.get_ydata()[0] == pytest.approx(64 / 3)
    assert curve.get_xdata()[-1] == pytest.approx(8192) and curve.get_ydata()[-1] == pytest.approx(8192 / 3)
    assert list(lines["I* of Z"].get_ydata()) == [500, 500]
    cross = lines["crossing at n = 1500"]
    assert cross.get_xdata()[0] == pytest.approx(1500) and cross.get_ydata()[0] == pytest.approx(500)


def test_sweep_points_come_from_the_vectorised_sweep():
    # every sampled value equals the exact I(n) = n/3 (the same numbers analysis.sweep tabulates)
    c = query_curve(analysis("roofline/exercises/ex2_gemm_1024.cost"), "I(n)", 64, 8192)
    assert c.ys == pytest.approx(c.xs / 3, rel=1e-12)
    assert c.xs[1] / c.xs[0] == pytest.approx((8192 / 64) ** (1 / (CURVE_POINTS - 1)))


def test_sweep_of_a_dim_keeps_a_crossing_between_whole_numbers():
    # decode_crossing.cost: I(B) meets I* = 500 at B* = 512000/899 ≈ 569.5, not only at a whole B
    c = query_curve(analysis("queries/decode_crossing.cost"), "I(B)", 1, 10 ** 5)
    assert c.crossings == ((sympy.Rational(512000, 899), 500),)
    assert "crossing at B = 569.5" in lines_by_label(plot.sweep(c).axes)


def test_sweep_against_another_query_that_varies():
    m = costlang.load_string(
        "use hardware chapter_gpu\ndim n\ninput X: fp16[n, n]\ninput Y: fp16[n, n]\n"
        "output Z = matmul(X, Y)\nquery \"I(n)\" = intensity(Z)\nquery half = 4 * critical_intensity(Z) - intensity(Z)\n")
    c = query_curve(m.analyze(), "I(n)", 1, 10 ** 4, against="half")
    assert c.crossings == ((3000, 1000),)          # n/3 = 2000 - n/3
    assert c.reference == pytest.approx(2000 - c.xs / 3)
    lines = lines_by_label(plot.sweep(c).axes)
    assert list(lines["half"].get_xdata()) == pytest.approx(list(c.xs))


def test_cli_plot_writes_each_format(tmp_path):
    for name in ("r.png", "r.svg", "r.pdf"):
        out = tmp_path / name
        assert main(["plot", str(EX / "roofline/gemm_4096.cost"), "-o", str(out)]) == 0
        assert out.stat().st_size > 1000
    assert (tmp_path / "r.png").read_bytes()[:4] == b"\x89PNG"
    assert b"<svg" in (tmp_path / "r.svg").read_bytes()
    # reproducible: the same figure gives the same SVG bytes
    again = tmp_path / "again.svg"
    main(["plot", str(EX / "roofline/gemm_4096.cost"), "-o", str(again)])
    assert again.read_bytes() == (tmp_path / "r.svg").read_bytes()


def test_repr_png_is_a_png():
    assert plot.roofline([analysis("roofline/gemm_4096.cost")])._repr_png_()[:4] == b"\x89PNG"


def test_run_and_derive_do_not_import_matplotlib():
    code = ("import sys; from costlang.cli import main; import io, contextlib\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    main(['run', {str(EX / 'roofline/gemm_4096.cost')!r}])\n"
            f"    main(['derive', {str(EX / 'roofline/gemm_4096.cost')!r}])\n"
            "print('matplotlib' in sys.modules)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.stdout.strip() == "False", r.stderr


EX2 = str(EX / "roofline/exercises/ex2_gemm_1024.cost")


def test_cli_sweep_plot(tmp_path):
    out = tmp_path / "sweep.svg"
    assert main(["plot", EX2, "--sweep", "I(n)", "--over", "n=64..8192", "-o", str(out)]) == 0
    assert b"<svg" in out.read_bytes()


@pytest.mark.parametrize("args, message", [
    (["--sweep", "I(n)", "--over", "abc"],
     "--over:1:1: error: expected a range such as B=1..1024:pow2 or a list such as B=1,8,64, not 'abc'\n 1 | abc"),
    (["--sweep", "I(n)", "--over", "n=0..100"],
     "--over:1:1: error: the range of n must go from a positive value up, not 0..100"),
    (["--sweep", "I(n)", "--over", "n=100..10"], "error: the range of n must go from a positive value up"),
    (["--sweep", "I(n)", "--over", "m=1..10"], "error: cannot sweep 'm': it is not a dim or param of this file"),
    (["--sweep", "I(n)", "--over", "n=1..2:cubic"], "error: unknown sweep spacing 'cubic'"),
    (["--sweep", "I(m)"], "--sweep:1:1: error: there is no numeric query named 'I(m)' to sweep\n 1 | I(m)\n"
                          "   | ^^^^\n  = hint: did you mean 'I(n)'?"),
    (["--sweep", "nope"], "  = hint: queries: I, I(4096) / I(1024), I(n), bytes, flops\n"),
    (["--sweep", "I"], "--sweep:1:1: error: query 'I' must depend on exactly one free symbol to be swept, not 0"),
    (["--sweep", "I(n)", "--against", "flops"],
     "--against:1:1: error: query 'I(n)' is in an intensity (FLOP/B) but 'flops' is in FLOPs: they cannot cross"),
    (["--sweep", "I(n)", "--against", "nope"], "--against:1:1: error: there is no numeric query named 'nope' to sweep against"),
    (["--against", "flops"], "--against:1:1: error: --against applies to a sweep plot only"),
    (["--sweep", "I(n)", "--compare-fusion"], "error: --compare-fusion applies to the roofline"),
    (["--sweep", "I(n)", "--hardware", "a100_80gb", "--hardware", "h100_sxm"],
     "error: a sweep plot takes one --hardware, not 2"),
])
def test_cli_plot_bad_arguments_exit_2(args, message, tmp_path, capsys):
    out = tmp_path / "p.png"
    assert main(["plot", EX2, *args, "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and "internal error" not in err
    assert not out.exists()


def test_cli_plot_bad_output_exit_2(tmp_path, capsys):
    assert main(["plot", EX2, "-o", "x.xyz"]) == 2
    assert capsys.readouterr().err == ("-o:1:1: error: cannot write a plot to 'x.xyz': the file name must end "
                                       "in .png, .svg or .pdf\n 1 | x.xyz\n   | ^^^^^\n")
    missing = str(tmp_path / "no" / "such" / "dir" / "r.png")
    assert main(["plot", EX2, "-o", missing]) == 2
    assert "error: cannot write " in capsys.readouterr().err
    assert main(["derive", EX2, "-o", str(tmp_path / "no" / "d.md")]) == 2
    assert "error: cannot write " in capsys.readouterr().err


def test_cli_plot_without_matplotlib_exit_2(monkeypatch, tmp_path, capsys):
    monkeypatch.setitem(sys.modules, "matplotlib", None)   # import matplotlib → ImportError
    assert main(["plot", EX2, "-o", str(tmp_path / "r.png")]) == 2
    assert "error: `costlang plot` needs matplotlib" in capsys.readouterr().err


def test_cli_plot_set_a_size(tmp_path):
    # --set binds a symbol, as on `run`: with d = 4096 the decode crossing moves to 256000/387
    out = tmp_path / "d.png"
    assert main(["plot", str(EX / "queries/decode_crossing.cost"), "--sweep", "I(B)", "--set", "d=4096",
                 "-o", str(out)]) == 0 and out.exists()


# --- trajectories, markers, labels apart, units, styles -----------------------------------

DECODE = str(EX / "queries/decode_crossing.cost")


def test_roofline_of_free_sizes_is_refused_with_a_hint(tmp_path, capsys):
    out = tmp_path / "r.png"
    assert main(["plot", DECODE, "-o", str(out)]) == 2
    err = capsys.readouterr().err
    # positioned at B's declaration (`dim B` on line 15 of the file)
    assert err.startswith(f"{DECODE}:15:5: error: no kernel can be placed on the roofline: they depend on B")
    assert "--over B=" in err
    assert not out.exists()


def test_a_file_without_kernels_has_no_roofline(tmp_path, capsys):
    # every op was deleted (a fuzz mutant): the message named no symbol ("they depend on , which ...")
    src = tmp_path / "empty.cost"
    src.write_text("use hardware chapter_gpu\ndim N = 4\ninput x: fp16[N]\n")
    assert main(["plot", str(src), "-o", str(tmp_path / "r.svg")]) == 2
    assert capsys.readouterr().err.startswith(f"{src}:1:1: error: the file has no kernels to place on the roofline\n")


def test_trajectory_along_a_free_size_with_its_crossing():
    from costlang.queries.curve import kernel_trajectories
    from costlang.queries.sweep import parse_axis
    a = costlang.load(DECODE).analyze()
    axis = parse_axis(a.program, "B=1..4096:pow2")
    (t,) = kernel_trajectories(a, axis)
    # decode_crossing.cost: I(B) = 2·B·d/(b·(2B + d)), d = 8192, b = 2, attainable = min(1e15, 2e12·I)
    assert list(t.xs) == [2.0 ** k for k in range(13)]
    assert t.intensity[0] == pytest.approx(4096 / 4097)           # B = 1: 8192/8194
    assert t.attainable[0] == pytest.approx(2e12 * 4096 / 4097)
    assert t.intensity[-1] == pytest.approx(2048)                   # B = 4096: 2·4096·8192/(2·16384)
    assert t.attainable[-1] == pytest.approx(1e15)                  # capped by the bf16 peak
    assert t.crossings == (sympy.Rational(512000, 899),)            # exact B*, as the solve gives
    ax = plot.roofline([a], trajectories=[(t,)]).axes
    lines = lines_by_label(ax)
    path = lines["y for B = 1 … 4096"]
    assert list(path.get_xdata()) == pytest.approx(list(t.intensity))
    assert t.changes == ((Bound.MEMORY, Bound.COMPUTE),)         # I < I* below B*, I > I* above
    cross = lines["y: memory-bound below B = 569.5, balanced at it, compute-bound above"]
    assert (cross.get_xdata()[0], cross.get_ydata()[0]) == pytest.approx((500, 1e15))   # (I*, peak)
    assert {"y (B = 1)", "B = 4096", "B* = 569.5"} <= {t.get_text() for t in ax.texts}


def test_cli_trajectory_plot(tmp_path):
    out = tmp_path / "t.svg"
    assert main(["plot", DECODE, "--over", "B=1..4096", "-o", str(out)]) == 0
    assert b"<svg" in out.read_bytes()


def _boxes(ax):
    renderer = ax.figure.canvas.get_renderer()
    return [(t.get_text(), t.get_window_extent(renderer)) for t in ax.texts if t.get_text()]


def test_labels_never_overprint():
    # ex4 unfused: t1 and t2 sit on the same point (I = 1/6), y at 1/4, the fused kernel at 3/8
    fused = analysis("roofline/exercises/ex4_fusion.cost")
    unfused = analysis("roofline/exercises/ex4_fusion.cost", fusion="none")
    boxes = _boxes(plot.roofline([fused], [unfused]).axes)
    assert sorted(name for name, _ in boxes) == ["I* = 500", "t1", "t1+t2+y", "t2", "y"]
    for n, (a_name, a) in enumerate(boxes):
        for b_name, b in boxes[n + 1:]:
            assert not a.overlaps(b), (a_name, b_name)


def test_fused_points_are_filled_and_unfused_hollow():
    fused = analysis("roofline/exercises/ex4_fusion.cost")
    unfused = analysis("roofline/exercises/ex4_fusion.cost", fusion="none")
    lines = lines_by_label(plot.roofline([fused], [unfused]).axes)
    assert lines["kernel t1+t2+y"].get_markerfacecolor() != "none"
    assert {lines[f"unfused {k}"].get_markerfacecolor() for k in ("t1", "t2", "y")} == {"none"}


def test_axes_carry_units_with_prefixes():
    ax = plot.roofline([analysis("roofline/vector_add_fp16.cost")]).axes
    ax.figure.draw_without_rendering()
    ticks = [t.get_text() for t in ax.get_yticklabels() if t.get_text()]
    assert "1 TFLOP/s" in ticks and "1 PFLOP/s" in ticks
    assert ax.get_xlabel() == "arithmetic intensity I (FLOP/B)"


def test_linear_axes_and_slide_style():
    p = plot.roofline([analysis("roofline/gemm_4096.cost")], linear=True, style="slides")
    assert p.axes.get_xscale() == "linear" and p.axes.get_yscale() == "linear"
    assert tuple(p.figure.get_size_inches()) == pytest.approx((13.33, 7.5))
    assert p.axes.title.get_fontsize() == 18


def test_sweep_plot_has_a_title_and_its_unit():
    c = query_curve(analysis("roofline/exercises/ex2_gemm_1024.cost"), "I(n)", 64, 8192)
    ax = plot.sweep(c, unit="FLOP/B").axes
    assert ax.get_title() == "I(n) against n" and ax.get_ylabel() == "I(n) (FLOP/B)"


def test_sweep_plot_over_listed_points(tmp_path):
    # an explicit list is taken as it is: I(n) = n/3 at n = 300, 1500, 3000
    from costlang.queries.sweep import parse_axis
    a = analysis("roofline/exercises/ex2_gemm_1024.cost")
    axis = parse_axis(a.program, "n=300,1500,3000")
    c = query_curve(a, "I(n)", 300, 3000, xs=axis.values)
    assert list(c.ys) == pytest.approx([100, 500, 1000])
    assert main(["plot", EX2, "--sweep", "I(n)", "--over", "n=300,1500,3000", "--linear",
                 "-o", str(tmp_path / "l.png")]) == 0


MATMUL_GELU = """use hardware h100_sxm
dim B{bind}
input x: bf16[B, 1024]
weight W: bf16[1024, 1024]
h = matmul(x, W)
output a = gelu(h)
query "I(h)" = intensity(h)
"""


def test_sweep_of_one_kernels_intensity_crosses_that_kernels_critical_intensity():
    a = costlang.load_string(MATMUL_GELU.format(bind="")).analyze(fusion="none")
    # the matmul's own I* = 989.5e12 / 3.35e12 = 19790/67 ≈ 295.4 (the gelu runs on the vector
    # peak, so the program's I* is lower); I(h) = 2·B·1024² / (2·(2·1024·B + 1024²)) = 512·B/(B + 512):
    # 512·B·67 = 19790·(B + 512) ⇔ 14514·B = 10132480 ⇔ B* = 5066240/7257 ≈ 698.1, as solve finds it
    c = query_curve(a, "I(h)", 1, 10 ** 5)
    assert c.reference_label == "I* of h"
    assert c.crossings == ((sympy.Rational(5066240, 7257), sympy.Rational(19790, 67)),)
    assert list(lines_by_label(plot.sweep(c).axes)["I* of h"].get_ydata()) == pytest.approx([19790 / 67] * 2)
    # and not the program's I* (≈ 276.8), which a sweep of the program's intensity would use
    assert a.value(a.totals.critical_intensity) != sympy.Rational(19790, 67)


def test_roofline_draws_the_vector_ceiling_for_a_vector_kernel():
    a = costlang.load_string(MATMUL_GELU.format(bind=" = 64")).analyze(fusion="none")
    lines = lines_by_label(plot.roofline([a]).axes)
    # the matmul on the bf16 tensor cores (989.5 TFLOP/s), the gelu on the bf16 vector peak
    # (66.9 TFLOP/s), as the report computes each: two ceilings, the vector one at 66.9e12
    assert list(lines["bf16 vector peak 66.9 TFLOP/s"].get_ydata()) == [66.9e12, 66.9e12]
    assert list(lines["bf16 peak 990 TFLOP/s"].get_ydata()) == [989.5e12, 989.5e12]
    # the gelu's point sits under its own ceiling: attainable ≤ 66.9e12
    assert lines["kernel a"].get_ydata()[0] <= 66.9e12
