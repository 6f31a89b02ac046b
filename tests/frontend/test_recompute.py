"""Recomputation (`train { recompute = none | selective | full }`, frontend/backward.py): copies of
forward nodes marked `recompute`, read by the backward instead of the saved results; their FLOPs
are hardware FLOPs apart from the model's. Every value derived by hand."""
import sympy

from costlang import load_string

# One attention layer, twice. Activations: x, q, k, v are B·S·D = 2·4·8 = 64 bf16 = 128 B; the
# scores and probabilities B·S·S = 32 elements = 64 B.
ATTN = """use hardware h100_sxm
fusion none
dim B = 2
dim S = 4
dim D = 8
dim L = 2
block layer(x: bf16[B, S, D]) {
    weight Wq: bf16[D, D]
    weight Wk: bf16[D, D]
    weight Wv: bf16[D, D]
    q = x @ Wq
    k = x @ Wk
    v = x @ Wv
    p = softmax(q @ transpose(k))
    return p @ v
}
input x: bf16[B, S, D]
h = repeat(L) layer(x)
output h
train { recompute = POLICY }
"""
# forward FLOPs per layer: q, k, v 3 · 2·(B·S)·D·D = 3 · 1024; scores 2·B·S·S·D = 512; softmax
# 5·B·S·S = 160; p·v 2·B·S·S·D = 512: 4256
FORWARD = 3 * 1024 + 512 + 160 + 512


def _run(policy):
    return load_string(ATTN.replace("POLICY", policy)).analyze()


def _flops(a, recompute=None):
    return sum(a.value(n.flops * a.program.count(n.repeat)) for n in a.program.nodes.values()
               if recompute is None or n.recompute == recompute)


def _saved(a):
    return {t.tensor: a.value(t.bytes) for t in a.footprint.saved_tensors}


def test_no_recomputation_keeps_q_k_v_and_the_probabilities():
    a = _run("none")
    assert not any(n.recompute for n in a.program.nodes.values())
    # saved: x once (128), q, k, v (read by the gradient matmuls) × 2 layers (3 · 256), p (read by
    # softmax's gradient and dV = pᵀ·dO) × 2 (128), h × 1: layer 2's input (128) = 1152 B.
    # The scores q·kᵀ are read by no backward rule (softmax's gradient needs its result only).
    assert _saved(a) == {"x": 128, "h.q": 256, "h.k": 256, "h.v": 256, "h.p": 128, "h": 128}
    assert a.value(a.footprint.saved) == 1152
    # forward 4256 per layer; backward: dp, dv, dq, dk (4 · 512), softmax's gradient 4·B·S·S = 128,
    # dx and dW for q, k, v (6 · 1024), two adds summing dx's three parts (2 · B·S·D = 2 · 64) =
    # 8448; (4256 + 8448) · 2 = 25,408
    assert _flops(a) == 25_408


def test_selective_recomputes_the_scores_and_softmax_before_their_backward():
    a, none = _run("selective"), _run("none")
    again = [n for n in a.program.nodes.values() if n.recompute]
    assert [n.name for n in again] == ["h.p.matmul.recompute", "h.p.recompute"]
    # the backward reads the recomputed probabilities: softmax's gradient and dV
    readers = {n.name for n in a.program.nodes.values() if "h.p.recompute" in n.inputs}
    assert readers == {"h.p.matmul.grad", "h.v.grad.transpose"}  # dV = pᵀ·dO reads p through a view
    # p is not saved any more: 1152 − 2 · 64 = 1024 B
    assert "h.p" not in _saved(a) and a.value(a.footprint.saved) == 1024
    # recompute FLOPs: (scores 512 + softmax 160) × 2 layers = 1344; the model's are unchanged
    assert _flops(a, recompute=True) == 1344
    assert _flops(a, recompute=False) == _flops(none) == 25_408


def test_full_recomputes_each_layer_and_keeps_only_its_input():
    a = _run("full")
    # the whole body's forward again: 4256 × 2 = 8512 hardware FLOPs
    assert _flops(a, recompute=True) == 2 * FORWARD == 8512
    # saved: x and h (layer 2's input): the checkpoints, 128 B each
    assert _saved(a) == {"x": 128, "h": 128}
    # peak 1024 B, at the recomputed softmax: x, h × 2 (own and layer 1's), h.grad, q', k', v'
    # (7 × 128 = 896) and the recomputed probabilities p' (64) and scores (64) = 1024
    assert a.value(a.footprint.live) == 1024 and a.footprint.peak_at == "h.p.recompute"


def test_selective_leaves_a_softmax_that_feeds_no_matmul_alone():
    # a router-like softmax (read by an elementwise op, not a P·V matmul): nothing to recompute
    text = """use hardware h100_sxm
dim B = 4
dim D = 8
input x: bf16[B, D]
weight W: bf16[D, D]
y = softmax(x @ W) * x
output y
train { recompute = selective }
"""
    a = load_string(text).analyze()
    assert not any(n.recompute for n in a.program.nodes.values())


def test_full_without_a_repeat_recomputes_nothing():
    # `full` checkpoints repeated bodies; a flat program has none
    text = ATTN.replace("h = repeat(L) layer(x)", "h = layer(x)").replace("POLICY", "full")
    a = load_string(text).analyze()
    assert not any(n.recompute for n in a.program.nodes.values())
    # x is an input (no dx): forward 4256 + backward 4 · 512 + 128 + 3 · 1024 (dW) = 9504
    assert sympy.Integer(_flops(a)) == 9504
