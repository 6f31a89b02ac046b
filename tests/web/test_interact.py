"""Model.interact(): the notebook's sliders over free sizes, answered from one analysis."""
import sys

import pytest

from conftest import EXAMPLES
from costlang import load


def test_the_slider_moves_the_verdict_across_b_star():
    pytest.importorskip("ipywidgets", reason="ipywidgets is in the test extra")
    box = load(EXAMPLES / "queries" / "decode_crossing.cost").interact()
    slider, shown = box.children
    # I(B) = 8192·B/(2·B + 8192) against I* = 500 (B* = 512000/899 ≈ 569.5): at B = 8, 65536/8208 ≈ 7.984
    assert "B = 8" in shown.value and "I = 7.984 FLOP/B, memory-bound" in shown.value
    slider.value = 10          # B = 1024: 8,388,608/10,240 = 819.2
    assert "B = 1024" in shown.value and "I = 819.2 FLOP/B, compute-bound" in shown.value
    slider.value = 9           # B = 512: 4,194,304/9,216 ≈ 455.1
    assert "memory-bound" in shown.value


def test_without_ipywidgets_it_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "ipywidgets", None)
    with pytest.raises(ImportError, match='pip install "costlang\\[notebook\\]"'):
        load(EXAMPLES / "queries" / "decode_crossing.cost").interact()
