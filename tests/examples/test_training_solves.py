"""The solves a training plan asks: the largest micro-batch per chip under ZeRO-2 and the GPUs for a
deadline (examples/training/largest_micro_batch.cost, chips_for_deadline.cost), and the sequence length where
attention reaches the MLP (attention_reaches_mlp.cost)."""
from __future__ import annotations

import pytest
import sympy

from conftest import query


def solve(a, name):
    return next(s for s in a.solves if s.name == name)


@pytest.mark.slow
def test_largest_micro_batch_under_zero_2(analyze_example):
    a = analyze_example("training/largest_micro_batch.cost")
    # 3.75·n with n = 536,870,912: weights 2n + (2n + 12n)/8
    assert query(a, "memory per chip (weights, gradients, states)") == 2013265920
    b = sympy.Symbol("b", positive=True, integer=True)
    # + the activations live while dW2 is computed: 30·d·2048·b B
    assert sympy.expand(a.value(a.footprint.bytes) - (2013265920 + 503316480 * b)) == 0
    s = solve(a, "largest micro-batch")
    # b* = (80e9 − 2,013,265,920)/503,316,480 = 77,986,734,080/503,316,480 ≈ 154.94: 154 fit
    assert s.values[0] == sympy.Rational(80 * 10 ** 9 - 2013265920, 503316480)
    assert sympy.floor(s.values[0]) == 154


@pytest.mark.slow
def test_gpus_for_a_30_day_deadline(analyze_example):
    a = analyze_example("training/chips_for_deadline.cost")
    assert query(a, "parameters") == 32 * 2 * 4096 * 26700          # 6,999,244,800
    assert query(a, "hardware FLOPs per token") == 6 * 6999244800   # 41,995,468,800
    # n* = 2e12 · 41,995,468,800 / (4e14 · 2,592,000) = 91136/1125 ≈ 81.01: 82 GPUs
    s = solve(a, "GPUs for 30 days")
    assert s.values[0] == sympy.Rational(91136, 1125)
    assert sympy.ceiling(s.values[0]) == 82


# fast pins of the same answers: the files analysed at the solved values and one past them

def without_solves(name: str, dim: str, value: int):
    """The example with `dim NAME` bound and its solve lines left out (the solve is the slow tests')."""
    from conftest import EXAMPLES
    from costlang import load_string
    text = (EXAMPLES / "training" / name).read_text(encoding="utf-8")
    lines = [line for line in text.splitlines() if not line.startswith("solve ")]
    text = "\n".join(f"dim {dim} = {value}" if line.startswith(f"dim {dim} ") else line for line in lines)
    return load_string(text, name).analyze()


def test_154_sequences_fit_and_155_do_not():
    for b, fits in ((154, True), (155, False)):
        a = without_solves("largest_micro_batch.cost", "b", b)
        # 2,013,265,920 + 503,316,480·b against 80e9: 79,524,057,840 fits, 80,027,374,320 does not
        assert a.value(a.footprint.bytes) == 2013265920 + 503316480 * b
        assert (a.value(a.footprint.bytes) <= 80 * 10 ** 9) == fits


def test_82_gpus_meet_the_deadline_and_81_do_not():
    for n in (81, 82):
        a = without_solves("chips_for_deadline.cost", "n", n)
        # days = 2e12 · 41,995,468,800 / (n · 4e14 · 86400) = 182272/(75·n): 30.0036… at 81, 29.63… at 82
        assert query(a, "days on n GPUs") == sympy.Rational(182272, 75 * n)


def test_the_sequence_length_where_attention_reaches_the_mlp(analyze_example):
    a = analyze_example("training/attention_reaches_mlp.cost")
    s_ = sympy.Symbol("s", positive=True, integer=True)
    # attention in training: QKᵀ and P·V, 2·s²·h each, three times over: 12·h·s² = 49152·s² at h = 4096
    assert sympy.expand(query(a, "attention FLOPs") - 49152 * s_ ** 2) == 0
    # MLP: 48·s·h² + GELU's 96·s·h = (805,306,368 + 393,216)·s
    assert sympy.expand(query(a, "MLP FLOPs") - 805_699_584 * s_) == 0
    # 12·h·s² = 48·s·h² + 96·s·h ⇔ s = 4·h + 8 = 16,392
    assert solve(a, "attention reaches the MLP").values[0] == 16_392
