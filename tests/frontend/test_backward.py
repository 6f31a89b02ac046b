"""The backward pass derived from the forward graph (frontend/backward.py, the `grad` rules of
stdlib/ops.cost): hand-derived FLOPs and bytes, pruning, repeats, errors."""
import pytest
import sympy

from costlang import load_string
from costlang.errors import CostlangError

MLP = """use hardware h100_sxm
fusion none
dim B = 8
dim D = 1024
dim F = 4096
input x: bf16[B, D]
weight W1: bf16[D, F]{frozen}
weight W2: bf16[F, D]
h = gelu(x @ W1)
y = h @ W2
output y
train { }
"""


def _nodes(program):
    return {n.name: n for n in program.nodes.values()}


def _total(analysis):
    return analysis.value(sum((k.flops * k.count for k in analysis.kernels), sympy.Integer(0)))


def test_a_two_layer_mlp_trains_with_three_backward_matmuls():
    a = load_string(MLP.replace("{frozen}", "")).analyze()
    nodes = _nodes(a.program)
    # forward: two matmuls of 2·B·D·F = 2·8·1024·4096 = 67,108,864 FLOP each, gelu 10·B·F = 327,680.
    # backward (last first): dh = dy·W2ᵀ and dW2 = hᵀ·dy (2·B·F·D each), gelu's gradient
    # 14·B·F = 458,752, dW1 = xᵀ·dh' (2·B·D·F); x is an input, so no dx = dh'·W1ᵀ.
    assert [n for n in nodes if n.endswith(".grad")] == ["h.grad", "W2.grad", "h.matmul.grad", "W1.grad"]
    assert all(a.value(nodes[n].flops) == 67_108_864 for n in ("h.grad", "W2.grad", "W1.grad"))
    assert nodes["h.matmul.grad"].op.name == "grad_gelu" and a.value(nodes["h.matmul.grad"].flops) == 458_752
    # total: 5 matmuls + gelu + its gradient = 335,544,320 + 327,680 + 458,752
    assert _total(a) == 336_330_752
    # the loss's gradient is an input of the output's shape; weight gradients are resident
    assert a.program.tensors["y.grad"].role == "input"
    assert a.value(sympy.Tuple(*a.program.tensors["y.grad"].shape)) == (8, 1024)
    assert a.program.tensors["W1.grad"].role == "gradient" and a.value(sympy.Tuple(*a.program.tensors["W1.grad"].shape)) == (1024, 4096)
    assert dict(a.program.training.weight_grads) == {"W1": "W1.grad", "W2": "W2.grad"}
    # the forward's nodes are the program's first ones
    assert a.program.training.forward_nodes == ("h.matmul", "h", "y")


def test_a_frozen_weight_has_no_gradient_and_prunes_what_only_it_needs():
    a = load_string(MLP.replace("{frozen}", " frozen")).analyze()
    nodes = _nodes(a.program)
    # W1 frozen and x an input: nothing before h needs a gradient, so only dW2 = hᵀ·dy remains:
    # 3 matmuls of 67,108,864 and gelu's 327,680 FLOP
    assert [n for n in nodes if n.endswith(".grad")] == ["W2.grad"]
    assert _total(a) == 3 * 67_108_864 + 327_680
    assert dict(a.program.training.weight_grads) == {"W2": "W2.grad"}


def test_a_bias_gradient_is_a_sum_over_the_rows():
    a = load_string("""use hardware h100_sxm
dim B = 4
dim D = 16
input x: fp32[B, D]
weight W: fp32[D, D]
weight b: fp32[D]
y = x @ W + b
output y
train { }
""").analyze()
    nodes = _nodes(a.program)
    # db = Σ_rows dy: a reduction of dy's B·D = 64 elements to D; dy passes through the add unchanged
    # (no kernel), so dW = xᵀ·dy reads the seed directly
    s = nodes["b.grad_sum"]
    assert s.kind == "reduce" and a.value(s.flops) == 64 and a.value(sympy.Tuple(*a.program.tensors["b.grad_sum"].shape)) == (16,)
    assert nodes["W.grad"].inputs[1] == "y.grad"
    assert a.value(nodes["W.grad"].flops) == 2 * 4 * 16 * 16


