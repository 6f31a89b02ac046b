"""Every worked example of the two lecture documents comes out of costlang exactly (values checked by
hand). The documents, in Korean: "the chapter": section 1.10 "루프라인·메모리바운드 분석" (Roofline and memory-bound analysis)
of Part 1 "GPU 아키텍처" (GPU architecture) of a Korean GPU textbook; "the note": the research note
"커널의 시간은 어디에서 소비되는가" (Where does a kernel's time go?) by Injo Kim (김인조), 29 September 2026.

The chapter: assumed GPU 1000 TFLOP/s fp16, 2 TB/s, I* = 500 FLOP/B.
The note: virtual hardware 20 TFLOP/s fp32, 1 TB/s.
"""

import sympy

from conftest import query

R = sympy.Rational


def test_example_a_vector_add_fp16(analyze_example):
    a = analyze_example("roofline/vector_add_fp16.cost")
    (k,) = a.kernels
    n = 2 ** 20
    assert a.value(k.flops) == n                      # 1 FLOP per element
    assert a.value(k.bytes) == 6 * n                  # read 2 B + 2 B, write 2 B
    assert a.value(k.intensity) == R(1, 6)
    assert a.value(k.critical_intensity) == 500
    assert a.value(k.attainable) == R(2 * 10 ** 12, 6)  # BW × I = 0.333 TFLOP/s
    assert a.value(k.fraction_of_peak) == R(1, 3000)  # 0.0333 % of peak
    assert k.bound.bound == "memory-bound"
    assert query(a, "bound(C)") == "memory-bound"


def test_example_b_gemm_4096(analyze_example):
    a = analyze_example("roofline/gemm_4096.cost")
    (k,) = a.kernels
    assert a.value(k.flops) == 137438953472 == 2 * 4096 ** 3
    assert a.value(k.bytes) == 100663296 == 3 * 4096 ** 2 * 2
    assert a.value(k.intensity) == R(4096, 3)
    assert k.bound.bound == "compute-bound"
    # T_compute = 2·4096³ / 1e15 = 137438953472/1e15 s ≈ 137.4 µs; T_memory = 100663296 / 2e12 ≈ 50.33 µs;
    # launch 0, so T_kernel = T_compute
    assert a.value(k.t_compute) == R(137438953472, 10 ** 15)
    assert a.value(k.t_memory) == R(100663296, 2 * 10 ** 12)
    assert a.value(k.t_kernel) == a.value(k.t_compute) == a.value(a.totals.t_kernel)


def test_example_c_llm_decode_70b(analyze_example):
    a = analyze_example("roofline/llm_decode_70b.cost")
    assert query(a, "bytes per token") == 140 * 10 ** 9
    assert query(a, "time per token") == R(7, 100)          # 0.07 s
    assert query(a, "tokens/s (upper bound)") == R(100, 7)  # ≈ 14.29
    assert query(a, "same, from the formula BW / (P·b)") == R(100, 7)
    assert query(a, "bound(decode)") == "memory-bound"
    (k,) = a.kernels
    # T_memory = 140e9 B / 2e12 B/s = 0.07 s; T_compute = 2·70e9 FLOP / 1e15 FLOP/s = 1.4e-4 s
    assert a.value(k.t_memory) == R(7, 100) == a.value(k.t_kernel)
    assert a.value(k.t_compute) == R(14, 10 ** 5)


def test_exercise_1_gelu_fp32(analyze_example):
    a = analyze_example("roofline/exercises/ex1_gelu_fp32.cost")
    assert query(a, "bytes per element") == 8
    assert query(a, "FLOPs per element") == 10
    assert query(a, "I") == R(5, 4)
    assert query(a, "bound(y)") == "memory-bound"
    assert query(a, "I in fp16") == R(5, 2)
    assert query(a, "speed-up of fp16 storage") == 2


