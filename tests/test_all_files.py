"""Every `.cost` file in examples/ runs through the CLI, and every stdlib file checks."""
import pytest

from conftest import ROOT, example_files, stdlib_files
from costlang.cli import main


@pytest.mark.parametrize("path", example_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_example_runs(path, capsys):
    assert main(["run", str(path)]) == 0
    assert "kernels" in capsys.readouterr().out
    assert main(["run", "--json", str(path)]) == 0


@pytest.mark.parametrize("path", stdlib_files(), ids=lambda p: p.name)
def test_stdlib_checks(path, capsys):
    assert main(["check", str(path)]) == 0
    assert capsys.readouterr().err == ""
