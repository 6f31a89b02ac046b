"""Every `.cost` file in examples/ runs, and every stdlib file checks.

Each example is analysed once, as `costlang run` analyses it (`analysis.pipeline.analyze`), and
both of `run`'s printers read that analysis: the text report (which must hold no raw sympy) and
strict JSON (no NaN or Infinity); so do compare, sweep and derive, scanned for raw sympy
(`test_no_raw_sympy`) but for the model-scale examples, which that file scans with the slow tests. The command line's own path (`main(["run", ...])`) is driven by
tests/cli/test_cli.py and others; running it here too would analyse every example twice more.
"""
import json

import pytest

from conftest import EXAMPLES, ROOT, example_files, stdlib_files
from costlang import load
from costlang.budget import DEFAULT_SECONDS, limit
from costlang.queries.pipeline import analyze
from costlang.cli import main
from costlang.printers.data.json import to_json
from costlang.printers.text.report import report
from test_no_raw_sympy import HEAVY, raw_sympy, raw_sympy_in_outputs


def _strict(constant):
    raise ValueError(f"JSON holds {constant}")


@pytest.mark.parametrize("path", example_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_example_runs(path):
    with limit(DEFAULT_SECONDS / 3):   # a margin of 3 on every budgeted operation of every example
        analysis = analyze(load(path).program)
    out = report(analysis)
    assert "kernels" in out
    assert json.loads(to_json(analysis), parse_constant=_strict)["kernels"]
    # no raw sympy: in the report of every example, the model-scale ones included, and
    # in compare, sweep and derive of every other one, from this same analysis (the model-scale
    # ones' full scan is in test_no_raw_sympy, with COSTLANG_SLOW=1)
    assert raw_sympy(out, path.read_text(encoding="utf-8")) == []
    if str(path.relative_to(EXAMPLES)) not in HEAVY:
        found = raw_sympy_in_outputs(path, analysis)
        assert not found, "\n".join(f"{cmd}: {token!r} in {line}" for cmd, token, line in found[:20])


@pytest.mark.parametrize("path", stdlib_files(), ids=lambda p: p.name)
def test_stdlib_checks(path, capsys):
    assert main(["check", str(path)]) == 0
    assert capsys.readouterr().err == ""
