"""examples/training/megatron_days.cost: Narayanan et al. 2021's 8·T·P/(n·X) from costlang's figures."""
from __future__ import annotations

import sympy

from conftest import query


def test_gpt3_175b_on_1024_a100s_takes_33_9_days(analyze_example):
    a = analyze_example("training/megatron_days.cost")
    assert query(a, "parameters P") == 175 * 10 ** 9
    assert query(a, "tokens per step") == 1536 * 2048           # 3,145,728 tokens
    # derived from the graph: 6 FLOPs per parameter per token, 8 with full recomputation
    assert query(a, "model FLOPs per token / P") == 6
    assert query(a, "hardware FLOPs per token / P") == 8
    # 8·300e9·175e9 / (1024·140e12) s = 4.2e23 / 1.4336e17 s = 2,929,687.5 s = 78125/2304 days ≈ 33.9
    assert query(a, "days at 140 TFLOP/s per GPU") == sympy.Rational(78125, 2304)
    assert round(float(query(a, "days at 140 TFLOP/s per GPU")), 1) == 33.9
    # 1024 GPUs × 2,929,687.5 s / 3600 = 833,333⅓ GPU-hours
    assert query(a, "GPU-hours at 140 TFLOP/s") == sympy.Rational(2500000, 3)
    # 140 of 312 TFLOP/s: 35/78 ≈ 44.9 % of peak
    assert query(a, "achieved HFU") == sympy.Rational(35, 78)


def test_zero_pads_a_shard_that_the_chips_do_not_divide(analyze_example):
    a = analyze_example("training/megatron_days.cost")
    # 175e9 / 1024 = 170898437.5: each chip's shard of the fp32 m (ZeRO-3) is ⌈⌉ = 170898438 elements
    assert a.program.tensors["optimizer.m"].shape == (170898438,)
