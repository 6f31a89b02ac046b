"""Training figures (analysis/training.py) through their query functions.

Every expected number is derived by hand in the comment beside it.
"""
from __future__ import annotations

import pytest
import sympy

from costlang import CostlangError, load_string

R = sympy.Rational

# one chip: 1000 TFLOP/s bf16, 2 TB/s, no launch overhead
CHIP = """hardware chip { peak bf16 = 1000 TFLOP/s; peak fp32 = 500 TFLOP/s; memory HBM { bandwidth = 2 TB/s; capacity = 80 GB }; launch = 0 s }
use hardware chip
"""

ATTENTION = CHIP + """dim S = 256
dim D = 64
input x: bf16[S, D]
weight Wq: bf16[D, D]
weight Wk: bf16[D, D]
weight Wv: bf16[D, D]
q = x @ Wq
k = x @ Wk
v = x @ Wv
kt = transpose(k)
s = q @ kt
o = s @ v
output o
"""


def queries(text, *qs):
    body = text + "\n" + "".join(f'query "{i}" = {q}\n' for i, q in enumerate(qs))
    a = load_string(body).analyze()
    return [a.value(q.value.expr) for q in a.queries]


def test_attention_flops_are_the_activation_matmuls_forward_and_backward():
    attn, model, tokens = queries(ATTENTION + "train { optimizer = sgd }", "attention_flops()", "model_flops()",
                                  "tokens_per_step()")
    # s = q·kᵀ and o = s·v: 2·S²·D each forward; backward ds, dv, dq, dkᵀ: 4 more of 2·S²·D:
    # 6 · 2·256²·64 = 12·S²·D = 50331648 (PaLM's 12·L·H·Q·T per token: 12·S·D, L = 1, H·Q = D)
    assert attn == 12 * 256 ** 2 * 64
    assert attn / tokens == 12 * 256 * 64
    # the projections: 3 forward + 3 weight gradients of 2·S·D² (x is an input: no dx), 4·N per token
    # with N = 3·D²: 12·S·D² = 3145728
    assert model - attn == 12 * 256 * 64 ** 2
    # tokens: the rows of the input x: 256
    assert tokens == 256


def test_recompute_none_gives_hfu_equal_to_mfu():
    mfu, hfu, model, hw = queries(ATTENTION + "train { optimizer = sgd }", "mfu()", "hfu()", "model_flops()",
                                  "hardware_flops()")
    assert mfu == hfu and model == hw


def test_mfu_is_model_flops_over_the_step_time_and_the_peak():
    text = CHIP + """dim B = 1024
dim D = 4096
input x: bf16[B, D]
weight W1: bf16[D, D]
weight W2: bf16[D, D]
h = x @ W1
y = h @ W2
output y
train { optimizer = sgd }
"""
    model, step, mfu, measured, tps = queries(text, "model_flops()", "step_time()", "mfu()", "mfu(1 ms)",
                                              "tokens_per_second()")
    # 5 matmuls (h, y, dh, dW2, dW1) of 2·1024·4096² = 34359738368 FLOPs
    assert model == 5 * 34359738368
    # each matmul reads 8 MiB + 32 MiB and writes 8 MiB (bf16): 2·(B·D + D² + B·D) = 50331648 B,
    # at 2 TB/s 25.17 µs < its 34.36 µs of compute; the optimizer (SGD, 2n FLOPs, 6n B with n = 2·D²
    # = 33554432): 67108864 FLOPs, 201326592 B. ΣT_compute = (5·34359738368 + 67108864)/1e15 s,
    # ΣT_memory = (5·50331648 + 201326592)/2e12 s = 226.49 µs > ΣT_compute = 171.87 µs: the
    # overlapped bound launch + max(ΣT_compute, ΣT_memory) is ΣT_memory
    assert step == R(5 * 50331648 + 201326592, 2 * 10 ** 12)
    assert mfu == R(5 * 34359738368) / (step * 10 ** 15)
    # measured 1 ms: 171798691840 / (1e-3 · 1e15) = 0.17179869184
    assert measured == R(171798691840, 10 ** 12)
    assert tps == 1024 / step


