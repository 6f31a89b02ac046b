"""Start-up (issue 10): `costlang run` imports only what it needs and never builds the parser."""
import subprocess
import sys

from conftest import EXAMPLES

CHECK = """
import sys
from costlang.cli import main
import costlang.frontend.parser as parser_module
def refuse(*a, **k):
    raise AssertionError("the parser was built at run time")
parser_module.build_parser = refuse
code = main(["run", sys.argv[1]])
heavy = sorted({m.split(".")[0] for m in sys.modules} & {"numpy", "matplotlib", "scipy", "pandas"})
print("heavy:", heavy, "code:", code, file=sys.stderr)
"""


def test_run_imports_neither_numpy_nor_matplotlib_and_loads_the_shipped_parser():
    done = subprocess.run([sys.executable, "-c", CHECK, str(EXAMPLES / "roofline/gemm_4096.cost")],
                          capture_output=True, text=True)
    assert done.stderr.strip().splitlines()[-1] == "heavy: [] code: 0", done.stderr
