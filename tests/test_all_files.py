"""Every `.cost` file in examples/ runs, and every stdlib file checks.

Each example is analysed once, as `costlang run` analyses it (`analysis.pipeline.analyze`), and
both of `run`'s printers read that analysis: the text report (which must hold no raw sympy) and
strict JSON (no NaN or Infinity). The command line's own path (`main(["run", ...])`) is driven by
tests/test_cli.py and others; running it here too would analyse every example twice more.
"""
import json

import pytest

from conftest import ROOT, example_files, stdlib_files
from costlang import load
from costlang.analysis.pipeline import analyze
from costlang.cli import main
from costlang.printers.json import to_json
from costlang.printers.text import report
from test_no_raw_sympy import raw_sympy


def _strict(constant):
    raise ValueError(f"JSON holds {constant}")


@pytest.mark.parametrize("path", example_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_example_runs(path):
    analysis = analyze(load(path).program)
    out = report(analysis)
    assert "kernels" in out
    # the report of every example, the model-scale ones included, has no raw sympy (issue 9;
    # test_no_raw_sympy scans compare, sweep and derive too, the heavy examples with COSTLANG_SLOW=1)
    assert raw_sympy(out, path.read_text(encoding="utf-8")) == []
    assert json.loads(to_json(analysis), parse_constant=_strict)["kernels"]


@pytest.mark.parametrize("path", stdlib_files(), ids=lambda p: p.name)
def test_stdlib_checks(path, capsys):
    assert main(["check", str(path)]) == 0
    assert capsys.readouterr().err == ""
