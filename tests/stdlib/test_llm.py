"""The transformer library: stdlib/llm.cost, the model zoo and examples/llm/.

Every expected number is derived by hand in the comment beside it (and in the zoo files' headers).
"""
from pathlib import Path
from types import SimpleNamespace

import pytest
import sympy

import costlang
from costlang.analysis.composition import weight_bytes
from costlang.api import load_string

ROOT = Path(__file__).resolve().parents[2]
LLM = ROOT / "examples" / "llm"


def _llama(V, d, L, H, KV, hd, F):
    """Hand count of a Llama-architecture model: per layer wq, wk, wv, wo, SwiGLU, two RMSNorms;
    untied embedding and lm_head; a final RMSNorm."""
    layer = d * H * hd + 2 * d * KV * hd + H * hd * d + 3 * d * F + 2 * d
    return L * layer + 2 * V * d + d


# (zoo module, expected parameters, KV-cache bytes per token in bf16 = 2 · layers · kv_heads · head_dim · 2)
ZOO = [
    ("llama2_7b", 6_738_415_616, 2 * 32 * 32 * 128 * 2),      # 524,288
    ("llama2_13b", 13_015_864_320, 2 * 40 * 40 * 128 * 2),    # 819,200
    ("llama2_70b", 68_976_648_192, 2 * 80 * 8 * 128 * 2),     # 327,680
    ("llama3_8b", 8_030_261_248, 2 * 32 * 8 * 128 * 2),       # 131,072
    ("llama3_70b", 70_553_706_496, 2 * 80 * 8 * 128 * 2),     # 327,680
    ("tinyllama_1b", 1_100_048_384, 2 * 22 * 4 * 64 * 2),     # 22,528
    ("mixtral_8x7b", 46_702_792_704, 2 * 32 * 8 * 128 * 2),   # 131,072
    ("gpt2_medium", 354_823_168, 2 * 24 * 16 * 64 * 2),       # 98,304
    ("deepseek_v3", 671_026_419_200, (512 + 64) * 61 * 2),    # MLA: the latent and the rope key, 70,272
]


def test_hand_counts_agree_with_the_issue_table():
    assert _llama(32000, 4096, 32, 32, 32, 128, 11008) == 6_738_415_616
    assert _llama(32000, 5120, 40, 40, 40, 128, 13824) == 13_015_864_320
    assert _llama(32000, 8192, 80, 64, 8, 128, 28672) == 68_976_648_192
    assert _llama(128256, 4096, 32, 32, 8, 128, 14336) == 8_030_261_248
    assert _llama(128256, 8192, 80, 64, 8, 128, 28672) == 70_553_706_496
    assert _llama(32000, 2048, 22, 32, 4, 64, 5632) == 1_100_048_384
    # Mixtral: Mistral-7B's layer with 8 SwiGLU experts and a d×8 router
    mixtral = _llama(32000, 4096, 32, 32, 8, 128, 14336) + 32 * (7 * 3 * 4096 * 14336 + 4096 * 8)
    assert mixtral == 46_702_792_704


def _decode_program(module: str):
    return load_string(f"""import {module}
use hardware h100_sxm
dim B = 1, T = 16
input tok: int32[B, 1]
m = {module}_decode(tok, ctx = T, wt = bf16, kt = bf16, at = bf16, it = int32)
""", "zoo.cost").program


@pytest.mark.parametrize("module,params,kv_per_token", ZOO)
def test_zoo_loads_by_name_with_exact_parameter_counts(module, params, kv_per_token):
    p = _decode_program(module)
    a = SimpleNamespace(program=p)
    assert weight_bytes(a, roles=("weight",), elements=True) == params
    # the KV cache is an explicit resident tensor: B = 1, T = 16 tokens
    caches = weight_bytes(a, roles=("cache",)).xreplace(p.bindings)
    assert caches == 16 * kv_per_token


