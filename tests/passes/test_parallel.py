"""Many chips: systems, links, collectives, sharding, comms-bound, and the parallel examples.

Every expected value is derived by hand in the comment next to it.
"""

import pytest
import sympy

from conftest import query
from costlang import CostlangError, load_string
from costlang.queries.whatif import scenario_analysis
from costlang.frontend.settings import parse_settings

R = sympy.Rational

SYSTEM = """
hardware chip { peak fp16 = 1000 TFLOP/s; memory HBM { bandwidth = 2 TB/s; capacity = 80 GB }; launch = 0 s }
system box {
  chip = chip
  axis tp = 8
  axis dp = 2
  link NVLink over tp { bidirectional = 900 GB/s; latency = 1 us }
  link InfiniBand over dp { one_way = 50 GB/s }
}
use system box
"""


def run(body: str):
    return load_string(SYSTEM + body).analyze()


def kernel(a, name):
    return next(k for k in a.kernels if k.name == name)


# --- systems and links -----------------------------------------------------------------------

def test_link_bandwidth_one_way_or_bidirectional():
    system = load_string(SYSTEM + "input x: fp16[8]\ny = relu(x)").program.system
    tp, dp = system.axes
    assert system.chips == 16                       # 8 × 2
    assert tp.link.one_way == 450 * 10 ** 9          # 900 GB/s bidirectional, halved
    assert tp.link.stated == "bidirectional"
    assert tp.link.latency == R(1, 10 ** 6)
    assert dp.link.one_way == 50 * 10 ** 9 and dp.link.stated == "one_way"
    assert dp.link.latency == 0                      # unstated: 0 s (a lower bound)


def test_presets_name_their_figures():
    p = load_string("use system dgx_h100\ninput x: fp16[8]\ny = relu(x)").program
    assert p.selected_hardware == "h100_sxm"
    (gpu,) = p.system.axes
    assert gpu.size == 8 and gpu.link.one_way == 450 * 10 ** 9   # NVLink 4: 450 GB/s per direction
    assert p.systems["hgx_a100"].axes[0].link.one_way == 300 * 10 ** 9   # 600 GB/s bidirectional
    v5e = p.systems["tpu_v5e_4x4"]
    assert v5e.chips == 16 and v5e.axes[0].link.one_way == R(45, 1) * 10 ** 9   # 4.5e10 B/s one-way
    assert p.systems["tpu_v5p_pod"].chips == 8960                               # 16·20·28


@pytest.mark.parametrize("body, message", [
    ("system s { chip = chip; axis a = 2; link NVLink over a { one_way = 1 GB/s; bidirectional = 2 GB/s } }",
     "exactly one (both given)"),
    ("system s { chip = chip; axis a = 2; link NVLink over a { latency = 1 us } }", "exactly one (neither given)"),
    ("system s { chip = chip; axis a = 2; link NVlink over a { one_way = 1 GB/s } }", "unknown link kind 'NVlink'"),
    ("system s { chip = chip; axis a = 2; axis b = 2; link ICI over a { one_way = 1 GB/s } }",
     "has no link for axis b"),
    ("system s { chip = chip; axis a = 3/2; link ICI over a { one_way = 1 GB/s } }", "positive whole number"),
    ("system s { chip = nope; axis a = 2; link ICI over a { one_way = 1 GB/s } }", "unknown hardware 'nope'"),
    ("system s { chip = chip; axis a = 2; link ICI over a { one_way = 1 GB/s; latency = 1 GB } }", "must be seconds"),
])
def test_bad_systems(body, message):
    text = "hardware chip { peak fp16 = 1 TFLOP/s; memory HBM { bandwidth = 1 TB/s } }\n" + body
    with pytest.raises(CostlangError) as e:
        load_string(text + "\nuse system s\ninput x: fp16[8]\ny = relu(x)")
    assert message in e.value.render()


# --- collectives: α–β costs ------------------------------------------------------------------

