"""The structured verdict (analysis.verdict, analysis.regimes) and its words (printers.verdicts):
balanced at I = I*, launch-bound at equality, touching roots, launch regimes in the totals,
conditions on several symbols, thresholds that stay true when rounded, JSON intervals."""
import json

import sympy
from sympy import Rational as R

from costlang import load_string
from costlang.analysis.verdict import Bound
from costlang.cli import main
from costlang.printers.data.json import to_dict
from costlang.printers.text.report import report
from costlang.printers.words.verdicts import threshold, verdict_words as words

# chapter_gpu: 1000 TFLOP/s fp16, 2 TB/s, so I* = 500 FLOP/B
CHAPTER = "use hardware chapter_gpu\n"
# h100_sxm (3.35 TB/s) with a stated 5 µs launch; relu on fp16[N] moves 4N B:
# T_memory = 4N / 3.35e12 = 5e-6 exactly at N = 5e-6 · 3.35e12 / 4 = 4187500
RELU = "hardware h : h100_sxm {{ launch = 5 us }}\nuse hardware h\n{dim}\ninput x: fp16[N]\ny = relu(x)\n"
# a cubic with a double root at 100 and a single one at 400: I − I* = (flops − 500·bytes)/bytes with bytes = n³ + 10⁷ and
# flops − 500·(n³ + 10⁷) = n³ − 600n² + 90000n − 4·10⁶ = (n − 100)²·(n − 400)
CUBIC = (CHAPTER + "dim n{value}\ninput x: fp16[n]\ny = custom(x) {{ flops = 501*n^3 - 600*n^2 + 90000*n "
         "+ 4996000000; reads = n^3; writes = 10^7 }}\n")


def analyze(text):
    return load_string(text, "t.cost").analyze()


def test_intensity_equal_to_the_critical_intensity_is_balanced():
    # GEMM n = 1500 fp16: I = 2n³ / (3 · 2n²) = n/3 = 500 = I* exactly
    a = analyze(CHAPTER + "dim n = 1500\ninput A: fp16[n, n]\ninput B: fp16[n, n]\nC = matmul(A, B)\n")
    (k,) = a.kernels
    assert a.value(k.intensity) == 500 and k.critical_intensity == 500
    assert k.bound.bound == Bound.BALANCED and a.totals.bound.bound == Bound.BALANCED
    assert to_dict(a)["kernels"][0]["bound"] == {"bound": "balanced"}
    assert report(a).count("  balanced") == 1 and "compute-bound" not in report(a)


def test_launch_bound_needs_the_launch_strictly_larger():
    at = analyze(RELU.format(dim="dim N = 4187500"))
    (k,) = at.kernels
    assert at.value(k.t_memory) == R(5, 10 ** 6) == k.launch          # equal: the roofline verdict stands
    assert k.bound.bound == Bound.MEMORY and at.totals.bound.bound == Bound.MEMORY
    below = analyze(RELU.format(dim="dim N = 4187499"))
    assert below.kernels[0].bound.bound == Bound.LAUNCH == below.totals.bound.bound


def test_the_totals_keep_the_launch_regime_with_a_free_size():
    a = analyze(RELU.format(dim="dim N"))
    for v in (a.kernels[0].bound, a.totals.bound):
        assert words(v) == "launch-bound when N < 4187500, else HBM-bound"
        low, high = v.regimes
        assert (low.interval.lower, low.interval.upper, low.interval.upper_closed) == (0, 4187500, False)
        assert (high.interval.lower, high.interval.lower_closed, high.bound) == (4187500, True, Bound.MEMORY)
        assert v.at(4187499) == Bound.LAUNCH and v.at(4187500) == Bound.MEMORY


