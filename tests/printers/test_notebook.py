"""Notebook display: analyses render as Markdown/LaTeX derivations, plots as PNG."""
from pathlib import Path

import costlang
from costlang.printers.plot import roofline

EX = Path(__file__).resolve().parents[2] / "examples"


def test_analysis_reprs_are_the_derivations():
    a = costlang.load(EX / "roofline/vector_add_fp16.cost").analyze()
    md = a._repr_markdown_()
    assert md == (EX / "roofline/_generated/vector_add_fp16.en.md").read_text(encoding="utf-8")
    assert a._repr_latex_() == (EX / "roofline/_generated/vector_add_fp16.en.tex").read_text(encoding="utf-8")


def test_plot_repr_png():
    a = costlang.load(EX / "roofline/gemm_4096.cost").analyze()
    png = roofline([a])._repr_png_()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10000
