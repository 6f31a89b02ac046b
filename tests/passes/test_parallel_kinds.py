"""Many chips, the other parallelisms: pipeline stages and their bubble, data-parallel
training (the gradient all-reduce), expert parallelism, and the zoo sharded one line each.

Every expected value is derived by hand in the comment next to it.
"""

import pytest
import sympy

from costlang import CostlangError, load_string

R = sympy.Rational

# 1000 TFLOP/s fp16, 2 TB/s, no launch overhead; pp: 4 stages on 50 GB/s one-way with α = 2 µs;
# dp: 2 replicas on 100 GB/s one-way, α = 0
SYSTEM = """
hardware chip { peak fp16 = 1000 TFLOP/s; memory HBM { bandwidth = 2 TB/s; capacity = 80 GB }; launch = 0 s }
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
"""


def run(body: str):
    return load_string(SYSTEM + body).analyze()


def kernel(a, name):
    return next(k for k in a.kernels if k.name == name)


def query(a, name):
    return a.value(next(q for q in a.queries if q.name == name).value.expr)


# --- pipeline ------------------------------------------------------------------------------------

def test_pipeline_stages_send_and_bubble():
    a = run("parallel pipeline over pp { microbatches = 8 }\ninput x: fp16[64, 1024]\n"
            "output y = repeat(8) layer(x)\nquery \"bubble\" = bubble()")
    p = a.program
    assert p.repeats["y"].count == 2                  # 8 layers over 4 stages
    layer = kernel(a, "y.matmul")                      # the layer's kernel (`y` is the repeat)
    assert layer.count == 2 and layer.flops == 2 * 64 * 1024 * 1024   # the whole batch passes each stage
    send = kernel(a, "y_send")                         # the stage's output to the next stage
    n = 64 * 1024 * 2                                  # 131,072 B of activations
    assert send.comms.comms.sent == n and send.comms.comms.steps == 8   # 8 micro-batches: 8 α
    assert send.t_comms == R(n, 50 * 10 ** 9) + 8 * R(2, 10 ** 6)       # 2.62144 µs + 16 µs
    assert query(a, "bubble") == R(3, 11)             # (p − 1)/(m + p − 1) = 3/11
    # the stage: 2 layers, each T_memory = (131,072 + 2,097,152 + 131,072) B / 2 TB/s = 1.179648 µs
    # (T_compute 134,217,728 / 1e15 = 0.134 µs), and the send (HBM 262,144 B: 0.131072 µs)
    t_memory = 2 * R(2359296, 2 * 10 ** 12) + R(262144, 2 * 10 ** 12)
    t_compute = 2 * R(2 * 64 * 1024 * 1024, 10 ** 15)
    assert a.totals.t_memory == t_memory and a.totals.t_compute == t_compute
    # lower bound × (m + p − 1)/m = 11/8: the comms (18.62144 µs) bind
    assert a.totals.t_overlap == R(11, 8) * send.t_comms
    assert a.totals.t_serial == R(11, 8) * (t_compute + t_memory + send.t_comms)


def test_one_microbatch_bubble_is_all_but_one_stage():
    # m = 1 (the default): (p − 1)/(m + p − 1) = 3/4, the step is p = 4 times the stage
    a = run("parallel pipeline over pp\ninput x: fp16[64, 1024]\noutput y = repeat(4) layer(x)\n"
            "query \"bubble\" = bubble()")
    assert query(a, "bubble") == R(3, 4)
    assert a.program.repeats["y"].count == 1          # 4 layers, one per stage
    assert a.totals.t_serial == 4 * (a.totals.t_compute + a.totals.t_memory + a.totals.t_comms)


def test_one_stage_has_no_bubble():
    text = SYSTEM.replace("axis pp = 4", "axis pp = 1")
    a = load_string(text + "parallel pipeline over pp { microbatches = 4 }\ninput x: fp16[64, 1024]\n"
                    "output y = repeat(4) layer(x)\nquery \"bubble\" = bubble()").analyze()
    assert query(a, "bubble") == 0                    # (1 − 1)/(4 + 1 − 1)
    assert a.program.repeats["y"].count == 4


@pytest.mark.parametrize("body, message", [
    ("parallel pipeline over pp\ninput x: fp16[64, 1024]\noutput y = repeat(6) layer(x)",
     "the 6 layers of 'y' do not divide into 4 pipeline stages"),
    ("parallel pipeline over pp\ninput x: fp16[64, 1024]\nweight W: fp16[1024, 1024]\noutput y = x @ W",
     "repeats nothing"),
    ("parallel pipeline over pp { microbatches = 0 }\ninput x: fp16[64, 1024]\noutput y = repeat(4) layer(x)",
     "positive whole number"),
    ("parallel pipeline over pp { stages = 4 }\ninput x: fp16[64, 1024]\noutput y = repeat(4) layer(x)",
     "takes no option 'stages'"),
])
def test_bad_pipelines(body, message):
    with pytest.raises(CostlangError) as e:
        run(body)
    assert message in e.value.render()


# --- data parallel training ----------------------------------------------------------------------

def test_training_step_all_reduces_the_gradients():
    a = run("parallel data over dp { gradients = fp32 }\ninput x: fp16[64, 1024]\noutput y = repeat(3) layer(x)")
    assert a.program.tensors["x"].shape == (32, 1024)   # the batch over dp = 2
    grad = kernel(a, "gradients_all_reduce")
    n = 3 * 1024 * 1024 * 4                             # 3 layers' weights in fp32: 12,582,912 B
    assert grad.count == 1 and grad.comms.comms.message == n   # once per step, not per layer
    # ring over p = 2: 2(p − 1)/p · n = n bytes at 100 GB/s, α = 0
    assert grad.comms.comms.sent == n and grad.t_comms == R(n, 100 * 10 ** 9)
    # the gradient buffer is resident: 3 · 2,097,152 B of weights + 12,582,912 B of gradients
    assert a.footprint.resident == 3 * 2097152 + n


def test_inference_data_parallel_has_no_gradients():
    a = run("parallel data over dp\ninput x: fp16[64, 1024]\noutput y = repeat(3) layer(x)")
    assert not any(k.comms for k in a.kernels)


def test_training_with_pipeline_divides_the_gradients_by_stage():
    a = run("parallel data over dp { gradients = bf16 }\nparallel pipeline over pp { microbatches = 4 }\n"
            "input x: fp16[64, 1024]\noutput y = repeat(8) layer(x)")
    # each stage holds 2 of the 8 layers: 2 · 1024² bf16 gradients = 4,194,304 B
    assert kernel(a, "gradients_all_reduce").comms.comms.message == 2 * 1024 * 1024 * 2


def test_gradients_name_a_dtype():
    with pytest.raises(CostlangError) as e:
        run("parallel data over dp { gradients = fp33 }\ninput x: fp16[64, 1024]\noutput y = repeat(3) layer(x)")
    assert "unknown dtype 'fp33'" in e.value.render()


# --- collectives in derivations ------------------------------------------------------------------

def test_derivation_shows_the_alpha_beta_formula(analyze_example):
    from costlang.analysis.derive import derive_kernel
    from costlang.printers.derivation.markdown import MarkdownPrinter
    a = analyze_example("parallel/megatron_llama3_70b_layer.cost")
    k = kernel(a, "a_all_reduce")
    p, n, sent, steps, t_comms = derive_kernel(a, k).comms
    # all_reduce_once on 8 GPUs: n = B·d·2 = 16,384 B, sent = 2(p − 1)/p · n = 28,672 B, one α step;
    # T_comms = 28,672 B / 450 GB/s + 1 · 8 µs = 8.063715... µs
    assert (p.value, n.value, sent.value, steps.value) == (8, 16384, 28672, 1)
    assert t_comms.value == R(28672, 450 * 10 ** 9) + R(8, 10 ** 6)
    md = MarkdownPrinter(lang="en").doprint(a)
    assert "**Communication (α–β model)**" in md
    # the positive term first
    assert r"\mathrm{sent} &= \frac{2 \cdot n \cdot \left(p - 1\right)}{p}" in md
    assert r"&= \frac{2 \cdot 16\,384 \cdot \left(8 - 1\right)}{8}" in md
    assert r"&= \frac{28\,672}{4.5 \times 10^{11}} + 1 \cdot 8 \times 10^{-6}" in md
    # the kernel's time is the largest of the three, in the formula's order
    assert r"\max\left(T_{\mathrm{compute}}, T_{\mathrm{memory}}, T_{\mathrm{comms}}\right)" in md
    ko = MarkdownPrinter(lang="ko").doprint(a)
    assert "**통신 (α–β 모델)**" in ko and "메시 축 `gpu` 위의 `all_reduce_once`" in ko


def test_derivation_of_a_ring_all_reduce_counts_2_p_minus_1_steps():
    from costlang.analysis.derive import derive_kernel
    a = run("input x: fp16[1024]\ny = all_reduce(x, over = pp)")
    _, _, sent, steps, t_comms = derive_kernel(a, kernel(a, "y")).comms
    # ring over p = 4: sent = 2·3/4 · 2048 B = 3072 B; steps 2(p − 1) = 6 of α = 2 µs
    assert sent.value == 3072 and steps.value == 6
    assert str(steps.formula) == "2*(p - 1)" and str(steps.substituted) == "2*(-1 + 4)"
    assert t_comms.value == R(3072, 50 * 10 ** 9) + 6 * R(2, 10 ** 6)


# --- expert parallel -------------------------------------------------------------------------------

