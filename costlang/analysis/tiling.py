"""GEMM tile and wave quantization: an optional model term, off by default.

Input: a GEMM's M, N, K, a tile bm × bn (× bk), and the chip's SM count (`sms`, which each preset
states with its whitepaper source). Output: data only — a `Waves` record.

A tiled GEMM kernel (CUTLASS, cuBLAS) gives each thread block one bm × bn output tile and runs the
K loop in steps of bk. The tiles are ⌈M/bm⌉ · ⌈N/bn⌉; at most one tile per SM runs at a time
(one CTA per SM, the usual case for large tiles), so they run in waves = ⌈tiles / SMs⌉, and the
last wave leaves waves·SMs − tiles SMs idle. The work done is that of the padded problem
(M, N, K rounded up to the tile), and the time is that of `waves` full waves of one tile each:

    T_quantized = waves · (2 · bm · bn · K_padded) / (peak / SMs)

which is ≥ 2·M·N·K / peak (the plain roofline's compute time), with equality exactly when the
tiles fill the SMs and the dims divide the tile. Because it only ever raises the compute time, the
plain roofline stays the lower bound; this term is for estimates (`costlang validate --waves`).
Exact arithmetic throughout (sympy Integers and Rationals).
"""
from __future__ import annotations

from dataclasses import dataclass

import sympy

__all__ = ["Waves", "gemm_waves"]


@dataclass(frozen=True)
class Waves:
    tiles_m: sympy.Integer
    tiles_n: sympy.Integer
    tiles: sympy.Integer
    waves: sympy.Integer
    idle_sms: sympy.Integer           # SMs idle in the last wave
    padded: tuple[sympy.Integer, sympy.Integer, sympy.Integer]   # M, N, K rounded up to the tile
    flops: sympy.Integer              # 2·M·N·K, the useful work
    padded_flops: sympy.Integer       # 2·M_p·N_p·K_p, the work the tiles do
    wave_flops: sympy.Integer         # waves · SMs · 2·bm·bn·K_p: the work the waves take the time of

    @property
    def efficiency(self) -> sympy.Expr:
        """Useful work over the work the waves take time for (1 when nothing is wasted)."""
        return sympy.Rational(self.flops, self.wave_flops)

    def time(self, peak: sympy.Expr) -> sympy.Expr:
        """The quantized compute time at the chip's peak (FLOP/s): waves of full tiles."""
        return self.wave_flops / peak


def _ceil_div(a: sympy.Integer, b: sympy.Integer) -> sympy.Integer:
    return sympy.Integer(-(-int(a) // int(b)))


def gemm_waves(m, n, k, sms, bm=128, bn=128, bk=1) -> Waves:
    """Tiles, waves and padding of an M × N × K GEMM on bm × bn (× bk) tiles over `sms` SMs."""
    m, n, k, sms, bm, bn, bk = (sympy.Integer(x) for x in (m, n, k, sms, bm, bn, bk))
    if min(m, n, k, sms, bm, bn, bk) < 1:
        raise ValueError("GEMM dims, tile sizes and the SM count must be positive integers")
    tm, tn = _ceil_div(m, bm), _ceil_div(n, bn)
    kp = _ceil_div(k, bk) * bk
    tiles = tm * tn
    waves = _ceil_div(tiles, sms)
    return Waves(tm, tn, tiles, waves, waves * sms - tiles, (tm * bm, tn * bn, kp),
                 2 * m * n * k, 2 * tm * bm * tn * bn * kp, waves * sms * 2 * bm * bn * kp)
