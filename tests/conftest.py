"""Shared test helpers: paths of the example and stdlib files, and a loader by relative path."""
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
STDLIB = ROOT / "stdlib"


def example_files():
    return sorted(EXAMPLES.rglob("*.cost"))


def stdlib_files():
    return sorted(STDLIB.glob("*.cost"))


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
            return str(q.value) if not hasattr(q.value, "expr") else analysis.value(q.value.expr)
    raise KeyError(name)
