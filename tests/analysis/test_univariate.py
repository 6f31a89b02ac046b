"""max() and min() in one positive symbol, decided exactly (analysis.univariate), and the memo
tables that use it."""
import sympy
from hypothesis import given, settings, strategies as st

from costlang.analysis import memo
from costlang.analysis.univariate import sign_in_one, undominated_in_one

q = sympy.Symbol("q", positive=True, integer=True)
R = sympy.Rational


def test_an_argument_below_another_everywhere_is_dropped_and_crossing_ones_kept():
    # 2/q ≤ 3/q for every q > 0: dropped. 3/q = 1 + 1/q ⇔ q = 2: 3/q is larger below 2, 1 + 1/q
    # above, so both stay (in sympy's canonical order)
    assert set(undominated_in_one((2 / q, 1 + 1 / q, 3 / q), True)) == {3 / q, 1 + 1 / q}
    # min() over x > 0: 2/x ≤ 3/x drops 3/x; 2/x = 1 + 1/x at x = 1, so both stay (x = 1/2: 4 > 3)
    x = sympy.Symbol("x", positive=True)
    assert set(undominated_in_one((2 / x, 1 + 1 / x, 3 / x), False)) == {2 / x, 1 + 1 / x}
    assert memo.smin(2 / x, 1 + 1 / x, 3 / x) == sympy.Min(2 / x, 1 + 1 / x, evaluate=False)
    # over q = 1, 2, 3, …: 2/q − (1 + 1/q) = 1/q − 1 ≤ 0, so min() is 2/q (equal at q = 1)
    assert memo.smin(2 / q, 1 + 1 / q, 3 / q) == 2 / q


def test_a_scaled_max_inside_is_compared_as_the_max_it_is():
    # 7/4·max(1/q, 1/2) ≥ 7/4·(1/q) > 1/q everywhere: 1/q goes, the scaled max() alone is the result
    inner = sympy.Max(1 / q, R(1, 2))
    assert memo.smax(1 / q, R(7, 4) * inner) == R(7, 4) * inner
    # 1 + 1/q against 7/4·max(1/q, 1): at q = 1, 2 > 7/4; at q = 1/4 (below the crossing of
    # 7/(4q) = 1 + 1/q, q = 3/4), 5 < 7: both stay
    inner = sympy.Max(1 / q, 1)
    assert set(undominated_in_one((1 + 1 / q, R(7, 4) * inner), True)) == {1 + 1 / q, R(7, 4) * inner}


def test_equal_functions_written_apart_keep_one_and_one_argument_is_itself():
    # (q + 1)/q is 1 + 1/q: one of them stays, and max() of one thing is that thing
    assert len(undominated_in_one((1 + 1 / q, (q + 1) / q), True)) == 1
    assert memo.smax(1 + 1 / q, (q + 1) / q) in (1 + 1 / q, (q + 1) / q)
    assert undominated_in_one((1 / q,), True) is None       # nothing to compare: sympy's way


def test_what_it_cannot_decide_is_left_to_sympy():
    B = sympy.Symbol("B", positive=True)
    assert undominated_in_one((q, 1 / q), True) is None        # q − 1/q: a crossing at q² = 1
    assert undominated_in_one((q, B), True) is None            # two symbols
    assert undominated_in_one((q, sympy.sqrt(q)), True) is None
    assert undominated_in_one((q, sympy.Min(2, q)), True) is None   # max() of min(): sympy rewrites those
    # a large power is not expanded nor raised at a point (it would take seconds): sympy's way
    assert undominated_in_one(((q + 1) ** 1000, q ** 2), True) is None
    assert sign_in_one(q ** 100000 - 1) == (False, None)
    # a power up to 8 is: (q + 1)² = q² + 2q + 1 ≥ q² + 2q everywhere (one sign: +1)
    assert sign_in_one((q + 1) ** 2 - q ** 2 - 2 * q) == (True, 1)


