"""Recomputation as a block call's option: `y = block(...) { recompute = POLICY }` overrides the train
statement's policy for that instance (a repeat's included). Every number is derived by hand beside it.

The model: x: bf16[B, D] (an input: no gradient), B = 1024, D = 4096, and two calls of
mlp(x) = gelu(x·W1)·W2. A matmul is 2·B·D² = 34,359,738,368 FLOP; a GELU 10 FLOP per element (B·D =
4,194,304 elements: 41,943,040), its gradient 14 (58,720,256).
"""
import pytest

from costlang import CostlangError, load_string
from costlang.analysis.training import training_figures

MM, GELU, GRAD_GELU = 2 * 1024 * 4096 ** 2, 10 * 1024 * 4096, 14 * 1024 * 4096


def program(first: str = "", second: str = "", train: str = "", repeat: str = "") -> str:
    return f"""use hardware h100_sxm
dim B = 1024, D = 4096
block mlp(x: bf16[b, d]) {{
    weight W1: bf16[d, d]
    weight W2: bf16[d, d]
    return gelu(x @ W1) @ W2
}}
input x: bf16[B, D]
h = {repeat}mlp(x){first}
y = mlp(h){second}
output y
train {{ {train} }}
"""


def figures(src):
    a = load_string(src).analyze()
    t = training_figures(a)
    return a, a.value(t.model_flops), a.value(t.hardware_flops)


# model FLOPs: the forward's 4 matmuls; the backward's dW2, d(gelu), dW1 for h's call (x needs no
# gradient) and dW2, d(gelu), dW1, dh for y's: 11 matmuls; 2 GELUs and 2 GELU gradients
MODEL = 11 * MM + 2 * GELU + 2 * GRAD_GELU      # 378,158,448,640


def test_full_recomputation_of_one_call_is_counted_as_hardware_flops_only():
    a, model, hardware = figures(program(first=" { recompute = full }"))
    assert model == MODEL == 378_158_448_640
    # h's forward runs again before its backward: 2 matmuls and a GELU, 68,761,419,776 FLOP
    assert hardware - model == 2 * MM + GELU == 68_761_419_776
    t = training_figures(a)
    assert t.recompute == "none" and t.recompute_calls == (("h", "full"),)


def test_recompute_none_on_a_call_keeps_hfu_equal_to_mfu():
    a, model, hardware = figures(program(first=" { recompute = none }"))
    t = training_figures(a)
    assert hardware == model and a.value(t.hfu()) == a.value(t.mfu())


def test_a_call_overrides_the_train_statements_policy():
    # the train statement asks for full recomputation of every repeated body; the call says none
    _, model, hardware = figures(program(first=" { recompute = none }", repeat="repeat(2) ", train="recompute = full"))
    assert hardware == model
    # and the other way round: the call on the repeat asks for what the statement would give
    _, m1, h1 = figures(program(first=" { recompute = full }", repeat="repeat(2) "))
    _, m2, h2 = figures(program(repeat="repeat(2) ", train="recompute = full"))
    # a repeat(2) of mlp: each iteration's 2 matmuls and GELU run again, 2·(2·MM + GELU)
    assert (m1, h1) == (m2, h2) and h1 - m1 == 2 * (2 * MM + GELU)


def test_recompute_needs_a_training_step_and_one_of_three_policies():
    with pytest.raises(CostlangError, match="`recompute` is a training step's option"):
        load_string(program(first=" { recompute = full }").replace("train {  }\n", ""))
    with pytest.raises(CostlangError, match="`recompute` is one of none, selective, full"):
        load_string(program(first=" { recompute = some }"))


def test_a_measured_step_gives_the_achieved_mfu_and_hfu():
    # `measure step { time = 1 ms }`: MFU = model FLOPs / (1 ms · 1 chip · 989.5 TFLOP/s bf16)
    #   = 378,158,448,640 / 989,500,000,000 = 75631689728/197900000000; HFU with the recomputed h
    #   forward, 446,919,868,416 / 989,500,000,000
    src = program(first=" { recompute = full }") + ("measure step { time = 1 ms }\n"
                                                    "query \"achieved MFU\" = achieved_mfu()\n"
                                                    "query \"achieved HFU\" = achieved_hfu()\n")
    a = load_string(src).analyze()
    mfu, hfu = (a.value(q.value.expr) for q in a.queries)
    from sympy import Rational
    assert mfu == Rational(378_158_448_640, 989_500_000_000)
    assert hfu == Rational(446_919_868_416, 989_500_000_000)
    assert training_figures(a).measured == Rational(1, 1000)


def test_measure_step_needs_a_training_step_and_achieved_mfu_a_measure():
    with pytest.raises(CostlangError, match="`measure step` measures a training step"):
        load_string(program().replace("train {  }\n", "") + "measure step { time = 1 ms }\n").analyze()
    with pytest.raises(CostlangError, match="the step has no `measure step` block"):
        load_string(program() + "query achieved_mfu()\n").analyze()