MOE = """import llm
parallel expert over pp
input x: fp16[8, 1, 64]
output y = moe(x, experts = 8, top_k = 2, ffn = 128, wt = fp16, at = fp16)
"""


def test_expert_parallel_splits_experts_and_tokens():
    a = run(MOE)
    p = a.program
    assert p.tensors["x"].shape == (2, 1, 64)            # 8 tokens over pp = 4
    assert p.tensors["y.w_gate"].shape == (2, 64, 128)   # 8 experts over 4 chips: 2 each
    assert p.tensors["y.router"].shape == (64, 8)        # the router stays whole
    experts = kernel(a, "y.y")                         # moe's local y: the experts' kernel
    # whole: b·s·top_k·(6·d·ffn + 6·ffn + 2·d) = 8·2·(49,152 + 768 + 128) = 800,768 FLOP; 1/4 per chip
    assert experts.flops == 200192
    # stated reads / 4: x 1,024 B + scores 128 B + touched·3·64·128·2 B with
    # touched = 8·(1 − (3/4)^8) = 58,975/8,192 experts → (1,152 + 353,850)/4
    assert a.value(experts.bytes_read) == R(355002, 4)
    dispatch, combine = kernel(a, "y.y_dispatch"), kernel(a, "y.y_combine")
    # top_k = 2 copies of the chip's 2 tokens · 64 · 2 B = 512 B; all-to-all sends 3/4 of it in 3 steps
    for k in (dispatch, combine):
        assert k.comms.comms.message == 512 and k.comms.comms.sent == 384 and k.comms.comms.steps == 3
        assert k.t_comms == R(384, 50 * 10 ** 9) + 3 * R(2, 10 ** 6)
    names = [n.name for n in p.nodes.values()]
    assert names.index("y.y_dispatch") < names.index("y.y") < names.index("y.y_combine")


def test_experts_must_divide_over_the_axis():
    with pytest.raises(CostlangError) as e:
        run(MOE.replace("experts = 8", "experts = 6"))
    # the error is the user's `parallel expert` line's (line 16), not a line of the stdlib's moe block
    assert e.value.render().startswith("<string>:16:1: error: 4-way expert parallelism over pp splits the 6 experts "
                                       "of 'y' (moe), and 4 does not divide 6")


def test_expert_and_data_parallel_combine_for_inference():
    # experts over pp (4 chips), the batch over pp and dp (4 · 2 = 8): each chip 8/8 = 1 token, 2 of
    # the 8 experts. The experts' kernel: whole 800,768 FLOP (as in the test above) / 8 = 100,096; the
    # dispatch: top_k = 2 copies of 1 token · 64 · 2 B = 256 B, 3/4 of it sent over pp:
    # 192 B / 50 GB/s + 3 · 2 µs
    a = run(MOE.replace("parallel expert over pp", "parallel expert over pp\nparallel data over dp"))
    p = a.program
    assert p.tensors["x"].shape == (1, 1, 64) and p.tensors["y.w_gate"].shape == (2, 64, 128)
    assert kernel(a, "y.y").flops == 100096
    dispatch = kernel(a, "y.y_dispatch")
    assert dispatch.comms.comms.axis == "pp" and dispatch.comms.comms.message == 256
    assert dispatch.t_comms == R(192, 50 * 10 ** 9) + 3 * R(2, 10 ** 6)
    # the system's FLOPs: every one of the 8 chips its share
    from costlang.analysis.comms import system_flops
    assert a.value(system_flops(a)) == 8 * a.value(a.totals.flops)


def test_expert_and_data_parallel_without_a_train_statement_is_refused():
    with pytest.raises(CostlangError) as e:
        run(MOE.replace("parallel expert over pp", "parallel expert over pp\nparallel data over dp { gradients = fp32 }"))
    assert "expert and data parallelism together train with a `train` statement" in e.value.render()


@pytest.mark.parametrize("zero", [0, 1])
def test_expert_and_data_parallel_training_reduces_dense_gradients_over_both_axes(zero):
    # experts over pp (4 chips), the batch over pp and dp (8 chips: 1 token each), AdamW with fp32
    # masters. Per chip: the router whole (64·8 = 512 parameters) and 2 of the 8 experts
    # (3 · 2·64·128 = 49,152): 49,664 parameters.
    # - the router's gradient sums over every chip's tokens: an all-reduce over pp of its 512 fp16
    #   gradients (1,024 B; ring: 2·3/4 · 1,024 = 1,536 B at 50 GB/s + 6 · 2 µs), once per step; then
    #   the whole buffer (49,664 · 2 = 99,328 B) over dp: an all-reduce (ring over 2: 99,328 B at
    #   100 GB/s), or under ZeRO-1 a reduce-scatter and the parameters' all-gather (each 49,664 B)
    # - the backward routes the tokens' gradients as the forward routed the tokens: an all-to-all of
    #   top_k = 2 copies of the chip's 1 token's gradient (2·64·2 = 256 B) before the experts' backward
    # - resident: 16 B per parameter without ZeRO (49,664 · 16 = 794,624 B); ZeRO-1 over dp = 2 keeps
    #   half of the 12 B of states: 49,664 · (4 + 6) = 496,640 B
    text = SYSTEM.replace("peak fp16 = 1000 TFLOP/s;", "peak fp16 = 1000 TFLOP/s; peak fp32 = 500 TFLOP/s;") \
        + MOE.replace("parallel expert over pp", "parallel expert over pp\nparallel data over dp") \
        + f"train {{ optimizer = adamw; master = fp32; zero = {zero} }}\n"
    a = load_string(text).analyze()
    dense = kernel(a, "dense_gradients_all_reduce")
    assert dense.comms.comms.axis == "pp" and dense.comms.comms.message == 1024
    assert dense.t_comms == R(1536, 50 * 10 ** 9) + 6 * R(2, 10 ** 6)
    back = kernel(a, "y.scores.grad_dispatch")
    assert back.comms.comms.collective == "all_to_all" and back.comms.comms.message == 256
    names = [k.name for k in a.kernels]
    if zero == 0:
        whole = kernel(a, "gradients_all_reduce")
        assert whole.comms.comms.axis == "dp" and whole.comms.comms.message == 99_328
        assert whole.t_comms == R(99_328, 100 * 10 ** 9)
        assert a.value(a.footprint.resident) == 794_624
    else:
        assert kernel(a, "gradients_reduce_scatter").comms.comms.message == 99_328
        assert a.value(a.footprint.resident) == 496_640
    assert names.index("dense_gradients_all_reduce") < names.index("optimizer.update")
    # the router's weight gradient: 2·1·64·8 FLOP on the chip's one token; the update 14 per parameter
    assert kernel(a, "y.router.grad").flops == 1024
    assert a.value(kernel(a, "optimizer.update").flops) == 14 * 49_664 // (2 if zero else 1)


def test_expert_parallel_training_routes_the_gradients_back():
    # parallel expert alone (4 chips, 2 tokens each): the backward's all-to-all carries top_k = 2 copies
    # of the chip's 2 tokens' gradient, 2·2·64·2 = 512 B, as the forward's dispatch does
    text = SYSTEM + MOE + "train { }\n"
    a = load_string(text).analyze()
    back = kernel(a, "y.scores.grad_dispatch")
    assert back.comms.comms.axis == "pp" and back.comms.comms.message == 512
    assert back.t_comms == R(384, 50 * 10 ** 9) + 3 * R(2, 10 ** 6)


def test_custom_kernel_splits_its_stated_work_with_the_batch():
    a = run("parallel data over dp\ninput x: fp16[64, 8]\n"
            "e = custom(x) -> fp16[64, 128] { flops = 64 * 1000; reads = 64 * 100 }")
    e = kernel(a, "e")
    assert a.program.tensors["e"].shape == (32, 128)     # the batch over dp = 2
    assert e.flops == 32000 and e.bytes_read == 3200     # the stated whole-batch figures, halved
    assert e.bytes_written == 32 * 128 * 2               # the local result


# --- the zoo, one line per parallelism (examples/parallel/) ----------------------------------------

def test_llama3_70b_tensor_pipeline_data(analyze_example):
    a = analyze_example("parallel/zoo_llama3_70b_3d.cost")
    p = a.program
    assert p.repeats["logits.layer"].count == 40                       # 80 layers over 2 stages
    shape = lambda t: tuple(a.value(d) for d in p.tensors[t].shape)   # noqa: E731
    assert shape("ids") == (8, 2048)                                   # 16 sequences over 2 replicas
    assert shape("logits.layer.attn.wq") == (8192, 1024)               # column-parallel: 8 of 64 heads
    assert shape("logits.layer.attn.wo") == (1024, 8192)               # row-parallel
    assert shape("logits.layer.attn.qh") == (8, 1, 8 * 2048, 128)      # prefill's permuting view: 1 KV head
    assert query(a, "bubble") == R(1, 9)                               # (2 − 1)/(8 + 2 − 1)
    n = 8 * 2048 * 8192 * 2                                            # 268,435,456 B of activations
    assert query(a, "activation all-reduce") == R(2 * 7, 8) * n / (450 * 10 ** 9)   # ≈ 1.0439 ms
    assert query(a, "stage send") == R(n, 50 * 10 ** 9)                 # ≈ 5.3687 ms
    # the embedding is vocabulary-parallel (Megatron): 128,256/8 = 16,032 rows of 8192 per chip
    assert shape("logits.x.table") == (16032, 8192)
    # the stage that holds the most: its 40 layers (40·106,971,136) and the last stage's end, the final
    # norm and the head (8192 + 8192·16,032), larger than the first stage's embedding (16,032·8192) by
    # the norm: 4,410,187,776 bf16 gradients (4,541,521,920 while every stage held both ends)
    grads = 2 * (40 * 106971136 + 8192 + 8192 * 16032)
    assert grads == 8_820_375_552
    # parameters() is one chip's share (the gradients' count); parameters_system() the model's:
    # 80 layers · 855,654,400 + 2 · 128,256 · 8192 + 8192 = 70,553,706,496 (stdlib/models/llama3_70b.cost)
    assert query(a, "parameters per chip") == grads // 2 == 4_410_187_776
    assert query(a, "parameters of the model") == 70_553_706_496
    per = {q.name: q.per for q in a.queries}
    assert per["parameters per chip"] == per["gradient bytes per chip"] == "chip"
    assert per["parameters of the model"] == "system"
    assert per["bubble"] is None and per["stage send"] is None
    assert query(a, "gradient bytes per chip") == grads                # ring over 2: sent = n
    assert query(a, "gradient all-reduce") == R(grads, 50 * 10 ** 9)   # ≈ 176.41 ms
    (solve,) = a.solves
    assert solve.roots == (19,)                                        # 1/(m + 1) = 1/20
    kinds = [n.op.name for n in p.nodes.values() if n.kind == "collective"]
    # the embedding's lookups summed, Megatron ×2 per layer, 1 send, 1 gradient
    assert kinds == ["all_reduce", "all_reduce", "all_reduce", "send", "all_reduce"]


