"""Start-up (issue 10): `costlang run` imports only what it needs, never builds the parser and
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
    # through the loader, and every one of them comes from costlang/frontend/_stdlib_ast.json
    done = subprocess.run([sys.executable, "-c", CHECK, str(EXAMPLES / "roofline/gemm_4096.cost")],
                          capture_output=True, text=True)
    assert done.stderr.strip().splitlines()[-1] == "heavy: [] code: 0 parsed: []", done.stderr
