"""Language features end to end, each with a hand-checked exact value."""
import pytest
import sympy

from costlang import CostlangError, load_string
from costlang.printers.words.verdicts import verdict_words as words

R = sympy.Rational
HW = "use hardware chapter_gpu\n"


def analyze(text, **kw):
    return load_string(HW + text).analyze(**kw)


def only(a):
    (k,) = a.kernels
    return k


def test_literals_are_exact():
    a = analyze("dim N = 1e3\nparam h = 0.5\ninput x: fp16[N]\ny = relu(x)\n"
                "query q = h * 3\nquery big = 70e9\nquery pw = 2^10 + 2**2")
    values = {q.name: a.value(q.value.expr) for q in a.queries}
    assert values == {"q": R(3, 2), "big": 70 * 10 ** 9, "pw": 1028}
    assert isinstance(values["q"], sympy.Rational)


def test_unit_literals_with_si_and_binary_prefixes():
    a = analyze("input x: fp16[4]\ny = relu(x)\nquery a = 2 TB/s\nquery b = 1 GiB\nquery c = 5 us\n"
                "query d = 3 kFLOP / (2 ms)")
    values = {q.name: (a.value(q.value.expr), str(q.value.unit)) for q in a.queries}
    assert values == {"a": (2 * 10 ** 12, "B/s"), "b": (2 ** 30, "B"), "c": (R(5, 10 ** 6), "s"),
                      "d": (1500000, "FLOP/s")}


def test_broadcasting_elementwise_reads_the_small_operand_once():
    # x[B, d] + bias[d], fp16, B = 4, d = 8: reads 64 B + 16 B, writes 64 B; 32 FLOP.
    a = analyze("dim B = 4, d = 8\ninput x: fp16[B, d]\ninput bias: fp16[d]\ny = add(x, bias)")
    k = only(a)
    assert tuple(a.value(e) for e in (k.flops, k.bytes_read, k.bytes_written)) == (32, 80, 64)


def test_same_tensor_twice_is_read_once():
    # mul(x, x) on 100 fp32 elements: read 400 B once, write 400 B.
    k = only(load_string("use hardware note_virtual\ninput x: fp32[100]\ny = mul(x, x)").analyze())
    assert (k.bytes_read, k.bytes_written, k.flops) == (400, 400, 100)


def test_batched_matmul_and_reduction_and_rowwise():
    # bmm: [2, 3, 4]·[4, 5] → [2, 3, 5]: 2·(2·3·5·4) = 240 FLOP.
    # sum over the last axis of [2, 3, 5]: 30 FLOP → [2, 3]; softmax [2, 3]: 5·6 = 30 FLOP.
    a = analyze("input a: fp16[2, 3, 4]\ninput b: fp16[4, 5]\nc = bmm(a, b)\ns = sum(c)\n"
                "p = softmax(s)\nt = sum(c, axis = 0)", fusion="none")
    by = {k.name: k for k in a.kernels}
    assert a.program.tensors["c"].shape == (2, 3, 5)
    assert by["c"].flops == 240 and by["s"].flops == 30 and by["p"].flops == 30
    assert a.program.tensors["t"].shape == (3, 5)


def test_views_are_free_and_read_through():
    # transpose is not a kernel; relu of the view reads x's 2·3·4 B = 24 B storage.
    a = load_string("use hardware note_virtual\ninput x: fp32[2, 3]\nxt = transpose(x)\ny = relu(xt)\n"
                    "z = reshape(y) -> fp32[6]\nw = exp(z)").analyze(fusion="none")
    assert [k.name for k in a.kernels] == ["y", "w"]
    assert a.program.tensors["xt"].shape == (3, 2)
    assert [(t.tensor, t.bytes) for t in a.kernels[0].cost.reads] == [("x", 24)]
    assert [(t.tensor, t.bytes) for t in a.kernels[1].cost.reads] == [("y", 24)]


def test_custom_kernel_defaults_and_stated_bytes():
    # custom(q) -> fp16[10]: reads q (20 B) and writes 20 B unless stated.
    a = analyze("input q: fp16[10]\no = custom(q) -> fp16[10] { flops = 7 }\n"
                "k2 = custom(q) { flops = 1; reads = 1 kB; writes = 3 B }")
    by = {k.name: k for k in a.kernels}
    assert (by["o"].flops, by["o"].bytes) == (7, 40)
    assert (by["k2"].bytes_read, by["k2"].bytes_written) == (1000, 3)


def test_as_changes_stored_dtype_not_math_dtype():
    # matmul of fp16 [2,2]·[2,2] stored as fp32: reads 16 B, writes 16 B; math (and I*) in fp16.
    k = only(analyze("input a: fp16[2, 2]\ninput b: fp16[2, 2]\nc = matmul(a, b) as fp32"))
    assert (k.bytes_read, k.bytes_written, k.cost.math_dtype) == (16, 16, "fp16")


