"""Determinism: every example prints byte-identical text and JSON, run after run.

Two fresh interpreters analyse every example and print its report and its JSON (what `costlang
run` and `costlang run --json` print), with different hash seeds (so set and dict orders that
depend on string hashing would show) and different working directories (so nothing may depend on
where costlang is started). The first also analyses every example a second time, which would show
state leaking from one analysis into the next.
"""
import os
import subprocess
import sys

import pytest

from conftest import ROOT, example_files

DRIVER = """
import sys
from costlang import load
from costlang.printers.data.json import to_json
from costlang.printers.text.report import report
passes, paths = int(sys.argv[1]), sys.argv[2:]
for n in range(passes):
    for path in paths:
        analysis = load(path).analyze()
        sys.stdout.write(f"=== pass {n} {path} text\\n{report(analysis)}")
        sys.stdout.write(f"=== pass {n} {path} json\\n{to_json(analysis)}")
"""


def _start(passes: int, cwd, hash_seed: str) -> subprocess.Popen:
    env = dict(os.environ, PYTHONHASHSEED=hash_seed)
    paths = [str(p) for p in example_files()]
    return subprocess.Popen([sys.executable, "-c", DRIVER, str(passes), *paths], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _runs(output: str) -> dict:
    """(pass, path, flags) → what that run printed."""
    runs = {}
    for chunk in output.split("=== pass ")[1:]:
        header, _, body = chunk.partition("\n")
        n, rest = header.split(" ", 1)
        runs[(int(n), rest)] = body
    return runs


@pytest.mark.slow  # three whole runs of every example in fresh interpreters
def test_examples_print_the_same_bytes_every_time(tmp_path):
    first, second = _start(2, ROOT, "1"), _start(1, tmp_path, "2")  # both run at once
    out1, err1 = first.communicate(timeout=600)
    out2, err2 = second.communicate(timeout=600)
    assert (first.returncode, err1, second.returncode, err2) == (0, "", 0, "")
    runs1, runs2 = _runs(out1), _runs(out2)
    assert len(runs2) == 2 * len(example_files())
    for (n, key), text in runs1.items():
        assert text == runs2[(0, key)], f"{key} differs between interpreters (pass {n})"
    assert all(runs2.values())