def test_mixtral_expert_parallel(analyze_example):
    a = analyze_example("parallel/zoo_mixtral_expert.cost")
    # 2 copies of 8 tokens · 4096 · 2 B = 131,072 B; 7/8 of it sent, at 450 GB/s
    assert query(a, "dispatch") == R(114688, 450 * 10 ** 9)                       # ≈ 254.86 ns
    assert query(a, "all-to-all bytes sent per layer") == 2 * 114688
    experts = 64 * 2 * (6 * 4096 * 14336 + 6 * 14336 + 2 * 4096) // 8          # 5,638,651,904: 1/8 of them
    block = experts + 8 * 4096 * 5 + 2 * 8 * 4096 * 8 + 5 * 8 * 8              # + norm, gain, router, softmax
    assert query(a, "MoE block FLOPs per GPU, 32 layers") == 32 * block == 180458891264
    assert query(a, "expert weights per GPU per layer") == 352321536           # one expert: 3·4096·14336·2


def test_json_lists_the_parallelisms():
    import json
    from costlang.printers.data.json import to_json
    a = run("parallel pipeline over pp { microbatches = 8 }\nparallel data over dp { gradients = fp32 }\n"
            "input x: fp16[64, 1024]\noutput y = repeat(8) layer(x)")
    system = json.loads(to_json(a))["system"]
    assert system["parallel"] == [{"kind": "pipeline", "axis": "pp", "microbatches": 8},
                                  {"kind": "data", "axis": "dp", "gradients": "fp32"}]
    assert system["bubble"] == pytest.approx(3 / 11)      # (4 − 1)/(8 + 4 − 1)


def test_all_reduce_inside_a_repeat_runs_every_layer():
    a = run("block mlp(x: fp16[b, d]) {\n    weight W1: fp16[d, 4096]\n    weight W2: fp16[4096, d]\n"
            "    return (x @ W1) @ W2\n}\nparallel tensor over pp\ninput x: fp16[4, 1024]\n"
            "output y = repeat(3) mlp(x)")
    (ar,) = [k for k in a.kernels if k.comms]
    assert ar.count == 3                              # once per layer, × 3 layers
    # ring over p = 4 of n = 4·1024·2 = 8192 B: 2·3/4·8192 = 12,288 B at 50 GB/s + 6 · 2 µs
    assert a.totals.t_comms == 3 * (R(12288, 50 * 10 ** 9) + 6 * R(2, 10 ** 6))


def test_gradient_all_reduce_runs_after_the_pipeline_drains():
    a = run("parallel pipeline over pp { microbatches = 8 }\nparallel data over dp { gradients = fp32 }\n"
            "input x: fp16[64, 1024]\noutput y = repeat(8) layer(x)")
    # per chip: 32 of the 64 rows; 2 layers per stage, each 67,108,864 FLOP and 2,228,224 B
    layer_tc, layer_tm = R(67108864, 10 ** 15), R(2228224, 2 * 10 ** 12)
    send_tm, send_tx = R(131072, 2 * 10 ** 12), R(65536, 50 * 10 ** 9) + 8 * R(2, 10 ** 6)
    # 2 · 1024² fp32 gradients = 8,388,608 B; ring over 2 sends n at 100 GB/s
    grad_tm, grad_tx = R(2 * 8388608, 2 * 10 ** 12), R(8388608, 100 * 10 ** 9)
    stage = (2 * layer_tc, 2 * layer_tm + send_tm, send_tx)
    stretch = R(11, 8)                                   # (m + p − 1)/m
    # lower: the stretched stage (23.8 µs) or the busiest resource over the step (comms, 101.2 µs)
    assert a.totals.t_overlap == max(stretch * max(stage), send_tx + grad_tx)
    assert a.totals.t_overlap == send_tx + grad_tx
    # upper: the stretched stage, then the gradient all-reduce once
    assert a.totals.t_serial == stretch * sum(stage) + grad_tm + grad_tx


def test_printed_bounds_with_a_gradient_all_reduce_give_the_printed_values():
    from costlang.printers.text.report import report
    a = run("parallel pipeline over pp { microbatches = 8 }\nparallel data over dp { gradients = fp32 }\n"
            "input x: fp16[64, 1024]\noutput y = repeat(8) layer(x)")
    lines = [ln.strip() for ln in report(a).splitlines() if "bound (" in ln or "pipelined kernels" in ln]
    # pipelined (as above): ΣT_compute 2·67.108864 ns = 134.2 ns; ΣT_memory 2·1.114112 µs + 65.536 ns
    # = 2.294 µs; ΣT_comms 1.31072 µs + 8·2 µs = 17.31 µs. Once per step: the gradients, 8,388,608 B
    # read and written at 2 TB/s = 8.389 µs, sent at 100 GB/s = 83.89 µs.
    # lower: max(11/8 × 17.31 µs = 23.8 µs, whole step's comms 17.31 + 83.89 = 101.2 µs) = 101.2 µs
    # upper: 11/8 × (0.1342 + 2.294 + 17.31 = 19.74 µs) + (8.389 + 83.89 = 92.27 µs) = 27.14 + 92.27 = 119.4 µs
    assert lines == [
        "pipelined kernels: launches 0 s, ΣT_compute 134.2 ns, ΣT_memory 2.294 µs, ΣT_comms 17.31 µs; run once "
        "per step, after the pipeline drains: launches 0 s, ΣT_compute 0 s, ΣT_memory 8.389 µs, ΣT_comms 83.89 µs",
        "lower bound (communication fully overlapped): max((m + p − 1)/m × (pipelined launches + max(ΣT_compute, "
        "ΣT_memory, ΣT_comms)), launches + max(ΣT_compute, ΣT_memory, ΣT_comms) of the whole step) = "
        "max((11/8 ≈ 1.375) × 17.31 µs, 101.2 µs) = 101.2 µs",
        "upper bound (nothing overlapped): (m + p − 1)/m × (pipelined launches + ΣT_compute + ΣT_memory + "
        "ΣT_comms) + (once-per-step launches + ΣT_compute + ΣT_memory + ΣT_comms) = (11/8 ≈ 1.375) × 19.74 µs "
        "+ 92.27 µs = 119.4 µs"]


def test_derivation_shows_the_bounds_with_the_bubble():
    from costlang.analysis.derive import derive_bounds
    from costlang.printers.derivation.markdown import MarkdownPrinter
    a = run("parallel pipeline over pp { microbatches = 8 }\ninput x: fp16[64, 1024]\noutput y = repeat(8) layer(x)")
    lower, upper = derive_bounds(a)
    assert (lower.value, upper.value) == (a.totals.t_overlap, a.totals.t_serial)
    md = MarkdownPrinter(lang="en").doprint(a)
    assert (r"T_{\mathrm{lower}} &= \frac{m + p - 1}{m} \cdot \left(T_{\mathrm{launch}} + "
            r"\max\left(T_{\mathrm{compute}}, T_{\mathrm{memory}}, T_{\mathrm{comms}}\right)\right)") in md
    assert r"&\approx \frac{11 \cdot \left(0 + \max\left(" in md       # × (8 + 4 − 1)/8 = 11/8
    assert "the lower bound assumes communication fully overlapped" in md
    assert "하한은 통신이 연산·메모리와 완전히 겹친다고" in MarkdownPrinter(lang="ko").doprint(a)


def test_no_bounds_without_communication():
    from costlang.analysis.derive import derive_bounds
    assert derive_bounds(run("input x: fp16[64, 1024]\noutput y = repeat(2) layer(x)")) == ()


def test_the_bubble_is_one_fraction():
    from costlang.passes.parallelism import bubble_fraction
    from costlang.printers.numbers import expr_text
    a = run("dim m = 8\nparallel pipeline over pp { microbatches = m }\ninput x: fp16[64, 1024]\n"
            "output y = repeat(8) layer(x)")
    m = next(s for s in bubble_fraction(a.program).free_symbols if s.name == "m")
    # p = 4: (4 − 1)/(m + 4 − 1) = 3/(m + 3), not 1 − m/(m + 3) nor 1 + m/(−3 − m); at m = 8, 3/11
    assert bubble_fraction(a.program) == 3 / (m + 3)
    assert expr_text(bubble_fraction(a.program)) == "3/(m + 3)"
    assert a.value(bubble_fraction(a.program)) == R(3, 11)


