"""examples/training/megatron_flops.cost: GPT-3 175B's FLOPs per iteration with full recomputation
against Narayanan et al. 2021's F = 96·B·s·l·h²·(1 + s/(6h) + V/(16·l·h)); values by hand."""
from fractions import Fraction

import pytest

from conftest import EXAMPLES
from costlang import load

B, s, h, V, l, a = 1536, 2048, 12288, 51200, 96, 96
F = Fraction(96 * B * s * l * h * h) * (1 + Fraction(s, 6 * h) + Fraction(V, 16 * l * h))


@pytest.fixture(scope="module")
def run():
    return load(EXAMPLES / "training" / "megatron_flops.cost").analyze()


def _flops(run, keep):
    p = run.program
    return sum(run.value(n.flops * p.count(n.repeat)) for n in p.nodes.values() if keep(n))


def test_the_matmul_flops_are_f_exactly(run):
    # F = 96·B·s·l·h² + 16·B·s²·l·h + 6·B·s·h·V = 4,510,922,013,984,768 · ... : an integer
    assert F.denominator == 1 and int(F) == 96 * B * s * l * h**2 + 16 * B * s**2 * l * h + 6 * B * s * h * V
    assert _flops(run, lambda n: n.kind == "matmul") == int(F)
    assert run.value(run.queries[0].value.expr) == int(F)


def test_the_recomputed_matmuls_are_one_more_forward_of_the_layers(run):
    # l · (24·B·s·h² + 4·B·s²·h): hardware FLOPs, not model FLOPs
    again = _flops(run, lambda n: n.recompute and n.kind == "matmul")
    assert again == l * (24 * B * s * h * h + 4 * B * s * s * h)


def test_the_total_exceeds_f_only_by_the_named_non_matmul_work(run):
    p = run.program
    extra = run.value(run.queries[1].value.expr) - int(F)
    # everything above F is elementwise, row-wise or reduction work that F leaves out
    kinds = {n.op.name: n.kind for n in p.nodes.values() if n.kind != "matmul" and n.kind != "view"}
    assert set(kinds.values()) <= {"elementwise", "rowwise", "reduce"}
    assert extra == _flops(run, lambda n: n.kind in ("elementwise", "rowwise", "reduce"))
    # softmax: 5 per score forward and again recomputed, its gradient 4: l · 14·B·a·s²
    softmax = _flops(run, lambda n: n.op.name in ("softmax", "grad_softmax"))
    assert softmax == l * 14 * B * a * s * s
    # rotary embedding on q and k (3 per element, stdlib's attention; GPT-3 has none): forward,
    # recomputed and its gradient: l · 3 · 2·B·s·h · 3
    rope = _flops(run, lambda n: n.op.name in ("rope", "grad_rope"))
    assert rope == l * 3 * 2 * B * s * h * 3
    # GELU 10 per element forward and again, its gradient 14, on B·s·4h: l · 34 · 4·B·s·h
    gelu = _flops(run, lambda n: n.op.name in ("gelu", "grad_gelu"))
    assert gelu == l * 34 * 4 * B * s * h
    # the layer norms: 8 per element forward (and again inside the layers), 12 for the gradient:
    # 2 per layer × (8 + 8 + 12) + the final one (8 + 12), on B·s·h
    norms = _flops(run, lambda n: n.op.name in ("layernorm", "grad_layernorm"))
    assert norms == (l * 2 * 28 + 20) * B * s * h
    # the rest: bias and residual adds, γ and β, gradient sums and bias-gradient reductions
    assert extra - softmax - rope - gelu - norms > 0