def test_gpt2_medium_and_deepseek_v3_hand_counts():
    # GPT-2 medium: wte + wpe + 24 layers (2 LayerNorms, biased Q/K/V/O, biased 4d MLP) + final LN
    layer = 2 * 2 * 1024 + 4 * (1024**2 + 1024) + 2 * 1024 * 4096 + 4096 + 1024
    assert 50257 * 1024 + 1024 * 1024 + 24 * layer + 2048 == 354_823_168
    # DeepSeek-V3: MLA per layer, 3 dense layers, 58 MoE layers (256 routed + 1 shared expert,
    # router, score-correction bias), untied embedding and lm_head, final norm
    d, heads = 7168, 128
    mla = d * 1536 + 1536 + 1536 * heads * 192 + d * 576 + 512 + 512 * heads * 256 + heads * 128 * d
    assert mla == 187_107_328
    expert = 3 * d * 2048
    dense, moe = mla + 2 * d + 3 * d * 18432, mla + 2 * d + 257 * expert + d * 256 + 256
    total = 3 * dense + 58 * moe + 2 * 129280 * d + d
    assert total == 671_026_419_200
    assert total - 58 * 248 * expert == 37_552_297_472       # active: 8 of 256 routed experts


def test_mixtral_active_parameters():
    # 2 of 8 experts per token: total − 32 layers · 6 experts · 3·4096·14336
    assert 46_702_792_704 - 32 * 6 * 3 * 4096 * 14336 == 12_879_925_248   # ≈ 12.9e9


def test_layers_are_repeated_not_unrolled():
    # Llama-2-70B has 80 layers and TinyLlama 22: the same number of graph nodes, one layer's worth
    big, small = _decode_program("llama2_70b"), _decode_program("tinyllama_1b")
    assert len(big.nodes) == len(small.nodes)
    assert big.repeats["m.layer"].count == 80


def _queries(path, **kw):
    a = costlang.load(path).analyze(**kw)
    return a, {q.name: a.value(q.value.expr) for q in a.queries}


def test_kipply_52b_on_a100():
    _, q = _queries(LLM / "kipply_52b_a100.cost")
    assert q["KV-projection FLOPs per token"] == 2 * 2 * 64 * 8192**2 == 17_179_869_184
    assert q["A100 FLOPs-to-bytes ratio"] == sympy.Rational(312 * 10**12, 15 * 10**11) == 208
    assert q["FLOPs per token of the weights, 24·L·d²"] == 24 * 64 * 8192**2 == 103_079_215_104
    assert q["KV cache bytes per token"] == 2 * 2 * 64 * 8192 == 2_097_152


def test_baseten_llama2_7b_on_a10():
    _, q = _queries(LLM / "baseten_llama2_7b_a10.cost")
    assert q["A10 ops:byte ratio"] == sympy.Rational(125 * 10**12, 600 * 10**9)   # 625/3 ≈ 208.3
    assert q["KV cache bytes per token"] == 2 * 2 * 32 * 4096 == 524_288
    assert q["time per token, Baseten: 2·7e9 B / 600 GB/s"] == sympy.Rational(14, 600)   # ≈ 23.3 ms
    assert q["parameters of Llama-2-7B"] == 6_738_415_616
    # 2 · 6,738,415,616 B / 600e9 B/s ≈ 22.46 ms
    assert q["time per token, weights only: 2·6.74e9 B / 600 GB/s"] == sympy.Rational(2 * 6_738_415_616, 600 * 10**9)


def test_llama3_70b_decode_on_h100_compute_bound_batch():
    a, q = _queries(LLM / "llama3_70b_h100_decode.cost")
    assert q["parameters"] == 70_553_706_496
    assert q["KV cache bytes per token"] == 327_680
    weights_only, with_kv = a.solves
    # I = 2·P·B / (2·P) FLOP/B = B; I* = 989.5e12 / 3.35e12 = 19790/67 ≈ 295.4
    assert list(weights_only.values) == [sympy.Rational(19790, 67)]
    assert [w.value for w in weights_only.whole] == [295, 296]
    # with every sequence reading its 4096-token cache, no batch is compute-bound
    assert with_kv.no_crossing is not None
    assert not with_kv.roots


def test_attention_equals_qkvo_at_twice_the_width():
    a, q = _queries(LLM / "attention_vs_qkvo.cost")
    S, h, dh = (sympy.Symbol(n, positive=True, integer=True) for n in ("S", "h", "dh"))
    assert sympy.expand(q["QKVO FLOPs"] - 8 * S * (h * dh) ** 2) == 0      # 4 · 2·S·d²
    assert sympy.expand(q["attention FLOPs"] - 4 * S**2 * h * dh) == 0     # 2 · 2·S²·d
    (s,) = a.solves
    assert [sympy.expand(r - 2 * h * dh) for r in s.roots] == [0]           # S* = 2·d


