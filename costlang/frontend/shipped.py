"""The stdlib, parsed once at development time: `ast.Module`s ↔ a plain Python literal.

Input (build, `python -m tools.build_parser`): the stdlib's `.cost` files, parsed.
Output: `costlang/frontend/_generated/stdlib_ast.json`, each file's AST encoded as nested lists of strings,
numbers and None, with the SHA-256 of the file's text and of the front end that parsed it (the
grammar, the parser, the AST classes). JSON rather than a Python module: it loads in milliseconds
even where no bytecode is cached. At run time `shipped_module` decodes a stdlib file's AST
from it in a few milliseconds instead of parsing it (about 0.2 s for the whole stdlib); a file or
front end that changed since the build is parsed as before, so a stale artefact is only slower.
Nothing is unpickled or evaluated: the artefact is JSON data inside the installed package.

Encoding: a dataclass is ["D", class name, field values...], a tuple ["T", items...], an exact
number ["Q", numerator, denominator], a span ["S", line, column, end line, end column] (its
source is the file's, given back at decode time); strings, ints, bools and None stand for
themselves. No AST field holds a list, so the tags are unambiguous.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
from functools import lru_cache
from pathlib import Path
from typing import Optional

import sympy

from costlang.errors import Source, Span
from costlang.units import Unit
from costlang.ir import expr
from costlang.frontend import ast

__all__ = ["encode", "decode", "frontend_sha256", "shipped_module", "SHIPPED_FILE"]

SHIPPED_FILE = Path(__file__).resolve().parent / "_generated" / "stdlib_ast.json"

_CLASSES = {cls.__name__: cls for cls in vars(ast).values()  # the AST's classes and its expressions'
            if isinstance(cls, type) and dataclasses.is_dataclass(cls)
            and cls.__module__ in (ast.__name__, expr.__name__)}
_CLASSES["Unit"] = Unit
#: the files whose text decides what an AST looks like (its expressions are `ir.expr`'s)
_FRONTEND = ("ast.py", "parser.py", "reductions.py", "syntax_errors.py", "../ir/expr.py", "../ir/statements.py")


def encode(value):
    """An AST value as a literal (see the module docstring); raises on anything else.

    >>> encode(ast.Num(sympy.Rational(1, 2), "0.5", Span(Source("f", "0.5"), 1, 1, 1, 4)))
    ['D', 'Num', ['Q', 1, 2], '0.5', ['S', 1, 1, 1, 4]]
    """
    if isinstance(value, Span):
        return ["S", value.line, value.column, value.end_line, value.end_column]
    if isinstance(value, sympy.Rational):
        return ["Q", int(value.p), int(value.q)]
    if dataclasses.is_dataclass(value) and _CLASSES.get(type(value).__name__) is type(value):
        return ["D", type(value).__name__, *(encode(getattr(value, f.name)) for f in dataclasses.fields(value))]
    if isinstance(value, tuple):
        return ["T", *(encode(v) for v in value)]
    if value is None or isinstance(value, (str, int, bool)):
        return value
    raise TypeError(f"cannot ship {type(value).__name__} in a stdlib AST")


def decode(data, source: Source):
    """The value `encode` gave `data` for, its spans in `source`."""
    if not isinstance(data, list):
        return data
    tag = data[0]
    if tag == "S":
        return Span(source, *data[1:])
    if tag == "Q":
        return sympy.Rational(data[1], data[2])
    if tag == "T":  # list comprehensions: a few milliseconds less than generators at each start
        return tuple([decode(v, source) for v in data[1:]])
    return _CLASSES[data[1]](*[decode(v, source) for v in data[2:]])


def frontend_sha256() -> str:
    """One hash of the grammar and the front-end sources that turn text into an AST."""
    from costlang import _resources
    h = hashlib.sha256(_resources.grammar_file().read_bytes())
    here = Path(__file__).resolve().parent
    for name in _FRONTEND:
        h.update((here / name).read_bytes())
    h.update((here.parent / "units.py").read_bytes())  # unit literals parse through it
    return h.hexdigest()


def shipped_module(path: Path, text: str, name: str) -> Optional[ast.Module]:
    """The shipped AST of a stdlib file whose text and front end are unchanged since the build."""
    shipped = _shipped()
    entry = shipped.get("files", {}).get(path.name)
    if entry is None or entry[0] != hashlib.sha256(text.encode("utf-8")).hexdigest():
        return None
    if shipped.get("frontend_sha256") != shipped.setdefault("_now", frontend_sha256()):
        return None
    module = decode(entry[1], Source(name, text))
    return dataclasses.replace(module, source_name=name)


@lru_cache(maxsize=1)
def _shipped() -> dict:
    try:
        return json.loads(SHIPPED_FILE.read_text(encoding="utf-8"))
    except (OSError, ValueError):  # a checkout before the first build, or a damaged file: parse instead
        return {}