def test_ring_all_reduce_alpha_beta():
    a = run("input x: fp16[1024, 1024]\ny = all_reduce(x, over = tp)")
    k = kernel(a, "y")
    n = 2 * 1024 * 1024                              # bytes per chip
    # ring: 2(p−1)/p · n / BW + 2(p−1)·α with p = 8, BW = 450 GB/s, α = 1 µs
    assert k.comms.comms.sent == R(2 * 7, 8) * n
    assert k.t_comms == R(14, 8) * n / (450 * 10 ** 9) + 14 * R(1, 10 ** 6)
    assert k.flops == 0 and k.bytes == 2 * n         # reads x, writes y once (HBM)
    assert k.t_kernel == k.t_comms                   # T_kernel = max(T_compute, T_memory, T_comms)
    assert k.bound.bound == "comms-bound"


@pytest.mark.parametrize("links", [1, 2])
def test_links_per_chip_multiply_the_bandwidth_of_a_collective(links):
    text = ("hardware chip { peak fp16 = 1 TFLOP/s; memory HBM { bandwidth = 1 TB/s } }\n"
            "system s { chip = chip; axis a = 4\n"
            f"  link NVLink over a {{ one_way = 100 GB/s; links = {links}; latency = 1 us }} }}\n"
            "use system s\ninput x: fp16[1000]\ny = all_reduce(x, over = a)")
    k = kernel(load_string(text).analyze(), "y")
    # ring over p = 4, n = 2000 B: sent 2·3/4·2000 = 3000 B at links · 100 GB/s, plus 2·3 steps of 1 µs:
    #   links = 1: 3000/1e11 + 6e-6 = 3e-8 + 6e-6 s; links = 2: 3000/2e11 + 6e-6 = 1.5e-8 + 6e-6 s
    assert k.comms.comms.sent == 3000
    assert k.t_comms == R(3000, links * 10 ** 11) + R(6, 10 ** 6)


def test_tree_all_reduce_is_selectable():
    a = run("input x: fp16[1024]\ny = all_reduce(x, over = tp, algorithm = tree)")
    k = kernel(a, "y")
    # binomial tree: 2⌈log2 p⌉ · (α + n/BW), p = 8: 6 steps of 2048 B
    assert k.comms.comms.collective == "all_reduce_tree"
    assert k.t_comms == 6 * R(2048, 450 * 10 ** 9) + 6 * R(1, 10 ** 6)


def test_all_gather_reduce_scatter_all_to_all_send():
    a = run("input x: fp16[16, 64]\n"
            "g = all_gather(x, over = dp, axis = 1)\n"
            "s = reduce_scatter(x, over = tp)\n"
            "t = all_to_all(x, over = tp)\n"
            "u = send(x, over = dp)")
    n = 16 * 64 * 2                                   # 2048 B
    p = a.program
    assert p.tensors["g"].shape == (16, 128)          # concatenated over dp = 2 along axis 1
    assert p.tensors["s"].shape == (2, 64)            # 16 rows split over tp = 8
    ib = 50 * 10 ** 9
    assert kernel(a, "g").t_comms == R(1 * n, ib)     # (p−1)·n over one-way 50 GB/s, α = 0
    assert kernel(a, "s").t_comms == R(7, 8) * n / (450 * 10 ** 9) + 7 * R(1, 10 ** 6)
    assert kernel(a, "t").t_comms == R(7, 8) * n / (450 * 10 ** 9) + 7 * R(1, 10 ** 6)
    assert kernel(a, "u").t_comms == R(n, ib)         # send: n/BW + α (α = 0 on dp)


def test_group_of_one_chip_sends_nothing():
    text = ("hardware chip { peak fp16 = 1 TFLOP/s; memory HBM { bandwidth = 1 TB/s } }\n"
            "system one { chip = chip; axis a = 1; link PCIe over a { one_way = 32 GB/s; latency = 5 us } }\n"
            "use system one\ninput x: fp16[8]\ny = all_reduce(x, over = a)")
    a = load_string(text).analyze()
    # one chip in the group: no kernel at all (y is a view of x), so no HBM traffic and no T_comms
    assert a.kernels == () or list(a.kernels) == []
    assert a.totals.t_comms == 0 and a.program.tensors["y"].storage == "x"