def test_flash_attention_comes_from_fusion():
    # Unfused (epilogue): scores [1, 32, 4096, 4096] bf16 = 1,073,741,824 B written by the scores
    # matmul and read by softmax; the probabilities likewise, read by P·V:
    #   scores kernel: q, k 2·33,554,432 + scores 1,073,741,824 = 1,140,850,688
    #   softmax: 2 · 1,073,741,824 = 2,147,483,648; P·V: 1,073,741,824 + v, o 2·33,554,432
    S_BYTES, QKV = 1_073_741_824, 33_554_432
    unfused = costlang.load(LLM / "flash_attention_prefill.cost").analyze(fusion="epilogue")
    attn = [k for k in unfused.kernels if k.name in ("attn.scores", "attn.probs", "attn.o")]
    assert sum(unfused.value(k.bytes) for k in attn) == 4 * S_BYTES + 4 * QKV == 4_429_185_024
    # Flash: one kernel. M = 228 KiB / 2 B = 116,736 elements; ⌈M/(4·128)⌉ = 228 does not fit
    # (2·(2·228·128 + 2·128·128 + 128·228) + 8·128 = 241,664 B > 233,472 B), so B_c is the largest
    # block that does: with B_r = 128, 2·128·(3·B_c + 256) + 1024 ≤ 233,472 ⇔ B_c ≤ 217.33, B_c = 217
    # (working set 233,216 B). Tc = ⌈4096/217⌉ = 19: Q read 19×, K and V once, O written 19× and
    # read 18×, the running max and sum (fp32, 2 per row, 32·4096 rows = 1,048,576 B) written and
    # read 18× each.
    flash = costlang.load(LLM / "flash_attention_prefill.cost").analyze(fusion="flash")
    (k,) = [k for k in flash.kernels if "attn.scores" in k.ops]
    assert set(k.ops) == {"attn.scores", "attn.probs", "attn.o"}
    assert flash.value(k.bytes) == (19 + 2 + 19 + 18) * QKV + 2 * 18 * 1_048_576 == 1_983_905_792
    assert flash.value(k.cost.tiling.working_set) == 233_216
    assert all(t.tensor != "attn.scores" for t in k.cost.writes)


MOE = """import llm
use hardware h100_sxm
dim B
input x: bf16[B, 1, 64]
y = moe(x, experts = 8, top_k = 2, ffn = 128, wt = bf16, at = bf16)
"""


def test_moe_weight_traffic_grows_with_the_distinct_experts_touched():
    a = load_string(MOE, "moe.cost").analyze(fusion="none")
    B = sympy.Symbol("B", positive=True, integer=True)
    (k,) = [k for k in a.kernels if k.name == "y.y"]  # moe's local y (`y` is the instance)
    # reads: x 128·B + scores 16·B + E·(1 − (1 − k/E)^B) experts × 3·64·128·2 B; writes y 128·B
    touched = 8 * (1 - sympy.Rational(3, 4) ** B)
    expected = 128 * B + 16 * B + touched * 3 * 64 * 128 * 2 + 128 * B
    assert sympy.simplify(k.bytes - expected) == 0
    assert sympy.simplify(a.value(k.bytes).subs(B, 1) - (272 + 2 * 49152)) == 0   # B = 1: 2 experts
    # FLOPs grow with top_k·B, not with the experts touched: per token 2·(6·64·128 + 6·128 + 2·64)
    assert sympy.expand(k.flops - B * 2 * (6 * 64 * 128 + 6 * 128 + 2 * 64)) == 0


SWIGLU = """import llm
use hardware h100_sxm
input x: {at}[1, 1, 64]
y = swiglu(x, ffn = 128, wt = {wt}, at = {at})
"""


