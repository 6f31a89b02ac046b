"""The package's layers and its import graph: `python -m tools.layers`.

Input: the source files of a package (`costlang/**/*.py`), read with `ast`, never imported.
Output: a networkx `DiGraph` with one edge per importing module and imported module of the
package, every import counted (at module level, inside functions, relative or absolute), with the
file and line of its first import statement; its cycles; and the imports that go from a layer to
a later one. The command prints them and exits 1 if there are any (tests/tools/test_layers.py asserts
there are none).

`LAYERS` is the pipeline, earliest first; a module may import its own layer and earlier ones.
A module belongs to the layer of its longest matching name (`costlang.printers.text.report` is in
"printers, outputs", `costlang.printers.numbers` in "printers, shared"); the package itself
(`costlang/__init__.py`, the public surface) is in "api". Importing `costlang.a.b` also runs
the packages' `__init__` files: those are not counted as edges (the package `costlang` would
otherwise be everywhere).
"""
from __future__ import annotations

import ast
import sys
from pathlib import Path
from typing import Optional

import networkx as nx

__all__ = ["LAYERS", "import_graph", "cycles", "upward_imports", "unplaced", "layer_of", "edge_text", "main"]

#: (layer, the modules in it): the pipeline, earliest first
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("base: errors, budgets, units, resources",
     ("costlang.errors", "costlang.budget", "costlang.units", "costlang._resources")),
    ("ir: the resolved program and the operator graph", ("costlang.ir",)),
    ("frontend: text → AST → resolved program, and its variants", ("costlang.frontend",)),
    ("passes: operator graph → kernels and their costs", ("costlang.passes",)),
    ("analysis: roofline figures, verdicts, footprint, derivation steps", ("costlang.analysis",)),
    ("queries: lets and queries, solve, what-if, sweep, compare, calibrate", ("costlang.queries",)),
    ("printers, shared: number formatting and escaping", ("costlang.printers", "costlang.printers.numbers",
                                                          "costlang.printers.safe")),
    ("printers, words: phrase tables and sentences", ("costlang.printers.words",)),
    ("printers, outputs: derivations, plots, JSON and CSV, the text report",
     ("costlang.printers.derivation", "costlang.printers.plot", "costlang.printers.data",
      "costlang.printers.text")),
    ("printers, notebook display", ("costlang.printers.display",)),
    ("api: the Python API and the package's public surface", ("costlang", "costlang.api")),
    ("editors: the Pygments lexer and the TextMate grammar", ("costlang.editors",)),
    ("web: the playground's server", ("costlang.web",)),
    ("cli: the command line", ("costlang.cli", "costlang.__main__")),
)


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _targets(node, module: str, is_package: bool, modules) -> list[str]:
    """The package's modules an import statement names (`from x import name`: x.name if that is
    a module, else x)."""
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    else:
        base = node.module or ""
        if node.level:
            package = module.split(".") if is_package else module.split(".")[:-1]
            package = package[:len(package) - (node.level - 1)]
            base = ".".join(package + ([node.module] if node.module else []))
        names = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
    out = []
    for name in names:
        while name not in modules and "." in name:  # `import costlang.ir.program.X` → the module
            name = name.rpartition(".")[0]
        if name in modules and name != module:
            out.append(name)
    return out


def import_graph(root: Path) -> nx.DiGraph:
    """Every import between the modules of the package in folder `root`; each edge has the `file`
    and `line` of the first statement that makes it."""
    files = {_module_name(p, root): p for p in sorted(root.rglob("*.py"))}
    G = nx.DiGraph()
    for module, path in files.items():
        G.add_node(module, file=path.relative_to(root.parent).as_posix())
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        imports = sorted((n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))),
                         key=lambda n: n.lineno)
        for node in imports:
            for target in _targets(node, module, path.name == "__init__.py", files):
                if not G.has_edge(module, target):
                    G.add_edge(module, target, file=G.nodes[module]["file"], line=node.lineno)
    return G


def layer_of(module: str, layers=LAYERS) -> Optional[int]:
    """The index of the module's layer (its longest matching name), or None."""
    best, length = None, -1
    for i, (_, names) in enumerate(layers):
        for name in names:
            root_only = "." not in name  # the package itself, not everything in it
            if (module == name or (not root_only and module.startswith(name + "."))) and len(name) > length:
                best, length = i, len(name)
    return best


def edge_text(G: nx.DiGraph, a: str, b: str) -> str:
    d = G.edges[a, b]
    return f"{d['file']}:{d['line']}: {a} imports {b}"


def cycles(G: nx.DiGraph) -> list[list[str]]:
    """Each circle of imports (a strongly connected component of more than one module), as the
    texts of its edges."""
    out = []
    for component in nx.strongly_connected_components(G):
        if len(component) > 1:
            H = G.subgraph(component)
            out.append(sorted(edge_text(G, a, b) for a, b in H.edges))
    return sorted(out)


def upward_imports(G: nx.DiGraph, layers=LAYERS) -> list[str]:
    """Each import from a layer into a later one, with the two layers named."""
    out = []
    for a, b in G.edges:
        la, lb = layer_of(a, layers), layer_of(b, layers)
        if la is not None and lb is not None and lb > la:
            out.append(f"{edge_text(G, a, b)}: layer '{layers[la][0]}' may not import the later layer "
                       f"'{layers[lb][0]}'")
    return sorted(out)


def unplaced(G: nx.DiGraph, layers=LAYERS) -> list[str]:
    """Modules that belong to no layer."""
    return sorted(m for m in G if layer_of(m, layers) is None)


def main(argv=None) -> int:
    root = Path(__file__).resolve().parent.parent / "costlang"
    G = import_graph(root)
    problems = [f"not in any layer: {m}" for m in unplaced(G)] + upward_imports(G)
    problems += ["import cycle:\n  " + "\n  ".join(c) for c in cycles(G)]
    for i, (name, _) in enumerate(LAYERS):
        members = sorted(m for m in G if layer_of(m) == i)
        print(f"{i}. {name} ({len(members)} modules)")
    print(f"{G.number_of_nodes()} modules, {G.number_of_edges()} imports")
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
