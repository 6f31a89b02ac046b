"""examples/composition/transformer_layer.cost: blocks + tensor expressions = the layer op by op."""
from pathlib import Path

import pytest
import sympy

import costlang
from costlang.api import load_string

DIR = Path(__file__).resolve().parents[2] / "examples" / "composition"
L = sympy.Symbol("L", positive=True, integer=True)

# One LLaMA-7B-sized layer, T = B·S = 2048 tokens, d = 4096, 32 heads of 128, f = 11008:
#   2 RMSNorms 2·4·T·d + 2 scales 2·T·d + q/k/v/o 4·2·T·d² + scores and p@v 2·2·h·S²·hd
#   + scale h·S² + softmax 5·h·S² + 2 residuals 2·T·d + gate/up/down 3·2·T·d·f + silu 5·T·f + mul T·f
FLOPS = (2 * 4 * 2048 * 4096 + 2 * 2048 * 4096 + 4 * 2 * 2048 * 4096**2 + 2 * 2 * 32 * 2048**2 * 128
         + 32 * 2048**2 + 5 * 32 * 2048**2 + 2 * 2048 * 4096 + 3 * 2 * 2048 * 4096 * 11008
         + 5 * 2048 * 11008 + 2048 * 11008)
WEIGHTS = 2 * (4 * 4096**2 + 3 * 4096 * 11008 + 2 * 4096)   # fp16: 404,766,720 B


def test_hand_values():
    assert FLOPS == 898_689_400_832 and WEIGHTS == 404_766_720


@pytest.mark.parametrize("mode", ["none", "elementwise", "epilogue"])
def test_blocks_and_expressions_equal_the_layer_op_by_op(mode):
    text = (DIR / "transformer_layer.cost").read_text().replace("dim L ", "dim L = 1 ")
    a = load_string(text, "layer.cost").analyze(fusion=mode)
    b = costlang.load(DIR / "transformer_layer_ops.cost").analyze(fusion=mode)
    for figure in ("flops", "bytes", "t_kernel"):
        assert a.value(getattr(a.totals, figure)) == b.value(getattr(b.totals, figure))
    assert a.value(sympy.Integer(1) * a.totals.launches) == b.totals.launches
    assert a.value(a.footprint.bytes) == b.value(b.footprint.bytes)
    assert b.value(b.totals.flops) == FLOPS


def test_the_stack_is_l_times_one_layer():
    a = costlang.load(DIR / "transformer_layer.cost").analyze()
    q = {r.name: a.value(r.value.expr) for r in a.queries}
    assert q["FLOPs per layer"] == FLOPS
    assert q["weights per layer"] == WEIGHTS
    assert a.value(a.totals.flops) == FLOPS * L
    assert a.totals.launches == 18 * L
    assert a.value(a.footprint.resident) == WEIGHTS * L


def test_weights_are_named_by_call_site():
    p = costlang.load(DIR / "transformer_layer.cost").program
    assert {"y.attn.q_proj", "y.attn.o_proj", "y.ffn.gate", "y.attn.norm.g", "y.ffn.norm.g"} <= set(p.tensors)