@pytest.mark.parametrize("wt,at,size,math", [
    ("int4", "fp16", sympy.Rational(1, 2), "fp16"),   # W4A16: dequantized to fp16
    ("fp8", "bf16", 1, "bf16"),                       # W8A16 (fp8 weights)
    ("int8", "int8", 1, "int8"),                      # W8A8
    ("fp6", "fp16", sympy.Rational(3, 4), "fp16"),
    ("fp4", "bf16", sympy.Rational(1, 2), "bf16"),
])
def test_weight_and_activation_dtypes_are_independent(wt, at, size, math):
    a = load_string(SWIGLU.format(wt=wt, at=at), "q.cost").analyze(fusion="none")
    # 3 · 64 · 128 = 24,576 weights at the weight dtype's size
    assert weight_bytes(a) == 24_576 * size
    matmuls = [k for k in a.kernels if a.program.nodes[k.ops[0]].kind == "matmul"]
    assert len(matmuls) == 3 and {k.cost.math_dtype for k in matmuls} == {math}


def test_fp8_kv_cache_halves_the_cache():
    def kv(kt):
        p = load_string(f"""import llama3_8b
dim T = 16
input tok: int32[1, 1]
m = llama3_8b_decode(tok, ctx = T, wt = bf16, kt = {kt}, at = bf16, it = int32)
""", "kv.cost").program
        return weight_bytes(SimpleNamespace(program=p), roles=("cache",)).xreplace(p.bindings)
    assert kv("bf16") == 16 * 131_072 and kv("fp8") == 16 * 65_536


def test_gqa_decode_reads_each_kv_head_once():
    # Llama-2-70B: 64 query heads share 8 KV heads; the scores kernel reads the K cache once:
    # B·8·T·128·2 B, not 64 heads' worth
    text = """import llm
use hardware h100_sxm
dim T = 1000
input x: bf16[1, 1, 8192]
a = attention_decode(x, heads = 64, kv_heads = 8, head_dim = 128, ctx = T, wt = bf16, kt = bf16, at = bf16)
"""
    res = load_string(text, "gqa.cost").analyze(fusion="none")
    (k,) = [k for k in res.kernels if k.name == "a.scores"]
    reads = {t.tensor: res.value(t.bytes) for t in k.cost.reads}
    assert reads["a.k_cache"] == 8 * 1000 * 128 * 2
    assert res.value(k.flops) == 2 * 64 * 1000 * 128      # every query head still does its FLOPs


def test_mixtral_decode_moe_bytes_per_layer():
    a = costlang.load(LLM / "mixtral_decode_experts.cost").analyze()
    B = sympy.Symbol("B", positive=True, integer=True)
    q = {r.name: r.value.expr for r in a.queries}
    expert = 3 * 4096 * 14336 * 2                                       # 352,321,536 B
    expected = 8 * (1 - sympy.Rational(3, 4) ** B) * expert + 57_408 * B + 73_728
    assert sympy.simplify(q["MoE bytes per layer and step"] - expected) == 0
    assert expected.subs(B, 1) == 704_774_208


def test_sliding_window_cache_holds_the_window():
    # Mistral-style window W = 4096 with T = 8192 tokens of context: the cache holds and reads 4096
    p = load_string("""import llm
dim T = 8192, W = 4096
input x: bf16[1, 1, 4096]
a = attention_decode(x, heads = 32, kv_heads = 8, head_dim = 128, ctx = min(T, W), wt = bf16, kt = bf16, at = bf16)
""", "window.cost").program
    caches = weight_bytes(SimpleNamespace(program=p), roles=("cache",)).xreplace(p.bindings)
    assert caches == 2 * 8 * 4096 * 128 * 2


def test_causal_prefill_does_the_lower_triangle():
    # S = 128 tokens, 32 heads of 128: all pairs 2·32·128·128·128 = 134,217,728 FLOPs per score
    # matmul; causal computes 128·129/2 of the 128² pairs: × 129/256 = 67,633,152
    text = """import llm
use hardware h100_sxm
dim S = 128
input x: bf16[1, S, 4096]
a = attention_prefill(x, heads = 32, kv_heads = 32, head_dim = 128, wt = bf16, kt = bf16, at = bf16, \\
                      causal = (S + 1) / (2 * S))
"""
    p = load_string(text, "causal.cost").program
    assert p.nodes["a.scores"].flops.xreplace(p.bindings) == 67_633_152
    assert p.nodes["a.o"].flops.xreplace(p.bindings) == 67_633_152
    # the inputs are still read and the scores written whole: only the FLOPs scale
    assert p.tensors["a.scores"].bytes.xreplace(p.bindings) == 32 * 128 * 128 * 2


