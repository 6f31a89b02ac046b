"""ZeRO stages 0-3 over the data-parallel axis (passes/parallelism.insert_zero, passes/shard.py).

Every expected number is derived by hand in the comment beside it. The model: 3 layers of
W: fp16[1024, 1024] (n = 3·1024² = 3145728 trainable parameters), a batch of 64 rows split over
dp = 2 chips, AdamW with an fp32 master: 2 + 2 + 12 = 16 bytes per parameter without ZeRO.
"""
from __future__ import annotations

import pytest
import sympy

from costlang import load_string

N = 3 * 1024 * 1024
R = sympy.Rational

SYSTEM = """
hardware chip { peak fp16 = 1000 TFLOP/s; peak fp32 = 500 TFLOP/s; memory HBM { bandwidth = 2 TB/s; capacity = 80 GB }; launch = 0 s }
system pair {
  chip = chip
  axis dp = DP
  link NVLink over dp { one_way = 100 GB/s }
}
use system pair
block layer(x: fp16[b, d]) {
    weight W: fp16[d, d]
    return x @ W
}
"""


def run(train: str, dp: int = 2, parallel: str = "parallel data over dp"):
    text = SYSTEM.replace("DP", str(dp)) + f"""{parallel}
input x: fp16[64, 1024]
output y = repeat(3) layer(x)
train {{ {train} }}
"""
    return load_string(text).analyze()


def kernel(a, name):
    return next(k for k in a.kernels if k.name == name)