# --- vocabulary-parallel embedding (Megatron) -----------------------------------------------------

EMBED = """
hardware chip { peak bf16 = 1000 TFLOP/s; memory HBM { bandwidth = 2 TB/s; capacity = 80 GB }; launch = 0 s }
system box { chip = chip; axis tp = 4; link NVLink over tp { one_way = 100 GB/s } }
use system box
import llm
parallel tensor over tp
input ids: int32[2, 3]
x = embedding(ids, vocab = V, d = 8, wt = bf16, at = bf16, it = int32)
query "parameters per chip" = parameters()
let whole = parameters_system()
query "parameters of the model" = whole
"""


def test_tensor_parallel_splits_the_embedding_over_the_vocabulary():
    a = load_string(EMBED.replace("V,", "16,")).analyze()
    p = a.program
    # table [16, 8] over tp = 4: 4 rows of 8 per chip, 32 parameters (whole on every chip: 128)
    assert tuple(p.tensors["x.table"].shape) == (4, 8)
    q = {x.name: a.value(x.value.expr) for x in a.queries}
    assert q["parameters per chip"] == 32
    assert q["parameters of the model"] == 16 * 8 == 128
    # the words say which is which (through a let, too)
    assert [x.per for x in a.queries] == ["chip", "system"]
    # the lookup's stated reads 2·3·(8·2 + 4) = 120 B are shared: 120/4 = 30 B per chip; it writes the
    # whole [2, 3, 8] bf16 result (96 B, zeros outside the chip's rows), and an all-reduce sums them:
    # ring over 4 sends 2·3/4·96 = 144 B at 100 GB/s
    look = kernel(a, "x.x")                            # embedding's local x (`x` is the instance)
    assert look.bytes_read == 30 and look.bytes_written == 96
    ar = kernel(a, "x_all_reduce")
    assert ar.comms.comms.sent == 144
    assert ar.t_comms == R(144, 100 * 10 ** 9)


def test_a_vocabulary_that_does_not_divide_over_the_chips_is_an_error():
    # 10 rows over 4 chips: 10/4 is not whole
    with pytest.raises(CostlangError, match="4-way tensor parallelism over tp splits dimension 0 \\(10\\) of .x.table.*4 does not divide 10"):
        load_string(EMBED.replace("V,", "10,")).analyze()


def test_the_report_says_per_chip_and_per_system(tmp_path, capsys):
    from costlang.cli import main
    f = tmp_path / "embed.cost"
    f.write_text(EMBED.replace("V,", "16,"))
    assert main(["run", str(f)]) == 0
    out = capsys.readouterr().out
    assert "  parameters per chip = 32 (per chip)\n" in out
    assert "  parameters of the model = 128 (per system)\n" in out


def test_one_chip_says_neither():
    a = load_string("use hardware h100_sxm\nweight W: fp16[4, 4]\ninput x: fp16[2, 4]\ny = x @ W\n"
                    "query p = parameters()\nquery s = parameters_system()\n").analyze()
    # unsharded: both are the program's 16 parameters, and no word is added
    assert [(a.value(q.value.expr), q.per) for q in a.queries] == [(16, None), (16, None)]


def test_interleaved_1f1b_bubble_p8_m32_v2(analyze_example):
    # Narayanan et al. 2021 §2.2.2: bubble over the ideal time (p − 1)/(v·m) = 7/64 interleaved
    # (v = 2) against (p − 1)/m = 7/32 plain; bubble() is the idle fraction of the step, (p − 1)/(v·m + p − 1):
    # 7/71 and 7/39. The stage's compute, 4 · 2·8192·16384² FLOP at 989.5 TFLOP/s, is stretched by
    # 71/64 and 39/32; the interleaved sends carry v = 2 times the bytes, 2 · 8192·16384·2 B
    a = analyze_example("parallel/interleaved_1f1b.cost")
    q = {x.name: a.value(x.value.expr) for x in a.queries}
    assert q["bubble (idle fraction of the step)"] == sympy.Rational(7, 71)
    assert q["bubble over the ideal time, (p − 1)/(v·m)"] == sympy.Rational(7, 64)
    compute = sympy.Rational(4 * 2 * 8192 * 16384 ** 2) / sympy.Rational(9895, 10) / 10 ** 12
    assert q["step, communication overlapped"] == sympy.Rational(71, 64) * compute
    send = next(k for k in a.kernels if k.comms)
    assert a.value(send.comms.comms.sent) == 2 * 8192 * 16384 * 2 and a.value(send.comms.comms.steps) == 64
    # the plain pipeline (v = 1): 7/39 of the step idle, 7/32 over the ideal time, 39/32 of the compute
    from conftest import EXAMPLES
    p = load_string((EXAMPLES / "parallel" / "interleaved_1f1b.cost").read_text().replace("dim v = 2", "dim v = 1")).analyze()
    qp = {x.name: p.value(x.value.expr) for x in p.queries}
    assert qp["bubble (idle fraction of the step)"] == sympy.Rational(7, 39)
    assert qp["bubble over the ideal time, (p − 1)/(v·m)"] == sympy.Rational(7, 32)
    assert qp["step, communication overlapped"] == sympy.Rational(39, 32) * compute


def test_virtual_stages_must_divide_the_layers_of_a_stage(tmp_path, capsys):
    # 32 layers on 8 stages: 4 per stage; v = 3 does not divide 4
    from costlang.cli import main
    from conftest import EXAMPLES
    text = (EXAMPLES / "parallel" / "interleaved_1f1b.cost").read_text().replace("dim v = 2", "dim v = 3")
    f = tmp_path / "i.cost"
    f.write_text(text)
    assert main(["check", str(f)]) == 2
    assert "the 4 layers of a stage of 'h' do not divide into 3 virtual stages" in capsys.readouterr().err


def test_nccl_bus_bandwidth_beside_each_collective(analyze_example):
    # nccl-tests (doc/PERFORMANCE.md): algBW = S/t, busBW = algBW · 2(p − 1)/p for an all-reduce. A ring
    # all-reduce over 8 GPUs at 450 GB/s per direction, α = 0: t = 2·7/8·n / 450e9, so algBW =
    # 450e9 · 8/14 ≈ 257.1 GB/s and busBW = 450 GB/s, the link itself (what nccl-tests' busBW is built
    # to show); a send: busBW = algBW = 50 GB/s
    from costlang.analysis.comms import nccl_bandwidths
    a = analyze_example("parallel/zoo_llama3_70b_3d.cost")
    by = {k.name: k for k in a.kernels if k.comms}
    alg, bus = nccl_bandwidths(by["logits.layer.mlp_all_reduce"].comms.comms, by["logits.layer.mlp_all_reduce"].t_comms, a.value)
    assert a.value(alg) == sympy.Rational(450 * 10**9 * 8, 14) and a.value(bus) == 450 * 10**9
    alg, bus = nccl_bandwidths(by["logits.layer_send"].comms.comms, by["logits.layer_send"].t_comms, a.value)
    assert a.value(alg) == a.value(bus) == 50 * 10**9
    # an all-gather's size is its gathered output, p·n: with sent (p − 1)·n per chip, busBW is the link too
    from costlang.ir.system import Comms
    gather = Comms("gpu", "all_gather", sympy.Integer(4), sympy.Integer(100), sympy.Integer(300), sympy.Integer(3),
                   sympy.Integer(0), sympy.Integer(0))
    alg, bus = nccl_bandwidths(gather, sympy.Rational(300, 10**9))   # 300 B at 1 GB/s
    assert (alg, bus) == (sympy.Rational(4 * 10**9, 3), 10**9)


def test_hierarchical_and_flat_all_reduce_over_64_h100s(analyze_example):
    # 1 GB over 8 nodes × 8 H100s (NVLink 450 GB/s one way; 50 GB/s InfiniBand per GPU), α = 0:
    # hierarchical = reduce-scatter 7/8·1e9/450e9 + all-reduce of the 125 MB shard 2·7/8·1.25e8/50e9
    #              + all-gather 7·1.25e8/450e9 = 35/18 ms + 35/8 ms + 35/18 ms = 595/72 ms ≈ 8.264 ms;
    # flat = one ring over 64 at the slowest link, 2·63/64·1e9/50e9 = 63/1600 s = 39.375 ms
    a = analyze_example("parallel/allreduce_64_h100.cost")
    q = {x.name: a.value(x.value.expr) for x in a.queries}
    assert q["hierarchical all-reduce"] == sympy.Rational(595, 72_000)
    assert q["flat ring over 64 GPUs"] == sympy.Rational(63, 1600)
    kinds = {k.name: k.comms.comms.collective for k in a.kernels if k.comms}
    assert kinds == {"reduced_scatter": "reduce_scatter", "reduced_outer": "all_reduce", "reduced": "all_gather",
                     "ring": "all_reduce"}
    ring = next(k for k in a.kernels if k.name == "ring")
    assert ring.comms.comms.axis == "gpu·node" and ring.comms.comms.group == 64


