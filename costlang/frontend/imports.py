"""Imports with arguments and namespaces: `import "x.cost" with { L = 80 } as big`.

Input: an `ast.Import` with arguments or an alias, the imported file's parsed module and the
resolver. Output: the module's statements resolved into the program. Each argument replaces the
value of the dim or param of that name the file defines (an argument that names none is an error
at the argument). With `as big`, every name the file defines lives under `big.` (`big.L`,
`big.layer`, `use hardware big.node`), so the same file imported twice under two names is two
instances; the file's own statements still say `L`. A plain import stays as it was: loaded once,
its names global.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

from costlang.errors import CostImportError, SemanticError, did_you_mean
from costlang.units import DIMENSIONLESS
from costlang.frontend import ast
from costlang.frontend.loader import read_module
from costlang.frontend.rename import rename

__all__ = ["import_with"]


#: imports with arguments or a namespace one program may make (each resolves the file again); files
#: that import the next one under two names double at every level
MAX_IMPORTS = 1_000


def import_with(r, s: ast.Import, target: Path) -> None:
    target = target.resolve()
    if target in r.stack:
        chain = " → ".join(p.name for p in r.stack[r.stack.index(target):] + [target])
        raise CostImportError(f"import cycle: {chain}", s.span)
    r.import_count += 1
    if r.import_count > MAX_IMPORTS + 1:  # said once: every import after it is skipped silently
        raise r.silenced(s.span)
    if r.import_count > MAX_IMPORTS:
        raise CostImportError(f"the program makes more than {MAX_IMPORTS} imports with arguments or a namespace",
                              s.span, "files that import the next one under two names grow exponentially: "
                              "import each file once and share its names")
    module = read_module(target, s.span)
    bindings = {st.name: st for st in module.statements if isinstance(st, ast.Binding)}
    values = {}
    for arg in s.args:
        if arg.name not in bindings:
            raise SemanticError(f"\"{s.target}\" defines no dim or param '{arg.name}'", arg.span,
                                did_you_mean(arg.name, bindings) or
                                (f"it defines: {', '.join(bindings)}" if bindings else "it defines none"))
        if arg.name in values:
            raise SemanticError(f"'{arg.name}' is given twice", arg.span)
        values[arg.name] = ast.Const(r.expect(arg.value, DIMENSIONLESS, f"the value of '{arg.name}'").expr,
                                     DIMENSIONLESS, arg.span)
    key = (str(target), id(module), tuple(sorted((k, v.value) for k, v in values.items())),
           s.alias.id if s.alias is not None else None)
    statements = r.import_memo.get(key)
    if statements is None or statements[0] is not module:  # memoised by (path, arguments, namespace)
        made = [dataclasses.replace(st, value=values[st.name])
                if isinstance(st, ast.Binding) and st.name in values else st for st in module.statements]
        if s.alias is not None:
            made = _namespaced(made, s.alias.id)
        statements = r.import_memo[key] = (module, made)
    statements = statements[1]
    r.stack.append(target)
    try:
        r.run_module(ast.Module(module.source_name, tuple(statements)), target)
    finally:
        r.stack.pop()


def _namespaced(statements, prefix: str) -> list:
    """The statements with every name they define (and every use of it) under `prefix.`."""
    defined: set[str] = set()
    calls: set[str] = set()
    for st in statements:
        if isinstance(st, ast.Assign):
            defined.update(t.id for t in st.target_names)
        elif isinstance(st, ast.Import) and st.alias is not None:
            defined.add(st.alias.id)
        elif isinstance(getattr(st, "name", None), str) and not isinstance(st, (ast.Query, ast.Solve)):
            defined.add(st.name)
            if isinstance(st, (ast.BlockDef, ast.OpDef)):
                calls.add(st.name)
    table = {n: f"{prefix}.{n}" for n in defined}
    call_table = {n: f"{prefix}.{n}" for n in calls}
    out = []
    for st in statements:
        new = rename(st, table, call_table)
        if isinstance(st, ast.Import) and st.alias is not None:
            new = dataclasses.replace(new, alias=ast.Name(f"{prefix}.{st.alias.id}", st.alias.span))
        if isinstance(st, (ast.Query, ast.Solve)):
            new = dataclasses.replace(new, name=f"{prefix}: {st.name}")
        out.append(new)
    return out
