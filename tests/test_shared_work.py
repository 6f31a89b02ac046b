"""Work shared between analyses (issue 10): scenarios reuse the baseline's kernels and costs and
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
from costlang.analysis.whatif import parse_settings, scenario_analysis

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
