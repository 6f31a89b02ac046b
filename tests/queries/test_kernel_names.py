"""A name means one thing: a block instance is never also a kernel.

`decode = model(x)` is the instance `decode`; the kernel that computes the tensor `decode` keeps a
name inside it (`decode.matmul`, a zoo model's `decode.lm_head.matmul`). Before, that kernel was
named `decode` too, so a sweep said "decode changes bound at B* ≈ ..." (the last kernel) while a
solve on `decode` (the instance's totals) said it never does.
"""
from __future__ import annotations

import pytest
import sympy

from costlang import load_string
from costlang.queries.sweep import parse_axis, sweep

R = sympy.Rational

# d = 4096 on chapter_gpu (fp16 1000 TFLOP/s, 2 TB/s: I* = 500 FLOP/B). The instance holds an
# exp over a per-sequence cache of ctx = 16384 (memory-bound work that grows with B) and the
# returned exp(x) @ w, whose matmul crosses I* on its own.
MODEL = """use hardware chapter_gpu
dim B
dim d = 4096, ctx = 16384
block model(x: fp16[b, d]) {
    weight w: fp16[d, d]
    cache kv: fp16[b, ctx]
    s = exp(kv)
    return exp(x) @ w
}
input x: fp16[B, d]
decode = model(x)
solve "kernel": intensity(decode.matmul) = critical_intensity(decode.matmul) for B
solve "instance": intensity(decode) = critical_intensity(decode) for B
"""


def test_the_sweep_and_the_solve_agree_on_the_instance_and_on_its_kernel():
    a = load_string(MODEL, "m.cost").analyze()
    p = a.program
    assert [n for n in p.nodes] == ["decode.s", "decode.exp", "decode.matmul"]
    assert p.producer("decode").name == "decode.matmul" and "decode" in p.instances
    sw = sweep(a, [parse_axis(p, "B=1..4096:pow2")], ["intensity(decode)"])
    # the kernel decode.matmul: I = 2·B·d² / (2·(2·B·d + d²)) = B·d/(2·B + d) = 500 at
    # B* = 500·d/(d − 1000) = 2,048,000/3,096 = 256000/387 ≈ 661.5
    assert [(c.kernel, c.value) for c in sw.crossings] == [("decode.matmul", R(256000, 387))]
    assert [m.kernel for row in sw.marks for m in row] == ["decode.matmul"]   # at B = 1024
    kernel, instance = a.solves
    assert kernel.values == (R(256000, 387),)      # the root 500·d/(d − 1000) at d = 4096
    # the instance: FLOPs per sequence 16,384 (exp of the cache) + 4,096 (exp) + 2·4096² = 33,574,912;
    # bytes per sequence 2·2·16,384 + 2·2·4,096 + 2·2·4,096 = 98,304 (+ the 2·4096² B of w, once), so
    # I(B) rises to 33,574,912/98,304 = 8197/24 ≈ 341.5 < 500: memory-bound at every B, in the
    # sweep's column (the instance's own totals) and in the solve alike
    assert instance.roots == () and instance.values == ()
    assert (instance.no_crossing.extremum, instance.no_crossing.value) == ("sup", R(8197, 24))
    assert [g.side for g in instance.regimes] == ["memory-bound"]
    column = dict(zip((b for (b,) in sw.points), sw.columns[0]))
    assert max(column.values()) < 500
    # B = 4096: (4096·33,574,912) / (4096·98,304 + 33,554,432) = 4096·8197/(4096·24 + 8192) = 8197·4096/106,496
    assert column[4096] == pytest.approx(8197 * 4096 / 106496)


ZOO = """import tinyllama_1b
use hardware h100_sxm
dim B
input tok: int32[B, 1]
decode = tinyllama_1b_decode(tok, ctx = 2048, wt = bf16, kt = bf16, at = bf16, it = int32)
query "instance" = t_kernel(decode)
"""


def test_a_zoo_models_kernels_are_qualified_and_its_instance_means_its_totals():
    a = load_string(ZOO, "zoo.cost").analyze()
    p = a.program
    assert not set(p.nodes) & (set(p.instances) | set(p.repeats))
    assert all(n.startswith("decode.") for n in p.nodes)
    # the model's last kernel, the lm_head's matmul, inside the instance decode.lm_head
    assert list(p.nodes)[-1] == "decode.lm_head.matmul" and p.producer("decode").name == "decode.lm_head.matmul"
    assert p.instances["decode"].block == "tinyllama_1b_decode"   # the call the user wrote
    assert p.instances["decode.lm_head"].block == "lm_head"
    assert [k.name for k in a.kernels if k.name in ("decode", "decode.layer", "decode.layer.attn")] == []
    # t_kernel(decode) is the instance's: every kernel × its count, not the last kernel alone
    (q,) = a.queries
    assert sympy.simplify(a.value(q.value.expr) - a.value(sum(k.count * k.t_kernel for k in a.kernels))) == 0
    sw = sweep(a, [parse_axis(p, "B=1..4096:pow2")], [])
    crossings = {c.kernel: c.value for c in sw.crossings}
    assert "decode" not in crossings
    # lm_head: [B, 2048] @ [2048, 32000] in bf16, I = B·d·V / (B·(d + V) + d·V), I* = 989.5/3.35 = 19790/67:
    # B* = I*·d·V / (d·V − I*·(d + V)) = 19790·65,536,000 / (67·65,536,000 − 19790·34,048)
    #    = 1,296,957,440,000 / 3,717,102,080 = 506624000/1451993 ≈ 348.9
    assert crossings["decode.lm_head.matmul"] == R(506624000, 1451993)


def test_a_measured_instance_of_one_kernel_is_that_kernel():
    # `measure head` names the instance; its one kernel is head.matmul (the tensor head's producer).
    # bytes: 2·(128·4096 + 4096·32000 + 128·32000) = 2·135,692,288 = 271,384,576 B in 1 ms
    a = load_string("import llm\nuse hardware h100_sxm\ninput x: bf16[1, 128, 4096]\n"
                    "head = lm_head(x, vocab = 32000, wt = bf16, at = bf16)\nmeasure head { time = 1 ms }\n",
                    "t.cost").analyze()
    (m,) = a.measurements
    assert (m.node, m.kernel) == ("head", "head.matmul")
    assert dict(m.figures)["effective_bandwidth"].expr == 271384576000
