"""Where the grammar and the stdlib live: inside the installed wheel, or beside a source checkout."""
from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def _find(name: str) -> Path:
    for candidate in (_PACKAGE / "_data" / name, _PACKAGE.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"costlang is installed without its {name}/ folder")


def grammar_file() -> Path:
    return _find("grammar") / "costlang.lark"


def stdlib_dir() -> Path:
    return _find("stdlib")