def test_the_cheaper_algorithm_is_the_default_over_two_axes():
    # gpu = 2, node = 2 with equal links B: flat 2·3/4·n/B = 1.5·n/B against hierarchical
    # n/(2B) + 2·1/2·(n/2)/B + n/(2B) = 1.5·n/B, a tie, which keeps the hierarchical three kernels.
    # With the inner link 100× slower (4.5 GB/s): hierarchical n/B_i + n/(2·B_o) against flat 1.5·n/B_i:
    # hierarchical again. Under the α–β formulas the flat ring never beats the hierarchical one (equal
    # bytes over equal links, fewer steps); `algorithm = flat` draws it for comparison.
    base = """system s {{ chip = h100_sxm; axis gpu = 2; axis node = 2
      link NVLink over gpu {{ one_way = {inner} GB/s }}
      link InfiniBand over node {{ one_way = {outer} GB/s }} }}
use system s
input x: bf16[1000000]
y = all_reduce(x, over = gpu * node)
"""
    def kernels(inner, outer):
        return sorted(k.name for k in load_string(base.format(inner=inner, outer=outer)).analyze().kernels if k.comms)
    assert kernels(450, 450) == ["y", "y_outer", "y_scatter"]
    assert kernels(450, 4.5) == ["y", "y_outer", "y_scatter"]
    assert kernels(4.5, 450) == ["y", "y_outer", "y_scatter"]


def test_several_axes_errors(tmp_path, capsys):
    from costlang.cli import main
    head = ("system s2 : dgx_h100 { axis node = 2; link InfiniBand over node { one_way = 50 GB/s } }\n"
            "use system s2\ninput x: bf16[1024]\n")
    for line, message in (("y = all_gather(x, over = gpu * gpu)", "a collective over several axes is an all-reduce"),
                          ("y = all_reduce(x, over = gpu * gpu)", "axis 'gpu' is named twice"),
                          ("y = all_reduce(x, over = gpu * rack)", "unknown axis of system 's2' 'rack'"),
                          ("y = all_reduce(x, over = gpu * node, algorithm = ring)",
                           "hierarchical, flat or simultaneous, not 'ring'"),
                          ("y = all_reduce(x, over = gpu * node * gpu)", "axis 'gpu' is named twice")):
        f = tmp_path / "e.cost"
        f.write_text(head + line + "\n")
        assert main(["check", str(f)]) == 2
        err = capsys.readouterr().err
        assert message in err and "e.cost:4:" in err, err


TORUS = """system t {{ chip = tpu_v5p; axis x = {x}; axis y = 4; axis z = 4
  link ICI over x, y, z {{ one_way = 9e10 B/s; links = 2{alpha} }} }}
use system t
input g: bf16[1048576]
a = all_reduce(g, over = x * y * z, algorithm = {algorithm})
"""


def test_all_reduce_over_three_axes_hierarchically_is_five_kernels():
    # 4 × 4 × 4, n = 2,097,152 B, each axis 2 links × 9e10 B/s = 1.8e11 B/s, α = 0:
    #   reduce-scatter over x: 3/4·n; over y: 3/4·n/4; all-reduce over z: 2·3/4·n/16;
    #   all-gather over y: 3·n/16; over x: 3·n/4. Sum = (0.75 + 0.1875 + 0.09375 + 0.1875 + 0.75)·n
    #   = 63/32·n = 4,128,768 B, the flat ring's 2·63/64·n: 4,128,768 / 1.8e11 s = 2,064,384/9e10 s
    a = load_string(TORUS.format(x=4, alpha="", algorithm="hierarchical")).analyze()
    ks = {k.name: k for k in a.kernels if k.comms}
    assert list(ks) == ["a_scatter", "a_scatter_y", "a_outer", "a_gather_y", "a"]
    assert [ks[n].comms.comms.axis for n in ks] == ["x", "y", "z", "y", "x"]
    assert [ks[n].comms.comms.sent for n in ks] == [1572864, 393216, 196608, 393216, 1572864]
    assert sum(k.t_comms for k in ks.values()) == sympy.Rational(4128768, 180_000_000_000)


def test_all_reduce_over_three_axes_at_once_shares_their_links():
    # simultaneous: one ring's bytes, 2·63/64·n = 4,128,768 B, over the three axes' links together
    # (3 · 1.8e11 = 5.4e11 B/s): 4,128,768/5.4e11 s ≈ 7.646 µs, a third of the hierarchical time;
    # with α = 1 µs, a ring along each axis at once: 2·(4 − 1)·3 = 18 steps, + 18 µs
    a = load_string(TORUS.format(x=4, alpha="", algorithm="simultaneous")).analyze()
    (k,) = [k for k in a.kernels if k.comms]
    assert k.comms.comms.axis == "x+y+z" and k.comms.comms.group == 64 and k.comms.comms.steps == 18
    assert k.t_comms == sympy.Rational(4128768, 540_000_000_000)
    a = load_string(TORUS.format(x=4, alpha="; latency = 1 us", algorithm="simultaneous")).analyze()
    (k,) = [k for k in a.kernels if k.comms]
    assert k.t_comms == sympy.Rational(4128768, 540_000_000_000) + sympy.Rational(18, 10 ** 6)


def test_all_reduce_over_axes_of_one_chip_each_is_free():
    # x = 1 with y = z = 1 would be no axes at all; here x = 1 beside y = z = 4: the simultaneous ring
    # over 16 chips (2·15/16·n over 5.4e11 B/s) keeps 2·(1 − 1) + 2·3 + 2·3 = 12 steps
    a = load_string(TORUS.format(x=1, alpha="", algorithm="simultaneous")).analyze()
    (k,) = [k for k in a.kernels if k.comms]
    assert k.comms.comms.steps == 12 and k.t_comms == sympy.Rational(2 * 15 * 2097152, 16 * 540_000_000_000)


def test_scaling_book_data_parallel_batch_per_chip(analyze_example):
    # "How to Scale Your Model", part 5: pure data parallelism on a TPU v5p pod is compute-bound when
    # the tokens per chip exceed C/W = 4.59e14/1.8e11 = 2550 over one axis, 850 over three. With the
    # ring's (p − 1)/p (the book leaves it out), by hand (see the file):
    #   one axis (x, p = 16): 2550·15/16 = 19125/8; three axes at once (p = 8960): 850·8959/8960 =
    #   761515/896; three axes hierarchically: 2550·8959/8960 = 2284545/896
    a = analyze_example("parallel/scaling_book_dp_v5p.cost")
    roots = {s.name: s.values[0] for s in a.solves}
    assert roots == {"per-chip batch, one axis": sympy.Rational(19125, 8),
                     "per-chip batch, three axes at once": sympy.Rational(761515, 896),
                     "per-chip batch, three axes hierarchically": sympy.Rational(2284545, 896)}
    # T_comms over x: 8·(15/16)·D·F/1.8e11 with D = 8960, F = 35840: 2,408,448,000/1.8e11 s
    q = {x.name: a.value(x.value.expr) for x in a.queries}
    assert q["T_comms, data parallel over x"] == sympy.Rational(2_408_448_000, 180_000_000_000)


def test_the_head_counts_once_per_pipeline_in_system_flops(analyze_example):
    # zoo_llama3_70b_3d: 32 chips, 2 stages. Outside the staged layers run the final RMSNorm
    # (4 + 1 FLOP per element of [8, 2048, 8192]: 536,870,912 + 134,217,728) and the lm_head
    # (2·8·2048·8192·16,032 = 4,303,557,230,592 per chip under TP 8): on the last stage only, so
    # 16 chips, not 32
    from costlang.analysis.comms import system_flops
    a = analyze_example("parallel/zoo_llama3_70b_3d.cost")
    outside = 4_303_557_230_592 + 536_870_912 + 134_217_728
    assert a.value(system_flops(a)) == 32 * a.value(a.totals.flops) - 16 * outside


def test_llama3_70b_turns_comms_bound_as_nodes_are_added(analyze_example):
    # per chip with n nodes: compute C/n, C = 12,299,857,358,225,408/323,230,224,609,375 s (the zoo
    # model's FLOPs per chip at 989.5 TFLOP/s); tensor-parallel all-reduces T/n, T = 161 · 7/4 ·
    # 34,359,738,368 B / 450e9 B/s; the gradient all-reduce G·(n − 1)/n with G = 2 · 17,640,734,720 B /
    # 50e9 B/s (8,820,367,360 parameters per GPU: 70,553,706,496 over 8, the 161 norm vectors of 8192
    # whole). t_comms() = t_compute() ⇔ T + G·(n − 1) = C ⇔ n* = 1 + (C − T)/G ≈ 24.44; B = 1024 must
    # divide over the nodes: 16 is the largest whole n below, 32 the smallest above
    a = analyze_example("parallel/llama3_70b_nodes.cost")
    C = sympy.Rational(12_299_857_358_225_408, 323_230_224_609_375)
    T = sympy.Rational(161 * 7 * 34_359_738_368, 4 * 450 * 10**9)
    G = sympy.Rational(2 * 17_640_734_720, 50 * 10**9)
    (solve,) = a.solves
    assert [a.value(r) for r in solve.roots] == [1 + (C - T) / G]
    assert float(1 + (C - T) / G) == pytest.approx(24.44, abs=0.005)
    text = costlang_run("parallel/llama3_70b_nodes.cost")
    assert "largest whole n that satisfies t_comms() < t_compute(): 16" in text
    assert "smallest whole n that satisfies t_comms() > t_compute(): 32" in text


