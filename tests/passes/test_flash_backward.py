"""FlashAttention's backward under `fusion flash` (passes/flash.py, analysis/reuse.py; Dao et al.
2022, Algorithm 2): S and P recomputed on chip (counted as recompute), dQ, dK, dV written once.
Every value derived by hand."""
from costlang import load_string

# One head per batch row: Q, K, V, O are B·S·D = 2·256·64 = 32,768 bf16 = 65,536 B each.
ATTN = """HW
fusion flash
dim B = 2
dim S = 256
dim D = 64
input x: bf16[B, S, D]
weight Wq: bf16[D, D]
weight Wk: bf16[D, D]
weight Wv: bf16[D, D]
q = x @ Wq
k = x @ Wk
v = x @ Wv
p = softmax(q @ transpose(k))
o = p @ v
output o
train { }
"""
H100 = "use hardware h100_sxm"
# SMEM 129,024 B: B_c = min(⌈129024/2/(4·64)⌉ = 252, ⌊(129024 − 2·2·64² − 8·64)/(3·2·64)⌋ = 292) = 252,
# so T_c = ⌈256/252⌉ = 2
SMALL = "hardware g : h100_sxm { memory SMEM per SM { capacity = 129024 B } }\nuse hardware g"
MM = 2 * 2 * 256 * 256 * 64  # one N×N×d matmul over the batch: 2·B·S·S·D = 16,777,216 FLOP


def _backward_kernel(a):
    return next(k for k in a.kernels if any(a.program.nodes[op].recompute for op in k.ops))


def test_the_attention_backward_is_one_kernel_that_recomputes_s_and_p():
    a = load_string(ATTN.replace("HW", H100)).analyze()
    k = _backward_kernel(a)
    ops = [a.program.nodes[op] for op in k.ops]
    assert [n.op.name for n in ops] == ["matmul", "softmax", "matmul", "matmul", "grad_softmax", "matmul", "matmul"]
    # S' and P' recomputed (2·B·S·S·D + 5·B·S·S = 16,777,216 + 655,360), then dP, dV, dQ, dKᵀ
    # (4 matmuls) and softmax's gradient 4·B·S·S = 524,288: 85,065,728 FLOP
    assert a.value(k.flops) == 5 * MM + 655_360 + 524_288 == 85_065_728
    assert sum(a.value(n.flops) for n in ops if n.recompute) == MM + 655_360
    # T_c = 1 on an H100 (233.5 kB of SMEM): reads Q, K, V, dO, O (for D) once, 5 · 65,536, and the
    # statistics ℓ, m (fp32, 2 per row, B·S rows: 4·2·512 = 4096); writes dQ, dK, dV 3 · 65,536
    assert a.value(k.cost.bytes) == 5 * 65_536 + 4096 + 3 * 65_536 == 528_384
    written = {t.tensor for t in k.cost.writes}
    assert written == {"q.grad", "v.grad", "p.transpose.grad"}  # dQ, dV and dKᵀ (dK is its view)


def test_the_forward_keeps_its_statistics_and_not_the_probabilities():
    a = load_string(ATTN.replace("HW", H100)).analyze()
    fwd = a.kernels[3]
    assert fwd.name == "p.matmul+p+o"
    # Q, K, V read, O written (4 · 65,536) and the statistics for the backward written (4096)
    assert a.value(fwd.cost.bytes) == 4 * 65_536 + 4096
    saved = {t.tensor for t in a.footprint.saved_tensors}
    assert "p" not in saved and "p.matmul" not in saved
    assert saved == {"x", "q", "k", "v"}


def test_the_backward_rereads_q_do_o_and_dq_per_block_of_k():
    a = load_string(ATTN.replace("HW", SMALL)).analyze()
    k = _backward_kernel(a)
    # T_c = 2: K, V read once (2 · 65,536); Q, dO, O read twice (6 · 65,536); the statistics twice
    # (2 · 4096); dQ read once (T_c − 1) and written twice (3 · 65,536); dK, dV once (2 · 65,536):
    # 13 · 65,536 + 8192 = 860,160
    assert a.value(k.cost.bytes) == 13 * 65_536 + 8192 == 860_160


def test_without_flash_the_same_step_keeps_separate_kernels():
    # the file says flash, so the backward recomputes S and P; under epilogue fusion those copies
    # run as kernels of their own (the recomputed P' is written and read back)
    a = load_string(ATTN.replace("HW", H100)).analyze(fusion="epilogue")
    assert not any(k.cost.tiling is not None and k.cost.tiling.kind == "flash" for k in a.kernels)
    assert sum(1 for k in a.kernels if any(a.program.nodes[op].recompute for op in k.ops)) == 2