def test_a_weight_gradient_over_a_batch_is_one_contraction():
    a = load_string("""use hardware h100_sxm
fusion none
dim B = 2
dim S = 3
dim D = 4
dim N = 5
input x: bf16[B, S, D]
weight W: bf16[D, N]
y = x @ W
output y
train { }
""").analyze()
    nodes = _nodes(a.program)
    # dW = Σ_b x_bᵀ·dy_b: one matmul over B·S = 6 rows, 2·6·4·5 = 240 FLOP, written once as [D, N]
    # (4·5·2 B = 40 B), reading x (2·3·4·2 = 48 B) and dy (2·3·5·2 = 60 B): 148 B, no [B, D, N] temporary
    assert a.value(nodes["W.grad"].flops) == 240
    assert a.value(sympy.Tuple(*a.program.tensors["W.grad"].shape)) == (4, 5)
    k = next(k for k in a.kernels if k.name == "W.grad")
    assert a.value(k.bytes) == 148


def test_a_repeated_layer_stays_one_repeat_in_the_backward():
    text = """use hardware h100_sxm
dim L
dim B = 2
dim D = 8
block layer(x: bf16[b, d]) {
    weight W: bf16[d, d]
    return relu(x @ W)
}
input x: bf16[B, D]
y = repeat(L) layer(x)
output y
train { }
"""
    m = load_string(text)
    nodes = _nodes(m.program)
    # one body: forward matmul + relu, backward relu-gradient + dx + dW, whatever L is
    body = [n for n in nodes.values() if n.repeat and n.kind != "view"]  # (and the transposes' views)
    assert len(body) == 5
    L = sympy.Symbol("L", positive=True, integer=True)
    a = m.analyze()
    # per layer: matmuls 2·B·D·D = 256 FLOP (forward, dx, dW: 768), relu 16, its gradient 16;
    # the first layer's dx is computed too (every layer computes its input's gradient: × L)
    assert sympy.expand(_total(a) - L * (3 * 256 + 16 + 16)) == 0


def test_the_zoo_trains_by_name_with_three_times_the_forward_matmuls():
    a = load_string("""import llama3_8b
use hardware h100_sxm
dim B = 1
dim S = 4096
input ids: int32[B, S]
y = llama3_8b_prefill(ids, wt = bf16, kt = bf16, at = bf16, it = int32)
train { }
""").analyze()
    matmul = sum(a.value(k.flops * k.count) for k in a.kernels if set(k.op_names) == {"matmul"})
    # per token, forward (Llama-3-8B config, stdlib/models/llama3_8b.cost):
    #   weight matmuls 2·218,103,808 per layer (wq 16,777,216 + wk, wv 4,194,304 each + wo 16,777,216
    #   + SwiGLU 176,160,768), causal attention scores and P·V 2·H·hd·(S + 1) = 2·4096·4097 = 33,562,624
    #   per layer; lm_head 2·d·V = 1,050,673,152:  32·469,770,240 + 1,050,673,152 = 16,083,320,832
    # backward: every matmul's dX and dW (or both operands' gradients): twice the forward
    assert matmul == 3 * 16_083_320_832 * 4096


@pytest.mark.parametrize("text, message", [
    ("input x: fp16[4]\ny = relu(x)\ntrain { }\n", "every weight here is frozen"),
    ("input x: fp16[4] frozen\nweight W: fp16[4, 4]\ny = x @ W\ntrain { }\n", "only a weight can be frozen"),
    ("op f(x): elementwise, flops = 1\nweight W: fp16[4]\ny = f(W)\ntrain { }\n", "states no gradient"),
    ("weight W: fp16[4]\ny = custom(W) -> fp16[4] { flops = 4 }\ntrain { }\n", "states no backward"),
    ("weight W: fp16[4]\ny = relu(W)\ntrain { zero = 5 }\n", "zero"),
    ("weight W: fp16[4]\ny = relu(W)\ntrain { recompute = some }\n", "recompute"),
    ("weight W: fp16[4]\ny = relu(W)\ntrain { }\ntrain { }\n", "already a training step"),
])
def test_training_errors_are_positioned(text, message):
    with pytest.raises(CostlangError) as e:
        load_string("use hardware h100_sxm\n" + text, name="t.cost").analyze()
    assert message in e.value.render()
    assert "t.cost:" in e.value.render()


def test_a_gradient_passed_on_to_a_bias_is_summed_not_taken_into_its_matmul():
    a = load_string("""use hardware h100_sxm
fusion none
dim B = 2
dim S = 3
dim D = 4
input x: bf16[B, S, D]
weight W1: bf16[D, D]
weight b1: bf16[D]
weight W2: bf16[D, D]
h = x @ W1 + b1
y = h @ W2
output y
train { }
""").analyze()
    nodes = _nodes(a.program)
    # dh = dy·W2ᵀ is [B, S, D] (2·6·4·4 = 192 FLOP); the add passes it on whole to h.matmul (for
    # dW1 = xᵀ·dh, 192 FLOP) and to b1, whose gradient sums its B·S = 6 rows (24 elements): dh itself
    # keeps its shape (it is not b1's alone)
    assert a.value(sympy.Tuple(*a.program.tensors["h.grad"].shape)) == (2, 3, 4)
    assert a.value(nodes["h.grad"].flops) == 192 and nodes["h.grad"].option("sum_leading") is None
    assert nodes["b1.grad_sum"].inputs == ("h.grad",) and a.value(nodes["b1.grad_sum"].flops) == 24
    assert a.value(nodes["W1.grad"].flops) == 192


