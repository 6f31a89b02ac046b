"""Reading `.cost` files from disk: bytes → UTF-8 text → `ast.Module`, with errors for both steps."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

from ..errors import CostImportError, CostSyntaxError, Source, Span
from . import ast
from .parser import parse

__all__ = ["read_text", "read_module"]


def read_text(path: Path, span: Optional[Span] = None, display: Optional[str] = None) -> str:
    name = display or str(path)
    try:
        data = path.read_bytes()
    except OSError as e:
        raise CostImportError(f"cannot read {name}: {e.strerror or e}", span) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        column = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        text = data.decode("utf-8", errors="replace")
        raise CostSyntaxError(f"{name} is not UTF-8 text (byte 0x{data[e.start]:02x} at offset {e.start})",
                              Span(Source(name, text), line, column, line, column + 1),
                              "save the file as UTF-8") from None


def read_module(path: Path, span: Optional[Span] = None, display: Optional[str] = None) -> ast.Module:
    name = display or str(path)
    return parse(read_text(path, span, name), name)
