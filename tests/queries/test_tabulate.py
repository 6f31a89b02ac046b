"""Tabulating without sympy: straight lines of numpy operations and a sweep's compiled plan, and
their JSON-ready data, which is checked as it is read (queries.tabulate)."""
import json
import math

import numpy as np
import pytest

from conftest import EXAMPLES
from costlang import load
from costlang.analysis.bounds import BALANCED, COMPUTE
from costlang.queries.sweep import compiled_plan, parse_axis, sweep
from costlang.queries.tabulate import CompiledPlan, Mark, StraightLine, grid


def test_a_straight_line_evaluates_and_reads_back():
    # (x + 3)^2 · x^-1 at x = 1, 2, 3 → 16, 25/2, 36/3 = 12 (slots: x, 3, 2, -1, then the steps)
    line = StraightLine(1, (3.0, 2.0, -1.0), (("add", (0, 1)), ("power", (4, 2)), ("power", (0, 3)),
                                              ("multiply", (5, 6))), 7)
    x = [np.array([1.0, 2.0, 3.0])]
    assert line(x).tolist() == [16.0, 12.5, 12.0]
    again = StraightLine.from_data(json.loads(json.dumps(line.to_data())))
    assert again(x).tolist() == [16.0, 12.5, 12.0]
    # infinities travel as strings (JSON has no number for them): max(x, -inf) = x, min(x, inf) = x
    ends = StraightLine(1, (-math.inf, math.inf), (("maximum", (0, 1)), ("minimum", (3, 2))), 4)
    data = ends.to_data()
    assert data["numbers"] == ["-inf", "inf"] and StraightLine.from_data(data)(x).tolist() == [1.0, 2.0, 3.0]


@pytest.mark.parametrize("steps, result", [
    ((("system", (0,)),), 1),              # not one of numpy's operations
    ((("add", (0, 1)),), 2),               # slot 1 does not exist yet (one input, no numbers)
    ((("add", (0,)),), 1),                 # an addition takes two arguments
    ((("log", (0, 0)),), 1),               # a logarithm takes one
    ((("abs", (1,)),), 1),                 # a step may not read its own result
    ((("abs", (0,)),), 5),                 # the result is no slot
    ((("abs", (True,)),), 1),              # a slot is an int, not a bool
])
def test_a_line_that_is_not_one_is_refused(steps, result):
    with pytest.raises(ValueError):
        StraightLine(1, (), steps, result)


def test_a_compiled_plan_reads_back_and_tabulates_as_the_sweep():
    a = load(EXAMPLES / "queries/llm_decode_batch.cost").analyze()
    axes = [parse_axis(a.program, "B=1,250,500,501,1000")]
    direct = sweep(a, axes, ["tokens/s"])
    plan = compiled_plan(a, ("B",), ("tokens/s",))
    back = CompiledPlan.from_data(json.loads(json.dumps(plan.to_data(), allow_nan=False)))
    read = back.tabulate(axes, grid(axes))
    # tokens/s = B·100/7 below B* = 500, 50000/7 from it on: 100/7, 25000/7, 50000/7, 50000/7, 50000/7
    expected = [100 / 7, 25000 / 7, 50000 / 7, 50000 / 7, 50000 / 7]
    assert read.columns[0].tolist() == direct.columns[0].tolist() == pytest.approx(expected, rel=1e-15)
    # the exact regimes: balanced at 500, compute-bound from 501
    assert read.marks == direct.marks == ((), (), (Mark("step", BALANCED),), (Mark("step", COMPUTE),), ())
    assert back.kernels[0][1] == ((0.0, 500.0, False, False, 1.0), (500.0, 500.0, True, True, 0.0),
                                  (500.0, math.inf, False, False, -1.0))
    assert read.crossings == () and [c.value for c in direct.crossings] == [500]


def test_a_plan_with_a_wrong_count_is_refused():
    a = load(EXAMPLES / "queries/llm_decode_batch.cost").analyze()
    data = compiled_plan(a, ("B",), ("tokens/s",)).to_data()
    for damage in ({"labels": ["tokens/s", "again"]}, {"symbols": ["B", "S", "P"]},
                   {"kernels": [["step", {"regimes": [[0, 1, True, True, 7.0]]}]]},
                   {"units": [[0.5, 0, -1, "tokens/s"]]}):
        with pytest.raises((ValueError, TypeError, KeyError)):
            CompiledPlan.from_data({**data, **damage})
