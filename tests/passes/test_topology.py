"""Many chips, second round: degenerate axes, topology, hierarchical collectives, overlap and the
interleaved pipeline. Every expected value is derived by hand in the comment next to it."""

import pytest
import sympy

from costlang import CostlangError, load_string

R = sympy.Rational

CHIP = "hardware chip { peak fp16 = 1000 TFLOP/s; memory HBM { bandwidth = 2 TB/s; capacity = 80 GB }; launch = 0 s }\n"


def run(text: str):
    return load_string(CHIP + text).analyze()


def query(a, name):
    return a.value(next(q for q in a.queries if q.name == name).value.expr)


# --- degenerate axes are free ---------------------------------------------------------------------

ONE = "system one { chip = chip; axis pp = 1; link InfiniBand over pp { one_way = 50 GB/s; latency = 2 us } }\nuse system one\n"


@pytest.mark.parametrize("op", ["send", "all_reduce", "all_gather", "all_to_all", "reduce_scatter"])
def test_collective_over_one_chip_is_free(op):
    # one chip in the group: nothing crosses a link and nothing moves in HBM (a view of x); before,
    # a send cost n/BW + α = 131,072/50e9 + 2 µs ≈ 4.62 µs here
    a = run(ONE + f"input x: fp16[64, 1024]\ny = {op}(x, over = pp)\noutput z = x + y")
    assert [k.name for k in a.kernels] == ["z"]                 # only the add is a kernel
    assert a.totals.t_comms == 0
    assert a.kernels[0].bytes_read == 64 * 1024 * 2            # x once: y is x's storage


def test_one_stage_pipeline_sends_nothing():
    a = run(ONE + "block layer(x: fp16[b, d]) {\n    weight W: fp16[d, d]\n    return x @ W\n}\n"
            "parallel pipeline over pp { microbatches = 4 }\ninput x: fp16[64, 1024]\n"
            "output y = repeat(4) layer(x)\nquery \"bubble\" = bubble()")
    assert not any(k.comms for k in a.kernels)                 # no y_send
    assert query(a, "bubble") == 0                             # (1 − 1)/(4 + 1 − 1)
    # 4 layers, each T_memory = (131,072 + 2,097,152 + 131,072) B / 2 TB/s; no comms: the plain sum
    assert a.totals.t_memory == 4 * R(2359296, 2 * 10 ** 12)


def test_comms_memory_tie_is_not_the_ridge():
    # a send over 2 chips of n = 131,072 B: T_memory = 2n / 2 TB/s = n / 1 TB/s = T_comms at 1 TB/s
    from costlang.printers.derivation.markdown import MarkdownPrinter
    text = CHIP + ("system two { chip = chip; axis pp = 2; link InfiniBand over pp { one_way = 1 TB/s } }\n"
                   "use system two\ninput x: fp16[64, 1024]\ny = send(x, over = pp)\n")
    a = load_string(text).analyze()
    (k,) = a.kernels
    assert k.t_comms == k.t_memory == R(131072, 10 ** 12) and str(k.bound.bound) == "balanced"
    for lang in ("en", "ko"):
        out = MarkdownPrinter(lang=lang).doprint(a)
        assert r"T_{\mathrm{comms}} = \max\left(T_{\mathrm{compute}}, T_{\mathrm{memory}}\right)" in out
        assert "ridge point" not in out and "I = 0 = I^{*}" not in out and "꺾이는 점 위에" not in out
