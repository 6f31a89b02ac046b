"""examples/training/activation_memory_gpt.cost: one GPT layer's saved activations against
Korthikanti et al. 2022 (s·b·h·(34 + 5·a·s/h), 34·s·b·h selective); values by hand."""
import pytest

from conftest import EXAMPLES
from costlang import load_string

PATH = EXAMPLES / "training" / "activation_memory_gpt.cost"
SBH = 2048 * 1 * 12288            # s·b·h = 25,165,824
ASSB = 96 * 2048 * 2048 * 1       # a·s²·b = 402,653,184


def _run(policy):
    text = PATH.read_text(encoding="utf-8").replace("recompute = none", f"recompute = {policy}")
    return load_string(text, str(PATH)).analyze()


@pytest.fixture(scope="module")
def none():
    return _run("none")


def _per_layer(a):
    return a.value(a.queries[0].value.expr)


def test_no_recomputation_is_the_papers_figure_less_dropout_plus_the_normalized_outputs(none):
    paper = none.value(none.queries[1].value.expr)
    assert paper == 34 * SBH + 5 * ASSB == 2_868_903_936
    dropout = 2 * SBH + 3 * ASSB       # two sbh masks, the softmax mask a·s²·b and its output 2·a·s²·b
    normalized = 2 * 2 * SBH           # each LayerNorm's normalized output, read by γ's gradient
    assert _per_layer(none) == 36 * SBH + 2 * ASSB == paper - dropout + normalized == 1_711_276_032


def test_the_tensors_kept_per_layer(none):
    per = {t.tensor: none.value(t.bytes) for t in none.footprint.saved_tensors}
    # L = 2: each body tensor × 2, x (layer 1's input) once and y × 1 (layer 2's input)
    assert per["x"] == per["y"] == 2 * SBH
    assert per["y.r.attention_prefill.probs"] == 2 * 2 * ASSB          # fp16 probabilities
    assert per["y.gelu_mlp.matmul"] == per["y.gelu_mlp.gelu"] == 2 * 8 * SBH              # GELU's input and output, 4h wide
    assert "y.r.attention_prefill.scores" not in per                    # softmax's gradient reads y only
    assert sum(per.values()) == 2 * (36 * SBH + 2 * ASSB)


def test_selective_drops_the_probabilities():
    a = _run("selective")
    paper = a.value(a.queries[2].value.expr)
    assert paper == 34 * SBH == 855_638_016
    # 36·s·b·h: the paper's 34·s·b·h less the two dropout masks (2·s·b·h), plus the normalized outputs (4·s·b·h)
    assert _per_layer(a) == 36 * SBH == paper - 2 * SBH + 4 * SBH == 905_969_664


TP = EXAMPLES / "training" / "activation_memory_gpt_tp.cost"


def _run_tp(policy):
    text = TP.read_text(encoding="utf-8").replace("recompute = none", f"recompute = {policy}")
    return load_string(text, str(TP)).analyze()


def test_tensor_parallel_saved_activations_per_gpu_against_the_paper():
    a = _run_tp("none")
    mine, tp, tp_sp = (a.value(q.value.expr) for q in a.queries[:3])
    assert tp == SBH * (10 + 3 + 10) == 578_813_952                 # Eq. 3 at t = 8: 24/8 = 3, 5·a·s/(h·t) = 10
    assert tp_sp == SBH // 8 * 114 == 358_612_992                    # Eq. 4: s·b·h/8·(34 + 80)
    # costlang: 12·s·b·h whole on every GPU, 24·s·b·h/8 and the probabilities 2·a·s²·b/8 split
    assert mine == 12 * SBH + 24 * SBH // 8 + 2 * ASSB // 8 == 478_150_656
    # against Eq. 3: no dropout (2·s·b·h whole, 3·a·s²·b/8 split), the normalized outputs kept (4·s·b·h)
    assert mine == tp - 2 * SBH - 3 * ASSB // 8 + 4 * SBH
    # against Eq. 4: the same differences over t, and the 12·s·b·h that sequence parallelism would split
    assert mine == tp_sp - (2 * SBH + 3 * ASSB) // 8 + 4 * SBH // 8 + 12 * SBH - 12 * SBH // 8


def test_tensor_parallel_selective_keeps_no_probabilities():
    a = _run_tp("selective")
    assert a.value(a.queries[0].value.expr) == 12 * SBH + 24 * SBH // 8 == 377_487_360
    assert a.value(a.queries[3].value.expr) == 34 * SBH // 8 == 106_954_752
