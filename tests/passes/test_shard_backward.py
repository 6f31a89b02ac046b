"""Sharding a training step: the collectives of the backward follow from the splits (passes/shard.py
on the graph frontend/backward.py derives), where Megatron-LM places them."""
from costlang import load_string

TP_MLP = """use system dgx_h100
parallel tensor over gpu
dim B = 8
dim S = 2048
dim D = 4096, F = 16384
input x: bf16[B, S, D]
weight g: bf16[D]
weight W1: bf16[D, F]
weight W2: bf16[F, D]
n = rmsnorm(x) * g
h = gelu(n @ W1)
y = h @ W2
output y
train { }
"""


def test_tensor_parallel_backward_all_reduces_the_input_gradient_where_megatron_does():
    a = load_string(TP_MLP).analyze()
    names = list(a.program.nodes)
    collectives = [n for n in names if a.program.nodes[n].kind == "collective"]
    # Megatron's MLP (Shoeybi et al. 2019, Fig. 3): W1 column-parallel, W2 row-parallel. Forward: one
    # all-reduce after h·W2 (operator g). Backward: dh = dy·W2ᵀ and dW2, dW1 stay split (no
    # collective); dn = dh'·W1ᵀ contracts the split F: a partial sum, all-reduced (operator f's
    # backward). g's gradient is then summed over whole rows on every chip: no collective.
    assert collectives == ["y_all_reduce", "n.grad_all_reduce"]
    assert names.index("n.grad_all_reduce") == names.index("n.grad") + 1
    # per chip (8 GPUs): dn = dh'[B, S, F/8]·W1ᵀ[F/8, D]: 2·8·2048·4096·2048 = 274,877,906,944 FLOP; the
    # all-reduced buffer is dn, B·S·D·2 B = 134,217,728 B on each chip
    assert a.value(a.program.nodes["n.grad"].flops) == 274_877_906_944
    assert a.value(a.program.tensors["n.grad"].bytes) == 134_217_728
    # the weight gradients keep their weights' splits: [D, F/8] and [F/8, D]
    assert a.value(a.program.tensors["W1.grad"].numel) == 4096 * 2048
    assert a.value(a.program.tensors["W2.grad"].numel) == 2048 * 4096
    assert a.value(a.program.tensors["g.grad_sum"].numel) == 4096