@pytest.mark.parametrize("zero, resident", [
    (0, 16 * N),                       # weights 2n + gradients 2n + master, m, v 12n
    (1, 2 * N + 2 * N + 12 * N // 2),  # states over N_d = 2: 4n + 12n/2 = 10n
    (2, 2 * N + 14 * N // 2),          # gradients too: 2n + 14n/2 = 9n
    (3, 16 * N // 2),                  # parameters too (FSDP): 16n/2 = 8n
])
def test_each_stage_shards_one_more_kind_of_state(zero, resident):
    a = run(f"optimizer = adamw; master = fp32; zero = {zero}")
    assert a.value(a.footprint.resident) == resident


@pytest.mark.parametrize("zero", [1, 2, 3])
def test_zero_with_one_data_parallel_chip_holds_what_plain_training_holds(zero):
    plain = run("optimizer = adamw; master = fp32", dp=1)
    a = run(f"optimizer = adamw; master = fp32; zero = {zero}", dp=1)
    assert a.value(a.footprint.resident) == plain.value(plain.footprint.resident) == 16 * N
    assert a.value(a.totals.flops) == plain.value(plain.totals.flops)


def test_plain_data_parallel_all_reduces_the_gradient_buffer_once_before_the_update():
    a = run("optimizer = adamw; master = fp32")
    names = [k.name for k in a.kernels]
    # the weight gradients' batch sums are not all-reduced one by one: one buffer, once per step
    assert not any(n.endswith("grad_all_reduce") for n in names)
    assert names.index("gradients_all_reduce") < names.index("optimizer.update")
    k = kernel(a, "gradients_all_reduce")
    assert k.count == 1
    # the buffer: n fp16 gradients = 6291456 B; ring over 2: 2(p − 1)/p · G = G at 100 GB/s
    assert k.comms.comms.message == 2 * N
    assert a.value(k.t_comms) == R(2 * N, 100 * 10 ** 9)
    # each chip's weight gradient: 2·(64/2)·1024·1024 FLOPs (its half of the batch), × 3 layers
    assert a.value(kernel(a, "y.W.grad").flops) == 2 * 32 * 1024 * 1024
    # the whole update on every chip: 14 FLOPs per parameter
    assert a.value(kernel(a, "optimizer.update").flops) == 14 * N


def test_stage_1_reduce_scatters_updates_a_shard_and_gathers_the_parameters():
    a = run("optimizer = adamw; master = fp32; zero = 1")
    names = [k.name for k in a.kernels]
    assert names[-3:] == ["gradients_reduce_scatter", "optimizer.update", "parameters_all_gather"]
    rs, ag = kernel(a, "gradients_reduce_scatter"), kernel(a, "parameters_all_gather")
    # reduce-scatter of the whole buffer G = 2n: sends (p − 1)/p · G = n bytes
    assert rs.comms.comms.message == 2 * N and rs.comms.comms.sent == N
    # all-gather: each chip holds P/N_d = 2n/2 = n bytes of parameters, sends (p − 1)·n = n
    assert ag.comms.comms.message == N and ag.comms.comms.sent == N
    # together the volume of one all-reduce (the ZeRO paper, §7.2.1): 2n bytes sent
    assert rs.comms.comms.sent + ag.comms.comms.sent == kernel(run("optimizer = adamw; master = fp32"),
                                                               "gradients_all_reduce").comms.comms.sent
    # the update on the chip's half: 14·n/2 FLOPs
    assert a.value(kernel(a, "optimizer.update").flops) == 7 * N


def test_stage_3_gathers_the_parameters_before_the_forward_and_before_the_backward():
    a = run("optimizer = adamw; master = fp32; zero = 3")
    names = [k.name for k in a.kernels]
    # (x.grad: the layer's input gradient, which the repeated body computes for the layer below)
    assert names == ["parameters_all_gather_forward", "y.matmul", "parameters_all_gather_backward", "x.grad",
                     "y.W.grad", "gradients_reduce_scatter", "optimizer.update"]
    fwd, bwd = kernel(a, "parameters_all_gather_forward"), kernel(a, "parameters_all_gather_backward")
    assert fwd.comms.comms.message == bwd.comms.comms.message == N   # P/N_d = 2n/2 bytes each
    # 1.5× plain data parallelism's volume (ZeRO paper §7.2.2): n + n + n sent against 2n
    sent = sum(kernel(a, k).comms.comms.sent for k in names if kernel(a, k).comms)
    assert sent == 3 * N


def test_a_parallel_data_program_without_train_keeps_its_gradient_all_reduce():
    text = SYSTEM.replace("DP", "2") + """parallel data over dp { gradients = fp32 }
input x: fp16[64, 1024]
output y = repeat(3) layer(x)
"""
    a = load_string(text).analyze()
    # the forward only, and one all-reduce of a buffer of the weights in fp32: 3·1024²·4 B
    assert [k.name for k in a.kernels] == ["y.matmul", "gradients_all_reduce"]
    assert kernel(a, "gradients_all_reduce").comms.comms.message == 4 * N


def test_the_parallel_data_gradient_dtype_is_the_training_buffers_without_one_in_train():
    a = run("optimizer = sgd", parallel="parallel data over dp { gradients = fp32 }")
    # the buffer in fp32: 4n bytes reduced
    assert kernel(a, "gradients_all_reduce").comms.comms.message == 4 * N


def test_pipeline_stages_update_their_own_layers_and_micro_batches_repeat_the_sends():
    text = """
hardware chip { peak fp16 = 1000 TFLOP/s; peak fp32 = 500 TFLOP/s; memory HBM { bandwidth = 2 TB/s; capacity = 80 GB }; launch = 0 s }
system pipe {
  chip = chip
  axis pp = 4
  axis dp = 2
  link InfiniBand over pp { one_way = 50 GB/s; latency = 2 us }
  link NVLink over dp { one_way = 100 GB/s }
}
use system pipe
block layer(x: fp16[b, d]) {
    weight W: fp16[d, d]
    return x @ W
}
parallel data over dp
parallel pipeline over pp { microbatches = 4 }
input x: fp16[64, 1024]
output y = repeat(8) layer(x)
train { optimizer = adamw; master = fp32; zero = 1; micro_batches = 2 }
"""
    a = load_string(text).analyze()
    stage = 2 * 1024 * 1024                      # 8 layers over 4 stages: 2 layers' weights each
    # resident: weights 2·stage + gradients 2·stage + states 12·stage/2 (ZeRO-1 over dp = 2)
    assert a.value(a.footprint.resident) == 4 * stage + 6 * stage
    assert a.value(kernel(a, "optimizer.update").flops) == 14 * stage // 2
    assert kernel(a, "gradients_reduce_scatter").comms.comms.message == 2 * stage
    # 2 micro-batches × 2 layers per stage; the stage's send once per micro-batch
    assert kernel(a, "y.matmul").count == 4 and kernel(a, "y_send").count == 2


@pytest.mark.parametrize("tp, pp", [(2, 1), (4, 2), (1, 1)])
def test_tensor_parallel_chips_hold_and_update_their_part_of_each_weight(tp, pp):
    # Megatron MLP layers (W column-, V row-parallel) under tensor parallelism over tp chips, pipeline
    # over pp, ZeRO-1 over dp = 2. One layer: W and V fp16[1024, 1024], 2·1024² parameters; 4 layers:
    # n = 8·1024². A chip holds 1/tp of each weight of its stage's 4/pp layers: n/(tp·pp) parameters,
    # and so 1/(tp·pp) of the gradient buffer and of the states (before ZeRO's 1/2 of the states):
    #   resident = 2·c (weights) + 2·c (gradients) + 12·c/2 (master, m, v over dp) = 10·c, c = n/(tp·pp)
    #   the update: 14 FLOPs per parameter of the chip's shard, c/2: 7·c
    #   the reduce-scatter of the chip's fp16 gradients: 2·c bytes
    # (before the fix, the gradients, states and reduce-scatter ignored the tensor split: at tp = 2,
    # 2·n gradient bytes instead of n)
    text = f"""
hardware chip {{ peak fp16 = 1000 TFLOP/s; peak fp32 = 500 TFLOP/s; memory HBM {{ bandwidth = 2 TB/s; capacity = 80 GB }}; launch = 0 s }}
system mesh {{
  chip = chip
  axis tp = {tp}
  axis pp = {pp}
  axis dp = 2
  link NVLink over tp, dp {{ one_way = 100 GB/s }}
  link InfiniBand over pp {{ one_way = 50 GB/s }}
}}
use system mesh
block layer(x: fp16[b, d]) {{
    weight W: fp16[d, d]
    weight V: fp16[d, d]
    return (x @ W) @ V
}}
parallel tensor over tp
parallel pipeline over pp {{ microbatches = 4 }}
parallel data over dp
input x: fp16[64, 1024]
output y = repeat(4) layer(x)
train {{ optimizer = adamw; master = fp32; zero = 1 }}
"""
    a = load_string(text).analyze()
    c = 8 * 1024 * 1024 // (tp * pp)
    assert a.value(a.footprint.resident) == 10 * c
    assert a.value(kernel(a, "optimizer.update").flops) == 7 * c
    assert kernel(a, "gradients_reduce_scatter").comms.comms.message == 2 * c


def test_stage_3_counts_two_units_of_gathered_weights_in_flight():
    # examples/training/chips_for_deadline.cost: 32 layers of a [4096, 26700] and a [26700, 4096] bf16
    # weight, ZeRO-3 over n GPUs. One layer is one FSDP unit, 2·4096·26700·2 = 437,452,800 B; two
    # units are in flight at once (the one in use, the one prefetched): 874,905,600 B on every chip
    from pathlib import Path
    from costlang import load
    from costlang.frontend.edits import apply_settings
    from costlang.frontend.settings import parse_settings
    m = load(Path(__file__).resolve().parents[2] / "examples" / "training" / "chips_for_deadline.cost")
    from costlang.queries.pipeline import analyze
    a = analyze(apply_settings(m.program, parse_settings("n = 8")))
    assert a.value(a.footprint.gathered) == 874_905_600
    # on one chip nothing is gathered (ZeRO over N_d = 1 is plain training)
    one = analyze(apply_settings(m.program, parse_settings("n = 1")))
    assert one.value(one.footprint.gathered) == 0
