"""The Python API: a concise repr, `analyze(settings=...)` with exact values, doctested docstrings."""
from fractions import Fraction

import pytest

from conftest import EXAMPLES

from costlang import load_string
from costlang.errors import CostlangError

RELU = "use hardware chapter_gpu\ndim N\ninput x: fp16[N]\ny = relu(x)\n"


def test_repr_is_one_short_line():
    m = load_string(RELU, name="relu.cost")
    assert repr(m) == "<costlang.Model 'relu.cost': 1 op, 2 tensors, free symbols N, hardware chapter_gpu>"


def test_settings_bind_a_free_size_exactly():
    a = load_string(RELU).analyze(settings={"N": 10 ** 6})
    k = a.kernels[0]
    # relu on fp16: 1 FLOP and 2 B read + 2 B written per element → 10^6 FLOP, 4·10^6 B, I = 1/4
    assert a.value(k.flops) == 10 ** 6 and a.value(k.bytes) == 4 * 10 ** 6
    assert a.value(k.intensity) == Fraction(1, 4)


def test_a_fraction_setting_stays_exact():
    m = load_string("use hardware chapter_gpu\nparam s\ndim N = 8\ninput x: fp16[N]\n"
                    "y = custom(x) { flops = s * N }\n")
    a = m.analyze(settings={"s": Fraction(1, 3)})
    assert a.value(a.kernels[0].flops) == Fraction(8, 3)  # (1/3)·8, not 2.666…


def test_settings_change_dtypes_and_hardware_like_set():
    m = load_string(RELU)
    a = m.analyze(settings={"N": 1000, "x": "fp32", "hardware": "h100_sxm"})
    # as if the file declared x fp32: relu computes in fp32 and stores y in fp32, so 4 + 4 B per
    # element, 8 B · 1000 = 8000 B (a what-if gives what editing the file gives)
    assert a.value(a.kernels[0].bytes) == 8000
    assert a.hardware.name == "h100_sxm"


def test_the_original_model_is_unchanged_by_settings():
    m = load_string(RELU)
    m.analyze(settings={"N": 5})
    assert [str(s) for s in m.program.free_symbols] == ["N"]


@pytest.mark.parametrize("value", [0.5, True, None, [1]])
def test_inexact_or_odd_values_are_refused(value):
    with pytest.raises(TypeError):
        load_string(RELU).analyze(settings={"N": value})


def test_a_bad_setting_is_a_positioned_costlang_error():
    with pytest.raises(CostlangError) as e:
        load_string(RELU).analyze(settings={"Nn": 5})
    assert "Nn" in e.value.render()


def test_queries_by_name_steps_as_text_and_clear_errors():
    import sympy
    from costlang import load
    from costlang.api import Analysis
    a = load(EXAMPLES / "roofline" / "gemm_4096.cost").analyze()
    # C = A·B with 4096² fp16 matrices: 2·4096³ = 137,438,953,472 FLOP, I = 2·4096³/(3·4096²·2) = 4096/3
    assert a.query("flops") == 137_438_953_472
    assert a.query("I") == sympy.Rational(4096, 3)
    assert a.value(a.queries[0].value) == 137_438_953_472          # a query's Value, bound symbols put in
    with pytest.raises(KeyError, match="the queries are: 'flops', 'bytes', 'I'"):
        a.query("zz")
    shown = a.show(steps="intensity,verdict").markdown               # a comma-separated string of steps
    assert shown == a.show(steps=["verdict", "intensity"]).markdown
    with pytest.raises(ValueError, match="did you mean 'intensity'"):
        a.show(steps="intensty")
    with pytest.raises(TypeError, match="a query's value is `analysis.query"):
        Analysis.of("I")