def test_density_outside_zero_one_is_an_error():
    with pytest.raises(costlang.errors.CostlangError, match="density"):
        load_string("input a: fp16[4, 4]\ninput b: fp16[4, 4]\nc = matmul(a, b) { density = 2 }", "d.cost")


def test_serving_prefill_and_decode_hold_one_copy_of_the_weights():
    """The serving example's decode shares the prefill's weights: the footprint counts them once.
    Weights 2 B · 8,030,261,248 = 16,060,522,496 B; the decode's KV caches B · T · 131,072 B =
    64 · 4096 · 131,072 = 34,359,738,368 B (the prefill holds no cache of its own); resident
    16,060,522,496 + 34,359,738,368 = 50,420,260,864 B (two copies of the weights: 66,480,783,360)."""
    a, q = _queries(LLM / "serving_llama3_8b_h100.cost")
    assert q["weights, held once"] == 16_060_522_496
    assert q["KV caches"] == 34_359_738_368
    assert q["KV cache bytes per sequence"] == 4096 * 131_072 == 536_870_912
    assert a.value(a.footprint.resident) == 50_420_260_864
    # the batch that fits is unchanged by the split into weights and caches: floor(79.14) = 79
    assert [w.value for w in a.solves[0].whole][0] == 79


LAYER = """import llm
use hardware h100_sxm
fusion none
input x: bf16[1, S, 8]
y = llama_layer_prefill(x, heads = 2, kv_heads = 1, head_dim = 4, ffn = 16, wt = bf16, kt = KT, at = bf16)
query "scores" = flops(y.attn.scores)
query "pv" = flops(y.attn.o)
query "k written" = bytes_written(y.attn.k)
query "v written" = bytes_written(y.attn.v)
"""


def _layer(s, kt="bf16"):
    return _queries_text(LAYER.replace("S, 8", f"{s}, 8").replace("KT", kt))


def _queries_text(text):
    from conftest import query
    a = load_string(text, "layer.cost").analyze()
    return {q.name: query(a, q.name) for q in a.queries}


@pytest.mark.parametrize("s, expected", [(4, 160), (1, 16)])
def test_the_llama_decoder_layer_is_causal(s, expected):
    # scores = qh @ kh^T with qh [1, kv_heads 1, group 2 · s, head_dim 4] and kh^T [1, 1, 4, s]:
    # 2 · 2s · s · 4 = 16·s² FLOP counted in full; causal, the fraction (s + 1)/(2s) of them
    # (P·V the same): s = 4: 256 · 5/8 = 160 FLOP; s = 1: density 2/2 = 1, 16 FLOP.
    # (With causal = 1 passed, s = 4 would give 256.)
    q = _layer(s)
    assert q["scores"] == q["pv"] == expected


def test_prefill_writes_the_kv_cache_in_its_own_dtype():
    # k and v: [1, 4, kv_heads · head_dim = 4] = 16 elements, written in kt: fp8 16 B, bf16 32 B
    fp8, bf16 = _layer(4, "fp8"), _layer(4, "bf16")
    assert fp8["k written"] == fp8["v written"] == 16
    assert bf16["k written"] == bf16["v written"] == 32


def test_a_whole_prefill_model_passes_the_kv_dtype_to_its_layers():
    # the same layer, repeated (layers = 2), inside llama_prefill with kt = fp8 and activations bf16:
    # each layer's k and v kernels write 16 fp8 elements: 16 B each (a kernel's figure is per run;
    # bf16, as the activations, would be 32 B)
    text = ("import llm\nuse hardware h100_sxm\nfusion none\ninput ids: int32[1, 4]\n"
            "y = llama_prefill(ids, vocab = 16, d = 8, layers = 2, heads = 2, kv_heads = 1, head_dim = 4, "
            "ffn = 16, wt = bf16, kt = fp8, at = bf16, it = int32)\n"
            "query \"k written\" = bytes_written(y.layer.attn.k)\n"
            "query \"v written\" = bytes_written(y.layer.attn.v)\n")
    q = _queries_text(text)
    assert q["k written"] == q["v written"] == 16