def test_a_touching_root_is_a_balanced_point_not_a_change_of_bound():
    v = analyze(CUBIC.format(value="")).kernels[0].bound
    assert [(r.interval.lower, r.interval.upper, r.bound) for r in v.regimes] == [
        (0, 100, Bound.MEMORY), (100, 100, Bound.BALANCED), (100, 400, Bound.MEMORY),
        (400, 400, Bound.BALANCED), (400, sympy.oo, Bound.COMPUTE)]
    assert v.at(99) == v.at(399) == Bound.MEMORY and v.at(401) == Bound.COMPUTE
    # the touching root n = 100 does not change the bound: one memory-bound interval n < 400 that notes
    # both balanced points (the touching root and the crossing that ends it), then compute-bound
    assert words(v) == "memory-bound when n < 400 (balanced at n = 100 and n = 400), else compute-bound"
    assert words(v, "ko") == "n < 400이면 메모리 바운드 (n = 100 그리고 n = 400에서 균형), 아니면 연산 바운드"
    assert analyze(CUBIC.format(value=" = 100")).kernels[0].bound.bound == Bound.BALANCED
    assert analyze(CUBIC.format(value=" = 399")).kernels[0].bound.bound == Bound.MEMORY


def test_positive_factors_cancel_so_the_verdict_is_solved_for_one_symbol():
    # I = 1000·B·T² / (961·B·T) = 1000·T/961 = 500 at T = 961/2 = 480.5 (B cancels)
    a = analyze(CHAPTER + "dim B\nparam T\ninput x: fp16[B, T]\n"
                "y = custom(x) { flops = 1000*B*T^2; reads = 961*B*T; writes = 0 }\n")
    v = a.kernels[0].bound
    assert v.symbol.name == "T" and v.regimes[1].interval.lower == R(961, 2)
    assert words(v) == "memory-bound when T < 480.5, balanced at T = 480.5, else compute-bound"
    assert to_dict(a)["kernels"][0]["bound"]["regimes"][0] == {
        "lower": 0, "upper": 480.5, "lower_closed": False, "upper_closed": False, "bound": "memory-bound"}


def test_several_free_symbols_give_structured_relations():
    # I = 2MNK / (2(MK + KN + MN)) < 500 ⇔ 500·(KM + KN + MN) > KMN
    a = analyze(CHAPTER + "dim M, N, K\ninput x: fp16[M, K]\nweight w: fp16[K, N]\ny = matmul(x, w)\n")
    v = a.kernels[0].bound
    M, N, K = (a.program.symbols[s].symbol for s in "MNK")
    memory, balanced, compute = v.conditions
    assert memory.bound == Bound.MEMORY and memory.relations == (
        sympy.StrictGreaterThan(500 * K * M + 500 * K * N + 500 * M * N, K * M * N),)
    assert balanced.bound == Bound.BALANCED and (compute.bound, compute.relations) == (Bound.COMPUTE, ())
    assert words(v) == ("memory-bound when 500·K·M + 500·K·N + 500·M·N > K·M·N, balanced when "
                        "500·K·M + 500·K·N + 500·M·N = K·M·N, else compute-bound")
    assert to_dict(a)["kernels"][0]["bound"]["conditions"][0]["relations"] == [
        {"lhs": "500*K*M + 500*K*N + 500*M*N", "op": ">", "rhs": "K*M*N"}]


def test_a_rounded_threshold_keeps_the_statement_true():
    # I = T³ / (2T) = T²/2 = 500 at T = √1000 = 31.6227…: rounded down below, up above
    text = CHAPTER + "{kind} T\ninput x: fp16[T]\ny = custom(x) {{ flops = T^3; reads = 2*T; writes = 0 }}\n"
    v = analyze(text.format(kind="param")).kernels[0].bound
    assert words(v) == "memory-bound when T < 31.62, balanced at T ≈ 31.62, compute-bound when T > 31.63"
    # a whole-number T: T < 31.62… is T ≤ 31, and no whole T is balanced
    assert words(analyze(text.format(kind="dim")).kernels[0].bound) == "memory-bound when T ≤ 31, else compute-bound"
    assert threshold(R(4008, 25)) == ("160.32", True)          # a terminating decimal stays exact
    assert threshold(100 * sympy.sqrt(2), -1) == ("141.4", False)
    assert threshold(100 * sympy.sqrt(2), +1) == ("141.5", False)


