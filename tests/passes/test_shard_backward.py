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


TP_DP_HEAD = """system s {
  chip = h100_sxm
  axis gpu = 2
  axis replica = 2
  link NVLink over gpu, replica { bidirectional = 900 GB/s }
}
use system s
parallel tensor over gpu
parallel data over replica { gradients = bf16 }
dim B = 8, d = 64, V = 128
input x: bf16[B, d]
weight Wv: bf16[d, V]
logits = x @ Wv
output logits
train { }
"""


def test_the_loss_gradient_is_split_as_its_output_under_tensor_and_data_parallelism():
    # A vocabulary-parallel head: Wv column-parallel over gpu, the batch over replica, so logits is
    # [B/2, V/2] per chip and so is its loss gradient (it was fixed [B/2, V] whole, and the head's dX
    # refused). dWv = xᵀ·dlogits per chip: [d, B/2]·[B/2, V/2], 2·4·64·64 = 32,768 FLOP, like the forward.
    a = load_string(TP_DP_HEAD).analyze()
    seed = next(t for t, fwd in a.program.gradient_seeds.items() if fwd == "logits")
    assert a.value(a.program.tensors[seed].numel) == 4 * 64
    assert a.value(a.program.nodes["logits"].flops) == 32_768
    assert a.value(a.program.tensors["Wv.grad"].numel) == 64 * 64


DP_NORM = """system s {
  chip = h100_sxm
  axis replica = 4
  link NVLink over replica { bidirectional = 900 GB/s }
}
use system s
parallel data over replica { gradients = bf16 }
dim B = 16, d = 64
input x: bf16[B, d]
weight W0: bf16[d, d]
weight g: bf16[d]
weight W: bf16[d, d]
p = softmax(x @ W0) * g
y = p @ W
output y
train { }
"""


def test_a_rowwise_backward_of_several_operands_keeps_the_batch_split():
    # softmax's gradient reads its output and the output's gradient, both [B/4, d] per chip: the
    # rows stay split over replica (this was an internal error); each chip's dW = pᵀ·dy is
    # [d, B/4]·[B/4, d], 2·64·4·64 = 32,768 FLOP, then summed over the replicas once per step
    a = load_string(DP_NORM).analyze()
    grads = [n for n in a.program.nodes.values() if n.kind == "rowwise" and len(n.inputs) > 1]   # grad_softmax
    assert grads and all(a.value(a.program.tensors[n.output].numel) == 4 * 64 for n in grads)
    assert a.value(a.program.tensors["W.grad"].numel) == 64 * 64
