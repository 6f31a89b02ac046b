"""Memory hierarchy: levels, tiling, FlashAttention, vector peaks, efficiency, access.

Every expected number is derived by hand in the comment beside it.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import sympy
from sympy import Rational as R

from costlang import CostlangError, load, load_string
from costlang.printers.data.json import to_json

EX = Path(__file__).resolve().parents[2] / "examples" / "memory"


def only(a):
    assert len(a.kernels) == 1
    return a.kernels[0]


def level(k, name):
    return next(lt for lt in k.levels if lt.level == name)


# --- tiled matmul ------------------------------------------------------------------------

def test_tiled_gemm_bytes_follow_the_tiling_formula():
    # 4096³ fp16, tile 128: b·(tm·tn·tk·(bm·bk + bk·bn) + M·N) with tm = tn = tk = 32:
    # 2·(32768·(16384 + 16384) + 4096²) = 2·(1073741824 + 16777216) = 2181038080 B
    a = load(EX / "tiled_gemm.cost").analyze(settings={"T": 128})
    k = only(a)
    assert a.value(k.bytes) == 2181038080
    assert a.value(k.algorithmic_bytes) == 3 * 4096 ** 2 * 2          # 100663296, ideal reuse
    # I = 2·4096³ / 2181038080 = 4096·128/(8192 + 128) = 4096/65
    assert a.value(k.intensity) == R(4096, 65)
    # working set 2·128² + 2·128² + 4·128² = 8·128² = 131072 B ≤ 228 KiB = 233472 B
    assert a.value(k.cost.tiling.working_set) == 131072


def test_rectangular_tiles_re_read_a_per_column_and_b_per_row_of_c_tiles():
    # M = 64, N = 32, K = 16 in fp16, tiles bm = 16, bn = 8, bk = 4: tm = 4, tn = 4, tk = 4.
    # A (64·16·2 = 2048 B) is re-read once per column of C tiles, N/bn = 4 times: 8192 B;
    # B (16·32·2 = 1024 B) once per row of C tiles, M/bm = 4 times: 4096 B; C written once: 4096 B.
    # Total 16384 B = 2·(tm·tn·tk·(bm·bk + bk·bn) + M·N) = 2·(64·(64 + 32) + 2048).
    # (B re-read M/bn = 8 times would give 20480 B; A re-read N/bm = 2 times 12288 B.)
    text = ("use hardware h100_sxm\ninput A: fp16[64, 16]\ninput B: fp16[16, 32]\n"
            "output C = matmul(A, B) { bm = 16; bn = 8; bk = 4 }\n")
    a = load_string(text).analyze()
    k = only(a)
    assert a.value(k.bytes) == 16384
    assert a.value(k.bytes_read) == 8192 + 4096
    # I = 2·64·32·16 / 16384 = 65536/16384 = 4 FLOP/B
    assert a.value(k.intensity) == 4


def test_tiled_gemm_intensity_tends_to_T_over_2_per_byte_and_T_per_element():
    k = only(load(EX / "tiled_gemm.cost").analyze())
    T = next(s for s in k.intensity.free_symbols if s.name == "T")
    assert k.cost.tiling.limit_per_element == T          # 2·T·T/(T + T)
    assert k.cost.tiling.limit == T / 2                  # per byte of fp16
    K = sympy.Symbol("K", positive=True)
    # I(T) = K·T/(2K + T) (derived in the file's header) tends to T/2 as K → ∞
    assert sympy.limit(K * T / (2 * K + T), K, sympy.oo) == T / 2


def test_smallest_compute_bound_tile_and_whether_it_fits():
    # I(T) = 4096·T/(8192 + T) ≥ I* = 19790/67  ⇔  T ≥ 19790·8192/(4096·67 − 19790) = 81059840/127321
    a = load(EX / "tiled_gemm.cost").analyze()
    star, fits = a.solves
    assert star.values[0] == R(81059840, 127321)
    assert sympy.ceiling(R(81059840, 127321)) == 637
    # 8·T² ≤ 233472 ⇔ T ≤ sqrt(29184) = 16·sqrt(114) ≈ 170.8 < 637: the T* tile does not fit
    assert fits.values[0] == 16 * sympy.sqrt(114)
    assert 8 * 637 ** 2 > 233472


def test_tile_touching_capacity_exactly_fits():
    # 8·T² = 233472 needs T² = 29184 (not a square); with bm = bn = 96, bk = 240 on fp16:
    # 2·96·240 + 2·240·96 + 4·96·96 = 46080 + 46080 + 36864 = 129024; capacity stated = 129024 B
    text = ("hardware g : h100_sxm { memory SMEM per SM { capacity = 129024 B } }\nuse hardware g\n"
            "input A: fp16[960, 960]\ninput B: fp16[960, 960]\n"
            "C = matmul(A, B) { bm = 96; bn = 96; bk = 240 }\n")
    a = load_string(text).analyze()
    t = only(a).cost.tiling
    assert (t.working_set, t.capacity) == (129024, 129024)
    from costlang.printers.text.report import report
    assert "per SM: fits" in report(a)


def test_l2_resident_operand_crosses_hbm_once():
    a = load(EX / "l2_resident.cost").analyze()
    k = only(a)
    # HBM: 32·|X| + |W| + |C| = 32·67108864 + 33554432 + 67108864
    assert a.value(level(k, "HBM").bytes) == 2248146944 == a.value(k.bytes)
    # L2: 32·|X| + 64·|W| + |C|
    assert a.value(level(k, "L2").bytes) == 4362076160
    assert k.cost.tiling.held == (("W", "L2"),)
    # HBM 2248146944/2.039e12 ≈ 1.103 ms > T_compute 2·8192·4096²/312e12 ≈ 881 µs > L2 604.2 µs
    # (L2 7.2192 TB/s = 5120 B/clock × 1.41 GHz, A100 whitepaper)
    assert k.level == "HBM" and k.bound.bound == "memory-bound"
    assert a.value(level(k, "L2").t_memory) == R(4362076160, 72192 * 10 ** 8)


def test_tiling_options_are_checked():
    base = "use hardware h100_sxm\ninput A: fp16[64, 64]\ninput B: fp16[64, 64]\n"
    with pytest.raises(CostlangError, match="all of bm, bn and bk"):
        load_string(base + "C = matmul(A, B) { bm = 16 }")
    with pytest.raises(CostlangError, match="whole number"):
        load_string(base + "C = matmul(A, B) { tile = 0.5 }")
    with pytest.raises(CostlangError, match="tiling is for matmuls"):
        load_string(base + "C = add(A, B) { tile = 16 }")


# --- FlashAttention ----------------------------------------------------------------------

@pytest.mark.parametrize("M, expected", [
    # M = 262144 elements: Bc = ⌈262144/256⌉ = 1024 = N, Tc = 1: the ideal 4·N·d·b·heads
    (262144, 536870912),
    # H100 228 KiB in fp16 = 116736: Bc = 456, Tc = ⌈1024/456⌉ = 3:
    # 2·65536·(3·3 + 1)·1024 + 16·(1024·1024)·2 = 1342177280 + 33554432
    (116736, 1375731712),
    # 64 KiB = 32768 elements, C = 65536 B: ⌈M/(4d)⌉ = 128, but B_c = 128, B_r = 64 need
    # 2·(2·128·64 + 2·64·64 + 64·128) + 8·64 = 66048 B > 65536; the largest that fits:
    # ⌊(65536 − 2·2·64² − 8·64)/(3·2·64)⌋ = ⌊48640/384⌋ = 126, Tc = ⌈1024/126⌉ = 9:
    # 2·65536·(3·9 + 1)·1024 + 16·1048576·8 = 3758096384 + 134217728
    (32768, 3892314112),
])
def test_flash_traffic_follows_the_tiling(M, expected):
    a = load(EX / "flash_attention.cost").analyze(settings={"M": M})
    assert a.value(only(a).bytes) == expected


def test_flash_vs_standard_and_ideal_in_the_papers_setting():
    a = load(EX / "flash_attention.cost").analyze(settings={"M": 116736})
    q = {x.name: a.value(x.value.expr) for x in a.queries}
    # standard: b·(4·N·d + 4·N²) per head = 2·(262144 + 4194304) = 8912896, × 1024 heads
    assert q["standard"] == 9126805504
    assert q["ideal"] == 536870912
    k = only(a)
    assert k.ops == ("S", "P", "O")
    assert a.value(k.cost.tiling.working_set) < 233472           # the blocks fit in 228 KiB


@pytest.mark.parametrize("capacity, d, expected", [
    # the H100's 228 KiB = 233472 B, d = 128, bf16: ⌈116736/512⌉ = 228 blocks need
    # 2·(2·228·128 + 2·128·128 + 128·228) + 8·128 = 241664 B; the working set with B_r = d is
    # 2·128·(3·B_c + 256) + 1024 ≤ 233472 ⇔ B_c ≤ 166912/768 = 217.33: B_c = 217
    (233472, 128, (217, 128, "rows_d")),
    # capacity met exactly: 2·(2·217·128 + 2·128² + 128·217) + 1024 = 233216 fits; one byte less, 216
    (233216, 128, (217, 128, "rows_d")),
    (233215, 128, (216, 128, "rows_d")),
    # d = 256, C = 102400 B: B_c = B_r = d needs 5·2·256² + 8·256 = 657408 B, so B_r = B_c = B with
    # 2·B² + (4·2·256 + 8)·B ≤ 102400: B = 47 (101050 B); 48 needs 103296 B
    (102400, 256, (47, 47, "square")),
    # size 1: B_c = B_r = 1 at d = 128 needs 2·(2·128 + 2·128 + 1) + 8 = 1034 B
    (1034, 128, (1, 1, "square")),
    (1033, 128, (None, None, None)),
])
def test_flash_blocks_are_the_largest_that_fit(capacity, d, expected):
    from costlang.analysis.reuse import flash_blocks, flash_working_set
    bc, br, rule = flash_blocks(capacity, d, 2)
    assert (bc, br, rule) == expected
    if bc is not None:
        assert flash_working_set(bc, br, d, 2) <= capacity < flash_working_set(bc + 1, min(bc + 1, d), d, 2)


def test_flash_blocks_of_a_symbolic_capacity_agree_with_the_numbers():
    from costlang.analysis.reuse import flash_blocks
    C = sympy.Symbol("C", positive=True, integer=True)
    bc, _, rule = flash_blocks(C, 128, 2)
    # one expression for both regimes (the larger of the linear and the square bound); at the
    # numbers above: 217 (233472 B), 216 (233215 B), 1 (1034 B), and across the switch at
    # 5·2·128² + 8·128 = 164864 B (B_c = B_r = 128 exactly) and one byte below it (127)
    assert rule == "either"
    assert [bc.subs(C, c) for c in (233472, 233215, 1034, 164864, 164863)] == [217, 216, 1, 128, 127]


def test_flash_traffic_falls_toward_the_ideal_as_M_grows():
    m = load(EX / "flash_attention.cost")
    values = [m.analyze(settings={"M": M}) for M in (16384, 32768, 65536, 131072, 262144, 524288)]
    traffic = [a.value(only(a).bytes) for a in values]
    assert traffic == sorted(traffic, reverse=True) and traffic[-1] == traffic[-2] == 536870912
    # leading term 3·|Q|·4·d·N/M (|Q| = 134217728 B): Θ(N²d²/M), halves when M doubles
    t = only(values[0]).cost.tiling
    assert values[0].value(t.theta) == 3 * 134217728 * 4 * 64 * 1024 // 16384


def test_flash_without_on_chip_capacity_is_an_error():
    text = ("use hardware chapter_gpu\ninput Q: fp16[8, 4]\ninput K: fp16[8, 4]\ninput V: fp16[8, 4]\n"
            "Kt = transpose(K)\nS = matmul(Q, Kt)\nP = softmax(S)\nO = matmul(P, V)\n")
    with pytest.raises(CostlangError, match="on-chip capacity"):
        load_string(text).analyze(fusion="flash")


def test_a_chain_whose_scores_are_read_elsewhere_is_not_fused():
    # S is also a program output: it must reach HBM, so there is no flash kernel
    text = ("use hardware h100_sxm\ninput Q: fp16[8, 4]\ninput K: fp16[8, 4]\ninput V: fp16[8, 4]\n"
            "Kt = transpose(K)\nS = matmul(Q, Kt)\nP = softmax(S)\nO = matmul(P, V)\noutput S\n")
    a = load_string(text).analyze(fusion="flash")
    assert [k.ops for k in a.kernels] == [("S",), ("P",), ("O",)]


# --- compute units and efficiency ------------------------------------------------------------

def test_vector_add_uses_the_vector_peak():
    a = load(EX / "vector_peaks.cost").analyze()
    y, Z = a.kernels
    assert a.value(y.critical_intensity) == 10           # 33.5 / 3.35 at the 1.98 GHz boost clock
    assert a.value(Z.critical_intensity) == R(19790, 67)  # 989.5 / 3.35: the matrix peak
    assert a.value(y.t_compute) == R(2 ** 24, 335 * 10 ** 11)


def test_plain_peak_is_the_matrix_peak_and_vector_falls_back_to_it():
    # chapter_gpu states only `peak fp16`: an fp16 add still has I* = 1000/2 = 500 (as both lecture documents assume)
    a = load_string("use hardware chapter_gpu\ninput a: fp16[8]\ny = relu(a)").analyze()
    assert a.value(only(a).critical_intensity) == 500


def test_efficiency_applies_once():
    # hardware factor 0.5 on compute: T_compute = 2·64³/(0.5·1000e12); peak() stays raw
    text = ('hardware h : chapter_gpu { efficiency compute = 0.5 "assumed" }\nuse hardware h\n'
            "input A: fp16[64, 64]\ninput B: fp16[64, 64]\nC = matmul(A, B)\n"
            "query p = peak(fp16)\nquery tc = t_compute(C)\n")
    a = load_string(text).analyze()
    q = {x.name: a.value(x.value.expr) for x in a.queries}
    assert q["p"] == 10 ** 15
    assert q["tc"] == R(2 * 64 ** 3, 5 * 10 ** 14)
    # a kernel's own factor replaces the hardware's (0.8, not 0.5 × 0.8)
    b = load_string(text.replace("C = matmul(A, B)", "C = matmul(A, B) { efficiency_compute = 0.8 }")).analyze()
    assert b.value(only(b).t_compute) == R(2 * 64 ** 3, 8 * 10 ** 14)
    # I* = 0.8·1e15 / 2e12 = 400
    assert b.value(only(b).critical_intensity) == 400


def test_equal_kernels_share_figures_but_keep_their_own_efficiency():
    # Two matmuls equal in shape, dtype and FLOPs share their figures (analysis.roofline), but a
    # factor an op states names that op, so each kernel's must name its own: C and D each
    # 2·64³ FLOPs at 0.8·1e15 FLOP/s; E states none and gets the hardware's raw peak, 1e15.
    text = ("use hardware chapter_gpu\ninput A: fp16[64, 64]\ninput B: fp16[64, 64]\n"
            "C = matmul(A, B) { efficiency_compute = 0.8 }\nD = matmul(A, B) { efficiency_compute = 0.8 }\n"
            "E = matmul(A, B)\n")
    a = load_string(text).analyze(fusion="none")
    c, d, e = a.kernels
    assert c.compute_efficiency.where == "kernel:C" and d.compute_efficiency.where == "kernel:D"
    assert e.compute_efficiency is None
    assert a.value(c.t_compute) == a.value(d.t_compute) == R(2 * 64 ** 3, 8 * 10 ** 14)
    assert a.value(e.t_compute) == R(2 * 64 ** 3, 10 ** 15)


def test_efficiency_must_be_a_fraction():
    with pytest.raises(CostlangError, match=r"in \(0, 1\]"):
        load_string('hardware h : chapter_gpu { efficiency HBM = 1.5 }')
    with pytest.raises(CostlangError, match="unknown efficiency"):
        load_string('hardware h : chapter_gpu { efficiency L3 = 0.5 }')


def test_efficiency_of_exactly_one_changes_nothing():
    text = "use hardware h\ninput a: fp16[1024]\ny = relu(a)\n"
    plain = load_string("hardware h : chapter_gpu {}\n" + text).analyze()
    one = load_string("hardware h : chapter_gpu { efficiency HBM = 1 }\n" + text).analyze()
    assert plain.value(only(plain).t_memory) == one.value(only(one).t_memory) == R(4096, 2 * 10 ** 12)


# --- access granularity ----------------------------------------------------------------------

def test_uncoalesced_read_costs_whole_sectors():
    a = load(EX / "uncoalesced.cost").analyze()
    xt, y = a.kernels
    assert a.value(xt.bytes) == 4096 ** 2 * 32 + 4096 ** 2 * 4          # 603979776
    assert a.value(xt.algorithmic_bytes) == 2 * 4096 ** 2 * 4           # 134217728
    assert a.value(y.bytes) == 134217728
    # effective bandwidth = 3.35e12 · 134217728/603979776 = 3.35e12 · 2/9
    q = {x.name: a.value(x.value.expr) for x in a.queries}
    assert q["effective"] == R(335, 100) * 10 ** 12 * R(2, 9)


@pytest.mark.parametrize("stride, per_element", [(1, 4), (2, 8), (8, 32), (9, 32)])
def test_stride_boundaries(stride, per_element):
    # fp32: min(S·4, 32) bytes per element read; S = 8 is exactly one sector per element
    a = load_string(f"use hardware h100_sxm\ninput x: fp32[16]\ny = copy(x) {{ stride = {stride} }}").analyze()
    assert a.value(only(a).cost.reads[0].bytes) == 16 * per_element


# --- hierarchy, verdicts and printers --------------------------------------------------------

def test_levels_are_a_list_farthest_first_and_per_sm_levels_scale():
    hw = load_string("use hardware h100_sxm").program.hardware["h100_sxm"]
    assert [m.name for m in hw.memories] == ["HBM", "SMEM"]
    smem = hw.level("SMEM")
    assert smem.per_sm and hw.chip_bandwidth(smem) == 132 * R(25344, 100) * 10 ** 9


def test_per_sm_level_needs_an_sm_count():
    with pytest.raises(CostlangError, match="no SM count"):
        load_string("hardware h : chapter_gpu { memory SMEM per SM { bandwidth = 1 TB/s } }")


def test_an_l2_bound_kernel_says_so():
    # L2 at 1 TB/s below HBM's 2 TB/s: the same bytes take longest at L2
    text = ("hardware h : chapter_gpu { memory L2 { bandwidth = 1 TB/s; capacity = 1 MB } }\n"
            "use hardware h\ninput a: fp16[1024]\ny = relu(a)\n")
    a = load_string(text).analyze()
    k = only(a)
    assert k.level == "L2" and a.value(k.t_memory) == R(4096, 10 ** 12)
    from costlang.printers.text.report import report
    assert "L2-bound" in report(a)


def test_one_level_hardware_keeps_the_plain_verdict():
    a = load_string("use hardware chapter_gpu\ninput a: fp16[8]\ny = relu(a)").analyze()
    assert only(a).level is None
    from costlang.printers.text.report import report
    assert "memory-bound" in report(a) and "HBM-bound" not in report(a)


def test_json_has_levels_and_tiling():
    a = load(EX / "l2_resident.cost").analyze()
    k = json.loads(to_json(a))["kernels"][0]
    assert k["level"] == "HBM" and k["algorithmic_bytes"] == 167772160
    assert [(x["level"], x["bytes"]) for x in k["levels"]] == [
        ("HBM", 2248146944), ("L2", 4362076160), ("SMEM", 4362076160)]
    assert k["tiling"]["kind"] == "matmul" and k["tiling"]["held"] == [["W", "L2"]]


def test_derivation_shows_levels_tiling_and_the_T_over_2():
    from costlang.printers.derivation.markdown import MarkdownPrinter
    a = load(EX / "tiled_gemm.cost").analyze()
    text = MarkdownPrinter().doprint(a)
    assert r"T_{\mathrm{memory}}^{(\mathrm{HBM})}" in text and r"T_{\mathrm{memory}}^{(\mathrm{SMEM})}" in text
    assert r"I_{K \to \infty}^{(\mathrm{element})}" in text and r"&= \frac{T}{2}\,\mathrm{FLOP/B}" in text
    assert "“I ≈ T”" in text


def test_flash_derivation_shows_block_sizes_and_theta():
    from costlang.printers.derivation.markdown import MarkdownPrinter
    a = load(EX / "flash_attention.cost").analyze(settings={"M": 116736})
    text = MarkdownPrinter({"lang": "ko"}).doprint(a)
    assert r"\left\lceil{\frac{116\,736}{4 \cdot 64}}\right\rceil" in text and "&= 456" in text
    assert "Θ(N²·d²/M)" in text


def test_plot_draws_one_ceiling_per_level(tmp_path):
    pytest.importorskip("matplotlib")
    from costlang.printers.plot import roofline
    a = load(EX / "l2_resident.cost").analyze()
    ax = roofline([a]).figure.axes[0]
    names = [line.get_label() for line in ax.get_lines()]
    assert any(n.startswith("HBM 2.039 TB/s") or n.startswith("HBM 2.04") for n in names)
    assert any(n.startswith("L2") for n in names) and any(n.startswith("SMEM 19.") for n in names)
