"""Fusion: the example files' numbers, the pass's rules, its verifier, and the CLI.

Every expected value is derived by hand in the comment next to it (the example files' headers
carry the same derivations).
"""
import json

import pytest
import sympy

from conftest import EXAMPLES, query
from costlang import load_string
from costlang.queries.compare import compare_fusion
from costlang.passes.costs import KernelCost, Traffic
from costlang.cli import main
from costlang.passes import fusion as fusion_module
from costlang.passes.fusion import fuse
from costlang.passes.kernels import Kernel, one_kernel_per_op
from costlang.passes.verify import PartitionError, _check_bytes, _check_flops, verify_partition

R = sympy.Rational


def ops_of(analysis):
    return [k.ops for k in analysis.kernels]


# --- examples/fusion/cos_cos.cost: N = 10^8, fp32 (4 B), note_virtual (20 TFLOP/s, 1 TB/s) ------

def test_cos_cos_four_passes_unfused_two_fused(analyze_example):
    n = 10 ** 8
    unfused = analyze_example("fusion/cos_cos.cost", fusion="none")
    fused = analyze_example("fusion/cos_cos.cost")
    # unfused: cos reads x, writes a; cos reads a, writes b: 4 passes of 4N B = 16N B
    assert query(unfused, "bytes") == 16 * n and query(unfused, "passes") == 4
    # fused: read x, write b: 2 passes = 8N B
    assert query(fused, "bytes") == 8 * n and query(fused, "passes") == 2
    assert query(unfused, "I") == R(2, 16) and query(fused, "I") == R(2, 8)   # 2N FLOP / bytes
    assert query(unfused, "launches") == 2 and query(fused, "launches") == 1
    assert fused.value(fused.totals.t_memory) == R(8 * n, 10 ** 12)            # 0.8 ms
    assert fused.value(fused.totals.t_compute) == R(2 * n, 20 * 10 ** 12)      # 10 µs


def test_cos_cos_comparison_ratios_are_exact(analyze_example):
    c = compare_fusion(analyze_example("fusion/cos_cos.cost"))
    assert (c.baseline, c.mode) == ("none", "elementwise")
    assert c.change("bytes").ratio == R(1, 2)       # 8N / 16N
    assert c.change("intensity").ratio == 2         # (2N/8N) / (2N/16N)
    assert c.change("flops").ratio == 1
    assert c.change("launches").ratio == R(1, 2)
    assert c.change("t_kernel").ratio == R(1, 2)    # launch 0, memory-bound both times: 0.8 / 1.6 ms
    assert c.kernels_before == (("a",), ("b",)) and c.kernels_after == (("a", "b"),)


# --- examples/fusion/gemm_bias_gelu.cost: M = 2048, K = 1024, N = 4096, fp16 ------------------
MK, KN, MN, N = 2 ** 21, 2 ** 22, 2 ** 23, 4096


@pytest.mark.parametrize("mode, expected_bytes, kernels", [
    # c: 2MK + 2KN + 2MN; d: 2MN + 2N + 2MN; y: 2MN + 2MN
    ("none", 2 * MK + 2 * KN + 10 * MN + 2 * N, [("c",), ("d",), ("y",)]),
    # c as before; d+y: read c 2MN and bias 2N, write y 2MN
    ("elementwise", 2 * MK + 2 * KN + 6 * MN + 2 * N, [("c",), ("d", "y")]),
    # one kernel: read x, w, bias; write y
    ("epilogue", 2 * MK + 2 * KN + 2 * MN + 2 * N, [("c", "d", "y")]),
])
def test_gemm_bias_gelu_bytes_per_mode(analyze_example, mode, expected_bytes, kernels):
    a = analyze_example("fusion/gemm_bias_gelu.cost", fusion=mode)
    assert query(a, "bytes") == expected_bytes
    assert expected_bytes == {"none": 96477184, "elementwise": 62922752, "epilogue": 29368320}[mode]
    assert query(a, "flops") == 2 * 2048 * 4096 * 1024 + 11 * MN    # 2MNK + MN (add) + 10MN (gelu)
    assert query(a, "launches") == len(kernels) and ops_of(a) == kernels