def test_llama3_70b_in_3d_turns_comms_bound_as_pods_are_added(analyze_example):
    # examples/parallel/llama3_70b_pods.cost: TP 8 in a DGX H100 node, PP over 4 nodes (m = 4), DP over
    # q pods, a training step (AdamW, fp32 masters, ZeRO-1, bf16 gradients), B = 256 sequences of 4096.
    # Per chip, with q pods (tokens per pod T = 256·4096/q = 1,048,576/q):
    #   matmul compute: 6 · P · T with P = 20 layers · 855,638,016/8 + 128,256·8192/8 = 2,270,429,184,
    #     + causal attention: Q·Kᵀ and P·V, 2·256·8·4096²·128 FLOP each per layer (8 of the 64 heads),
    #     × 4097/8192 (the causal density (S + 1)/2S), × 20 layers × 3 (forward and two backward)
    #   tensor-parallel all-reduces: 82 (20 layers × (2 forward + 2 backward) + the embedding's + the
    #     head's input gradient), each 2 · 7/8 · 256·4096·8192·2/q B at 450 GB/s; two sends (the
    #     activations forward, their gradient back) of 17,179,869,184/q B at 50 GB/s: A/q
    #   ZeRO-1 over the pods: a reduce-scatter of the bf16 gradients and an all-gather of the bf16
    #     weights, each (q − 1)/q · 4,541,530,112 B (2,270,765,056 parameters of the stage that holds
    #     the most: its split layer weights 20·855,638,016/8, its 20·2 norm gains of 8192 whole, and the
    #     last stage's end, the head's 128,256·8192/8 and the final norm's 8192, larger than the first
    #     stage's embedding by those 8192) at 50 GB/s: G·(q − 1)/q
    # q* = 1 + (C − A)/G, C the whole compute (the matmuls and the elementwise work)
    a = analyze_example("parallel/llama3_70b_pods.cost")
    R = sympy.Rational
    P = 20 * 855_638_016 // 8 + 128_256 * 8192 // 8
    assert P == 2_270_429_184
    matmul_flops = 6 * P * 1_048_576 + 2 * (2 * 256 * 8 * 4096 ** 2 * 128) * R(4097, 8192) * 20 * 3
    A = 82 * R(2 * 7 * 256 * 4096 * 8192 * 2, 8 * 450 * 10 ** 9) + 2 * R(17_179_869_184, 50 * 10 ** 9)
    params = 2_270_765_056
    assert params == 20 * 855_638_016 // 8 + 20 * 2 * 8192 + 8192 + 128_256 * 8192 // 8
    G = 2 * R(2 * params, 50 * 10 ** 9)
    (solve,) = a.solves
    (q,) = query(a, "compute").free_symbols
    C = query(a, "compute") * q
    assert sympy.simplify(query(a, "communication") - (A / q + G * (q - 1) / q)) == 0
    # the matmuls are 98.6 % of the compute; the norms, softmax and SwiGLU the rest
    mm = matmul_flops / R(9895 * 10 ** 11)
    assert mm < C < R(102, 100) * mm
    (root,) = [a.value(r) for r in solve.roots]
    assert root == 1 + (C - A) / G
    assert float(root) == pytest.approx(50.65, abs=0.005)
    # q must divide B = 256: 32 pods compute-bound, 64 comms-bound
    assert [w.value for w in solve.whole] == [32, 64]


def costlang_run(rel):
    import contextlib
    import io
    from conftest import EXAMPLES
    from costlang.cli import main
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["run", str(EXAMPLES / rel)]) == 0
    return out.getvalue()


def test_the_hgx_factory_preset_prices_a_hierarchical_all_reduce():
    # hgx_h100_factory_32 (NVIDIA HGX AI Factory RA: 32 nodes × 8 H100, 400 Gb/s per GPU): 1 GB over
    # 256 GPUs hierarchically = 2 · 7/8 · 1e9/450e9 + 2 · 31/32 · 1.25e8/50e9
    #                         = 35/9 ms + 4.84375 ms = 3.8889 + 4.8438 ms
    a = load_string("use system hgx_h100_factory_32\ninput g: bf16[500000000]\n"
                    "y = all_reduce(g, over = gpu * node)\n").analyze()
    total = sum((k.t_comms for k in a.kernels if k.comms), sympy.Integer(0))
    assert a.value(total) == 2 * sympy.Rational(7, 8) * sympy.Rational(10**9, 450 * 10**9) \
        + 2 * sympy.Rational(31, 32) * sympy.Rational(125 * 10**6, 50 * 10**9)


def test_a_stated_overlap_hides_that_share_of_a_parallelisms_communication(tmp_path):
    # zoo_llama3_70b_3d with `overlap = 1/2` on the tensor parallelism: its 81 all-reduces per chip
    # (40 layers × 2 on the stage, and the embedding's), each 2·7/8·268,435,456 B at 450 GB/s =
    # 469,762,048/450e9 s, stretched by the pipeline's 9/8: hidden = 1/2 · 9/8 · 81 · 469,762,048/450e9
    # ≈ 47.56 ms; t_estimate() = max(lower, upper − hidden)
    from conftest import EXAMPLES
    from costlang.analysis.comms import overlap_estimate
    text = (EXAMPLES / "parallel" / "zoo_llama3_70b_3d.cost").read_text()
    text = text.replace("parallel tensor over gpu\n", "parallel tensor over gpu { overlap = 1/2 }\n")
    text += 'query "estimate" = t_estimate()\n'
    f = tmp_path / "o.cost"
    f.write_text(text)
    from costlang import load
    a = load(f).analyze()
    hidden = sympy.Rational(1, 2) * sympy.Rational(9, 8) * 81 * sympy.Rational(469_762_048, 450 * 10**9)
    est, got_hidden, stated = overlap_estimate(a)
    assert a.value(got_hidden) == hidden and stated[0][:2] == ("tensor", "gpu")
    q = {x.name: a.value(x.value.expr) for x in a.queries}
    assert q["estimate"] == a.value(a.totals.t_serial) - hidden
    assert a.value(a.totals.t_overlap) < q["estimate"] < a.value(a.totals.t_serial)


def test_overlap_bounds_and_t_estimate_without_one(tmp_path, capsys):
    from costlang.cli import main
    head = "use system dgx_h100\ndim B = 8\nblock L(x: bf16[b, d]) {\n  weight W: bf16[d, d]\n  return x @ W\n}\n" \
           "input x: bf16[B, 1024]\nh = repeat(8) L(x)\n"
    f = tmp_path / "o.cost"
    f.write_text(head.replace("use system dgx_h100\n", "use system dgx_h100\nparallel tensor over gpu { overlap = 1.5 }\n"))
    assert main(["check", str(f)]) == 2
    assert "from 0 to 1, not 3/2" in capsys.readouterr().err
    f.write_text(head.replace("use system dgx_h100\n", "use system dgx_h100\nparallel tensor over gpu\n")
                 + 'query "e" = t_estimate()\n')
    assert main(["run", str(f)]) == 2
    assert "no parallelism states one" in capsys.readouterr().err


def test_all_reduce_over_a_dgx_a100_superpod_scalable_unit():
    # dgx_a100_superpod_su: 8 A100s per node on NVLink 3 (600 GB/s both ways: 3e11 B/s one way), 20
    # nodes, one 200 Gb/s HDR adapter per GPU (2.5e10 B/s). 1 GB hierarchically, α = 0:
    #   reduce-scatter over gpu 7/8·1e9/3e11 = 7/2400 s; all-reduce of the 125 MB shard over node
    #   2·19/20·1.25e8/2.5e10 = 19/2000 s; all-gather over gpu 7·1.25e8/3e11 = 7/2400 s;
    #   in all 7/1200 + 19/2000 = 23/1500 s ≈ 15.33 ms
    a = load_string("use system dgx_a100_superpod_su\ninput g: bf16[500000000]\n"
                    "y = all_reduce(g, over = gpu * node)\n").analyze()
    assert a.program.system.chips == 160
    assert sum(k.t_comms for k in a.kernels if k.comms) == sympy.Rational(23, 1500)


FAT_TREE = """system ft : dgx_h100 {{
  axis node = {p}
  link InfiniBand over node {{ one_way = 50 GB/s{tree} }} }}
use system ft
input x: bf16[1000000]
a = all_to_all(x, over = node)
b = all_reduce(x, over = node)
"""


def _tree_times(p, tree):
    a = load_string(FAT_TREE.format(p=p, tree=tree)).analyze()
    return {k.name: k.t_comms for k in a.kernels if k.comms}


def test_an_oversubscribed_fat_tree_slows_the_all_to_all_not_the_ring():
    # n = 2e6 B, p = 32, 50 GB/s: all-to-all 31/32·n/5e10 = 31/800000 s; ring 2·31/32·n/5e10 = 31/400000 s
    plain = _tree_times(32, "")
    assert plain == {"a": sympy.Rational(31, 800_000), "b": sympy.Rational(31, 400_000)}
    # 2:1 above leaves of 8: the all-to-all × max(1, 2·24/31) = 48/31; the ring × max(1, 2/8) = 1
    two = _tree_times(32, "; oversubscription = 2; leaf = 8")
    assert two == {"a": sympy.Rational(31, 800_000) * sympy.Rational(48, 31), "b": sympy.Rational(31, 400_000)}
    # r = k = 8: the ring's leaf uplinks carry exactly one chip's worth, × 1 (the touching case);
    # r = 16: × 16/8 = 2; the all-to-all × 16·24/31 = 384/31
    assert _tree_times(32, "; oversubscription = 8; leaf = 8")["b"] == sympy.Rational(31, 400_000)
    sixteen = _tree_times(32, "; oversubscription = 16; leaf = 8")
    assert sixteen == {"a": sympy.Rational(31, 800_000) * sympy.Rational(384, 31), "b": sympy.Rational(31, 200_000)}
    # all 8 chips under one leaf: nothing crosses the spine, × 1 whatever the ratio
    assert _tree_times(8, "; oversubscription = 16; leaf = 8") == _tree_times(8, "")