def test_comms_equal_to_memory_is_balanced():
    # T_memory = 2n / 2 TB/s = n/1e12; ring over p = 2 sends n: T_comms = n / one-way 1 TB/s = n/1e12
    text = ("hardware chip { peak fp16 = 1 TFLOP/s; memory HBM { bandwidth = 2 TB/s } }\n"
            "system s { chip = chip; axis a = 2; link ICI over a { one_way = 1 TB/s } }\n"
            "use system s\ninput x: fp16[8]\ny = all_reduce(x, over = a)")
    k = load_string(text).analyze().kernels[0]
    assert k.t_comms == k.t_memory == R(16, 10 ** 12)
    assert k.bound.bound == "balanced"


@pytest.mark.parametrize("body, message", [
    ("input x: fp16[8]\ny = all_reduce(x)", "say which mesh axis"),
    ("input x: fp16[8]\ny = all_reduce(x, over = pp)", "unknown axis of system 'box' 'pp'"),
    ("input x: fp16[8]\ny = all_reduce(x, over = tp, algorithm = trie)", "no algorithm 'trie'"),
    ("input x: fp16[12]\ny = reduce_scatter(x, over = tp)", "not a whole number"),
])
def test_bad_collectives(body, message):
    with pytest.raises(CostlangError) as e:
        run(body)
    assert message in e.value.render()


def test_collective_needs_a_system():
    with pytest.raises(CostlangError) as e:
        load_string("use hardware h100_sxm\ninput x: fp16[8]\ny = all_reduce(x, over = tp)")
    assert "no system is selected" in e.value.render()


def test_user_collective_formula():
    a = run("op all_reduce_flat(x): collective, sent = 2 * n, steps = 1\n"
            "input x: fp16[100]\ny = all_reduce(x, over = tp, algorithm = flat)")
    assert kernel(a, "y").t_comms == R(400, 450 * 10 ** 9) + R(1, 10 ** 6)   # 2·200 B / BW + α


# --- sharding ----------------------------------------------------------------------------------

def test_megatron_mlp_one_all_reduce():
    a = run("input x: fp16[4, 1024]\nweight W1: fp16[1024, 4096]\nweight W2: fp16[4096, 1024]\n"
            "parallel tensor over tp\nh = matmul(x, W1)\ng = gelu(h)\noutput y = matmul(g, W2)")
    p = a.program
    assert p.tensors["W1"].shape == (1024, 512)      # column-parallel: 4096 / 8
    assert p.tensors["W2"].shape == (512, 1024)      # row-parallel
    assert p.tensors["x"].shape == (4, 1024)         # replicated
    inserted = [n for n in p.nodes.values() if n.kind == "collective"]
    assert [n.name for n in inserted] == ["y_all_reduce"]
    assert kernel(a, "h").flops == 2 * 4 * 1024 * 512                 # 1/8 of the FLOPs per chip
    assert kernel(a, "y_all_reduce").comms.comms.message == 4 * 1024 * 2
    assert query_value(a, "t_comms()") == R(14, 8) * 8192 / (450 * 10 ** 9) + 14 * R(1, 10 ** 6)


def query_value(a, text):
    from costlang.queries.evaluate import evaluate_in
    from costlang.frontend.parser import parse
    return a.value(evaluate_in(a, parse("query " + text).statements[0].value).expr)


def test_data_parallel_splits_the_batch_without_comms():
    a = run("input x: fp16[64, 1024]\nweight W: fp16[1024, 1024]\nparallel data over dp\ny = matmul(x, W)")
    assert a.program.tensors["x"].shape == (32, 1024)
    assert kernel(a, "y").flops == 2 * 32 * 1024 * 1024
    assert not any(k.comms for k in a.kernels)


@pytest.mark.parametrize("body, message", [
    ("input x: fp16[4, 1024]\nshard x: [tp]\ny = relu(x)", "has 2 dimensions, the split names 1"),
    ("input x: fp16[4, 1004]\nshard x: [_, tp]\ny = relu(x)", "does not divide over axis tp"),
    ("input x: fp16[4, 64]\ninput z: fp16[4, 64]\nshard x: [_, tp]\nw = softmax(z)\ny = add(x, z)",
     "'z' is [_, _] but the other operands are [_, tp]"),
    ("input x: fp16[4, 64]\nshard x: [_, tp]\ny = softmax(x)", "works on whole rows"),
    ("input x: fp16[4, 64]\nshard x: [_, tp]\ny = reshape(x) -> fp16[256, 1]", "cannot keep the split"),
    ("input x: fp16[4, 64]\nparallel pipe over tp\ny = relu(x)", "unknown parallelism 'pipe'"),
])
def test_bad_sharding(body, message):
    with pytest.raises(CostlangError) as e:
        run(body)
    assert message in e.value.render()


