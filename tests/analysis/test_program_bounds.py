"""A program's bounds: max() of its sums is compared where the sums are numbers and left as it
stands where they are symbolic (a value substitutes the sizes first, then compares numbers)."""
import sympy

from costlang.analysis.comms import program_bounds
from costlang.analysis.memo import substitute

n = sympy.Symbol("n", positive=True, integer=True)


def test_symbolic_sums_are_not_compared_until_a_value_is_asked_for():
    # T_compute = 2n, T_memory = 3n, T_comms = n, no launches: sympy would reduce max(2n, 3n, n) to
    # 3n; the bound keeps the three sums, and at n = 4 it is max(8, 12, 4) = 12 all the same
    lower, upper = program_bounds(2 * n, 3 * n, n, sympy.Integer(0))
    assert isinstance(lower, sympy.Max) and set(lower.args) == {2 * n, 3 * n, n}
    assert substitute(lower, {n: 4}) == 12 and upper == 6 * n


def test_numeric_sums_are_compared():
    # max(2, 3, 1) = 3 µs, + 1 µs of launches: 4 µs; upper 2 + 3 + 1 + 1 = 7 µs
    us = sympy.Rational(1, 10 ** 6)
    lower, upper = program_bounds(2 * us, 3 * us, us, us)
    assert (lower, upper) == (4 * us, 7 * us)


def test_a_pipeline_with_once_per_step_kernels():
    # stretch 11/8; the step's sums (Tc, Tm, Tcomms, launches) = (8, 4, 6, 0), of which the kernels
    # run once per step take (1, 1, 4, 0): the stage's max(7, 3, 2) = 7, stretched 77/8 = 9.625,
    # against the whole step's max(8, 4, 6) = 8: lower 77/8; upper 11/8 · (7 + 3 + 2) + 6 = 22.5
    R = sympy.Rational
    stretch = R(11, 8)
    once = (sympy.Integer(1), sympy.Integer(1), sympy.Integer(4), sympy.Integer(0))
    lower, upper = program_bounds(8 * n, 4 * n, 6 * n, sympy.Integer(0), stretch, tuple(e * n for e in once))
    assert substitute(lower, {n: 1}) == R(77, 8) and substitute(upper, {n: 1}) == R(45, 2)
    numeric = program_bounds(sympy.Integer(8), sympy.Integer(4), sympy.Integer(6), sympy.Integer(0), stretch, once)
    assert numeric == (R(77, 8), R(45, 2))
