"""Plots (issue 5): the roofline's and the sweep's content, read back from matplotlib objects."""
import subprocess
import sys
from pathlib import Path

import pytest
import sympy

import costlang
from costlang.cli import main
from costlang.printers import plot

EX = Path(__file__).resolve().parent.parent / "examples"


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
    assert {"a100_80gb: HBM 2.04 TB/s", "a100_80gb: L2 5.12 TB/s", "h100_sxm: HBM 3.35 TB/s",
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
    n = sympy.Symbol("n", positive=True)
    p = plot.sweep(n / 3, n, 64, 8192, reference=sympy.Integer(500), crossings=[sympy.Integer(1500)],
                   ylabel="I(n)", reference_label="I*")
    lines = lines_by_label(p.axes)
    curve = lines["I(n)"]
    assert curve.get_xdata()[0] == pytest.approx(64) and curve.get_ydata()[-1] == pytest.approx(8192 / 3)
    assert list(lines["I*"].get_ydata()) == [500, 500]
    cross = lines["crossing at n = 1500"]
    assert cross.get_xdata()[0] == pytest.approx(1500) and cross.get_ydata()[0] == pytest.approx(500)


def test_sweep_from_a_query_in_a_file():
    p = plot.sweep_from_query(analysis("roofline/exercises/ex2_gemm_1024.cost"), "I(n)", "64:8192", None)
    assert "crossing at n = 1500" in lines_by_label(p.axes)


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