def test_gemm_epilogue_provenance(analyze_example):
    a = analyze_example("fusion/gemm_bias_gelu.cost", fusion="epilogue")
    (k,) = a.kernels
    assert [(t.tensor, t.role, a.value(t.bytes)) for t in k.cost.reads] == [
        ("x", "input", 2 * MK), ("w", "weight", 2 * KN), ("bias", "weight", 2 * N)]
    assert [(t.tensor, t.role, a.value(t.bytes)) for t in k.cost.writes] == [("y", "output", 2 * MN)]


# --- examples/fusion/diamond.cost: N = 2^20, fp32 ----------------------------------------------

def test_diamond_writes_the_fanned_out_intermediate_once(analyze_example):
    n = 2 ** 20
    unfused = analyze_example("fusion/diamond.cost", fusion="none")
    # a 8N, b 8N, c 8N, d 12N, y 12N (reads d and x, writes y), s 4N + 4 (scalar fp32)
    assert query(unfused, "bytes") == 52 * n + 4 == 54525956
    for mode in ("elementwise", "epilogue"):
        fused = analyze_example("fusion/diamond.cost", fusion=mode)
        assert ops_of(fused) == [("a", "b", "c", "d", "y"), ("s",)]
        # a+b+c+d+y reads x once (a and y both read it), writes a (s reads it) and y: 12N;
        # s reads a, writes 4 B
        assert query(fused, "bytes") == 16 * n + 4 == 16777220
        assert query(fused, "bytes written by a's kernel") == 8 * n
        first = fused.kernels[0]
        assert [t.tensor for t in first.cost.reads] == ["x"]
        assert [(t.tensor, t.role) for t in first.cost.writes] == [("a", "intermediate"), ("y", "output")]
        assert fused.value(fused.totals.flops) == 6 * n      # 6 ops of 1 FLOP per element


# --- examples/fusion/launch_bound.cost: 8 unary fp32 ops, N = 2^16, h100_sxm --------------------

def test_many_small_kernels_are_launch_bound(analyze_example):
    launch = R(5, 10 ** 6)
    t_mem = R(8 * 2 ** 16, 3350 * 10 ** 9)      # each kernel: 4N read + 4N written at 3.35 TB/s
    unfused = analyze_example("fusion/launch_bound.cost", fusion="none")
    fused = analyze_example("fusion/launch_bound.cost")
    assert query(unfused, "launches") == 8 and query(fused, "launches") == 1
    assert query(unfused, "t_kernel") == 8 * (launch + t_mem)     # ≈ 41.25 µs
    assert query(fused, "t_kernel") == launch + t_mem             # ≈ 5.157 µs
    assert unfused.value(unfused.totals.t_launch) == 8 * launch   # 40 µs of launches
    assert query(unfused, "bound") == "launch-bound" == query(fused, "bound")
    assert all(k.bound.bound == "launch-bound" for k in unfused.kernels)
    c = compare_fusion(fused)
    assert c.change("t_kernel").ratio == R(1, 8) and c.change("intensity").ratio == 8


# --- both readings of the chapter's fusion exercise -----------------------------------------------

def test_ex4_binary_reading_halves_traffic(analyze_example):
    # mul, add binary: unfused 16N, fused 8N (test_lecture_documents pins the same numbers)
    c = compare_fusion(analyze_example("roofline/exercises/ex4_fusion.cost"))
    assert c.change("bytes").ratio == R(1, 2) and c.change("intensity").ratio == 2
    assert c.change("launches").ratio == R(1, 3)