def test_time_to_train_and_gpu_hours():
    ttt, rate, hours = queries(ATTENTION + "train { optimizer = sgd }", "time_to_train(256e6)",
                               "time_to_train(256e6, 1 TFLOP/s)", "gpu_hours(256e6)")
    step, = queries(ATTENTION + "train { optimizer = sgd }", "step_time()")
    # 256e6 tokens = 1e6 steps of 256 tokens
    assert ttt == 10 ** 6 * step
    # at 1 TFLOP/s: 1e6 steps × 62914560 FLOPs (12·S²·D + 12·S·D²) / 1e12 = 62.91456 s
    assert rate == R(62914560, 10 ** 6)
    assert hours == ttt / 3600


def test_full_recomputation_counts_the_repeated_forward_once_more():
    text = CHIP + """block layer(x: bf16[b, d]) {
    weight W: bf16[d, d]
    return x @ W
}
input x: bf16[64, 1024]
output y = repeat(4) layer(x)
"""
    full = queries(text + "train { recompute = full }", "model_flops()", "hardware_flops()", "hfu()", "mfu()")
    # model: 4 layers × (y, dx, dW) of 2·64·1024² = 134217728 → 12 · 134217728 = 1610612736;
    # recomputed: the 4 layers' forward again, 4 · 134217728: hardware = 16 · 134217728 (8·P per token
    # beside 6·P: Megatron-LM's full recomputation)
    assert full[0] == 12 * 134217728 and full[1] == 16 * 134217728
    assert full[2] / full[3] == R(4, 3)


def test_tokens_stated_and_token_ids():
    assert queries(ATTENTION + "train { tokens = 1000 }", "tokens_per_step()") == [1000]
    # micro-batches multiply the tokens of one optimizer step: 4 × 256
    assert queries(ATTENTION + "train { micro_batches = 4 }", "tokens_per_step()") == [1024]


def test_a_training_figure_of_a_forward_program_is_an_error():
    with pytest.raises(CostlangError) as e:
        queries(ATTENTION, "mfu()")
    assert "mfu() is a training step's figure, and this program is not one" in e.value.render()


@pytest.mark.parametrize("q, message", [
    ("time_to_train()", "time_to_train() takes a number of tokens"),
    ("mfu(3)", "this argument of mfu() is in"),
    ("time_to_train(1e9, 2 s)", "this argument of time_to_train() is in"),
])
def test_bad_arguments(q, message):
    with pytest.raises(CostlangError) as e:
        queries(ATTENTION + "train { }", q)
    assert message in e.value.render()


def test_the_report_has_a_training_section_in_text_and_json():
    import json
    from costlang.printers.data.json import to_json
    from costlang.printers.text.report import report, training_lines
    a = load_string(ATTENTION + "train { optimizer = sgd }\n").analyze()
    text = report(a)
    assert "training step\n  optimizer sgd; recompute none; no ZeRO; 1 chip(s), 1 data-parallel" in text
    # 62914560 FLOPs over 256 tokens: 245760 FLOP per token; attention 50331648
    assert "model FLOPs 62.91 MFLOP (245.8 kFLOP per token; attention 50.33 MFLOP)" in text
    d = json.loads(to_json(a))["training"]
    assert d["model_flops"] == 62914560 and d["attention_flops"] == 50331648 and d["fsdp"] is False
    # weights 3·64²·2 = 24576 B, gradients the same, SGD: no state
    assert d["memory_per_chip"] == {"weights": 24576, "gradients": 24576, "states": 0, "total": 49152}
    ko = "\n".join(training_lines(a, "ko"))
    assert "학습 스텝" in ko and "ZeRO 없음" in ko
    forward = load_string(ATTENTION).analyze()
    assert "training step" not in report(forward) and "training" not in json.loads(to_json(forward))
