"""GEMM tile and wave quantization, pinned by hand-derived values."""
import pytest
import sympy

from costlang.analysis.tiling import gemm_waves


def test_1000_square_on_128_tiles_over_132_sms_is_64_tiles_one_wave():
    # ⌈1000/128⌉ = ⌈7.8125⌉ = 8 tiles per side → 8 · 8 = 64 tiles; ⌈64/132⌉ = 1 wave; 132 − 64 = 68 idle SMs
    w = gemm_waves(1000, 1000, 1000, sms=132)
    assert (w.tiles_m, w.tiles_n, w.tiles, w.waves, w.idle_sms) == (8, 8, 64, 1, 68)
    assert w.padded == (1024, 1024, 1000)            # M, N padded to 8 · 128; K untouched with bk = 1
    assert w.flops == 2 * 10**9
    # one wave of 132 SMs, each taking the time of one 128 × 128 × 1000 tile: 132 · 2 · 16384 · 1000
    assert w.wave_flops == 4_325_376_000
    assert w.efficiency == sympy.Rational(2 * 10**9, 4_325_376_000)
    # at 989 TFLOP/s (H100 SXM dense bf16): 4,325,376,000 / 989e12 s, above the roofline's 2e9 / 989e12
    peak = sympy.Integer(989) * 10**12
    assert w.time(peak) == sympy.Rational(4_325_376_000, 989 * 10**12)
    assert w.time(peak) > w.flops / peak


def test_exactly_132_tiles_is_one_full_wave():
    # 1536 = 12 · 128, 1408 = 11 · 128: 12 · 11 = 132 tiles = one wave, no SM idle, nothing padded
    w = gemm_waves(1536, 1408, 512, sms=132)
    assert (w.tiles, w.waves, w.idle_sms) == (132, 1, 0)
    assert w.padded == (1536, 1408, 512)
    assert w.efficiency == 1                           # the quantized time is the plain roofline's


def test_133_tiles_is_two_waves_with_131_idle():
    # 896 = 7 · 128, 2432 = 19 · 128: 7 · 19 = 133 tiles → ⌈133/132⌉ = 2 waves; 264 − 133 = 131 idle
    w = gemm_waves(896, 2432, 256, sms=132)
    assert (w.tiles, w.waves, w.idle_sms) == (133, 2, 131)
    assert w.efficiency == sympy.Rational(133, 264)


def test_k_padded_to_bk_and_size_one():
    # a 1 × 1 × 1 GEMM on 128² tiles with bk = 32: one tile, one wave, K padded to 32
    w = gemm_waves(1, 1, 1, sms=108, bk=32)
    assert (w.tiles, w.waves, w.idle_sms, w.padded) == (1, 1, 107, (128, 128, 32))
    assert w.wave_flops == 108 * 2 * 128 * 128 * 32


def test_nonpositive_rejected():
    with pytest.raises(ValueError):
        gemm_waves(0, 1, 1, sms=132)
