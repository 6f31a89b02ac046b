"""Every `.cost` file in examples/ runs through the CLI, and every stdlib file checks."""
import pytest

from conftest import ROOT, example_files, stdlib_files
from costlang.cli import main
from test_no_raw_sympy import raw_sympy


@pytest.mark.parametrize("path", example_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_example_runs(path, capsys):
    assert main(["run", str(path)]) == 0
    out = capsys.readouterr().out
    assert "kernels" in out
    # the report of every example, the model-scale ones included, has no raw sympy (issue 9;
    # test_no_raw_sympy scans compare, sweep and derive too, the heavy examples with COSTLANG_SLOW=1)
    assert raw_sympy(out, path.read_text(encoding="utf-8")) == []
    assert main(["run", "--json", str(path)]) == 0


@pytest.mark.parametrize("path", stdlib_files(), ids=lambda p: p.name)
def test_stdlib_checks(path, capsys):
    assert main(["check", str(path)]) == 0
    assert capsys.readouterr().err == ""