def test_json_verdicts_are_structured(tmp_path, capsys):
    path = tmp_path / "t.cost"
    path.write_text(RELU.format(dim="dim N"), encoding="utf-8")
    assert main(["run", "--json", str(path)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["totals"]["bound"] == {"bound": "depends", "level": "HBM", "symbol": "N", "regimes": [
        {"lower": 0, "upper": 4187500, "lower_closed": False, "upper_closed": False, "bound": "launch-bound"},
        {"lower": 4187500, "upper": "inf", "lower_closed": True, "upper_closed": False, "bound": "memory-bound"}]}


def test_a_program_without_flops_reads_its_kernels_critical_intensity():
    # a copy of fp16[1000] on h100_sxm: 0 FLOP, runs on the vector units, so its I* is the
    # fp16 vector peak over the bandwidth, 66.9e12 / 3.35e12 = 1338/67 ≈ 19.97 — the program's too,
    # not the first declared peak's (fp64: 67e12 / 3.35e12 = 20)
    a = analyze("use hardware h100_sxm\ndim N = 1000\ninput x: fp16[N]\ny = copy(x)\n")
    assert a.kernels[0].critical_intensity == R(1338, 67) == a.totals.critical_intensity
    assert a.totals.bound.bound == Bound.MEMORY


def test_a_kernel_without_flops_needs_no_peak():
    # note_virtual states only fp32 (20 TFLOP/s, 1 TB/s); a cast from fp16 computes nothing: it runs
    # unfused too, T_compute = 0, T_memory = (2 + 4)·1000 B / 1e12 B/s = 6 ns, memory-bound
    m = load_string("use hardware note_virtual\ndim N = 1000\ninput x: fp16[N]\ny = cast(x) as fp32\n", "t.cost")
    for fusion in ("none", "elementwise"):
        a = m.analyze(fusion=fusion)
        (k,) = a.kernels
        assert k.t_compute == 0 and a.value(k.t_memory) == R(6, 10 ** 9) and k.bound.bound == Bound.MEMORY


def test_a_whole_number_threshold_and_a_short_decimal_are_exact():
    # I = 12500·B / 4008 = 500 at B = 4008/25 = 160.32: a dim says B ≤ 160 (true: B = 160 is memory-bound),
    # a param says the exact decimal
    text = CHAPTER + "{kind} B\ninput x: fp16[4]\ny = custom(x) {{ flops = 12500*B; reads = 4008; writes = 0 }}\n"
    dim = analyze(text.format(kind="dim")).kernels[0].bound
    assert words(dim) == "memory-bound when B ≤ 160, else compute-bound"
    assert dim.at(160) == Bound.MEMORY and dim.at(161) == Bound.COMPUTE
    param = analyze(text.format(kind="param")).kernels[0].bound
    assert words(param) == "memory-bound when B < 160.32, balanced at B = 160.32, else compute-bound"


LAUNCH_FOUR_FREE = ("hardware mine : chapter_gpu { launch = 5 us }\nuse hardware mine\ndim B, H, N, T\n"
                    "input a: fp16[B, H, N, T]\nk = custom(a) -> fp16[1] { flops = 1000*B*H*N*T^2/961; "
                    "reads = B*H*N*T; writes = 0; math = fp16 }\nquery bound(k)\nquery bound()\n")


def test_a_launch_with_several_free_sizes_is_conditions_without_raw_sympy():
    # chapter_gpu: 1000 TFLOP/s fp16, 2 TB/s; launch 5 µs = 1/200000 s.
    # T_compute = (1000·BHNT²/961)/1e15 = BHNT²/961e12; T_memory = BHNT/2e12.
    # memory-bound ⇔ BHNT/2e12 > BHNT²/961e12 ⇔ T < 961/2 = 480.5 ⇔ T ≤ 480 (T a whole number, and
    # no whole T is balanced). Launch-bound ⇔ 1/200000 > both: BHNT < 1e7 and BHNT² < 961e12/2e5 = 4.805e9
    # (the program's launch > max(T_compute, T_memory) splits into the same two relations).
    a = analyze(LAUNCH_FOUR_FREE)
    B, H, N, T = (a.program.symbols[s].symbol for s in "BHNT")
    v = a.kernels[0].bound
    launch, memory, compute = v.conditions
    assert launch.bound == Bound.LAUNCH and set(launch.relations) == {
        sympy.StrictGreaterThan(4805000000, B * H * N * T ** 2), sympy.StrictGreaterThan(10000000, B * H * N * T)}
    assert memory.relations == (sympy.StrictLessThan(T, R(961, 2)),) and compute.bound == Bound.COMPUTE
    text = report(a)
    assert "memory-bound when T ≤ 480, else compute-bound" in text
    for banned in ("Max(", "False", "True", "**"):
        assert banned not in text
    totals = [c.bound for c in a.totals.bound.conditions]
    assert totals == [Bound.LAUNCH, Bound.MEMORY, Bound.COMPUTE]
    relations = to_dict(a)["kernels"][0]["bound"]["conditions"][1]["relations"]
    assert relations == [{"lhs": "T", "op": "<", "rhs": "961/2"}]


# Sizes the shapes allow: a free dim is a whole number ≥ 1, and fp16[N - 10] needs N − 10 ≥ 1, N ≥ 11.
def test_a_verdict_speaks_only_of_sizes_the_shapes_allow():
    # relu on fp16[N - 10], h100_sxm (no launch overhead): T_compute = (N − 10)/66.9e12,
    # T_memory = 4·(N − 10)/3.35e12 > T_compute for every N > 10; below N = 10 both are negative
    # (the sign flips: "compute-bound when N < 10"), a size no program can have
    a = analyze("use hardware h100_sxm\ndim N\ninput x: fp16[N - 10]\ny = relu(x)\n")
    for v in (a.kernels[0].bound, a.totals.bound):
        assert v.bound == Bound.MEMORY and v.regimes == () and words(v) == "HBM-bound"


def test_the_first_allowed_regime_starts_at_the_least_size():
    # bytes = N², flops = 500·N² + (N − 10)·(N − 500): I − I* = (N − 10)·(N − 500)/N², compute-bound
    # below 10, memory-bound between 10 and 500, compute-bound above; with fp16[N - 10] only N ≥ 11
    body = ("use hardware chapter_gpu\ndim N\ninput x: fp16[{size}]\ny = custom(x) -> fp16[{size}] "
            "{{ flops = 501*N^2 - 510*N + 5000; reads = N^2; writes = 0; math = fp16 }}\n")
    v = analyze(body.format(size="N - 10")).kernels[0].bound
    assert [(r.interval.lower, r.interval.lower_closed, r.interval.upper, r.bound) for r in v.regimes] == [
        (11, True, 500, Bound.MEMORY), (500, True, 500, Bound.BALANCED), (500, False, sympy.oo, Bound.COMPUTE)]
    assert words(v) == "memory-bound when 11 ≤ N < 500, balanced at N = 500, else compute-bound"
    # the same kernel on fp16[N] keeps every regime of N ≥ 1
    free = analyze(body.format(size="N")).kernels[0].bound
    assert [r.bound for r in free.regimes][:3] == [Bound.COMPUTE, Bound.BALANCED, Bound.MEMORY]
    assert free.at(5) == Bound.COMPUTE and v.at(5) is None   # N = 5 is no size of the first program
