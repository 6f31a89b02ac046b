"""Figures for slides and for Korean notes: no two texts overprint (labels, the I* mark, the
legend) in either style; Korean words are set in a font that has Hangul, or the command says which
font to install; `--dpi`; SVG text stays text."""
import itertools
import warnings
from pathlib import Path

import pytest

import costlang
from costlang.cli import main
from costlang.printers import plot
from costlang.queries.curve import kernel_trajectories

EX = Path(__file__).resolve().parents[2] / "examples"


def _lecture_figure(style, lang="en"):
    # the lecture's MLP decode along B = 1..1024: three kernel paths, the I* = 500 mark and the
    # crossing B* = 590 at the same ridge point, and the legend in the lower right
    a = costlang.load(EX / "lecture" / "mlp_decode.cost").analyze()
    from costlang.queries.sweep import parse_axis
    axis = parse_axis(a.program, "B=1..1024", default="log:64")
    return plot.roofline([a], [], [kernel_trajectories(a, axis)], style=style, lang=lang)


def _overlaps(fig):
    ax = fig.axes[0]
    renderer = fig.canvas.get_renderer()
    boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in ax.texts if t.get_text()]
    boxes.append(("<legend>", ax.get_legend().get_window_extent(renderer)))
    return [(a, b) for (a, x), (b, y) in itertools.combinations(boxes, 2) if x.overlaps(y)], len(boxes)


@pytest.mark.parametrize("style", ["paper", "slides"])
def test_no_text_overprints_another_or_the_legend(style):
    bad, n = _overlaps(_lecture_figure(style).figure)
    assert n == 8 and not bad, bad   # I* = 500, B* = 590, the three paths' ends (one label for two
    # that coincide) and the legend


def _has_cjk_font():
    return plot.cjk_font() is not None


@pytest.mark.skipif(not _has_cjk_font(), reason="no font with Hangul here (Debian's fonts-nanum; .ci/run installs it)")
def test_korean_figure_has_every_glyph_and_no_overprint(tmp_path):
    fig = _lecture_figure("slides", "ko")
    ax = fig.axes
    assert ax.get_title() == "루프라인: chapter_gpu의 mlp_decode.cost" and ax.get_xlabel() == "산술 강도 I (FLOP/B)"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        data = fig.to_bytes(".png")
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert not [w for w in caught if "missing from" in str(w.message)], [str(w.message) for w in caught]
    assert ax.title.get_fontfamily()[0] == plot.cjk_font()
    bad, _ = _overlaps(fig.figure)
    assert not bad, bad


def test_no_font_for_korean_is_a_positioned_error_naming_one(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(plot, "cjk_font", lambda: None)
    status = main(["plot", str(EX / "lecture" / "mlp_decode.cost"), "--set", "B=1", "--lang", "ko",
                   "-o", str(tmp_path / "k.png")])
    err = capsys.readouterr().err
    assert status == 2 and err.startswith("--lang:1:1: error:") and "fonts-nanum" in err, err
    assert not (tmp_path / "k.png").exists()


def test_dpi_and_editable_svg_text(tmp_path):
    # 100 dpi by default; --dpi 200 doubles both sides of the PNG (bbox_inches="tight" keeps the ratio)
    from PIL import Image
    for dpi, name in ((None, "a.png"), ("200", "b.png")):
        args = ["plot", str(EX / "lecture" / "mlp_decode.cost"), "--set", "B=1", "-o", str(tmp_path / name)]
        assert main(args + (["--dpi", dpi] if dpi else [])) == 0
    a, b = (Image.open(tmp_path / n) for n in ("a.png", "b.png"))
    assert abs(b.size[0] / a.size[0] - 2) < 0.02 and round(b.info["dpi"][0]) == 200
    assert main(["plot", str(EX / "lecture" / "mlp_decode.cost"), "--set", "B=1", "-o", str(tmp_path / "c.svg")]) == 0
    svg = (tmp_path / "c.svg").read_text(encoding="utf-8")
    assert "<text" in svg and "attainable performance" in svg   # text, not paths
    with pytest.raises(SystemExit) as refused:   # a usage error, as argparse reports it
        main(["plot", str(EX / "lecture" / "mlp_decode.cost"), "--dpi", "5", "-o", str(tmp_path / "d.png")])
    assert refused.value.code == 2
