"""Imports with arguments and namespaces; values derived by hand."""
import pytest

import costlang
from costlang.errors import CostlangError

LIB = """dim L = 2
dim d = 64
block step(x: fp16[n, d]) {
    weight w: fp16[d, d]
    return x @ w
}
input x: fp16[8, d]
h = repeat(L) step(x)
query "flops" = flops(h)
"""


def _files(tmp_path, main):
    (tmp_path / "lib.cost").write_text(LIB)
    (tmp_path / "main.cost").write_text("use hardware chapter_gpu\n" + main)
    return tmp_path / "main.cost"


def test_two_instances_with_different_arguments(tmp_path):
    main = _files(tmp_path, 'import "lib.cost" with { L = 80, d = 128 } as big\n'
                            'import "lib.cost" with { L = 4 } as small\n'
                            "query a = flops(big.h)\nquery b = flops(small.h)\n")
    a = costlang.load(main).analyze()
    q = {r.name: a.value(r.value.expr) for r in a.queries}
    # big: 80 layers of 2·8·128·128 = 262,144 FLOP; small: 4 layers of 2·8·64·64 = 65,536 FLOP
    assert q["a"] == 80 * 262_144 == 20_971_520
    assert q["b"] == 4 * 65_536 == 262_144
    # the file's own query, once per instance, labelled by its namespace
    assert q["big: flops"] == q["a"] and q["small: flops"] == q["b"]
    assert {"big.h.w", "small.h.w", "big.x", "small.x"} <= set(a.program.tensors)


def test_an_argument_that_names_nothing(tmp_path):
    main = _files(tmp_path, 'import "lib.cost" with { Q = 3 } as big\n')
    with pytest.raises(CostlangError) as info:
        costlang.load(main)
    e = info.value
    assert '"lib.cost" defines no dim or param \'Q\'' in e.render()
    assert e.errors[0].span.file.endswith("main.cost") and e.errors[0].span.line == 2


def test_a_name_defined_in_two_files_names_both(tmp_path):
    main = _files(tmp_path, 'dim d = 64\nimport "lib.cost"\n')
    with pytest.raises(CostlangError) as info:
        costlang.load(main)
    text = info.value.render()
    assert "lib.cost:2:5: error: 'd' is already defined (at line 2 of" in text and "main.cost)" in text


def test_a_plain_import_is_still_one_copy(tmp_path):
    main = _files(tmp_path, 'import "lib.cost"\nimport "lib.cost"\nquery flops(h)\n')
    a = costlang.load(main).analyze()
    assert a.value(a.queries[-1].value.expr) == 2 * 65_536