# --- the examples (examples/parallel/) --------------------------------------------------------

def test_hsym_matmul_on_two_v5e(analyze_example):
    a = analyze_example("parallel/hsym_matmul_2chips.cost")
    B, D, F = (a.program.symbols[s].symbol for s in "BDF")
    assert query(a, "T_math") == B * D * F / (197 * 10 ** 12)          # 2·B·(D/2)·F / 1.97e14
    assert query(a, "T_comms") == 2 * B * F / (45 * 10 ** 9)           # 2·B·F / 4.5e10
    (solve,) = a.solves
    assert solve.roots == (R(78800, 9),)              # D* = 2·1.97e14/4.5e10 ≈ 8755.6, free of B and F


def test_hsym_compute_bound_iff_d_above_8755_6():
    from costlang import load
    from conftest import EXAMPLES
    base = load(EXAMPLES / "parallel/hsym_matmul_2chips.cost").analyze()
    for b in (1, 4096):
        # D is sharded over 2 chips, so a what-if gives it even values (8755 does not divide)
        for d, more_compute in ((8754, False), (8756, True)):
            a = scenario_analysis(base, parse_settings(f"B={b}; D={d}; F=1024"))
            tc, tcomms = a.value(kernel(a, "C").t_compute), a.value(kernel(a, "C_all_reduce").t_comms)
            assert bool(tc > tcomms) is more_compute