def test_chapter_unary_reading_gives_three(analyze_example):
    n = 2 ** 20
    unfused = analyze_example("fusion/chapter_add_mul_act.cost", fusion="none")
    fused = analyze_example("fusion/chapter_add_mul_act.cost")
    assert query(unfused, "bytes") == 12 * n and query(fused, "bytes") == 4 * n   # 3 × (2N + 2N); 2N + 2N
    assert query(unfused, "I") == R(1, 4) and query(fused, "I") == R(3, 4)        # 3N FLOP
    assert compare_fusion(fused).change("intensity").ratio == 3


# --- rules on small programs ------------------------------------------------------------------------
HEAD = "use hardware chapter_gpu\ndim M = 4, N = 8\n"


def analyze(src, mode="elementwise"):
    return load_string(HEAD + src).analyze(fusion=mode)


def test_view_of_an_intermediate_is_a_barrier():
    # c would need a transposed a from other threads: a is written (2·8·8 B) and read back
    a = analyze("input x: fp16[N, N]\na = relu(x)\nb = transpose(a)\nc = add(a, b)\n")
    assert ops_of(a) == [("a",), ("c",)]
    assert a.value(a.totals.bytes) == 4 * 2 * 64     # x read, a written, a read once (via b too), c written


def test_kernels_run_in_dependency_order():
    # {a, d} must run before {b}, which reads a, although d comes after b in the file
    a = analyze("input x: fp16[M, N]\na = exp(x)\nb = sum(a)\nd = relu(a)\n")
    assert ops_of(a) == [("a", "d"), ("b",)]


def test_merge_that_closes_a_cycle_is_not_made():
    # a → k (custom) → c and a → c: a and c together would run both before and after k
    a = analyze("input x: fp16[N]\na = exp(x)\nk = custom(a) -> fp16[N] { flops = 8 }\nc = add(a, k)\n")
    assert ops_of(a) == [("a",), ("k",), ("c",)]


def test_broadcast_operand_read_once_and_other_space_not_fused():
    # bias [N] broadcast over [M, N]: read once at N·2 B. t = relu(bias) is over [N], a different
    # iteration space (fusing it would recompute it M times), so it stays its own kernel.
    a = analyze("input x: fp16[M, N]\ninput bias: fp16[N]\nt = relu(bias)\ny = add(x, t)\nz = mul(y, bias)\n")
    assert ops_of(a) == [("t",), ("y", "z")]
    k = a.kernels[1]
    assert [(r.tensor, a.value(r.bytes)) for r in k.cost.reads] == [("x", 64), ("t", 16), ("bias", 16)]


def test_epilogue_after_reduce_reads_a_twice_used_tensor_once():
    src = "input x: fp16[M, N]\ns = sum(x)\ne = mul(s, s)\n"
    assert ops_of(analyze(src)) == [("s",), ("e",)]
    epi = analyze(src, "epilogue")
    assert ops_of(epi) == [("s", "e")]
    # reads x (4·8·2 = 64 B) once, writes e (4·2 = 8 B); s never leaves the kernel
    assert epi.value(epi.totals.bytes) == 64 + 8


def test_no_prologue_and_one_anchor_per_kernel():
    src = ("input x: fp16[M, N]\nweight w1: fp16[N, N]\nweight w2: fp16[N, N]\nr = relu(x)\n"
           "c1 = matmul(r, w1)\nc2 = matmul(x, w2)\nd = add(c1, c2)\n")
    a = analyze(src, "epilogue")
    # r feeds c1: no prologue. d joins c1 (its first producer); c2 stays alone and runs first.
    assert ops_of(a) == [("r",), ("c2",), ("c1", "d")]


def test_epilogue_may_take_an_elementwise_side_input():
    # e does not feed the matmul, so it may join the epilogue that consumes it
    src = ("input x: fp16[M, N]\nweight w: fp16[N, N]\ninput z: fp16[M, N]\nc = matmul(x, w)\n"
           "e = relu(z)\nd = add(c, e)\n")
    assert ops_of(analyze(src, "epilogue")) == [("c", "e", "d")]


