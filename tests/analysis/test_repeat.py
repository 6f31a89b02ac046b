"""Repetition with a symbolic count and footprint by liveness; values derived by hand."""
from pathlib import Path

import pytest
import sympy

import costlang
from costlang.api import load_string
from costlang.errors import CostlangError

ROOT = Path(__file__).resolve().parents[2]
STACK = ROOT / "examples" / "composition" / "mlp_stack.cost"
L = sympy.Symbol("L", positive=True, integer=True)

# One MLP block at B = 8, d = 4096, f = 16384, fp16 (the example's header derives these):
FLOPS = 2 * 8 * 4096 * 16384 * 2 + 8 * 16384 + 10 * 8 * 16384 + 8 * 4096   # 2,148,958,208
WEIGHTS = 2 * (4096 * 16384 * 2 + 16384 + 4096)                             # 268,476,416 B
# elementwise fusion: x@w1 (reads x 65,536 + w1 134,217,728, writes 262,144), +b1 and gelu (reads
# 262,144 + b1 32,768, writes 262,144), @w2 (reads 262,144 + 134,217,728, writes 65,536), +b2
# (reads 65,536 + 8,192, writes 65,536)
BYTES = 134_545_408 + 557_056 + 134_545_408 + 139_264                       # 269,787,136 B


def test_free_count_gives_exactly_l_times_one_block():
    a = costlang.load(STACK).analyze()
    assert FLOPS == 2_148_958_208 and WEIGHTS == 268_476_416 and BYTES == 269_787_136
    assert sympy.expand(a.value(a.totals.flops) - FLOPS * L) == 0
    assert sympy.expand(a.value(a.totals.bytes) - BYTES * L) == 0
    assert a.totals.launches == 4 * L
    q = {r.name: a.value(r.value.expr) for r in a.queries}
    assert q["FLOPs of the stack"] == FLOPS * L
    assert q["weights of the stack"] == WEIGHTS * L
    # every kernel of the body runs L times; the body was analysed once
    assert [k.count for k in a.kernels] == [L] * 4
    assert len(a.program.nodes) == 5


def test_largest_l_whose_weights_fit_in_80_gb():
    a = costlang.load(STACK).analyze()
    (s,) = a.solves
    # L ≤ 80e9 / 268,476,416 ≈ 297.98: 297 · 268,476,416 = 79,737,495,552 ≤ 8e10 < 298 · ... = 80,005,971,968
    assert s.whole[0].value == 297
    assert s.whole[1].value == 298


def _four_calls(text: str) -> str:
    body = text.split("h = repeat(L) mlp(x, f = f)")[0].replace("dim L ", "dim L = 4 ")
    return body + ("h1 = mlp(x, f)\nh2 = mlp(h1, f)\nh3 = mlp(h2, f)\nh = mlp(h3, f)\n")


@pytest.mark.parametrize("mode", ["none", "elementwise", "epilogue"])
def test_l_equals_4_matches_four_explicit_calls(mode):
    text = STACK.read_text()
    repeated = load_string(text.replace("dim L ", "dim L = 4 "), "s.cost").analyze(fusion=mode)
    explicit = load_string(_four_calls(text), "e.cost").analyze(fusion=mode)
    for figure in ("flops", "bytes", "t_kernel"):
        assert repeated.value(getattr(repeated.totals, figure)) == explicit.value(getattr(explicit.totals, figure))
    assert repeated.value(sympy.Integer(1) * repeated.totals.launches) == explicit.totals.launches
    assert repeated.value(repeated.footprint.bytes) == explicit.value(explicit.footprint.bytes)
    assert repeated.value(repeated.totals.flops) == 4 * FLOPS


def test_an_80_layer_stack_has_the_nodes_of_one_layer():
    a = load_string(STACK.read_text().replace("dim L ", "dim L = 80 "), "s.cost").analyze()
    assert len(a.program.nodes) == 5 and len(a.kernels) == 4
    assert a.value(a.totals.flops) == 80 * FLOPS


