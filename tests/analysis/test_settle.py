"""max() and min() built uncompared (`memo.unsettled`) and compared where read (`memo.settle`).

A solve's general form analyses the program with its hardware made symbolic and reads two sides of
it; its kernels' max() and min() are built uncompared and `settle` compares only the ones in those
sides. The settled value must be the one the eager construction (`smax`/`smin`) gives.
"""
import sympy

from costlang.analysis.memo import settle, smax, smin, unsettled
from costlang.api import load

B, q, BW, P = sympy.symbols("B q BW P", positive=True)
N = sympy.Symbol("N", positive=True, integer=True)


def test_settle_drops_what_the_eager_max_drops():
    # 2B/q − B/q = B/q > 0 for every B, q > 0: the max is 2B/q, as smax finds
    lazy = unsettled(sympy.Max, (B / q, 2 * B / q))
    assert isinstance(lazy, sympy.Max) and len(lazy.args) == 2   # nothing compared yet
    assert settle(lazy, {}) == 2 * B / q == smax(B / q, 2 * B / q)


def test_settle_keeps_what_no_value_orders():
    # N/P against 4N/BW (an fp16 relu's T_compute and T_memory, hardware symbolic): the first is
    # larger exactly where BW > 4P, so for some values each is: both stay
    lazy = unsettled(sympy.Max, (N / P, 4 * N / BW))
    settled = settle(lazy, {})
    assert settled == sympy.Max(N / P, 4 * N / BW) == smax(N / P, 4 * N / BW)
    assert set(settled.args) == {N / P, 4 * N / BW}


def test_settle_puts_values_in_and_settles_inside_out():
    # launch + max(min(P, BW·I), 8/q) with I = 2, BW = 3, P = 5: min(5, 6) = 5, then max(5, 8/q)
    # stays (8/q > 5 for q < 8/5); the sum's canonical form is the eager one's
    I = sympy.Symbol("I", positive=True)
    inner = unsettled(sympy.Min, (P, BW * I))
    lazy = 1 + unsettled(sympy.Max, (inner, 8 / q))
    settled = settle(lazy, {P: sympy.Integer(5), BW: sympy.Integer(3), I: sympy.Integer(2)})
    assert settled == 1 + smax(smin(sympy.Integer(5), sympy.Integer(6)), 8 / q) == 1 + sympy.Max(5, 8 / q)
    # at q = 1: 1 + max(5, 8) = 9
    assert settle(lazy, {P: 5, BW: 3, I: 2, q: 1}) == 9


def test_settle_of_a_size_of_one():
    # one argument: no max at all; a number stays itself
    assert unsettled(sympy.Max, (B,)) == B
    assert settle(sympy.Integer(7), {B: 1}) == 7


def test_general_form_reading_a_kernel_time(tmp_path):
    # y = relu(x), x: fp16[N] on the chapter's GPU (1000 TFLOP/s, 2 TB/s): bytes 4N, FLOPs N, so
    # T_kernel = max(N/P, 2·b·N/BW) with b = 2 bytes; memory-bound for every N (I = 1/4 < I* = 500),
    # so T_kernel = 1 ms at 2·b·N/BW = 1e-3, N* = BW/(2000·b) = 2e12/4000 = 5e8 in general form.
    # The general form reads the settled max() of the hardware-symbolic analysis.
    f = tmp_path / "relu.cost"
    f.write_text("use hardware chapter_gpu\ndim N\ninput x: fp16[N]\noutput y = relu(x)\n"
                 'solve "N for 1 ms": t_kernel(y) = 1 ms for N\n')
    s = load(f).analyze().solves[0]
    assert s.values == (sympy.Integer(500_000_000),)
    legend = {item.symbol.name: item.symbol for item in s.legend}
    assert s.general == (legend["BW"] / (2000 * legend["b"]),)


def test_dominated_arguments_found_in_any_order():
    # positive B, S: 3B − B = 2B > 0 and 3B − 2B = B > 0 drop B and 2B from a max; B + S − S = B > 0
    # drops S; 3B against B + S: 3B − B − S = 2B − S changes sign (B = 1, S = 10 against B = 10,
    # S = 1), so both stay. For a min, each argument above another goes: B and S stay.
    from costlang.analysis.memo import _undominated
    Bs, Ss = sympy.symbols("Bs Ss", positive=True)
    args = (Bs, 2 * Bs, 3 * Bs, Bs + Ss, Ss)
    for shuffled in (args, args[::-1], (Ss, Bs + Ss, Bs, 3 * Bs, 2 * Bs)):
        assert set(_undominated(shuffled, True)) == {3 * Bs, Bs + Ss}
        assert set(_undominated(shuffled, False)) == {Bs, Ss}
    # the kept ones keep their order in the call
    assert _undominated(args, True) == (3 * Bs, Bs + Ss)