def test_rowwise_epilogue_and_custom_barrier():
    src = ("input x: fp16[M, N]\np = softmax(x)\nq = mul(p, x)\n"
           "k = custom(q) -> fp16[M, N] { flops = 1 }\nr = relu(k)\n")
    assert ops_of(analyze(src, "epilogue")) == [("p", "q"), ("k",), ("r",)]
    assert ops_of(analyze(src, "elementwise")) == [("p",), ("q",), ("k",), ("r",)]


# --- the verifier --------------------------------------------------------------------------------

def program(src):
    m = load_string(HEAD + src)
    return m.graph, m.program


def test_verifier_rejects_broken_partitions():
    G, p = program("input x: fp16[N]\na = exp(x)\nk = custom(a) -> fp16[N] { flops = 8 }\nc = add(a, k)\n")
    with pytest.raises(PartitionError, match="in none"):
        verify_partition(G, p, (Kernel("a", ("a",)), Kernel("k", ("k",))), "elementwise")
    with pytest.raises(PartitionError, match="in two kernels"):
        verify_partition(G, p, (Kernel("a", ("a",)), Kernel("a+k", ("a", "k")), Kernel("c", ("c",))), "none")
    with pytest.raises(PartitionError, match="cycle"):
        verify_partition(G, p, (Kernel("a+c", ("a", "c")), Kernel("k", ("k",))), "elementwise")
    with pytest.raises(PartitionError, match="execution order"):
        verify_partition(G, p, (Kernel("c", ("c",)), Kernel("k", ("k",)), Kernel("a", ("a",))), "none")


def test_verifier_rejects_a_kernel_named_like_a_block_instance():
    # `y = blk(x)` is the instance y; its kernel is y.exp (it computes the tensor y). A partition
    # that names a kernel (or holds an op) `y` would make `t_kernel(y)` mean two things.
    G, p = program("block blk(x: fp16[N]) {\n    return exp(x)\n}\ninput x: fp16[N]\ny = blk(x)\n")
    assert list(p.nodes) == ["y.exp"] and p.nodes["y.exp"].output == "y" and "y" in p.instances
    verify_partition(G, p, (Kernel("y.exp", ("y.exp",)),), "none")
    with pytest.raises(PartitionError, match=r"kernels named like block instances: \['y'\]"):
        verify_partition(G, p, (Kernel("y", ("y.exp",)),), "none")


def test_verifier_checks_the_mode():
    G, p = program("input x: fp16[M, N]\nweight w: fp16[N, N]\nc = matmul(x, w)\nd = relu(c)\n")
    ok = (Kernel("c+d", ("c", "d")),)
    verify_partition(G, p, ok, "epilogue")
    with pytest.raises(PartitionError, match="forbids"):
        verify_partition(G, p, ok, "elementwise")
    G, p = program("input x: fp16[M, N]\nweight w: fp16[N, N]\nr = relu(x)\nc = matmul(r, w)\n")
    with pytest.raises(PartitionError, match="prologue"):
        verify_partition(G, p, (Kernel("r+c", ("r", "c")),), "epilogue")


def test_verifier_flops_and_bytes_checks():
    t = Traffic("x", "input", sympy.Integer(8))
    one = KernelCost(sympy.Integer(3), (t,), (), "fp16")
    with pytest.raises(PartitionError, match="FLOPs"):
        _check_flops((one,), (KernelCost(sympy.Integer(4), (t,), (), "fp16"),))
    with pytest.raises(PartitionError, match="added memory traffic"):
        _check_bytes((one,), (KernelCost(sympy.Integer(3), (t, t), (), "fp16"),))
    _check_flops((one,), (one,))
    _check_bytes((one,), (KernelCost(sympy.Integer(3), (), (), "fp16"),))   # fewer bytes are fine


