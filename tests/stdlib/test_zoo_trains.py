"""Every zoo model trains by name: `y = MODEL_prefill(ids, ...)` and `train { }` (frontend/backward.py)."""
import pytest

from costlang import load_string

ZOO = ["llama2_7b", "llama2_13b", "llama2_70b", "llama3_8b", "llama3_70b", "mixtral_8x7b", "deepseek_v3",
       "gpt2_medium", "tinyllama_1b"]


def _file(model: str, train: bool) -> str:
    return (f"import {model}\nuse hardware h100_sxm\ndim B = 1\ndim S = 512\ninput ids: int32[B, S]\n"
            f"y = {model}_prefill(ids, wt = bf16, kt = bf16, at = bf16, it = int32)\n"
            + ("train { }\n" if train else ""))


def _matmul_flops(a):
    return sum(a.value(k.flops * k.count) for k in a.kernels if set(k.op_names) == {"matmul"})


@pytest.mark.parametrize("model", [pytest.param(m, marks=() if m == "tinyllama_1b" else pytest.mark.slow)
                                   for m in ZOO])
def test_every_zoo_model_trains_with_twice_its_forward_matmuls_in_the_backward(model):
    forward = load_string(_file(model, False)).analyze()
    step = load_string(_file(model, True)).analyze()
    # every matmul of these models has two operands that need a gradient (activations computed from
    # the embedding, weights, or both, as attention's q·kᵀ): its backward is two matmuls of its own
    # size (dA = dY·Bᵀ and dB = Aᵀ·dY), so the step's matmul FLOPs are exactly three times the
    # forward's; the custom kernels (embedding, MoE) state their own backward
    assert _matmul_flops(step) == 3 * _matmul_flops(forward)
    assert step.program.training.weight_grads
    names = [w for w, _ in step.program.training.weight_grads]
    assert all(step.program.tensors[w].role == "weight" for w in names)