def test_op_override_in_the_file():
    k = only(analyze("op gelu(x): elementwise, flops = 8\ninput x: fp16[10]\ny = gelu(x)"))
    assert k.flops == 80


def test_user_dtype():
    # cast 8 fp16 elements (16 B) to a 0.75-byte dtype: writes 6 B; the math is in fp16.
    k = only(analyze("dtype fp6 = 0.75 B\ninput x: fp16[8]\ny = cast(x) as fp6"))
    assert (k.bytes_read, k.bytes_written) == (16, 6)


def test_hardware_inheritance_and_memory_merge():
    a = load_string("hardware g : h100_sxm { memory HBM { bandwidth = 4 TB/s } ; launch = 2 us }\n"
                    "use hardware g\ninput x: fp16[8]\ny = relu(x)").analyze()
    hw = a.hardware
    assert hw.bandwidth == 4 * 10 ** 12 and hw.capacity == 80 * 10 ** 9
    assert hw.peak("fp16") == R(9895, 10) * 10 ** 12 and hw.launch == R(2, 10 ** 6)


def test_free_symbol_verdict_and_launch_bound():
    # y = relu(x[N]) fp16 with a stated 5 µs launch on h100: 4N B / 3.35e12 ≈ 1.19 ns vs 5e-6 →
    # launch-bound for small N. The preset itself has launch 0, so the same kernel is memory-bound.
    a = load_string("hardware h : h100_sxm { launch = 5 us }\nuse hardware h\n"
                    "dim N = 1000\ninput x: fp16[N]\ny = relu(x)").analyze()
    preset = load_string("use hardware h100_sxm\ndim N = 1000\ninput x: fp16[N]\ny = relu(x)").analyze()
    assert only(preset).bound.bound == "memory-bound" and preset.hardware.launch == 0
    assert only(a).bound.bound == "launch-bound" and a.totals.bound.bound == "launch-bound"
    b = analyze("dim B\ninput x: fp16[B, 4096]\nweight W: fp16[4096, 4096]\ny = matmul(x, W)")
    # I = 2·B·4096² / (2·(4096B + 4096² + 4096B)) = 4096B/(2B + 4096); = 500 when
    # 4096B = 1000B + 2048000, B = 2048000/3096 = 256000/387 ≈ 661.5.
    # B is a whole number: B < 661.5 is B ≤ 661 (the balanced point holds no whole B)
    assert words(only(b).bound) == "memory-bound when B ≤ 661, else compute-bound"
    v = only(b).bound
    assert [r.bound.value for r in v.regimes] == ["memory-bound", "balanced", "compute-bound"]
    assert v.regimes[1].interval.lower == v.regimes[1].interval.upper == R(256000, 387)


def test_footprint_and_capacity():
    # 70e9 fp16 weights = 140 GB on an 80 GB part: does not fit, short by 60 GB.
    a = load_string("use hardware h100_sxm\nparam P = 70e9\nweight W: fp16[P]\n"
                    "k = custom(W) { flops = 2*P }\nquery f = footprint()\nquery c = capacity()").analyze()
    assert a.value(a.footprint.bytes) == 140 * 10 ** 9
    assert a.value(a.footprint.capacity - a.footprint.bytes) == -60 * 10 ** 9


def test_measurements():
    # 1 GB of algorithmic bytes measured at 2 ms with 1.5 GB of traffic on 2 TB/s:
    # effective 500 GB/s, achieved 750 GB/s = 37.5 % of peak.
    a = analyze("dim N = 25e7\ninput x: fp16[N]\ny = relu(x)\nmeasure y { time = 2 ms; traffic = 1.5 GB }\n"
                "query e = effective_bandwidth(y)\nquery t = achieved_throughput(y)\n"
                "query f = fraction_of_peak_bandwidth(y)")
    values = {q.name: a.value(q.value.expr) for q in a.queries}
    assert values == {"e": 500 * 10 ** 9, "t": 750 * 10 ** 9, "f": R(3, 8)}


def test_imports_relative_and_stdlib(tmp_path):
    (tmp_path / "common.cost").write_text("import hardware\nhardware mine : chapter_gpu { launch = 1 us }\n")
    main = tmp_path / "main.cost"
    main.write_text('import "common.cost"\nuse hardware mine\ninput x: fp16[4]\ny = relu(x)\n')
    from costlang import load
    assert load(main).analyze().hardware.launch == R(1, 10 ** 6)


@pytest.mark.parametrize("text, message", [
    ("let t = 2 B + 3 s\nquery t", "cannot add seconds to bytes"),
    ("hardware g { peak fp16 = 2 TB/s; memory HBM { bandwidth = 1 TB/s } }",
     "the peak of fp16 must be a compute rate (FLOP/s), not a bandwidth (B/s)"),
    ("hardware g { peak fp16 = 1 TFLOP/s; memory HBM { bandwidth = 1 TB } }",
     "'bandwidth' must be a bandwidth (B/s), not bytes"),
    ("input x: fp16[2 s]", "a dimension must be a plain number, not seconds"),
])
def test_wrong_units_are_errors(text, message):
    with pytest.raises(CostlangError) as e:
        load_string(HW + text)
    assert e.value.message == message