def test_the_fat_tree_example(analyze_example):
    # see the file: 201,326,592/1e11 s across the 2:1 tree; 2·31/32·67,108,864/5e10 s for the ring
    a = analyze_example("parallel/fat_tree_all_to_all.cost")
    q = {x.name: a.value(x.value.expr) for x in a.queries}
    assert q == {"all-to-all across the 2:1 tree": sympy.Rational(201_326_592, 10 ** 11),
                 "ring all-reduce": sympy.Rational(2 * 31 * 67_108_864, 32 * 5 * 10 ** 10)}


@pytest.mark.parametrize("tree, message", [
    ("; oversubscription = 2", "an oversubscribed fat tree needs the chips under one leaf switch"),
    ("; oversubscription = 0.5; leaf = 8", "at least 1, not 1/2"),
    ("; oversubscription = 2; leaf = 2.5", "a whole number of the axis's chips"),
])
def test_fat_tree_errors(tree, message):
    with pytest.raises(CostlangError) as e:
        load_string(FAT_TREE.format(p=32, tree=tree)).analyze()
    assert message in e.value.render()


def test_context_parallel_attention_example(analyze_example):
    # see the file: per chip 2 · 4096·S² FLOP at 989.5e12 (4·S²/483154296875 s); K and V gathered,
    # 2 · 3 · 4096·S B at 4.5e11 B/s (8·S/146484375 s); equal at S* = 3·989.5e12/4.5e11 = 19790/3
    a = analyze_example("parallel/context_parallel_attention.cost")
    S = next(s.symbol for s in a.program.symbols.values() if s.name == "S")
    q = {x.name: a.value(x.value.expr) for x in a.queries}
    assert q["attention compute"] == 4 * S ** 2 / sympy.Integer(483154296875)
    assert q["K and V gathered"] == 8 * S / sympy.Integer(146484375)
    (r,) = a.solves
    assert r.values == (sympy.Rational(19790, 3),)
    # the whole answers: 6596 below; above, 6600, the first S that divides over the 4 chips
    assert [w.value for w in r.whole] == [6596, 6600]
    gathers = {k.name: k.comms.comms for k in a.kernels if k.comms}
    assert set(gathers) == {"k_all_gather", "v_all_gather"}
    assert all(c.collective == "all_gather" and a.value(c.message) == 4096 * S for c in gathers.values())


def test_context_parallel_llama3_8b_prefill_gathers_each_layers_keys_and_values():
    # the zoo's Llama-3-8B prefill, S = 32768 split over 8 GPUs: each layer gathers K and V of
    # 4096 tokens × 8 KV heads × 128 × 2 B = 8,388,608 B per chip, sending 7 × that = 58,720,256 B
    # (58,720,256/4.5e11 s each); 32 layers → 64 gathers. The embedding's tokens stay split: the
    # token ids [1, 32768] are 4096 per chip
    a = load_string("import llama3_8b\nuse system dgx_h100\nparallel context over gpu\ndim B = 1, S = 32768\n"
                    "input ids: int32[B, S]\n"
                    "y = llama3_8b_prefill(ids, wt = bf16, kt = bf16, at = bf16, it = int32)\n").analyze()
    gathers = [k for k in a.kernels if k.comms]
    assert sorted(k.name for k in gathers) == ["y.layer.attn.k_all_gather", "y.layer.attn.v_all_gather"]
    for k in gathers:
        assert a.value(k.comms.comms.message) == 8_388_608 and a.value(k.comms.comms.sent) == 58_720_256
        assert a.value(k.t_comms) == sympy.Rational(58_720_256, 450 * 10 ** 9) and k.count == 32
    assert a.value(a.program.tensors["ids"].shape[1]) == 4096


CP_TRAIN = """system s : dgx_h100 {
  axis gpu = 4
  axis node = 2
  link InfiniBand over node { one_way = 50 GB/s }
}
use system s
parallel context over gpu
parallel data over node
dim B = 2, S = 1024, D = 64
input x: bf16[B, S, D]
weight Wq: bf16[D, D]
weight Wk: bf16[D, D]
weight Wv: bf16[D, D]
q = x @ Wq
k = x @ Wk
v = x @ Wv
scores = q @ transpose(k)
p = softmax(scores)
out = p @ v
output out
train { optimizer = adamw; master = fp32; zero = 1 }
"""


def test_context_parallel_training_gathers_keys_twice_and_reduce_scatters_their_gradients():
    # The sequence S = 1024 over gpu = 4 (256 tokens per chip), the batch B = 2 over node = 2 (one
    # sequence per chip). Ring attention (Liu et al. 2023) in a training step, per chip:
    # - forward: K and V gathered before Q·Kᵀ and P·V, each the chip's [1, 256, 64] bf16 = 32,768 B
    # - backward: dP = dO·Vᵀ needs V whole and dQ = dS·K needs K whole: gathered again (32,768 B each);
    #   dV = Pᵀ·dO and dKᵀ = Qᵀ·dS sum over every chip's queries: each chip's partial [1024, 64] bf16 =
    #   131,072 B, reduce-scattered to its 256 keys (ring: 3/4 of it sent, at 450 GB/s)
    #   FLOPs: dV = 2·1024·256·64 = 33,554,432 per chip (its 256 queries, all 1024 keys)
    # - the weights' gradients sum over the chip's 256 tokens: all-reduced over gpu, 64·64·2 = 8,192 B
    #   each, and the ZeRO-1 buffer (3·4096 parameters, 24,576 B in bf16) reduce-scattered over node
    a = load_string(CP_TRAIN).analyze()
    collectives = [(k.name, k.comms.comms.collective, k.comms.comms.axis, a.value(k.comms.comms.message))
                   for k in a.kernels if k.comms]
    assert collectives == [
        ("k_all_gather", "all_gather", "gpu", 32_768), ("v_all_gather", "all_gather", "gpu", 32_768),
        ("v_all_gather_2", "all_gather", "gpu", 32_768), ("v.grad_reduce_scatter", "reduce_scatter", "gpu", 131_072),
        ("k_all_gather_2", "all_gather", "gpu", 32_768),
        ("scores.transpose.grad_reduce_scatter", "reduce_scatter", "gpu", 131_072),
        ("Wv.grad_all_reduce", "all_reduce", "gpu", 8192), ("Wk.grad_all_reduce", "all_reduce", "gpu", 8192),
        ("Wq.grad_all_reduce", "all_reduce", "gpu", 8192),
        ("gradients_reduce_scatter", "reduce_scatter", "node", 24_576),
        ("parameters_all_gather", "all_gather", "node", 12_288)]
    k = kernel(a, "v.grad_reduce_scatter")
    assert a.value(k.t_comms) == R(3 * 131_072, 4 * 450 * 10 ** 9)
    assert a.value(kernel(a, "v.grad").flops) == 33_554_432
    # each weight gradient: xᵀ·dY over the chip's 256 tokens, 2·64·256·64 FLOP
    assert a.value(kernel(a, "Wq.grad").flops) == 2_097_152
    # resident: 12,288 parameters × (2 + 2) B + 12 B of states over node = 2: 49,152 + 73,728
    assert a.value(a.footprint.resident) == 122_880


def test_a_literal_sequence_under_context_parallelism_stays_the_sequence():
    # the zoo's attention views [b, s, kv·hd] as [b, kv, group·s, hd]: a literal S = 48 is a
    # multiple of kv_heads = 4, and the split went to the heads (no gather at all); it stays the
    # sequence's, so the keys are gathered: [2, 24, 32] bf16 = 3,072 B per chip over gpu = 2
    text = """import llm
system s : dgx_h100 { axis gpu = 2 }
use system s
parallel context over gpu
input ids: int32[2, 48]
output logits = llama_prefill(ids, vocab = 64, d = 32, layers = 1, heads = 4, kv_heads = 4, head_dim = 8, \
                              ffn = 64, wt = bf16, kt = bf16, at = bf16, it = int32)
"""
    a = load_string(text).analyze()
    gathers = [(k.name, a.value(k.comms.comms.message)) for k in a.kernels if k.comms]
    assert gathers == [("logits.layer.attn.k_all_gather", 3072), ("logits.layer.attn.v_all_gather", 3072)]


def test_the_64_h100_all_reduce_beside_published_nccl_tests_figures(analyze_example):
    # NVIDIA/nccl-tests issue #290 (NCCL maintainers, 2025-03-03): 46-48 GB/s busBW per 400 Gb/s NDR
    # NIC across nodes; 476 GB/s on one H100 node with NVLink SHARP. costlang's ring phases report
    # busBW = the link: 450 GB/s inside the node (below NVLS's 476: in-switch reduction is not
    # modelled), 50 GB/s across (the measured 46-48 is 92-96 % of it: the bound holds, within 9 %)
    from costlang.analysis.comms import nccl_bandwidths
    a = analyze_example("parallel/allreduce_64_h100.cost")
    by = {k.name: k for k in a.kernels if k.comms}
    bus = {n: a.value(nccl_bandwidths(by[n].comms.comms, by[n].t_comms, a.value)[1])
           for n in ("reduced_scatter", "reduced_outer", "reduced")}
    assert bus == {"reduced_scatter": 450 * 10 ** 9, "reduced_outer": 50 * 10 ** 9, "reduced": 450 * 10 ** 9}
    measured = (46 * 10 ** 9, 48 * 10 ** 9)
    assert all(sympy.Rational(91, 100) < m / bus["reduced_outer"] <= 1 for m in measured)
    assert bus["reduced"] < 476 * 10 ** 9


