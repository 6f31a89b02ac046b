"""Which memory level binds a kernel: the one with the largest T_memory, the main one when free
symbols leave the order open; decided without `simplify` where the answer cannot depend on it."""
import pytest
import sympy

from costlang.analysis import levels
from costlang.analysis.levels import LevelTime, binding_level

n = sympy.Symbol("n", positive=True, integer=True)


def _level(name, t):
    return LevelTime(name, sympy.Integer(0), sympy.Integer(1), None, t)


@pytest.fixture
def no_simplify(monkeypatch):
    def refuse(e, *a, **k):
        raise AssertionError(f"simplify called on {e}")
    monkeypatch.setattr(levels.sympy, "simplify", refuse)


def test_no_level_evidently_slower_than_the_main_one_is_the_main_one_without_simplify(no_simplify):
    # HBM: n/1000 s; SMEM: ceiling(n/64)/100000 s. SMEM − HBM = ceiling(n/64)/1e5 − n/1e3, which
    # is negative for every n ≥ 1 (ceiling(n/64) ≤ n/64 + 1, so the difference ≤ n/6.4e6 + 1e-5 − n/1e3
    # < 0), yet sympy's assumptions cannot say so; neither answer moves the binding level off HBM
    hbm = _level("HBM", n / 1000)
    smem = _level("SMEM", sympy.ceiling(n / 64) / 100000)
    assert binding_level((hbm, smem), "HBM", {}) is hbm


def test_a_level_evidently_slower_binds(no_simplify):
    # L2: 2n/1000 s against HBM's n/1000 s: L2 − HBM = n/1000 > 0 for every n
    hbm, l2 = _level("HBM", n / 1000), _level("L2", 2 * n / 1000)
    assert binding_level((hbm, l2), "HBM", {}) is l2


def test_an_order_that_flips_with_the_symbol_is_the_main_level_without_simplify(no_simplify):
    # L2 is evidently slower than HBM (3n/1000 against n/1000); SMEM against L2: 1/10 − 3n/1000
    # is positive at n = 1 and negative at n = 2^20, so the order is open and the main level binds
    hbm, l2, smem = _level("HBM", n / 1000), _level("L2", 3 * n / 1000), _level("SMEM", sympy.Rational(1, 10))
    assert binding_level((hbm, l2, smem), "HBM", {}) is hbm


def test_bound_values_decide_the_order():
    # at n = 4096: HBM 4.096 s, SMEM ceiling(64)/1e5 = 0.00064 s: HBM binds; at n = 1 with SMEM
    # 1/10 s: SMEM (0.1 s) beats HBM (0.001 s)
    hbm, smem = _level("HBM", n / 1000), _level("SMEM", sympy.ceiling(n / 64) / 100000)
    assert binding_level((hbm, smem), "HBM", {n: 4096}) is hbm
    slow = _level("SMEM", sympy.Rational(1, 10))
    assert binding_level((hbm, slow), "HBM", {n: 1}) is slow