def test_binary_prefixes():
    a = analyze("input x: fp16[4]\ny = relu(x)\nquery a = 1 KiB\nquery b = 2 MiB/s\nquery c = 3 TiB")
    assert [a.value(q.value.expr) for q in a.queries] == [1024, 2 * 2 ** 20, 3 * 2 ** 40]


def test_program_critical_intensity_agrees_with_the_program_verdict():
    # h100: a 2048³ fp16 GEMM (2·2048³ FLOP at 989.5e12) and an fp32 8192×64×8192 GEMM
    # (2·8192·64·8192 FLOP at 67e12). ΣT_compute = 17179869184/989.5e12 + 8589934592/67e12 s;
    # I* = ΣFLOPs / (BW·ΣT_compute), so I < I* exactly when ΣT_memory > ΣT_compute.
    a = load_string("use hardware h100_sxm\ninput a: fp16[2048, 2048]\ninput b: fp16[2048, 2048]\n"
                    "c = matmul(a, b)\ninput x: fp32[8192, 64]\ninput w: fp32[64, 8192]\n"
                    "y = matmul(x, w)").analyze()
    t = a.totals
    tc = R(17179869184 * 10, 9895 * 10 ** 12) + R(8589934592, 67 * 10 ** 12)
    assert t.t_compute == tc
    assert t.critical_intensity == (17179869184 + 8589934592) / (R(335, 100) * 10 ** 12 * tc)
    assert (t.intensity < t.critical_intensity) == (t.t_memory > t.t_compute) == False  # noqa: E712
    assert t.bound.bound == "compute-bound"


def test_symbolic_verdict_names_the_launch_bound_regime():
    # relu on fp32[N] on h100 with a stated 5 µs launch (3.35 TB/s): T_memory = 8N / 3.35e12 exceeds
    # the launch overhead when N > 5e-6 · 3.35e12 / 8 = 2093750.
    a = load_string("hardware h : h100_sxm { launch = 5 us }\nuse hardware h\ndim N\ninput x: fp32[N]\ny = relu(x)\nquery bound(y)").analyze()
    # at N = 2093750 launch = T_memory exactly: launch-bound needs the launch strictly larger, so
    # that point is memory-bound (the interval is closed there)
    assert words(only(a).bound) == "launch-bound when N < 2093750, else HBM-bound"
    first, second = only(a).bound.regimes
    assert (first.interval.upper, first.interval.upper_closed) == (2093750, False)
    assert (second.interval.lower, second.interval.lower_closed, second.bound.value) == (2093750, True, "memory-bound")


@pytest.mark.parametrize("text, message", [
    ("op gelu(x): elementwise, flops = -3", "an op's FLOPs per element cannot be negative, not -3"),
    ("input x: fp16[4]\nk = custom(x) { flops = -100 }", "'flops' cannot be negative, not -100"),
    ("input x: fp16[4]\nk = custom(x) { reads = -5 B }", "'reads' cannot be negative, not -5"),
    ("input x: fp16[4]\ny = relu(x)\nmeasure y { time = 1 s; traffic = 0 B - 2 B }",
     "'traffic' cannot be negative, not -2"),
])
def test_negative_amounts_are_errors(text, message):
    with pytest.raises(CostlangError) as e:
        load_string(HW + text)
    assert e.value.message == message


def test_a_kernel_that_does_nothing_has_zero_intensity():
    k = only(analyze("k = custom() { math = fp16 }"))
    assert (k.intensity, k.attainable, k.fraction_of_peak) == (0, 0, 0)


def test_mixed_precision_in_one_fused_kernel_uses_each_ops_peak():
    # relu in fp16 (N FLOP at h100's fp16 VECTOR peak, 66.9 TFLOP/s = the whitepaper's non-tensor
    # 133.8 / 2) fused with an fp32 add (N FLOP at the fp32 vector peak, 33.5 TFLOP/s):
    # T_compute = N/66.9e12 + N/33.5e12; the kernel's peak is the effective 2N / T_compute.
    a = load_string("use hardware h100_sxm\ndim N = 2^20\ninput a: fp16[N]\ninput b: fp32[N]\n"
                    "t = relu(a)\ny = add(t, b)").analyze()
    k = only(a)
    n = 2 ** 20
    t_compute = R(n * 10, 669 * 10 ** 12) + R(n * 10, 335 * 10 ** 12)
    v = a.value
    assert k.ops == ("t", "y") and v(k.t_compute) == t_compute
    assert v(k.peak) == 2 * n / t_compute
    assert v(k.critical_intensity) == 2 * n / t_compute / (R(335, 100) * 10 ** 12)
