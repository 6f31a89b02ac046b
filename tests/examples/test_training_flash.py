"""examples/training/flash_attention_gpt2.cost: FlashAttention forward + backward on GPT-2 medium's
attention (Dao et al. 2022, Figure 2) against the standard kernels; values derived by hand."""
from conftest import EXAMPLES
from costlang import load_string

PATH = EXAMPLES / "training" / "flash_attention_gpt2.cost"
ND = 64 * 16 * 1024 * 64 * 2      # Q, K, V, O, dO, dQ, dK, dV: 134,217,728 B each
NN = 64 * 16 * 1024 * 1024 * 2    # S, P, dP, dS: 2,147,483,648 B each
STATS = 4 * 2 * 64 * 16 * 1024    # ℓ and m, fp32, per query row: 8,388,608 B


def _load(mode):
    text = PATH.read_text(encoding="utf-8").replace("fusion flash", f"fusion {mode}")
    return load_string(text, str(PATH)).analyze()


def test_flash_moves_what_algorithms_1_and_2_read_and_write():
    a = _load("flash")
    fwd, bwd = a.kernels
    # T_c = ⌈1024/328⌉ = 4 (B_c = 328 on 164 KiB): forward K, V once, Q 4×, O written 4× and read
    # 3×; statistics written and read 3× each and kept once for the backward
    assert a.value(fwd.cost.bytes) == (2 + 4 + 7) * ND + 7 * STATS == 1_803_550_720
    # backward: K, V once, dK, dV once; Q, dO, O 4×; dQ written 4×, read 3×; statistics 4×
    assert a.value(bwd.cost.bytes) == (4 + 12 + 7) * ND + 4 * STATS == 3_120_562_176
    assert a.value(a.totals.bytes) == 4_924_112_896  # ≈ 4.92 GB (paper, measured: 4.4 GB)
    # S and P recomputed: 2·N²·d + 5·N² per head, × 1024 heads·batch = 137,438,953,472 + 5,368,709,120
    again = sum(a.value(n.flops) for n in a.program.nodes.values() if n.recompute)
    assert again == 1024 * (2 * 1024 * 1024 * 64 + 5 * 1024 * 1024) == 142_807_662_592


def test_the_standard_step_moves_s_p_and_their_gradients_through_hbm():
    a = _load("epilogue")
    assert len(a.kernels) == 8 and not any(n.recompute for n in a.program.nodes.values())
    # forward: Q, K, V, O + S and P each written and read once
    # backward: 8 of the N·d tensors, 7 of the N² ones (dP w/r, P r twice, dS w, r twice)
    assert a.value(a.totals.bytes) == 4 * ND + 4 * NN + 8 * ND + 7 * NN == 25_232_932_864  # paper: 40.3 GB
    # the query the file states
    assert a.value(a.queries[0].value.expr) == 25_232_932_864