def test_signs_of_a_laurent_polynomial_in_one_symbol():
    # every coefficient positive: +1; 1 − 2/q is zero at q = 2 (changes sign): undecided; 1 − 1/q
    # touches 0 at q = 1: no strict sign; 2 − 1/q is zero at q = 1/2, below every whole q: +1
    assert sign_in_one(3 + 2 / q) == (True, 1) and sign_in_one(-3 - q) == (True, -1)
    assert sign_in_one(1 - 2 / q) == (True, None) and sign_in_one(1 - 1 / q) == (True, None)
    assert sign_in_one(2 - 1 / q) == (True, 1)
    # over x > 0 the same 2 − 1/x changes sign at x = 1/2
    x = sympy.Symbol("x", positive=True)
    assert sign_in_one(2 - 1 / x) == (True, None) and sign_in_one(x - x + 0) == (False, None)


def test_the_pods_examples_stage_bound_drops_what_its_scaled_max_covers():
    # examples/parallel/llama3_70b_pods.cost, the first stage's bound, per chip (s): forward-only
    # terms against 7/4·max() of the step's (the 1F1B pipeline's (m + p − 1)/m = 7/4 stretch).
    # a/q ≤ 7/4·a/q everywhere; 21918912/3271484375 + 43742714624/(3271484375·q) is below
    # 7/4·(17483824/3271484375 + 43738279536/(3271484375·q)) (30596692 > 21918912 and
    # 76541989188 > 43742714624): both dropped. The gradients' (8870176·(q − 1) + 281018368)/(48828125·q)
    # crosses 7/4·max(…): at q = 1, 5.755 against 7/4·a = 26.08; as q → ∞, 8870176/48828125 = 0.1817
    # against 7/4·4435088/48828125 = 0.1590. Both stay.
    a = R(322813704686323336, 21656425048828125)
    grads = R(8870176, 48828125) * (q - 1) / q + R(281018368, 48828125) / q
    inner = sympy.Max(a / q, R(17483824, 3271484375) + R(43738279536, 3271484375) / q,
                      R(4435088, 48828125) * (q - 1) / q + R(281018368, 48828125) / q)
    args = (a / q, R(21918912, 3271484375) + R(43742714624, 3271484375) / q, grads, R(7, 4) * inner)
    kept = undominated_in_one(args, True)
    assert set(kept) == {grads, R(7, 4) * inner}
    whole = lambda v: max(x.subs(q, v) for x in args)   # noqa: E731
    assert all(max(x.subs(q, v) for x in kept) == whole(v) for v in (1, 2, 16, 50, 51, 64, 10 ** 6))


x_real = sympy.Symbol("x", positive=True)
pairs = st.tuples(st.tuples(st.integers(0, 20), st.integers(1, 5)), st.tuples(st.integers(0, 20), st.integers(1, 5)))


@settings(max_examples=60, deadline=None)
@given(st.lists(pairs, min_size=2, max_size=6), st.booleans(), st.booleans())
def test_the_result_is_the_same_function_and_drops_what_sympy_drops(coefficients, largest, whole):
    x = q if whole else x_real          # q = 1, 2, 3, … or x > 0
    args = [R(*a) + R(*b) / x for a, b in coefficients]
    kept = undominated_in_one(tuple(args), largest)
    if len(set(args)) < 2 or all(a.is_number for a in args):
        assert kept is None     # nothing to compare, or nothing in x: sympy's way
        return
    pick = max if largest else min
    # the same values on each side of every crossing: a + b/x = c + d/x at x = (d − b)/(a − c)
    points = {R(1), R(10 ** 6)}
    for a, b in coefficients:
        for c, d in coefficients:
            if R(*a) != R(*c):
                cut = (R(*d) - R(*b)) / (R(*a) - R(*c))
                if cut > 0:
                    points |= {sympy.floor(cut), sympy.floor(cut) + 1} if whole else {cut / 2, cut, cut * 2}
    for v in points:
        if v >= 1 or not whole:
            assert pick(e.xreplace({x: v}) for e in kept) == pick(e.xreplace({x: v}) for e in args)
    # every argument sympy drops (for q it knows q ≥ 1), this drops too
    theirs = (sympy.Max if largest else sympy.Min)(*args)
    theirs = set(theirs.args) if isinstance(theirs, (sympy.Max, sympy.Min)) else {theirs}
    assert set(kept) <= theirs
