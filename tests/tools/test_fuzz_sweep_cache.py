"""Differential fuzzing of the sweep cache: random sweeps of the examples, read back from a plan an
earlier sweep over another range kept, print exactly what the analysis prints (the same text, CSV
or JSON, the same error and status). The default suite runs a quarter of the CI sample;
COSTLANG_FUZZ=1 (which .ci/run adds) all of it."""
import os

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from conftest import EXAMPLES
from costlang.cli import main

_SCALE = os.environ.get("COSTLANG_FUZZ", "")
SCALE = 50 if _SCALE == "long" else int(_SCALE) if _SCALE.isdigit() and int(_SCALE) > 0 else 0.25

#: (file, the symbols a sweep of it may vary, the quantities it may show)
FILES = [
    ("queries/llm_decode_batch.cost", ("B", "P", "S"), ("tokens/s", "t_kernel(step)", "intensity(step)",
                                                         "footprint()")),
    ("memory/flash_attention.cost", ("M",), ("t_kernel()", "intensity()")),
    ("queries/decode_crossing.cost", ("B",), ("t_kernel()", "intensity()")),
    ("roofline/gemm_4096.cost", ("N",), ("t_kernel()", "flops()", "bytes()")),
    ("fusion/cos_cos.cost", ("N",), ("t_kernel()", "intensity()")),
]

_NUMBERS = st.sampled_from(["0", "1", "2", "3", "7.5", "16", "100", "499", "500", "501", "1000", "4096", "1e3",
                            "1e6", "2.5e9", "1e11", "1e300", "1e301", "2^10", "0.1", "-4", "1e-3", "1_000"])
_SPACING = st.sampled_from(["", ":pow2", ":lin", ":lin:1", ":lin:7", ":log:5", ":log:0", ":log", ":lin:x", ":cube"])


@st.composite
def _axis(draw, names):
    name = draw(st.sampled_from(names))
    if draw(st.booleans()):
        values = draw(st.lists(_NUMBERS, min_size=1, max_size=4))
        return name, f"{name}={','.join(values)}" if len(values) > 1 else f"{name}={values[0]},{values[0]}"
    return name, f"{name}={draw(_NUMBERS)}..{draw(_NUMBERS)}{draw(_SPACING)}"


@st.composite
def _case(draw):
    rel, names, shows = draw(st.sampled_from(FILES))
    first, text = draw(_axis(names))
    axes = [text]
    if len(names) > 1 and draw(st.booleans()):
        other = [n for n in names if n != first]
        axes.append(draw(_axis(other))[1])
    shown = draw(st.lists(st.sampled_from(shows), min_size=1, max_size=2, unique=True))
    extra = draw(st.sampled_from([[], ["--csv"], ["--json"], ["--units", "binary"], ["--exact"]]))
    return rel, axes, shown, extra


@settings(max_examples=max(1, int(60 * SCALE)), deadline=None, derandomize=SCALE <= 1, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(case=_case())
def test_a_sweep_read_back_prints_what_the_analysis_prints(case, tmp_path_factory, capsys, monkeypatch):
    rel, axes, shown, extra = case
    folder = tmp_path_factory.mktemp("cache")
    names = [a.partition("=")[0] for a in axes]

    def run(overs, cache):
        monkeypatch.setenv("COSTLANG_CACHE", cache)
        argv = ["sweep", str(EXAMPLES / rel), *[x for o in overs for x in ("--over", o)], "--show", *shown, *extra]
        code = main(argv)
        out = capsys.readouterr()
        return code, out.out, out.err
    expected = run(axes, "off")
    run([f"{n}=1..8:pow2" for n in names], str(folder))   # keeps the plan (a sweep over another range)
    assert run(axes, str(folder)) == expected, (rel, axes, shown, extra)
