"""Optimizers (stdlib/train.cost), the gradient buffer and gradient accumulation (frontend.optimizer).

Every expected number is derived by hand in the comment beside it. The model: x: bf16[B, D],
h = x @ W1, a = gelu(h), y = a @ W2, with B = 1024, D = 4096, so n = 2·D² = 33554432 trainable
parameters and each matmul does 2·B·D·D = 34359738368 FLOPs.
"""
from __future__ import annotations

import pytest
import sympy

from costlang import CostlangError, load_string

N = 2 * 4096 ** 2          # 33554432 parameters
MM = 2 * 1024 * 4096 ** 2  # 34359738368 FLOPs per matmul
# gelu: 10 FLOPs per element (stdlib/ops.cost) over B·D = 4194304 elements; its gradient 14
GELU, GRAD_GELU = 10 * 1024 * 4096, 14 * 1024 * 4096


def model(train: str, extra: str = "") -> str:
    return f"""dim B = 1024
dim D = 4096
input x: bf16[B, D]
weight W1: bf16[D, D]
weight W2: bf16[D, D]
h = x @ W1
a = gelu(h)
y = a @ W2
output y
use hardware h100_sxm
{extra}
train {{ {train} }}
"""


def kernel(a, name):
    return next(k for k in a.kernels if k.name == name)


def test_adamw_with_an_fp32_master_holds_16_bytes_per_parameter():
    a = load_string(model("optimizer = adamw; master = fp32")).analyze()
    # resident: weights 2·n (bf16) + gradients 2·n (bf16 buffer) + master, m, v 3·4·n = 16·n
    assert a.value(a.footprint.resident) == 16 * N
    k = kernel(a, "optimizer.update")
    # AdamW: 14 FLOPs per parameter (3 for m, 4 for v, 3 for the denominator, 3 for the step, 1 decay)
    assert a.value(k.flops) == 14 * N
    # reads g (2) + master, m, v (12) = 14 B per parameter; writes master, m, v (12) + bf16 weights (2)
    assert a.value(k.bytes_read) == 14 * N
    assert a.value(k.bytes_written) == 14 * N


@pytest.mark.parametrize("optimizer, flops, states, read, written", [
    # SGD: p −= lr·g, 2 FLOPs; no state; reads g, p (2 + 2), writes p (2)
    ("sgd", 2, 0, 4, 2),
    # momentum: buf = μ·buf + g, p −= lr·buf: 4 FLOPs; one bf16 buffer; reads g, p, buf, writes p, buf
    ("sgd_momentum", 4, 2, 6, 4),
    # Adam: 13 FLOPs; m, v in bf16; reads g, p, m, v (8 B), writes p, m, v (6 B)
    ("adam", 13, 4, 8, 6),
])
def test_optimizers_without_a_master_copy(optimizer, flops, states, read, written):
    a = load_string(model(f"optimizer = {optimizer}")).analyze()
    # resident: weights 2·n + gradients 2·n + states
    assert a.value(a.footprint.resident) == (4 + states) * N
    k = kernel(a, "optimizer.update")
    assert a.value(k.flops) == flops * N
    assert a.value(k.bytes_read) == read * N
    assert a.value(k.bytes_written) == written * N


def test_sgd_with_a_master_copy_and_fp32_gradients():
    a = load_string(model("optimizer = sgd; master = fp32; gradients = fp32")).analyze()
    # weights 2·n + fp32 gradients 4·n + fp32 master 4·n = 10·n
    assert a.value(a.footprint.resident) == 10 * N
    k = kernel(a, "optimizer.update")
    # reads g (4) + master (4); writes master (4) + bf16 weights (2)
    assert a.value(k.bytes_read) == 8 * N
    assert a.value(k.bytes_written) == 6 * N


def test_without_an_optimizer_the_gradient_buffer_is_still_one_resident_buffer():
    a = load_string(model("")).analyze()
    # weights 2·n + bf16 gradient buffer 2·n; the per-weight gradients are views of the buffer
    assert a.value(a.footprint.resident) == 4 * N
    assert not any(k.name.startswith("optimizer") for k in a.kernels)


def test_micro_batches_repeat_forward_and_backward_not_the_optimizer():
    one = load_string(model("optimizer = adamw; master = fp32")).analyze()
    four = load_string(model("optimizer = adamw; master = fp32; micro_batches = 4")).analyze()
    # forward + backward: 5 matmuls (h, y, dA, dW2, dW1: x needs no gradient) + gelu + its gradient
    step = 5 * MM + GELU + GRAD_GELU
    assert one.value(one.totals.flops) == step + 14 * N
    assert four.value(four.totals.flops) == 4 * step + 14 * N
    # activations live one micro-batch at a time; weights, gradients and states are held once
    assert four.value(four.footprint.bytes) == one.value(one.footprint.bytes)
    # 7 kernels per micro-batch × 4 + the optimizer
    assert four.totals.launches == 29


def test_micro_batches_may_stay_symbolic():
    a = load_string(model("optimizer = sgd; micro_batches = m", "dim m")).analyze()
    import sympy
    m = sympy.Symbol("m", positive=True, integer=True)
    step = 5 * MM + GELU + GRAD_GELU
    assert sympy.expand(a.value(a.totals.flops) - (m * step + 2 * N)) == 0


def test_an_unknown_optimizer_is_an_error_with_a_suggestion():
    with pytest.raises(CostlangError) as e:
        load_string(model("optimizer = adamv")).analyze()
    assert "there is no optimizer 'adamv'" in str(e.value)
    assert "did you mean 'adam'?" in str(e.value)


def test_the_update_runs_on_the_vector_units():
    # AdamW with fp32 masters: 14 FLOPs per parameter in fp32 on the H100's vector units (33.5 TFLOP/s,
    # not the 67 TFLOP/s of its fp32 tensor-core peak): 14·N / 33.5e12 s = 469,762,048 / 33.5e12 s
    # ≈ 14.02 µs; its bytes, 2 + 12 read and 12 + 2 written per parameter, 28·N / 3.35e12 s ≈ 280.5 µs
    a = load_string(model("optimizer = adamw; master = fp32")).analyze()
    k = next(k for k in a.kernels if k.name == "optimizer.update")
    assert a.value(k.t_compute) == sympy.Rational(14 * N, 33_500_000_000_000)
    assert a.value(k.t_memory) == sympy.Rational(28 * N, 3_350_000_000_000)
    assert a.value(k.critical_intensity) == 10    # 33.5 TFLOP/s / 3.35 TB/s


def test_a_custom_kernels_units_are_matrix_or_vector():
    with pytest.raises(CostlangError, match="`units` is `matrix` or `vector`"):
        load_string("use hardware h100_sxm\ninput x: fp32[8]\ny = custom(x) -> fp32[8] { flops = 8; units = tensor }")