def test_kipply_260b(analyze_example):
    a = analyze_example("parallel/kipply_260b_16xa100.cost")
    # weights 2·260e9/16 B per chip, plus the [1, 16384] bf16 activations read and written: at 1.5 TB/s
    assert query(a, "weight read per token") == R(2 * 260 * 10 ** 9 // 16 + 2 * 2 * 16384, 15 * 10 ** 11)
    assert abs(float(query(a, "weight read per token")) - 0.021667) < 1e-6    # ≈ 21.67 ms
    assert query(a, "comms latency per token") == R(2560, 10 ** 6)            # 4·80·8 µs
    big = scenario_analysis(a, parse_settings("B=512"))
    assert query(big, "compute per token") == R(160, 3000)                    # 512·2·260e9/(16·312e12)


def test_megatron_llama3_70b_layer(analyze_example):
    a = analyze_example("parallel/megatron_llama3_70b_layer.cost")
    p = a.program
    assert [n.name for n in p.nodes.values() if n.kind == "collective"] == ["a_all_reduce", "dn_all_reduce"]
    shape = lambda t: tuple(a.value(d) for d in p.tensors[t].shape)  # noqa: E731
    assert shape("Wq") == (8192, 1024)                # 64·128 / 8: column-parallel, 8 heads per GPU
    assert shape("Wk") == (8192, 128)                 # 1 KV head per GPU
    assert shape("Wo") == (1024, 8192)                # row-parallel
    assert shape("Wd") == (3584, 8192)                # 28672 / 8
    assert shape("Kc") == (1, 1, 4096, 128)
    assert query(a, "all-reduce volume per layer per token") == 32768             # 2 · 8192 · 2 B
    assert query(a, "sent per GPU per token") == 57344                            # 2 · 2·7/8 · 16384
    # FLOPs per GPU per token: matmuls 2·8192·(1024+128+128) + 2·1024·8192 + 3·2·8192·3584
    # + 2·2·8·4096·128 (scores, P·V) = 230,686,720; norms, residuals, softmax, SwiGLU 283,648
    assert a.value(a.totals.flops) == 230970368
    # matmuls at the 989.5 TFLOP/s tensor peak, the 283,648 elementwise FLOPs at the 66.9 TFLOP/s
    # vector bf16 peak; comms 57,344 B at 450 GB/s + 2 · 8 µs
    b_star = R(16, 10 ** 6) / (R(230686720, 9895 * 10 ** 11) + R(283648, 669 * 10 ** 11)
                               - R(57344, 450 * 10 ** 9))
    assert query(a, "B* (compute overtakes communication)") == b_star and 145 < b_star < 146   # ≈ 145.53
    (solve,) = a.solves                              # the same B*, solved for B (B = 1 set aside)
    assert a.value(solve.roots[0]) == b_star
    assert [w.value for w in solve.whole] == [145, 146]   # comms take longer up to 145; compute from 146
    big = scenario_analysis(a, parse_settings("B=146"))                          # just above B*
    assert big.value(big.totals.t_compute) > big.value(big.totals.t_comms)
    small = scenario_analysis(a, parse_settings("B=145"))
    assert small.value(small.totals.t_compute) < small.value(small.totals.t_comms)


def test_fewest_h100s_for_llama3_70b(analyze_example):
    a = analyze_example("parallel/fewest_chips_llama3_70b.cost")
    (solve,) = a.solves
    # (141,107,412,992 B weights + 21,474,836,480 B KV)/n + 262,144 B ≤ 80e9
    assert a.value(solve.values[0]) == R(162582249472, 80 * 10 ** 9 - 262144)
    # 2 do not fit; 3 would, but n must divide both sharded dimensions: P = 2^13·7·13·31·43·71 and
    # the KV's 163,840 = 2^15·5 share only 2^13, so 3 is rejected (`--set n=3` is an error) and the
    # smallest whole n the file accepts is 4 = ceil(n*) + 1.
    assert [w.value for w in solve.whole] == [2, 4]
    assert [w.rounding for w in solve.whole] == ["floor", "ceil"]
    ((rejected, reason),) = solve.whole[1].rejected
    assert rejected == 3 and reason == ("dimension P of 'W' = 70553706496 does not divide over axis gpu "
                                        "of 3 chips")


def test_bias_follows_its_column_parallel_matmul():
    a = run("input x: fp16[4, 1024]\nweight W: fp16[1024, 4096]\nweight b: fp16[4096]\n"
            "parallel tensor over tp\nh = matmul(x, W)\noutput y = add(h, b)")
    assert a.program.tensors["b"].shape == (512,)     # 4096 / 8, as h's columns
    assert kernel(a, "y").flops == 4 * 512            # the add's work is split too
    assert not any(k.comms for k in a.kernels)        # column-parallel alone needs no collective


def test_comms_of_a_repeat_and_of_the_program_count_each_run():
    # all_reduce over p = 2 on fp16[8]: n = 16 B, ring sends 2(p−1)/p · n = 16 B in 2(p−1) = 2 steps,
    # α = 1 µs, so comms_latency is 2 µs per run. Repeated 3 times: comms_bytes() = 3 · 16 = 48 B and
    # comms_latency() = 3 · 2 µs = 6 µs, as t_comms() counts them; one kernel (h.y) stays per run: 16 B.
    # comms_bytes(h) of the repeat is its kernels × their count, 48 B. (For an instance it was an
    # internal error, found by fuzzing; the program's sum ignored the count; and a collective
    # written in a repeated block was counted once, not 3 times: it had no scope and no repeat.)
    text = ("hardware chip { peak fp16 = 1 TFLOP/s; memory HBM { bandwidth = 2 TB/s } }\n"
            "system s { chip = chip; axis a = 2; link ICI over a { one_way = 1 TB/s; latency = 1 us } }\n"
            "use system s\n"
            "block layer(x: fp16[n]) {\n    y = all_reduce(x, over = a)\n    return relu(y)\n}\n"
            "input x: fp16[8]\nh = repeat(3) layer(x)\n"
            'query "all" = comms_bytes()\nquery "of h" = comms_bytes(h)\nquery "one" = comms_bytes(h.y)\n'
            'query "lat" = comms_latency()\nquery "lat h" = comms_latency(h)\n')
    a = load_string(text).analyze()
    got = {q.name: a.value(q.value.expr) for q in a.queries}
    assert got == {"all": 48, "of h": 48, "one": 16, "lat": R(6, 10 ** 6), "lat h": R(6, 10 ** 6)}
    k = a.kernels[0]
    assert a.value(a.totals.t_comms) == 3 * k.t_comms      # the same count as t_comms()