def test_a_pass_that_breaks_its_contract_is_an_internal_error(monkeypatch, capsys):
    # With no rules the pass would put the GEMM and the bias add in one elementwise kernel;
    # the verifier stops it, and the CLI reports a bug (exit 1), not an input error (exit 2).
    monkeypatch.setattr(fusion_module, "RULES", ())
    G, p = program("input x: fp16[M, N]\nweight w: fp16[N, N]\nc = matmul(x, w)\nd = relu(c)\n")
    with pytest.raises(PartitionError):
        fuse(G, p, "elementwise")
    assert main(["run", str(EXAMPLES / "fusion/gemm_bias_gelu.cost")]) == 1
    assert "internal error: PartitionError" in capsys.readouterr().err


def test_fusing_a_fused_partition_changes_nothing():
    G, p = program("input x: fp16[M, N]\nweight w: fp16[N, N]\nc = matmul(x, w)\nd = relu(c)\ne = exp(d)\n")
    once = fuse(G, p, "epilogue")
    assert once == (Kernel("c+d+e", ("c", "d", "e")),)
    assert fuse(G, p, "epilogue", start=once) == once
    assert fuse(G, p, "none") == one_kernel_per_op(G)


# --- the CLI -----------------------------------------------------------------------------------

def test_cli_compare_fusion_text(capsys):
    assert main(["run", str(EXAMPLES / "roofline/exercises/ex4_fusion.cost"), "--compare-fusion"]) == 0
    out = capsys.readouterr().out
    assert "fusion: elementwise" in out
    assert "fusion comparison: none → elementwise" in out
    # 16N → 8N bytes, 3/16 → 3/8, 3 → 1 launches
    for change in ("traffic ÷ 2", "I × 2", "launches ÷ 3", "FLOPs unchanged"):
        assert change in out
    assert "kernels before (3): t1 | t2 | y" in out and "kernels after (1): t1+t2+y" in out
    assert "t1+t2+y: reads a (input) 2.097 MB, b (input) 2.097 MB, c (input) 2.097 MB; " \
           "writes y (output) 2.097 MB" in out      # 2^20 · 2 B = 2,097,152 B each


def test_cli_compare_fusion_json(capsys):
    path = str(EXAMPLES / "fusion/gemm_bias_gelu.cost")
    assert main(["run", path, "--json", "--fusion", "epilogue", "--compare-fusion"]) == 0
    d = json.loads(capsys.readouterr().out)
    c = d["fusion_comparison"]
    assert (c["baseline"], c["mode"]) == ("none", "epilogue")
    assert c["figures"]["bytes"]["before"] == 96477184 and c["figures"]["bytes"]["after"] == 29368320
    assert c["figures"]["launches"] == {"before": 3, "after": 1, "ratio": 1 / 3, "change": "launches ÷ 3"}
    assert c["kernels_after"] == [["c", "d", "y"]]
    assert d["kernels"][0]["ops"] == ["c", "d", "y"]
    assert main(["run", path, "--json"]) == 0
    assert "fusion_comparison" not in json.loads(capsys.readouterr().out)


def test_cli_names_the_launch_bound_pitfall(capsys):
    assert main(["run", str(EXAMPLES / "fusion/launch_bound.cost"), "--fusion", "none"]) == 0
    out = capsys.readouterr().out
    assert "launch-bound: 8 launches take 40 µs" in out


# --- with_fusion(MODE, expr): another fusion mode, asked in the language ----------------------------

def test_with_fusion_queries_in_the_examples(analyze_example):
    a = analyze_example("fusion/cos_cos.cost")
    assert query(a, "passes, unfused") == 4          # 16N / 4N
    assert query(a, "traffic factor") == 2           # 16N / 8N
    assert query(a, "intensity factor") == 2         # (1/4) / (1/8)
    b = analyze_example("fusion/chapter_add_mul_act.cost")
    assert query(b, "I, unfused") == R(1, 4) and query(b, "I factor") == 3
    none = analyze_example("fusion/chapter_add_mul_act.cost", fusion="none")
    assert query(none, "I factor") == 1              # unfused against itself


