"""What the benchmark checks besides time: the fast paths changed no answer, and answers are exact.

- The unrolled transformer's total FLOPs are the hand-derived count, exactly, at L = 1 and L = 8.
- Every scenario of a compare (which reuses the baseline's kernels and costs) gives exactly the
  totals of a fresh analysis of the same program with every cache emptied.
- A 10⁶-point sweep agrees with exact evaluation at sampled points (to float rounding).
"""
from __future__ import annotations

import math

import sympy

from .transformer import transformer

B, S, D, H, DH, F = 1, 4096, 8192, 64, 128, 28672


def layer_flops(b: int = B, s: int = S) -> int:
    """One layer's FLOPs, by hand (2 FLOP per multiply-accumulate; stdlib FLOPs per element):
    projections q, k, v, o: 4·2·b·s·D²; scores and attention·V: 2·2·b·H·s²·Dh; gated MLP: 3·2·b·s·D·F;
    two rmsnorms 2·4·bsD, their scales 2·bsD, biases 5·bsD + 2·bsF, rotary 6·bsD, residuals 2·bsD
    (23·bsD in all), silu 5·bsF and the gate product bsF (with the biases 8·bsF), scale, mask and
    softmax 1 + 1 + 5 per score (7·b·H·s²)."""
    return (8 * b * s * D * D + 4 * b * H * s * s * DH + 6 * b * s * D * F
            + 23 * b * s * D + 8 * b * s * F + 7 * b * H * s * s)


def run_checks() -> list[str]:
    from costlang import load_string
    from costlang.analysis import memo, shared
    from costlang.queries.whatif import scenario_analysis
    from costlang.frontend.settings import parse_settings
    from costlang.budget import limit
    failures = []
    with limit(1000):
        for layers in (1, 8):
            a = load_string(transformer(layers)).analyze()
            flops = a.value(a.totals.flops)
            if flops != layers * layer_flops() or not isinstance(flops, sympy.Integer):
                failures.append(f"L={layers}: FLOPs {flops} != {layers} × {layer_flops()}")
            t = a.value(a.totals.t_kernel)
            if not isinstance(t, sympy.Rational):
                failures.append(f"L={layers}: T_kernel {t} is not an exact rational")
        base = load_string(transformer(8)).analyze()
        for b in (1, 64, 2048):
            settings = parse_settings(f"B = {b}")
            shared_path = scenario_analysis(base, settings)
            memo.clear(), shared.clear()
            fresh = load_string(transformer(8).replace("dim B = 1,", f"dim B = {b},")).analyze()
            for name in ("flops", "bytes", "t_compute", "t_memory", "t_kernel"):
                x, y = (an.value(getattr(an.totals, name)) for an in (shared_path, fresh))
                if sympy.simplify(x - y) != 0:
                    failures.append(f"scenario B={b}: {name} {x} != fresh analysis {y}")
            if [k.name for k in shared_path.kernels] != [k.name for k in fresh.kernels]:
                failures.append(f"scenario B={b}: kernels differ from a fresh analysis")
        failures += _sweep_check()
    return failures


def _sweep_check() -> list[str]:
    from pathlib import Path
    from costlang import load
    from costlang.queries.sweep import parse_axis, sweep
    a = load(Path(__file__).resolve().parent.parent / "examples/queries/llm_decode_batch.cost").analyze()
    axes = [parse_axis(a.program, "B=1..1000:lin:1000"), parse_axis(a.program, "S=1..1000:lin:1000")]
    sw = sweep(a, axes, ["tokens/s"])
    out = []
    for i in (0, 499_999, 500_000, 999_999):
        b = int(sw.grid[0][i])
        # tokens/s = B / max(P·b/BW, 2·P·B/peak) = min(B·100/7, 50000/7) (the file's header)
        exact = min(sympy.Rational(100 * b, 7), sympy.Rational(50000, 7))
        if not math.isclose(float(sw.columns[0][i]), float(exact), rel_tol=1e-12):
            out.append(f"sweep point {i} (B={b}): {sw.columns[0][i]} != {exact}")
    return out
