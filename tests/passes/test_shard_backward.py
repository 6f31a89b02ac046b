"""Sharding a training step: the collectives of the backward follow from the splits (passes/shard.py
on the graph frontend/backward.py derives), where Megatron-LM places them."""
import sympy

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


TINY_LLAMA = """import llm
system s {
  chip = h100_sxm
  axis gpu = 2
  link NVLink over gpu { one_way = 450 GB/s }
}
use system s
parallel tensor over gpu
SEQ
input ids: int32[2, S]
logits = llama_prefill(ids, vocab = 64, d = 32, layers = 1, heads = 4, kv_heads = 4, head_dim = 8, ffn = 64, \\
                       wt = bf16, kt = bf16, at = bf16, it = int32)
output logits
train { optimizer = adamw; master = fp32 }
"""


def test_a_llama_layers_backward_all_reduces_twice_as_megatron_does():
    a = load_string(TINY_LLAMA.replace("SEQ", "dim S = 16")).analyze()
    collectives = [n for n, x in a.program.nodes.items() if x.kind == "collective"]
    # Megatron-LM (Shoeybi et al. 2019, Fig. 4): per layer two all-reduces forward (after the row-parallel
    # output projection and down projection) and two backward (operator f's: the gradient of the normed
    # input that Q, K and V, or gate and up, read). The three column-parallel matmuls' input gradients are
    # partial sums over the same axis: summed first, all-reduced once (before: three, and two for the MLP).
    # Besides the layer: the vocabulary-parallel embedding's forward all-reduce and the lm_head's input
    # gradient (the head is column-parallel over the vocabulary).
    assert collectives == ["logits.x_all_reduce", "logits.layer.attn_all_reduce", "logits.layer.mlp_all_reduce",
                           "logits.rms_norm.grad_all_reduce", "logits.layer.mlp.rms_norm.grad_sum_all_reduce",
                           "logits.layer.attn.rms_norm.grad_sum_2_all_reduce"]
    k = next(k for k in a.kernels if k.name == "logits.layer.attn.rms_norm.grad_sum_2_all_reduce")
    # the summed gradient [2, 16, 32] bf16 = 2048 B; a ring over 2 sends 2·(1/2)·n = n at 450 GB/s
    assert a.value(k.comms.comms.message) == 2048
    assert a.value(k.t_comms) == sympy.Rational(2048, 450 * 10 ** 9)
    # each matmul still does its half of the contraction: dQ'[2·16, 32/2]·Wqᵀ[32/2, 32] = 2·32·16·32 =
    # 32,768 FLOP per chip; the sums add whole [2, 16, 32] tensors on each chip: 1,024 FLOP each
    nodes = a.program.nodes
    assert a.value(nodes["logits.layer.attn.rms_norm.grad_3"].flops) == 32_768
    assert a.value(nodes["logits.layer.attn.rms_norm.grad_sum"].flops) == 1024
    assert a.value(nodes["logits.layer.attn.rms_norm.grad_sum_2"].flops) == 1024


def test_a_literal_sequence_that_equals_another_size_keeps_the_heads_split():
    # S = 16, a multiple of kv_heads: the attention's output view [b, kv_heads, group·s, head_dim] =
    # [2, 4, 16, 8] back to [b, s, heads·head_dim] = [2, 16, 32] could send the heads' split to the
    # sequence by the sizes alone; it goes back where the Q view took it from, and the
    # program is the one a named `dim S = 16` gives (before: refused at the residual add)
    literal = load_string(TINY_LLAMA.replace("SEQ", "").replace("[2, S]", "[2, 16]")).analyze()
    named = load_string(TINY_LLAMA.replace("SEQ", "dim S = 16")).analyze()
    assert [(k.name, literal.value(k.flops), literal.value(k.bytes)) for k in literal.kernels] == \
        [(k.name, named.value(k.flops), named.value(k.bytes)) for k in named.kernels]
