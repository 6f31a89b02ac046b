"""Work shared between analyses: scenarios reuse the baseline's kernels and costs and
still give exactly what a fresh analysis gives.

GEMM + ReLU, fp16, M = K = N = 1024 on chapter_gpu (1000 TFLOP/s, 2 TB/s, launch 0), elementwise
fusion (the GEMM and the ReLU stay two kernels):
  FLOPs = 2·M·N·K + M·N;   scenario M = 2048: 2·2048·1024·1024 + 2048·1024 = 4297064448.
  bytes: GEMM reads x 2MK and w 2KN and writes c 2MN; ReLU reads c 2MN and writes y 2MN:
  2MK + 2KN + 6MN = 2·2048·1024 + 2·1024·1024 + 6·2048·1024 = 18874368 at M = 2048.
"""
import sympy

from costlang import load_string
from costlang.analysis import memo, shared
from costlang.queries.whatif import scenario_analysis
from costlang.frontend.settings import parse_settings

GEMM = """use hardware chapter_gpu
dim M = 1024, K = 1024, N = 1024
input x: fp16[M, K]
weight w: fp16[K, N]
c = matmul(x, w)
output y = relu(c)
"""


def test_a_scenario_reuses_the_kernels_and_costs_and_stays_exact():
    base = load_string(GEMM).analyze()
    scenario = scenario_analysis(base, parse_settings("M = 2048"))
    # the same cost objects: the pipeline did not run again
    assert all(a.cost is b.cost for a, b in zip(base.kernels, scenario.kernels))
    assert scenario.value(scenario.totals.flops) == 4297064448
    assert scenario.value(scenario.totals.bytes) == 18874368
    memo.clear(), shared.clear()
    fresh = load_string(GEMM.replace("dim M = 1024", "dim M = 2048")).analyze()
    for name in ("flops", "bytes", "t_compute", "t_memory", "t_kernel"):
        value = scenario.value(getattr(scenario.totals, name))
        assert isinstance(value, sympy.Rational)
        assert value == fresh.value(getattr(fresh.totals, name))
    assert [k.bound for k in scenario.kernels] == [k.bound for k in fresh.kernels]


def test_a_scenario_that_changes_a_dtype_does_not_reuse_the_costs():
    # weights = fp8 replaces the tensor objects, so the costs are computed again:
    # w is read at 1 B per element: 2MK + KN + 6MN = 2·1024² + 1024² + 6·1024² = 9·1024² = 9437184
    base = load_string(GEMM).analyze()
    scenario = scenario_analysis(base, parse_settings("weights = fp8"))
    assert scenario.kernels[0].cost is not base.kernels[0].cost
    assert scenario.value(scenario.totals.bytes) == 9437184


def test_max_min_without_comparisons_are_the_objects_sympy_builds():
    # memo builds a Max/Min unevaluated when two points of the domain order its arguments both
    # ways (sympy can then drop none): each such result must equal sympy's own, argument order
    # included; the transformer layer, sizes bound and free, gives 36 distinct Max/Min
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from benchmarks.transformer import transformer
    memo.clear(), shared.clear()
    for free in (False, True):
        load_string(transformer(1, free)).analyze()
    fast = [(kind, args, result) for kind, table in memo._TABLES.items() for args, result in table.items()
            if memo._incomparable(memo._undominated(args, kind is sympy.Max))]
    assert len(fast) >= 10
    for kind, args, result in fast:
        expected = kind(*args)
        assert type(result) is type(expected) and result.args == expected.args, (kind, args)
    # and one that is ordered both ways only at points where the sizes differ: D² against Dh·H
    B, D, Dh, H = sympy.symbols("B D Dh H", positive=True, integer=True)
    args = (B * D ** 2, B * D + B * Dh * H * 500)
    assert memo._incomparable(args) and memo.smax(*args).args == sympy.Max(*args).args
    assert not memo._incomparable((D, 2 * D)) and memo.smax(D, 2 * D) == 2 * D
