"""Start-up: `costlang run` imports only what it needs, never builds the parser and
parses none of the stdlib (it ships parsed)."""
import subprocess
import sys

from conftest import EXAMPLES

CHECK = """
import sys
from costlang.cli import main
import costlang.frontend.parser as parser_module
import costlang.frontend.loader as loader_module
def refuse(*a, **k):
    raise AssertionError("the parser was built at run time")
parser_module.build_parser = refuse
parsed = []
def parse(text, name="<string>", budgeted=True):
    parsed.append(name.replace("\\\\", "/").rsplit("/", 1)[-1])
    return parser_module.parse(text, name, budgeted)
loader_module.parse = parse
code = main(["run", sys.argv[1]])
heavy = sorted({m.split(".")[0] for m in sys.modules} & {"numpy", "matplotlib", "scipy", "pandas"})
print("heavy:", heavy, "code:", code, "parsed:", parsed, file=sys.stderr)
"""


def test_run_imports_neither_numpy_nor_matplotlib_and_loads_the_shipped_parser_and_stdlib():
    # gemm_4096.cost imports nothing itself: only the prelude and the stdlib it imports are read
    # through the loader, and every one of them comes from costlang/frontend/_generated/stdlib_ast.json
    done = subprocess.run([sys.executable, "-c", CHECK, str(EXAMPLES / "roofline/gemm_4096.cost")],
                          capture_output=True, text=True)
    assert done.stderr.strip().splitlines()[-1] == "heavy: [] code: 0 parsed: []", done.stderr


def test_the_command_flushes_its_output_and_keeps_its_status_when_it_skips_teardown(capsys):
    # `python -m costlang` ends with os._exit (cli.command): nothing printed may be lost, and the
    # status is main's: 0 for a report, 2 for bad input.
    from costlang.cli import main
    path = str(EXAMPLES / "roofline/gemm_4096.cost")
    assert main(["run", path, "--json"]) == 0
    expected = capsys.readouterr().out
    done = subprocess.run([sys.executable, "-m", "costlang", "run", path, "--json"], capture_output=True, text=True)
    assert (done.returncode, done.stdout) == (0, expected) and len(expected) > 1000
    bad = subprocess.run([sys.executable, "-m", "costlang", "run", path + ".missing"], capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stderr.startswith(path + ".missing:1:1: error: cannot read")
