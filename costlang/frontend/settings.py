"""Settings from text: `--set B=1`, `--scenario "int4: weights=int4"`, `sweep --over` bounds.

Input: the text of one command-line argument. Output: the `Option`s it sets, parsed by the costlang
parser as the body of a `scenario` block (never by Python), with spans on the argument's own text so
that an error quotes what the user typed (`--set:1:3`). `hw` is another name for `hardware`.
"""
from __future__ import annotations

import dataclasses

from costlang.errors import CostlangError, CostSyntaxError, Source, Span
from costlang.frontend import ast
from costlang.ir.expr import Option

__all__ = ["parse_settings", "parse_scenario"]

_ALIASES = {"hw": "hardware"}


def parse_settings(text: str, source_name: str = "--set") -> tuple[Option, ...]:
    """`B=1; hardware=h100_sxm`, parsed as the body of a scenario block by the costlang parser."""
    from costlang.frontend.parser import parse  # only a run with settings loads the parser
    if "\n" in text:
        raise CostSyntaxError("settings are one line", Span(Source(source_name, text), 1, 1, 1, 2))
    try:  # the settings on a line of their own, so their columns are the user's
        module = parse(f"scenario cli {{\n{text}\n}}", source_name)
    except CostlangError as e:
        raise _on_first_line(e, text) from None
    if len(module.statements) != 1 or not isinstance(module.statements[0], ast.Scenario):
        raise CostSyntaxError(f"expected settings such as `B = 1`, not {text!r}",
                              Span(Source(source_name, text), 1, 1, 1, len(text) + 1))
    return tuple(_on_first_line(_alias(o), text) for o in module.statements[0].settings)


def _on_first_line(node, text: str):
    """`node` (an AST node or an error) with its spans moved from line 2 of the wrapper to the settings' own
    text, so that an error quotes what the user typed (`--set:1:3`), not `scenario cli { ... }`."""
    if isinstance(node, Span):
        end = node.end_column if node.end_line == node.line == 2 else len(text) + 1
        column = node.column if node.line == 2 else 1
        return Span(Source(node.source.name, text), 1, min(column, len(text) + 1), 1, max(min(end, len(text) + 1), 2))
    if isinstance(node, tuple):
        return tuple(_on_first_line(x, text) for x in node)
    if isinstance(node, CostlangError):
        node.span = _on_first_line(node.span, text) if node.span is not None else None
        hint = node.hint or ""
        node.hint = None if "line 1," in hint else hint.replace("at line 2, column", "at column") or None
        return node
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        return dataclasses.replace(node, **{f.name: _on_first_line(getattr(node, f.name), text)
                                            for f in dataclasses.fields(node)})
    return node


def _alias(o: Option) -> Option:
    return Option(_ALIASES.get(o.name, o.name), o.value, o.span)


def parse_scenario(text: str) -> tuple[str, tuple[Option, ...]]:
    """`NAME: settings` (or just settings, named by their text) from `--scenario`."""
    name, sep, rest = text.partition(":")
    if sep and name.strip() and "=" not in name:
        return name.strip(), parse_settings(rest, f"--scenario {name.strip()}")
    return text.strip(), parse_settings(text, "--scenario")