def test_exercise_2_gemm_1024(analyze_example):
    a = analyze_example("roofline/exercises/ex2_gemm_1024.cost")
    assert query(a, "flops") == 2 * 1024 ** 3 == 2147483648
    assert query(a, "bytes") == 3 * 1024 ** 2 * 2 == 6291456
    assert query(a, "I") == R(1024, 3)
    assert query(a, "bound(C)") == "memory-bound"
    n = a.program.symbols["n"].symbol
    assert query(a, "I(n)") == n / 3
    # I = n/3 = I* = 500 at n = 1500 exactly: balanced there, never "else compute-bound" at it
    assert query(a, "bound(Z)") == "memory-bound when n < 1500, balanced at n = 1500, else compute-bound"


def test_exercise_3_decode_130b_int4(analyze_example):
    a = analyze_example("roofline/exercises/ex3_decode_130b_int4.cost")
    assert query(a, "bytes per token, int4") == 65 * 10 ** 9
    assert query(a, "time per token, int4") == R(65, 3000)      # 21.67 ms
    assert query(a, "tokens/s, int4") == R(600, 13)             # ≈ 46.15
    assert query(a, "time per token, fp16") == R(260, 3000)     # 86.67 ms
    assert query(a, "tokens/s, fp16") == R(150, 13)             # ≈ 11.54
    assert query(a, "int4 speed-up over fp16") == 4


def test_exercise_4_fusion_reading_binary_chain(analyze_example):
    n = 2 ** 20
    unfused = analyze_example("roofline/exercises/ex4_fusion.cost", fusion="none")
    fused = analyze_example("roofline/exercises/ex4_fusion.cost")
    assert query(unfused, "bytes") == 16 * n and query(fused, "bytes") == 8 * n
    assert query(unfused, "I") == R(3, 16) and query(fused, "I") == R(3, 8)
    assert query(unfused, "launches") == 3 and query(fused, "launches") == 1
    assert unfused.value(unfused.totals.flops) == fused.value(fused.totals.flops) == 3 * n


def test_note_gemm_3x2x3(analyze_example):
    a = analyze_example("kernel_time/gemm_3x2x3.cost")
    assert query(a, "flops") == 36
    (k,) = a.kernels
    # fp32: A 3·2 + B 2·3 read, C 3·3 written = 21 elements × 4 B = 84 B; I = 36/84 = 3/7;
    # I* = 20e12 / 1e12 = 20; T_compute = 36 / 20e12 = 1.8 ps; T_memory = 84 / 1e12 = 84 ps
    assert k.bytes == 84 and k.intensity == R(3, 7) and k.critical_intensity == 20
    assert k.t_compute == R(36, 20 * 10 ** 12) and k.t_memory == R(84, 10 ** 12)
    assert k.bound.bound == "memory-bound"


def test_note_vector_add_fp32(analyze_example):
    a = analyze_example("kernel_time/vector_add_fp32.cost")
    assert query(a, "bytes") == 12 * 10 ** 8           # 1.2 GB
    assert query(a, "flops") == 10 ** 8
    assert query(a, "t_compute") == R(5, 10 ** 6)      # 5 µs
    assert query(a, "t_memory") == R(12, 10 ** 4)      # 1.2 ms
    assert query(a, "t_kernel") == R(12, 10 ** 4)
    assert query(a, "bound(C)") == "memory-bound"
    assert query(a, "T_compute with 2x compute") == R(25, 10 ** 7)   # 2.5 µs
    assert query(a, "T_memory with 2x compute") == R(12, 10 ** 4)    # unchanged
    assert query(a, "T_memory with 2x bandwidth") == R(6, 10 ** 4)   # 0.6 ms
    assert query(a, "speed-up of 2x bandwidth") == 2


def test_note_effective_bandwidth(analyze_example):
    a = analyze_example("kernel_time/effective_bandwidth.cost")
    assert query(a, "case 1: effective bandwidth") == 500 * 10 ** 9
    assert query(a, "case 1: actual throughput") == 800 * 10 ** 9
    assert query(a, "case 1: fraction of peak bandwidth") == R(4, 5)
    assert query(a, "case 2: achieved DRAM bandwidth") == 10 ** 12
    assert query(a, "case 2: fraction of peak") == R(2, 3)   # 66.7 %
