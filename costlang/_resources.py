"""Where the grammar and the stdlib live: inside the installed wheel, or beside a source checkout.

The stdlib is a folder of `.cost` files: the language's own modules at its top (`prelude`,
`dtypes`, `ops`, `collectives`, `llm`, `hardware`), the vendors' hardware presets and systems in
`hardware/`, the model zoo in `models/`. `import NAME` finds `NAME.cost` in those folders, in
that order; a name is used once in the whole stdlib.
"""
from __future__ import annotations

import functools
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent

#: the stdlib's folders that `import NAME` searches, in order
STDLIB_FOLDERS = ("", "hardware", "models")


@functools.lru_cache(maxsize=4)
def _find(name: str) -> Path:
    """The folder `name` of the installed wheel or of the checkout (looked up once per process:
    a span's "is this the stdlib?" asks for it thousands of times at model scale)."""
    for candidate in (_PACKAGE / "_data" / name, _PACKAGE.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"costlang is installed without its {name}/ folder")


def grammar_file() -> Path:
    return _find("grammar") / "costlang.lark"


def stdlib_dir() -> Path:
    return _find("stdlib")


def stdlib_files() -> list[Path]:
    """Every `.cost` file of the stdlib, in the order `import NAME` searches its folders."""
    root = stdlib_dir()
    return [p for folder in STDLIB_FOLDERS for p in sorted((root / folder).glob("*.cost"))]


def stdlib_module(name: str) -> Path:
    """The file `import NAME` reads (the top folder's `NAME.cost` when no folder has one)."""
    root = stdlib_dir()
    for folder in STDLIB_FOLDERS:
        path = root / folder / f"{name}.cost"
        if path.is_file():
            return path
    return root / f"{name}.cost"


def in_stdlib(path) -> bool:
    """Whether `path` (a Path or a file name) is one of the stdlib's files."""
    return _in_stdlib(str(path), str(stdlib_dir()))


@functools.lru_cache(maxsize=4096)
def _in_stdlib(path: str, root: str) -> bool:
    return Path(path).resolve().parent in _stdlib_folders(root)


@functools.lru_cache(maxsize=8)
def _stdlib_folders(root: str) -> frozenset:
    return frozenset((Path(root) / folder).resolve() for folder in STDLIB_FOLDERS)
