"""The package's import graph follows the pipeline: no circle of imports, no import from a layer
into a later one (`tools.layers`: the layers, and the graph built with ast + networkx from
module-level and function-level imports alike)."""
from pathlib import Path

from tools.layers import LAYERS, cycles, import_graph, layer_of, unplaced, upward_imports

PACKAGE = Path(__file__).resolve().parents[2] / "costlang"
GRAPH = import_graph(PACKAGE)


def test_every_module_is_in_a_layer():
    assert not unplaced(GRAPH), "add these modules to tools.layers.LAYERS: " + ", ".join(unplaced(GRAPH))


def test_no_import_cycles():
    found = cycles(GRAPH)
    assert not found, "circles of imports (each line: file:line: the edge):\n" + "\n\n".join(
        "\n".join(c) for c in found)


def test_no_import_from_a_later_layer():
    found = upward_imports(GRAPH)
    assert not found, "imports against the pipeline:\n" + "\n".join(found)


def test_the_graph_sees_the_imports_that_matter():
    # a function-level import (queries → composition, inside _QueryScope) and a relative one of a
    # package (`from . import ast`) are edges; a package's own name never stands in for its submodule
    assert GRAPH.has_edge("costlang.queries.evaluate", "costlang.analysis.composition")
    assert GRAPH.has_edge("costlang.frontend.resolve", "costlang.frontend.ast")
    assert not GRAPH.has_edge("costlang.frontend.resolve", "costlang")
    assert layer_of("costlang.queries.solve") == layer_of("costlang.queries.pipeline") == 5
    assert layer_of("costlang.analysis.roofline") == 4 and layer_of("costlang") == 10
    assert layer_of("costlang.queries.solve_notes") == 5 and layer_of("costlang.clix") is None


def _package(tmp_path, files: dict) -> Path:
    root = tmp_path / "pkg"
    for name, text in {"__init__.py": "", **files}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_a_cycle_and_an_upward_import_are_named_by_their_edge(tmp_path):
    root = _package(tmp_path, {
        "low/__init__.py": "", "high/__init__.py": "",
        "low/a.py": "import os\n\n\ndef f():\n    from ..high import b\n",   # up, inside a function
        "high/b.py": "from ..low.a import f\n",
        "high/c.py": "from . import b\n"})
    G = import_graph(root)
    layers = (("low", ("pkg.low",)), ("high", ("pkg.high",)), ("top", ("pkg",)))
    assert cycles(G) == [["pkg/high/b.py:1: pkg.high.b imports pkg.low.a",
                          "pkg/low/a.py:5: pkg.low.a imports pkg.high.b"]]
    assert upward_imports(G, layers) == [
        "pkg/low/a.py:5: pkg.low.a imports pkg.high.b: layer 'low' may not import the later layer 'high'"]
    assert G.has_edge("pkg.high.c", "pkg.high.b") and unplaced(G, layers) == []
    assert unplaced(G, LAYERS[:1]) == sorted(G.nodes)


def test_the_package_never_imports_the_development_tools():
    # tools/ is a folder of the checkout, not of the installed wheel
    import ast
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else []
            found += [f"{path.name}: {n}" for n in names if n == "tools" or n.startswith("tools.")]
    assert found == []
