"""Instances that share their weights (`{ shares = other }`), and weights apart from caches.

The block below holds one weight W: fp16[4, 4] (4·4·2 = 32 B, 16 parameters) and one cache
C: fp16[2, 4] (2·4·2 = 16 B). Two instances `a` and `c` of it hold two caches (32 B) and, when `c`
shares `a`'s weights, one W (32 B), not two (64 B).
"""
import sympy
import pytest

from conftest import query
from costlang import load_string
from costlang.cli import main
from costlang.errors import CostlangError

BLOCK = """use hardware h100_sxm
dim N = 4
block lin(x: fp16[m, n], n: dim) {
    weight W: fp16[n, n]
    cache C: fp16[m, n]
    return x @ W + C
}
input x: fp16[2, 4]
a = lin(x, n = N)
"""

QUERIES = """
query "weights" = weight_bytes()
query "weights of c" = weight_bytes(c)
query "caches" = cache_bytes()
query "caches of c" = cache_bytes(c)
query "parameters" = parameters()
query "parameters of c" = parameters(c)
"""


def _analyze(text):
    return load_string(text, "shared.cost").analyze()


def test_two_instances_hold_two_copies_unless_one_shares():
    apart = _analyze(BLOCK + "c = lin(x, n = N)\n" + QUERIES)
    shared = _analyze(BLOCK + "c = lin(x, n = N) { shares = a }\n" + QUERIES)
    # apart: W twice = 2·32 = 64 B; shared: once = 32 B. Caches are never shared: 2·16 = 32 B.
    assert query(apart, "weights") == 64
    assert query(shared, "weights") == 32
    assert query(shared, "caches") == query(apart, "caches") == 32
    # an instance counts the weights it uses, shared or not: 32 B, 16 parameters; its cache 16 B
    assert query(shared, "weights of c") == 32
    assert query(shared, "caches of c") == 16
    assert query(shared, "parameters of c") == 16
    # the program's parameters: 16 shared, 32 apart
    assert query(shared, "parameters") == 16
    assert query(apart, "parameters") == 32
    # the resident part of the footprint: weights once + both caches = 32 + 32 = 64 B (apart 96 B)
    assert shared.value(shared.footprint.resident) == 64
    assert apart.value(apart.footprint.resident) == 96


def test_shared_weights_are_read_by_both_instances():
    """Sharing is memory, not traffic: each instance's matmul still reads W (32 B)."""
    apart = _analyze(BLOCK + "c = lin(x, n = N)\n")
    shared = _analyze(BLOCK + "c = lin(x, n = N) { shares = a }\n")
    assert shared.totals.bytes == apart.totals.bytes


STACK = """
block stack(x: fp16[m, n], n: dim) {
    h = repeat(3) lin(x, n = n)
    return h
}
"""


def test_repeated_bodies_share_every_layer():
    # 3 layers of W inside each stack: 3·32 = 96 B held once (192 B apart); caches are the two
    # instances' own: 2 · 3 · 16 = 96 B; the shared instance's own weights: 96 B, 48 parameters
    text = BLOCK.replace("a = lin(x, n = N)", STACK + "a = stack(x, n = N)")
    apart = _analyze(text + "c = stack(x, n = N)\n" + QUERIES)
    shared = _analyze(text + "c = stack(x, n = N) { shares = a }\n" + QUERIES)
    assert query(apart, "weights") == 192
    assert query(shared, "weights") == 96
    assert query(shared, "caches") == 96
    assert query(shared, "weights of c") == 96
    assert query(shared, "parameters of c") == 48
    assert shared.value(shared.footprint.resident) == 96 + 96


def test_sharing_needs_the_same_repeat_count():
    text = BLOCK.replace("a = lin(x, n = N)", STACK + STACK.replace("stack", "stack2").replace("(3)", "(2)")
                         + "a = stack(x, n = N)")
    with pytest.raises(CostlangError, match=r"weight 'c.h.W' \(fp16\[N, N\], × 2\) differs from 'a.h.W' "
                                            r"\(fp16\[N, N\], × 3\)"):
        _analyze(text + "c = stack2(x, n = N) { shares = a }\n")


def test_a_what_if_retypes_the_shared_weights_of_both():
    from costlang.frontend.settings import parse_scenario
    from costlang.queries.whatif import Settings, scenario_analysis
    base = _analyze(BLOCK + "c = lin(x, n = N) { shares = a }\n" + QUERIES)
    name, settings = parse_scenario("q: weights = int8")
    a = scenario_analysis(base, settings)
    # int8 W: 16 elements · 1 B = 16 B, held once
    assert a.value(a.program.tensors["a.W"].bytes) == 16
    assert a.program.tensors["c.W"].storage == "a.W"
    assert a.program.tensors["c.W"].dtype.name == "int8"


@pytest.mark.parametrize("call, message", [
    ("c = lin(x, n = 2 * N) { shares = a }", "weight 'c.W' (fp16[2*N, 2*N], × 1) differs from 'a.W' (fp16[N, N], × 1)"),
    ("c = lin(x, n = N) { shares = b }", "`shares` names a block instance defined above"),
    ("c = lin(x, n = N) { share = a }", "a block call takes no option 'share'"),
])
def test_sharing_that_cannot_hold_is_a_positioned_error(tmp_path, capsys, call, message):
    f = tmp_path / "bad.cost"
    f.write_text(BLOCK.replace("input x: fp16[2, 4]", "input x: fp16[2, 4]\ninput y: fp16[2, 8]")
                 + call.replace("lin(x, n = 2 * N)", "lin(y, n = 2 * N)") + "\n")
    assert main(["run", str(f)]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert "bad.cost:11:" in err and "^" in err and "Traceback" not in err
