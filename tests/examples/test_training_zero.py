"""examples/training/zero_7_5b.cost: ZeRO's Figure 1 (Rajbhandari et al. 2019), all four stages.

Ψ = 7.5e9 parameters, mixed-precision Adam (2 + 2 + 12 bytes per parameter), N_d = 64.
"""
from __future__ import annotations

import pytest
import sympy

from conftest import EXAMPLES, query
from costlang import load_string

SOURCE = (EXAMPLES / "training" / "zero_7_5b.cost").read_text(encoding="utf-8")
PSI = 7_500_000_000


def stage(k: int):
    text = SOURCE.replace("zero = 0 }", f"zero = {k} }}")
    assert text.count(f"zero = {k} }}") == 1
    return load_string(text, "zero_7_5b.cost").analyze()


@pytest.mark.parametrize("k, gb", [
    (0, sympy.Integer(120)),              # 16Ψ = 120e9 B
    (1, sympy.Rational(3140625, 100000)),  # 4Ψ + 12Ψ/64 = 30e9 + 1.40625e9 = 31.40625e9 B
    (2, sympy.Rational(16640625, 1000000)),  # 2Ψ + 14Ψ/64 = 15e9 + 1.640625e9 = 16.640625e9 B
    (3, sympy.Rational(1875, 1000)),       # 16Ψ/64 = 1.875e9 B
])
def test_memory_per_device_is_figure_1s(k, gb):
    a = stage(k)
    assert query(a, "parameters Ψ") == PSI
    assert query(a, "memory per device") == gb * 10 ** 9


def test_per_parameter_bytes_and_the_footprint_agree():
    a = stage(0)
    assert query(a, "memory per device, in Ψ bytes") == 16
    # the footprint's resident part is the same 120 GB (the activations, 80 kB, come on top)
    assert a.value(a.footprint.resident) == 120 * 10 ** 9
    # 6Ψ FLOPs per token: the repeated layer computes every input gradient (45e9 per token)
    from costlang.analysis.training import training_figures
    t = training_figures(a)
    assert a.value(t.model_flops / t.tokens) == 6 * PSI