def test_the_first_and_last_stages_are_timed_apart():
    # an embedding-like matmul before the stack, a head after it, 8 layers over pp = 4 stages, m = 8.
    # Per kernel (1000 TFLOP/s, 2 TB/s): E and each layer: 134,217,728 FLOP (134.217728 ns) and
    # 2,359,296 B (1.179648 µs); the send: 131,072 B at 50 GB/s + 8 · 2 µs = 18.62144 µs, HBM 262,144 B
    # (131.072 ns); the head: 2·64·1024·4096 = 536,870,912 FLOP (536.870912 ns), 131,072 + 8,388,608 +
    # 524,288 = 9,043,968 B (4.521984 µs). Stretch (8 + 3)/8 = 11/8.
    a = run("parallel pipeline over pp { microbatches = 8 }\ninput x: fp16[64, 1024]\nweight E: fp16[1024, 1024]\n"
            "h = x @ E\ny = repeat(8) layer(h)\nweight H: fp16[1024, 4096]\noutput z = y @ H\n")
    us = R(1, 10 ** 6)
    layer_c, layer_m = R(134217728, 10 ** 15), R(1179648, 10 ** 12)
    send_x, send_m = R(262144, 100 * 10 ** 9) + 16 * us, R(131072, 10 ** 12)
    head_c, head_m = R(536870912, 10 ** 15), R(4521984, 10 ** 12)
    # first stage: E, 2 layers and the send (no head); last: 2 layers and the head (no E, no send)
    first = (3 * layer_c, 3 * layer_m + send_m, send_x)
    last = (2 * layer_c + head_c, 2 * layer_m + head_m, 0)
    (l1, u1), (l2, u2) = a.totals.stages
    assert (l1, u1) == (R(11, 8) * max(first), R(11, 8) * sum(first))        # 25.60448 µs, 31.2044 µs
    assert (l2, u2) == (R(11, 8) * max(last), R(11, 8) * sum(last))          # 9.46176 µs, 10.569 µs
    assert (a.totals.t_overlap, a.totals.t_serial) == (l1, u1)
    # before, each chip ran both ends: 11/8 × 27.752964096 µs = 38.160325632 µs
    assert u1 == R(31204400128, 10 ** 15) and a.totals.t_serial < R(38160325632, 10 ** 15)
    from costlang.printers.text.report import report
    text = report(a)
    assert "lower bound (communication fully overlapped): max(first stage 25.6 µs, last stage 9.462 µs) = 25.6 µs" in text
    assert "the first stage alone runs h, y_send; the last alone z" in text


def test_one_stage_keeps_both_ends_on_its_chip():
    # pp = 1: no stage is first or last alone; the bounds are the sums as before (no stages)
    text = SYSTEM.replace("axis pp = 4", "axis pp = 1")
    a = load_string(text + "parallel pipeline over pp { microbatches = 8 }\ninput x: fp16[64, 1024]\n"
                    "weight E: fp16[1024, 1024]\nh = x @ E\ny = repeat(8) layer(h)\noutput z = y @ E\n").analyze()
    assert a.totals.stages is None


TWO_AXES = """import llm
system s {
  chip = h100_sxm
  axis a = 2
  axis b = 2
  link NVLink over a, b { one_way = 450 GB/s }
}
use system s
PAR
"""

TINY_3AXES = TWO_AXES + """input ids: int32[4, 48]
output logits = llama_prefill(ids, vocab = 64, d = 32, layers = 2, heads = 4, kv_heads = 2, head_dim = 8, \\
                              ffn = 64, wt = bf16, kt = bf16, at = bf16, it = int32)
"""


def test_tensor_and_context_parallel_together_gather_the_keys():
    # heads over a (TP 2: 1 of the 2 KV heads per chip), the sequence over b (24 of 48 tokens per chip):
    # the vocabulary-parallel embedding keeps the sequence split, so each layer gathers K and V over b,
    # each the chip's [4, 24, 8] bf16 = 1,536 B (before: the embedding dropped the sequence split and
    # nothing was gathered)
    a = load_string(TINY_3AXES.replace("PAR", "parallel tensor over a\nparallel context over b")).analyze()
    assert a.program.tensors["logits.layer.attn.k"].shape == (4, 24, 8)
    gathers = [(k.name, k.comms.comms.axis, a.value(k.comms.comms.message)) for k in a.kernels
               if k.comms and k.comms.comms.collective == "all_gather"]
    assert gathers == [("logits.layer.attn.k_all_gather", "b", 1536), ("logits.layer.attn.v_all_gather", "b", 1536)]


def test_a_vocabulary_parallel_embedding_reads_its_part_of_the_batch():
    # the embedding states reads = b·s·(row bytes) + ids = 4·48·32·2 + 4·48·4 = 12,288 + 768 = 13,056 B
    # for the whole batch; data parallel over b (2 sequences per chip) and vocabulary parallel over a
    # (each chip's rows are half the table): 13,056 / 2 / 2 = 3,264 B (before: / 2 for the vocabulary only)
    a = load_string(TINY_3AXES.replace("PAR", "parallel tensor over a\nparallel data over b")).analyze()
    assert a.value(kernel(a, "logits.x.x").bytes_read) == 3264


MOE_LAYERS = TWO_AXES + """input ids: int32[8, 48]
x = embedding(ids, 64, 32, bf16, bf16, int32)
h = repeat(2) moe_layer_prefill(x, 4, 2, 8, 64, 4, 2, bf16, bf16, bf16)
logits = lm_head(rms_norm(h, bf16, bf16), 64, bf16, bf16)
output logits
TRAIN
"""


def test_moe_layers_shard_with_tensor_and_with_context_parallelism():
    # 4 experts (top 2) of ffn 64 on d = 32, 8 sequences of 48 tokens; the experts over a (2 per chip).
    # The experts' whole work: 8·48 tokens · 2 · (6·32·64 + 6·64 + 2·32) = 9,781,248 FLOP.
    # With tensor parallelism over b the router stays whole ([32, 4]: its softmax needs every
    # expert's score, as Megatron-LM replicates it), the tokens split over a (4 sequences), and the
    # dispatch moves 2 copies of them: 2·4·48·32·2 = 24,576 B; the experts' kernel 9,781,248/2
    a = load_string(MOE_LAYERS.replace("PAR", "parallel expert over a\nparallel tensor over b")
                    .replace("TRAIN", "")).analyze()
    assert a.program.tensors["h.mlp.router"].shape == (32, 4)
    assert a.value(kernel(a, "h.mlp.y_dispatch").comms.comms.message) == 24_576
    assert a.value(kernel(a, "h.mlp.y").flops) == 9_781_248 // 2
    # with context parallelism over b instead, each chip's tokens are also half the sequence: the
    # experts' kernel keeps the sequence split (before: the residual add refused it) and does 1/4 of
    # the work; the dispatch moves 2·4·24·32·2 = 12,288 B
    a = load_string(MOE_LAYERS.replace("PAR", "parallel expert over a\nparallel context over b")
                    .replace("TRAIN", "")).analyze()
    assert a.value(kernel(a, "h.mlp.y").flops) == 9_781_248 // 4
    assert a.value(kernel(a, "h.mlp.y_dispatch").comms.comms.message) == 12_288
    with pytest.raises(CostlangError) as e:
        load_string(MOE_LAYERS.replace("PAR", "parallel expert over a\nparallel context over b")
                    .replace("TRAIN", "train { }")).analyze()
    assert "context and expert parallelism together are modelled for a forward pass" in e.value.render()


@pytest.mark.parametrize("par", ["parallel expert over a", "parallel expert over a\nparallel data over b",
                                 "parallel expert over a\nparallel tensor over b"])
def test_moe_layers_train_under_expert_parallelism(par):
    # the router's softmax gradient reads the scores' gradient, which the experts' backward writes
    # beside its input's: it is split as the scores are (before: refused, "operands must be split
    # alike"). Each layer's backward routes the tokens' gradients: 2 copies of the chip's tokens'
    # [b, 48, 32] bf16, 2·b·48·32·2 B, b = 4 sequences over a alone, 2 over a and b (data)
    a = load_string(MOE_LAYERS.replace("PAR", par).replace("TRAIN", "train { }")).analyze()
    b = 2 if "data" in par else 4
    dispatch = [k for k in a.kernels if k.comms and k.comms.comms.collective == "all_to_all"]
    assert len(dispatch) == 4 and all(k.count == 2 for k in dispatch)    # 2 forward, 2 backward, × 2 layers
    assert {a.value(k.comms.comms.message) for k in dispatch} == {2 * b * 48 * 32 * 2}


def test_stage_bounds_in_a_free_size_are_printed_once():
    # the same pipeline with the batch n left free: each stage's bounds are functions of n, and the
    # line says max(first stage …, last stage …) without writing that max() out again
    a = run("parallel pipeline over pp { microbatches = 8 }\ndim n\ninput x: fp16[n, 1024]\n"
            "weight E: fp16[1024, 1024]\nh = x @ E\ny = repeat(8) layer(h)\nweight H: fp16[1024, 4096]\n"
            "output z = y @ H\n")
    assert all(a.value(lo).free_symbols == {a.program.symbols["n"].symbol} for lo, _ in a.totals.stages)
    from costlang.printers.text.report import report
    lines = {line.split(":")[0].strip(): line for line in report(a).splitlines() if "bound (" in line}
    for key in ("lower bound (communication fully overlapped)", "upper bound (nothing overlapped)"):
        assert lines[key].split(": ", 1)[1].startswith("max(first stage ") and lines[key].endswith(" s)"), lines[key]
