"""What a training step keeps (analysis/footprint.py): saved activations live from their forward
kernel to the backward kernel that reads them; in a repeated body they are held by every layer at
the turn from forward to backward. Every value derived by hand."""
import sympy

from costlang import load_string

# Every activation below is B·D = 4·8 elements of bf16 = 64 B; a [D, D] weight is 128 B.
TOY = """use hardware h100_sxm
fusion none
dim B = 4
dim D = 8
input x: bf16[B, D]
weight W1: bf16[D, D]
weight W2: bf16[D, D]
y = gelu(x @ W1) @ W2
output y
train { }
"""

REPEAT = """use hardware h100_sxm
fusion none
dim B = 4
dim D = 8
dim L = {L}
block layer(x: bf16[B, D]) {{
    weight W1: bf16[D, D]
    weight W2: bf16[D, D]
    return gelu(x @ W1) @ W2
}}
input x: bf16[B, D]
h = repeat(L) layer(x)
output h
train {{ }}
query saved_bytes()
query saved_bytes(h)
"""


def _saved(a):
    return {t.tensor: a.value(t.bytes) for t in a.footprint.saved_tensors}


def test_a_two_layer_toy_keeps_what_its_backward_reads():
    a = load_string(TOY).analyze()
    f = a.footprint
    # schedule: k0 y.matmul = x@W1, k1 y.gelu, k2 y = g@W2 | k3 y.gelu.grad = dy@W2ᵀ,
    # k4 W2.grad = gᵀ@dy, k5 y.matmul.grad = gelu'(m)·dg, k6 W1.grad = xᵀ@dm.
    # Saved (forward-written or input, read by the backward): x (by W1.grad), y.matmul (by gelu's
    # gradient), y.gelu (by W2.grad): 3 × 64 = 192 B. y itself is the output, not read back.
    assert _saved(a) == {"x": 64, "y.matmul": 64, "y.gelu": 64}
    assert a.value(f.saved) == 192
    # peak at k3: x, y.grad, y.matmul, y.gelu, y (output, to the end), y.gelu.grad = 6 × 64 = 384 B;
    # resident: W1, W2 and their gradients 4 × 128 = 512 B
    assert a.value(f.live) == 384 and f.peak_at == "y.gelu.grad"
    assert a.value(f.resident) == 512 and a.value(f.bytes) == 896


def test_a_repeat_holds_every_layers_saved_tensors_at_the_turn():
    a = load_string(REPEAT.format(L=3)).analyze()
    f = a.footprint
    # Unrolled, after three forwards: x (layer 1's input), m_l = x_l@W1 and g_l = gelu(m_l) for
    # l = 1..3 (read by gelu's gradient and dW2), h_1, h_2 (layers 2 and 3's inputs, read by their
    # dW1) and h_3 (the output); then h.grad and the first backward's dg: 12 × 64 = 768 B.
    # Collapsed: x, h.grad, m, g, h, dg once (6 × 64) + the other 2 layers' m, g, h (6 × 64).
    assert a.value(f.live) == 768 and f.peak_at == "h.gelu.grad"
    # saved: x once, m and g × 3, and h × 2 (layers 2 and 3's inputs): (1 + 3 + 3 + 2) × 64 = 576 B
    assert _saved(a) == {"x": 64, "h.matmul": 192, "h.gelu": 192, "h": 128}
    assert a.value(f.saved) == 576
    # the query: the whole step's (576 B) and the repeat's own (all but x: 512 B)
    assert [a.value(q.value.expr) for q in a.queries] == [576, 512]
    # resident: 3 layers × (W1, W2, dW1, dW2) × 128 B = 1536 B
    assert a.value(f.resident) == 1536 and a.value(f.bytes) == 2304


def test_one_layer_is_the_flat_toy_and_saved_grows_linearly_in_L():
    # L = 1: no other layer's copies: peak 6 × 64 = 384 B, as the flat toy
    one = load_string(REPEAT.format(L=1)).analyze()
    assert one.value(one.footprint.live) == 384
    # L = 80, still one body (8 kernels): 6 × 64 + 79 × 3 × 64 = 15,552 B at the turn;
    # saved 64 + 80 · 128 + 79 · 64 = 15,360 B
    big = load_string(REPEAT.format(L=80)).analyze()
    assert len(big.kernels) == 8
    assert big.value(big.footprint.live) == 384 + 79 * 192 == 15_552
    assert big.value(big.footprint.saved) == 64 + 80 * 128 + 79 * 64 == 15_360


def test_a_free_layer_count_gives_the_peak_as_a_formula():
    a = load_string(REPEAT.format(L=3).replace("dim L = 3", "dim L")).analyze()
    saved = a.value(a.footprint.saved)  # B and D bound, L free
    (L,) = saved.free_symbols
    # x once, m and g × L, h × (L − 1): 64 + 128·L + 64·(L − 1) = 192·L
    assert sympy.expand(saved - 192 * L) == 0


def test_a_forward_step_keeps_nothing_for_a_backward():
    a = load_string(TOY.replace("train { }\n", "")).analyze()
    assert a.footprint.saved_tensors == () and a.footprint.saved == 0


def test_a_forward_collective_the_sharding_pass_inserts_is_the_forwards():
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).parents[1] / "passes"))
    from test_shard_backward import TP_MLP
    a = load_string(TP_MLP).analyze()
    # Megatron MLP over 8 chips (F split): y's all-reduce runs in the forward, so the forward's
    # partial y is not a saved tensor. Saved, per chip: rmsnorm's result (read by g's gradient) and
    # n (read by dW1), B·S·D·2 = 8·2048·4096·2 = 134,217,728 B each; GELU's input and output, split:
    # B·S·(F/8)·2 = 8·2048·2048·2 = 67,108,864 B each. x is an input that needs no gradient.
    assert _saved(a) == {"n.rmsnorm": 134_217_728, "n": 134_217_728, "h.matmul": 67_108_864, "h": 67_108_864}
