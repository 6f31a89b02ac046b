"""examples/training/six_nd.cost: Llama-3-8B's training FLOPs per token against 6·N and PaLM's
attention term (Kaplan et al. 2020; Chowdhery et al. 2022, App. B)."""
from __future__ import annotations

from conftest import query

N = 8_030_261_248 - 128256 * 4096 - 65 * 4096   # 7,504,658,432: every weight a matmul uses
S = 2048


def test_llama3_8b_flops_per_token(analyze_example):
    a = analyze_example("training/six_nd.cost")
    assert query(a, "tokens per step") == S
    assert query(a, "N (matmul weights)") == N
    assert query(a, "6·N") == 6 * N                                   # 45,027,950,592
    # causal attention, forward + backward: 12·L·d·S·(S + 1)/(2·S) = 6·32·4096·2049 = 1,611,399,168
    assert query(a, "attention per token") == 6 * 32 * 4096 * (S + 1) == query(a, "PaLM's attention term, causal")
    # the matmuls with a weight (forward, input gradient, weight gradient) are exactly 6·N per token
    p, t = a.program, a.program.tensors
    weight = [n for n in p.nodes.values() if n.kind == "matmul"
              and (any(t[t[i].storage].role == "weight" for i in n.inputs) or t[n.output].storage == p.training.buffer)]
    assert sum(a.value(n.flops * p.count(n.repeat)) for n in weight) == 6 * N * S
    # what 6·N + attention leaves out: the non-matmul ops (norms, SwiGLU's product, RoPE, softmax,
    # residual adds and their gradients): 46,671,728,640 − 45,027,950,592 − 1,611,399,168 = 32,378,880
    # FLOPs per token, 0.07 % of the total
    rest = query(a, "model FLOPs per token") - 6 * N - 6 * 32 * 4096 * (S + 1)
    assert rest == 32_378_880
    others = sum(a.value(n.flops * p.count(n.repeat)) for n in p.nodes.values()
                 if n.kind not in ("matmul", "collective", "view") and n.scope != "optimizer")
    assert others == rest * S
