"""max()/min() branches of a solve's equation (queries/extrema.py): which branches are solved."""
import sympy

from costlang.queries.extrema import branch_roots

a = sympy.Symbol("a", positive=True)
x = sympy.Symbol("x", positive=True)
# f = max(a·x, x²) − 2 has two branches: a·x − 2 (root 2/a) and x² − 2 (root √2; sympy keeps the
# positive one, x being positive)
F = sympy.Max(a * x, x ** 2) - 2
AT_ONE = (lambda e: e.xreplace({a: 1}))   # a = 1


def test_every_branch_is_solved_without_points():
    assert {r for r, _ in branch_roots(F, x)} == {2 / a, sympy.sqrt(2)}


def test_a_branch_that_cannot_pass_through_the_point_is_not_solved():
    # at a = 1, x = 2: a·x − 2 = 0 (kept); x² − 2 = 2, a nonzero rational (skipped)
    found = branch_roots(F, x, (AT_ONE, [sympy.Integer(2)]))
    assert [r for r, _ in found] == [2 / a]
    assert found[0][1].choice == ((sympy.Max(a * x, x ** 2), a * x),)


def test_a_branch_whose_value_at_the_point_is_not_rational_is_kept():
    # at x = √2: x² − 2 = 0 (kept); a·x − 2 = √2 − 2, not a rational, so it is not ruled out
    found = branch_roots(F, x, (AT_ONE, [sympy.sqrt(2)]))
    assert {r for r, _ in found} == {2 / a, sympy.sqrt(2)}


def test_no_point_solves_nothing():
    assert branch_roots(F, x, (AT_ONE, [])) == []
