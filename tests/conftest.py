"""Shared test helpers: paths of the example and stdlib files, and a loader by relative path."""
import atexit
import os
import shutil
import tempfile
from pathlib import Path

import pytest

# The command line keeps compiled sweeps in a cache folder (costlang.cli.cache): the suite's go to a
# folder of its own, made fresh for each run (and each worker) and removed after it, never the user's.
_CACHE = tempfile.mkdtemp(prefix="costlang-test-cache-")
os.environ["COSTLANG_CACHE"] = _CACHE
atexit.register(shutil.rmtree, _CACHE, True)

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
STDLIB = ROOT / "stdlib"


def example_files():
    return sorted(EXAMPLES.rglob("*.cost"))


def stdlib_files():
    return sorted(STDLIB.rglob("*.cost"))


@pytest.fixture
def analyze_example():
    from costlang import load

    def run(rel: str, **kw):
        return load(EXAMPLES / rel).analyze(**kw)
    return run


def query(analysis, name):
    """The bound value of the query called `name` (a sympy number, or a verdict's text)."""
    for q in analysis.queries:
        if q.name == name:
            if hasattr(q.value, "expr"):
                return analysis.value(q.value.expr)
            from costlang.printers.words.verdicts import verdict_words
            return verdict_words(q.value)
    raise KeyError(name)


# --- slow tests -----------------------------------------------------------------------------------
# Tests marked `slow` (long render checks, repeated whole-example runs) are left out of the default
# run so that `python -m pytest` stays within two minutes on a 2-core machine; COSTLANG_SLOW=1 adds
# them to a run, and `-m slow` runs only them. Fuzzing has its own scale (COSTLANG_FUZZ).

def pytest_collection_modifyitems(config, items):
    if os.environ.get("COSTLANG_SLOW") == "1" or config.getoption("markexpr"):
        return
    slow = [item for item in items if item.get_closest_marker("slow")]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if not item.get_closest_marker("slow")]


# --- parallel runs --------------------------------------------------------------------------------
# pyproject's addopts say `-n auto` (pytest-xdist): the whole suite (`python -m pytest`, no paths)
# runs with one worker per CPU; a run of named files or tests stays in one process, where workers
# would cost more start-up than they save. `-n N` on the command line overrides both.

def pytest_xdist_auto_num_workers(config):
    source = getattr(config, "args_source", None)  # pytest ≥ 7.2
    named = source != pytest.Config.ArgsSource.TESTPATHS if source is not None \
        else any(not a.startswith("-") for a in config.invocation_params.args)
    if named:
        return 0
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
