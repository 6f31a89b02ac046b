"""The README's tutorial shows the example file and its output exactly as they are."""
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
TUTORIAL = README[README.index("## Tutorial"):README.index("Leave a size free")]


def test_the_tutorial_file_is_the_example_file():
    shown = re.search(r"```cost\n(.*?)```", TUTORIAL, re.S).group(1)
    assert shown == (ROOT / "examples/roofline/vector_add_fp16.cost").read_text(encoding="utf-8")


def test_the_tutorial_output_is_what_costlang_prints():
    shown = re.search(r"```text\n(.*?)```", TUTORIAL, re.S).group(1)
    printed = subprocess.run([sys.executable, "-m", "costlang", "run", "examples/roofline/vector_add_fp16.cost"],
                             cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert shown == printed
