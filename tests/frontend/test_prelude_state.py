"""The prelude's resolver state, kept once per process (frontend.resolve._restore_prelude): each
what-if scenario resolves its file again, and restoring the prelude must give what resolving it
gives, share no container between programs, and follow edits of the stdlib files."""
import shutil

import pytest

from costlang import _resources
from costlang.frontend import resolve as resolve_module
from costlang.frontend.parser import parse
from costlang.frontend.resolve import resolve

TEXT = "use hardware h100_sxm\ndim N = 4\ninput x: fp16[N]\ny = relu(x)\n"


def _fresh(module):
    resolve_module._PRELUDE.clear()
    return resolve(module, None)


def test_a_restored_prelude_gives_what_resolving_it_gives():
    module = parse(TEXT, "t.cost")
    first = _fresh(module)            # resolves the prelude and keeps its state
    again = resolve(module, None)     # restores it
    assert resolve_module._PRELUDE, "the prelude's state was not kept"
    for field in ("dtypes", "ops", "hardware", "systems", "symbols", "tensors", "nodes", "bindings", "blocks"):
        assert getattr(again, field) == getattr(first, field), field
    # fp16 is 2 B (stdlib/dtypes.cost), relu on N = 4 elements: the node's FLOPs are its op's per element · 4
    assert again.dtypes["fp16"].size == 2
    assert again.tensors["y"].shape == first.tensors["y"].shape


def test_programs_share_no_container_of_the_prelude():
    module = parse(TEXT, "t.cost")
    _fresh(module)
    a = resolve(module, None)
    a.hardware.pop("h100_sxm")
    a.dtypes["fp16"] = None
    b = resolve(module, None)
    assert "h100_sxm" in b.hardware and b.dtypes["fp16"].size == 2


def test_an_edited_stdlib_file_is_read_again(tmp_path, monkeypatch):
    copy = tmp_path / "stdlib"
    shutil.copytree(_resources.stdlib_dir(), copy)
    monkeypatch.setattr(_resources, "stdlib_dir", lambda: copy)
    module = parse("use hardware h100_sxm\ndim N = 4\ninput x: mine[N]\ny = relu(x)\n", "t.cost")
    resolve_module._PRELUDE.clear()
    dtypes = copy / "dtypes.cost"
    dtypes.write_text(dtypes.read_text(encoding="utf-8") + "dtype mine = 3 B\n", encoding="utf-8")
    assert resolve(module, None).dtypes["mine"].size == 3
    # the same length, another size: the stamp (mtime, size) changes with the mtime
    import os
    stat = dtypes.stat()
    dtypes.write_text(dtypes.read_text(encoding="utf-8").replace("dtype mine = 3 B", "dtype mine = 5 B"),
                      encoding="utf-8")
    os.utime(dtypes, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10 ** 9))
    assert resolve(module, None).dtypes["mine"].size == 5
    resolve_module._PRELUDE.clear()


def test_a_scenario_after_a_restored_prelude_keeps_its_answers(tmp_path):
    # relu on fp16[N]: 1 FLOP and 2 + 2 B per element, so at N = 8 the traffic is 32 B and at N = 16, 64 B;
    # the scenario resolves the file again through the kept prelude
    from costlang import load_string
    from costlang.queries.whatif import scenario_analysis
    from costlang.frontend.settings import parse_settings
    resolve_module._PRELUDE.clear()
    base = load_string("use hardware h100_sxm\ndim N = 8\ninput x: fp16[N]\ny = relu(x)\n", "t.cost").analyze()
    assert base.value(base.totals.bytes) == 32
    other = scenario_analysis(base, parse_settings("N = 16"))
    assert other.value(other.totals.bytes) == 64