def test_footprint_counts_weights_l_times_and_activations_once():
    a = costlang.load(STACK).analyze()
    f = a.footprint
    assert a.value(f.resident) == WEIGHTS * L
    # live: at the +b1/gelu kernel, h.matmul and h.gelu ([B, f] fp16 each, 262,144 B) are live
    assert a.value(f.live) == 2 * 8 * 16384 * 2 == 524_288
    assert f.peak_at == "h.add+h.gelu"


def test_liveness_of_a_chain():
    text = """use hardware chapter_gpu
dim N = 1024
input x: fp16[N]
a = relu(x)
b = relu(a)
c = relu(b)
"""
    a = load_string(text).analyze(fusion="none")
    # step 1: x, a; step 2: a, b; step 3: b, c: two [N] fp16 tensors = 4N B, not 8N (all four)
    assert a.value(a.footprint.bytes) == 4 * 1024
    # fused: one kernel reads x and writes c
    f = load_string(text).analyze(fusion="elementwise").footprint
    assert f.live.xreplace(load_string(text).program.bindings) == 4 * 1024


BLOCK = """use hardware chapter_gpu
dim n = 64
dim L, E
block step(x: fp16[n]) {
    weight w: fp16[n]
    return relu(x * w)
}
input x: fp16[n]
"""


def test_fusion_stops_at_the_repeat_boundary():
    a = load_string(BLOCK + "h = repeat(L) step(x)\ny = exp(h)\n").analyze()
    names = [k.name for k in a.kernels]
    assert names == ["h.mul+h.relu", "y"]
    assert [k.count for k in a.kernels] == [L, 1]


def test_nested_repeats_multiply():
    text = BLOCK + """block layer(x: fp16[n]) {
    e = repeat(E) step(x)
    return exp(e)
}
h = repeat(L) layer(x)
"""
    a = load_string(text).analyze()
    counts = {k.name: k.count for k in a.kernels}
    assert counts == {"h.e.mul+h.e.relu": L * sympy.Symbol("E", positive=True, integer=True), "h.exp": L}
    # weights: n fp16 per step, E steps per layer, L layers
    assert a.value(a.footprint.resident) == 2 * 64 * L * sympy.Symbol("E", positive=True, integer=True)


def _error(text):
    with pytest.raises(CostlangError) as info:
        load_string(text, "t.cost").analyze()
    return info.value


def test_repeat_errors():
    e = _error(BLOCK + "block wide(x: fp16[r, n]) {\n    weight w: fp16[n, 2 * n]\n    return x @ w\n}\n"
               "input m: fp16[1, n]\nh = repeat(L) wide(m)\n")
    assert "output must match its input" in e.message and e.span.line == 14
    assert "repeat applies a block" in _error(BLOCK + "h = repeat(L) relu(x)\n").message
    assert "positive whole number" in _error(BLOCK + "h = repeat(0) step(x)\n").message


def test_instances_are_listed_only_for_a_bound_count():
    from costlang.printers.text.report import report
    a = load_string(BLOCK + "h = repeat(L) step(x)\n").analyze()
    assert "the count L is free" in report(a, instances=True)
    b = load_string(BLOCK.replace("dim L, E", "dim L = 2, E") + "h = repeat(L) step(x)\n").analyze()
    out = report(b, instances=True)
    assert "  h[0]: h[0].w\n  h[1]: h[1].w\n" in out
    assert "h.mul+h.relu × L" in out


def test_a_program_output_stays_live_to_the_end_of_the_schedule():
    # fp32[100] tensors, 400 B each; three kernels (fusion none):
    #   k0 y = x·2 (an output, read by no kernel)   live: x, y          = 800 B
    #   k1 z = x·3                                  live: x, y, z       = 1200 B (x's last read)
    #   k2 w = z·4 (an output)                      live: y, z, w       = 1200 B
    # y is an output, so it is live until the end: the peak is 1200 B (first at k1). Freed at its
    # last reader (k0, its own write) the steps would be 800, 800, 800.
    text = ("use hardware h100_sxm\nfusion none\ninput x: fp32[100]\noutput y = x * 2\n"
            "z = x * 3\noutput w = z * 4\n")
    a = load_string(text).analyze()
    assert [k.name for k in a.kernels] == ["y", "z", "w"]
    assert a.value(a.footprint.live) == 1200
    assert a.footprint.peak_at == "z"
    assert "y" in [t.tensor for t in a.footprint.tensors]