def test_a_collective_written_in_the_file_transposes_in_the_backward():
    a = load_string("""use system dgx_h100
dim B = 4
dim D = 8
weight W: bf16[B, D]
g = all_gather(W, over = gpu)
y = relu(g)
output y
train { }
""").analyze()
    nodes = _nodes(a.program)
    # the forward gathers W's 4 rows from each of 8 GPUs into 32 rows; its gradient is a
    # reduce-scatter over the same axis back to 4 rows: n = 32·8·2 B = 512 B per chip, of which a
    # ring sends (p − 1)/p·n = 7/8·512 = 448 B
    back = nodes["W.grad"]
    assert back.op.name == "reduce_scatter" and back.comms.axis == "gpu"
    assert a.value(sympy.Tuple(*a.program.tensors["W.grad"].shape)) == (4, 8)
    assert a.value(back.comms.sent) == 448


SCALAR = """use hardware h100_sxm
fusion none
dim n = 8
let c = 4
input x: fp32[n]
weight w: fp32[n]
h = x * w
y = {expr}
output y
train { }
"""


def test_a_number_first_operand_of_a_subtraction_takes_the_second_operands_rule():
    a = load_string(SCALAR.replace("{expr}", "c - h")).analyze()
    nodes = _nodes(a.program)
    # y = c − h: ∂y/∂h = −1, sub's rule `db = neg(dy)` (b is h, a is the number c, which has no
    # gradient): dh = neg(dy), n = 8 FLOP; then dw = dh · x (mul's `db = dy * a`), 8 FLOP.
    # Total 8 (h) + 8 (y) + 8 (neg) + 8 (dw) = 32 FLOP.
    assert nodes["h.grad"].op.name == "neg" and a.value(nodes["h.grad"].flops) == 8
    assert _total(a) == 32
    # h − c: ∂y/∂h = +1, `da = reshape(dy)` passes dy on (no kernel): 8 + 8 + 8 (dw) = 24 FLOP
    b = load_string(SCALAR.replace("{expr}", "h - c")).analyze()
    assert "h.grad" not in _nodes(b.program) and _total(b) == 24


def test_a_number_operand_stands_as_itself_in_the_rule():
    # y = c / h: div's `db = neg(dy * y / b)` with b = h: two elementwise ops on the number-free
    # tensors (dy·y, then / h) and a neg: 3·n = 24 FLOP for dh, 8 for dw = dh · x; forward 16.
    # Total 16 + 24 + 8 = 48 FLOP.
    a = load_string(SCALAR.replace("{expr}", "c / h")).analyze()
    assert _total(a) == 48
    # y = h / c: `da = dy / b` with b the number c: one elementwise op, dy / 4 (8 FLOP); total 16 + 8 + 8
    b = load_string(SCALAR.replace("{expr}", "h / c")).analyze()
    nodes = _nodes(b.program)
    assert nodes["h.grad"].inputs == ("y.grad",) and dict(nodes["h.grad"].constants) == {1: 4}
    assert _total(b) == 32


def test_a_size_added_to_a_layer_trains():
    # `s + f(h)` with s a size (a number, not a tensor): add's `db = reshape(dy)` passes dy on to
    # the tensor operand, and the number gets no gradient. y = n + h: 8 (h) + 8 (y) + 8 (dw) = 24.
    a = load_string(SCALAR.replace("{expr}", "n + h")).analyze()
    assert _total(a) == 24


def test_a_rules_op_on_a_number_operand_is_a_number():
    # y = c^h with c the number 4: pow's `db = dy * y * log(a)` with a = c: log(c) is a number, so
    # dh = (dy · y) · log(4) is two elementwise multiplies, 2·n = 16 FLOP; `da` is not made (c is
    # a number). Total: h 8 + pow 8 (1 FLOP per element) + dh 16 + dw 8 = 40 FLOP.
    a = load_string(SCALAR.replace("{expr}", "pow(c, h)")).analyze()
    nodes = _nodes(a.program)
    assert a.value(nodes["h.grad"].flops) == 8 and nodes["h.grad"].op.name == "mul"
    assert _total(a) == 40