def test_with_fusion_per_kernel_and_nested():
    a = analyze("input x: fp16[N]\na = cos(x)\nb = cos(a)\n"
                "query q = with_fusion(epilogue, with_fusion(none, bytes(b)))\n"
                "query r = with_fusion(none, launches())\n", "elementwise")
    # unfused kernel b reads a (8 · 2 B) and writes b (16 B)
    assert query(a, "q") == 32 and query(a, "r") == 2


@pytest.mark.parametrize("call", ["with_fusion(fast, bytes())", "with_fusion(none)",
                                  "with_fusion(bytes(), none)"])
def test_with_fusion_needs_a_mode_and_an_expression(tmp_path, capsys, call):
    path = tmp_path / "bad.cost"
    path.write_text(HEAD + f"input x: fp16[N]\ny = exp(x)\nquery q = {call}\n", encoding="utf-8")
    assert main(["check", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}:5:11: error: with_fusion() takes a fusion mode and an expression" in err
    assert "modes are: none, elementwise, epilogue" in err


def test_fused_kernel_with_mixed_math_times_each_op_at_its_own_peak():
    # y computes in fp16, z (reading the fp32 input w) in fp32. Each op's FLOPs run at its own
    # dtype's peak (DOMAIN.md), so the fused kernel needs both peaks, as the two unfused kernels
    # would: note_virtual (fp32 only) and chapter_gpu (fp16 only) each refuse it; the kernel is
    # labelled with its widest math dtype.
    src = "input x: fp16[N]\ninput w: fp32[N]\ny = exp(x)\nz = mul(y, w)\n"
    from costlang.errors import SemanticError
    with pytest.raises(SemanticError, match="no peak FLOP/s for fp16"):
        load_string("use hardware note_virtual\ndim N = 8\n" + src).analyze()
    with pytest.raises(SemanticError, match="no peak FLOP/s for fp32"):
        load_string(HEAD + src).analyze()
    both = "hardware g : note_virtual { peak fp16 = 40 TFLOP/s }\nuse hardware g\ndim N = 8\n"
    a = load_string(both + src).analyze()
    (k,) = a.kernels
    # 8 FLOP at 40e12 + 8 FLOP at 20e12 = 0.6 ns
    assert k.cost.math_dtype == "fp32"
    assert a.value(k.t_compute) == sympy.Rational(8, 40 * 10 ** 12) + sympy.Rational(8, 20 * 10 ** 12)


def test_a_long_chain_fuses_into_one_kernel_merging_smaller_into_larger():
    # 300 chained relus of one shape: elementwise fusion gives one kernel x1+…+x300 whose bytes are
    # the chain's input and output only: 2 · 1024 elements · 2 B (fp16) = 4096 B, and 300 FLOP per
    # element = 307,200 FLOP.
    lines = ["use hardware chapter_gpu", "dim N = 1024", "input x0: fp16[N]"]
    lines += [f"x{i} = relu(x{i - 1})" for i in range(1, 301)] + ["output x300"]
    a = load_string("\n".join(lines) + "\n", "chain.cost").analyze()
    (k,) = a.kernels
    assert k.name == "x1+…+x300" and a.value(k.bytes) == 4096 and a.value(k.flops) == 307200


def test_kernel_dag_merge_keeps_the_larger_kernel_and_moves_only_the_smaller_ones_ops():
    # The union-by-size rule that keeps fusion linear on long chains: merging a 1-op kernel into a
    # 3-op kernel re-owns the 1 op (not the 3), and the merged kernel keeps the 3-op kernel's id.
    import networkx as nx
    from costlang.passes.quotient import KernelDag
    G = nx.DiGraph([("a", "b"), ("b", "c"), ("c", "d")])
    dag = KernelDag(G, [("a", "b", "c"), ("d",)], {n: i for i, n in enumerate("abcd")})
    before = dict(dag.owner)
    keep, gone = dag.merge(dag.group("c"), dag.group("d"))
    assert (keep, gone) == (0, 1)
    assert [op for op in "abcd" if dag.owner[op] != before[op]] == ["d"]
    assert dag.groups() == [("a", "b", "c", "d")]
