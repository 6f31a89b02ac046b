"""A dtype what-if on a zoo model gives exactly what editing the model's weight dtype gives: every
kernel's bytes (custom kernels included: the embedding gather and the MoE experts count their
weights' bytes by the weights' own dtype), FLOPs and footprint."""
import pytest

from costlang.api import load_string
from tests.conftest import EXAMPLES, query

ZOO = ["deepseek_v3", "gpt2_medium", "llama2_13b", "llama2_70b", "llama2_7b", "llama3_70b", "llama3_8b",
       "mixtral_8x7b", "tinyllama_1b"]


def _file(model: str, phase: str, wt: str) -> str:
    ctx = "ctx = 64, " if phase == "decode" else ""
    s = 1 if phase == "decode" else 8
    return (f"import {model}\nuse hardware h100_sxm\ndim B = 3\ninput tok: int32[B, {s}]\n"
            f"out = {model}_{phase}(tok, {ctx}wt = {wt}, kt = bf16, at = bf16, it = int32)\n")


def _figures(a):
    kernels = sorted((k.name, a.value(k.bytes), a.value(k.flops)) for k in a.kernels)
    return kernels, a.value(a.totals.bytes), a.value(a.totals.flops), a.value(a.footprint.bytes)


@pytest.mark.parametrize("phase", ["prefill", "decode"])
@pytest.mark.parametrize("model", ZOO)
def test_weights_setting_equals_editing_the_weight_dtype(model, phase):
    edited = load_string(_file(model, phase, "int8")).analyze()
    written = load_string(_file(model, phase, "bf16"))
    set_ = written.analyze(settings={"weights": "int8"})
    assert _figures(set_) == _figures(edited)
    as_written = written.analyze()  # and the setting changed something: bf16 weights move more bytes
    assert set_.value(set_.totals.bytes) < as_written.value(as_written.totals.bytes)


def test_mixtral_moe_bytes_under_int8_weights():
    # examples/llm/mixtral_decode_experts.cost at B = 1 with --set weights=int8. Per layer and step:
    #   two experts touched (8·(1 − 3/4) = 2), each 3·4096·14336 = 176,160,768 int8 weights (1 B):
    #   352,321,536 B; activations 57,408 B (bf16, unchanged); norm gain 4096 and router 4096·8 = 32,768
    #   weights, 36,864 in all, at 1 B: 36,864 B.  352,321,536 + 57,408 + 36,864 = 352,415,808 B.
    #   (With the experts still counted at 2 B, as before: 704,643,072 + 57,408 + 36,864 = 704,737,344.)
    from costlang import load
    a = load(EXAMPLES / "llm" / "mixtral_decode_experts.cost").analyze(settings={"B": 1, "weights": "int8"})
    assert query(a, "MoE bytes per layer and step") == 352_415_808
