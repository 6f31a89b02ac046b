"""The lecture walk-through, examples/lecture/: its numbers, derivations and figures.

mlp_decode.cost, up-projection h = x[B, d] · W1[d, f] in fp16 on the chapter's GPU (I* = 500),
d = 4096, f = 16384:  I(B) = B·d·f / (B·d + d·f + B·f) = 16384·B / (5·B + 16384);
I(1) = 16384/16389;  I = 500 ⇔ 13884·B = 8192000 ⇔ B* = 2048000/3471 ≈ 590.03 (590 memory-bound,
591 compute-bound);  B → ∞: I → 16384/5.
"""
import sympy
import pytest

from conftest import EXAMPLES
from costlang import load
from costlang.queries.curve import kernel_trajectories
from costlang.queries.sweep import parse_axis
from costlang.printers import plot

LECTURE = EXAMPLES / "lecture"
B_STAR = sympy.Rational(2048000, 3471)


def analysis():
    return load(LECTURE / "mlp_decode.cost").analyze()


def test_intensity_and_crossing_of_the_up_projection():
    a = analysis()
    h = next(k for k in a.kernels if k.name == "h")
    B = a.program.symbols["B"].symbol
    I = a.value(h.intensity)
    assert sympy.simplify(I - 16384 * B / (5 * B + 16384)) == 0
    assert I.subs(B, 1) == sympy.Rational(16384, 16389)
    assert sympy.limit(I, B, sympy.oo) == sympy.Rational(16384, 5)
    assert I.subs(B, B_STAR) == 500


def test_trajectory_figure_marks_the_exact_crossing():
    a = analysis()
    paths = {t.kernel: t for t in kernel_trajectories(a, parse_axis(a.program, "B=1..4096:pow2"))}
    assert paths["h"].crossings == (B_STAR,)
    assert paths["h"].intensity[0] == pytest.approx(16384 / 16389)
    labels = {t.get_text() for t in plot.roofline([a], trajectories=[tuple(paths.values())]).axes.texts}
    assert "B* = 590" in labels


@pytest.mark.parametrize("name", ["mlp_decode.en.md", "mlp_decode.ko.md", "mlp_decode.en.tex",
                                  "mlp_decode.ko.tex", "roofline_path.png", "intensity.png"])
def test_the_walk_through_ships_its_outputs(name):
    data = (LECTURE / "_generated" / name).read_bytes()
    if name.endswith(".png"):
        assert data[:4] == b"\x89PNG" and len(data) > 10_000
    else:
        assert "2048000" in data.decode("utf-8").replace("\\,", "")   # B* = 2048000/3471 in the solve
