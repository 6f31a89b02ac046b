"""Renaming: an AST statement with some of its names replaced, for block bodies and namespaces.

Input: an AST node and a table `name → replacement`, where a replacement is another name (a
block's local `h` becomes `y.h`, a namespaced import's `L` becomes `big.L`) or an `ast.Const`
(a block's size parameter becomes its value). Output: the same node with the names replaced;
nodes without a replaced name are returned as they are. Dotted names are replaced by their first
part (`attn.q` → `y.attn.q` when `attn` → `y.attn`). Nothing is evaluated.
"""
from __future__ import annotations

import dataclasses
from typing import Optional, Union

from costlang.errors import Span
from costlang.frontend import ast

__all__ = ["rename", "lookup", "block_locals", "Table"]

Table = dict[str, Union[str, ast.Const]]

#: string fields that name something defined or referred to (an Option's name never is)
_NAME_FIELDS = {
    ast.TensorType: ("dtype",), ast.Assign: ("name",),
    ast.TensorDecl: ("name",), ast.Binding: ("name",), ast.DtypeDef: ("name",), ast.OpDef: ("name",),
    ast.HardwareDef: ("name",), ast.Let: ("name",), ast.Scenario: ("name",), ast.PoolDef: ("name",), ast.BlockDef: ("name",),
}
#: string fields that name an operator, a block or a function: renamed by the `calls` table only
_CALL_FIELDS = {ast.Call: "func", ast.OpCall: "op"}
#: Name fields that are words of the language, not names (`op f(x): elementwise`, `fusion none`)
_KEYWORD_FIELDS = {(ast.OpDef, "kind"), (ast.FusionMode, "mode")}
_LEAVES = (ast.Num, ast.Quantity, ast.Const, Span, str, int, type(None))


def lookup(name: str, table: Table) -> Optional[Union[str, ast.Const]]:
    """The replacement of a name, or None when it keeps its name."""
    if name in table:
        return table[name]
    head, dot, rest = name.partition(".")
    if dot and isinstance(table.get(head), str):
        return f"{table[head]}.{rest}"
    return None


def rename(node, table: Table, calls: Optional[dict] = None):
    """`node` with the names in `table` replaced (see the module docstring); the names of the ops
    and blocks it applies are replaced by `calls` (a block's local `attn` is no block `attn`)."""
    if isinstance(node, _LEAVES) or not (table or calls):
        return node
    if isinstance(node, ast.Name):
        new = lookup(node.id, table)
        if new is None:
            return node
        if isinstance(new, ast.Const):
            return ast.Const(new.value, new.unit, node.span)
        return ast.Name(new, node.span)
    if isinstance(node, tuple):
        items = tuple(rename(x, table, calls) for x in node)
        return node if all(a is b for a, b in zip(items, node)) else items
    if isinstance(node, ast.BlockDef):
        # a block's parameters and locals shadow the names around it
        inner = {k: v for k, v in table.items() if k not in block_locals(node)}
        table = inner
    if not dataclasses.is_dataclass(node):
        return node
    changes = {}
    strings = _NAME_FIELDS.get(type(node), ())
    for f in dataclasses.fields(node):
        value = getattr(node, f.name)
        if (type(node), f.name) in _KEYWORD_FIELDS:
            continue
        if f.name in strings and isinstance(value, str):
            new = lookup(value, table)
            if isinstance(new, str):
                changes[f.name] = new
            continue
        if _CALL_FIELDS.get(type(node)) == f.name:
            new = lookup(value, calls or {})
            if isinstance(new, str):
                changes[f.name] = new
            continue
        new = rename(value, table, calls)
        if new is not value:
            changes[f.name] = new
    return dataclasses.replace(node, **changes) if changes else node


def block_locals(block: ast.BlockDef) -> set[str]:
    """The names a block's parameters and body statements define."""
    names = {p.name for p in block.params}
    for s in block.body:
        if isinstance(s, ast.Assign):
            names.update(t.id for t in s.target_names)
        elif isinstance(s, (ast.TensorDecl, ast.Binding)):
            names.add(s.name)
    return names
