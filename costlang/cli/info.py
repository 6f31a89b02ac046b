"""The command line's informational parts: `costlang ops`, `costlang completion`, `costlang editor`.

Input: argparse arguments. Output: the text the command prints (a table, a shell script) or the
files it writes. `costlang --version` is the root parser's (`cli/__init__.py`).

  costlang ops [FILE] [--json]            the operators and blocks a file can call
  costlang models [--json]                the model zoo: each model's source, parameters and blocks
  costlang completion bash|zsh            a completion script (needs the `shtab` package)
  costlang editor vscode FOLDER           a VS Code extension with the TextMate grammar
"""
from __future__ import annotations

import json
from pathlib import Path

from costlang.errors import CostlangError

__all__ = ["add_parsers", "completion_script"]


def add_parsers(sub) -> list:
    ops = sub.add_parser("ops", help="list the operators a file can call (the stdlib's without FILE)")
    ops.add_argument("file", nargs="?", help="a .cost file (its own ops and blocks too); none: the stdlib's")
    ops.add_argument("--json", action="store_true", help="print JSON instead of a table")
    comp = sub.add_parser("completion", help="print a shell completion script")
    comp.add_argument("shell", choices=("bash", "zsh"))
    editor = sub.add_parser("editor", help="write editor support generated from the grammar")
    editor.add_argument("editor", choices=("vscode",))
    editor.add_argument("folder", help="the extension folder to create (must not exist yet)")
    models = sub.add_parser("models", help="list the model zoo (stdlib/models): import NAME, call NAME_prefill")
    models.add_argument("model", nargs="?", help="one model: its blocks, parameters and source")
    models.add_argument("--json", action="store_true", help="print JSON instead of a table")
    ops.set_defaults(handler=_ops)
    comp.set_defaults(handler=_completion)
    editor.set_defaults(handler=_editor)
    models.set_defaults(handler=_models)
    return [ops, comp, editor, models]


def zoo() -> list[dict]:
    """The zoo's models, read from their files: the name to import, the first line of the header (the
    model and its source), the parameter count the header derives, and the blocks the file defines."""
    import re

    from costlang import _resources
    out = []
    for path in sorted((_resources.stdlib_dir() / "models").glob("*.cost")):
        text = path.read_text(encoding="utf-8")
        first = text.splitlines()[0].lstrip("# ").strip() if text else ""
        found = re.search(r"^# Parameters: ([0-9,]+)", text, re.M)
        blocks = re.findall(r"^block ([a-z0-9_]+)\(", text, re.M)
        out.append({"name": path.stem, "model": first,
                    "parameters": int(found.group(1).replace(",", "")) if found else None,
                    "blocks": [b for b in blocks if b.startswith(path.stem + "_")]})
    return out


def _models(args) -> str:
    models = zoo()
    if args.model is not None:
        chosen = [m for m in models if m["name"] == args.model]
        if not chosen:
            from costlang.errors import did_you_mean
            from costlang.cli.common import ArgumentError, argument_span
            names = [m["name"] for m in models]
            raise ArgumentError(f"'{args.model}' is not in the model zoo", argument_span("costlang models", args.model),
                                did_you_mean(args.model, names) or "models: " + ", ".join(names))
        models = chosen
    if args.json:
        return json.dumps(models, indent=2) + "\n"
    rows = [(m["name"], "—" if m["parameters"] is None else f"{m['parameters']:,}", ", ".join(m["blocks"]),
             m["model"]) for m in models]
    header = ("import", "parameters", "blocks", "model and source")
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(3)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r[:3], widths)) + "  " + r[3] for r in [header, *rows]]
    lines.insert(1, "  ".join("-" * w for w in widths) + "  " + "-" * len(header[3]))
    return "model zoo (stdlib/models; each file names its configuration's source)\n\n" + "\n".join(lines) + "\n"


def _ops(args) -> str:
    from costlang.frontend import ast
    from costlang.frontend.resolve import resolve
    program = resolve(ast.Module("<stdlib>", ()), None) if args.file is None else _load(args.file)
    rows = [{"name": o.name, "params": list(o.params), "kind": o.kind,
             "flops_per_element": None if o.kind == "view" else str(o.flops),
             "defined_at": _where(o.span)} for o in sorted(program.ops.values(), key=lambda o: o.name)]
    blocks = [{"name": b.name, "params": [_param(p) for p in b.params], "defined_at": _where(b.span)}
              for b in sorted(program.blocks.values(), key=lambda b: b.name)]
    if args.json:
        return json.dumps({"ops": rows, "blocks": blocks}, indent=2, ensure_ascii=False) + "\n"
    out = _table([("op", "kind", "FLOPs/element", "defined at")] +
                 [(f"{r['name']}({', '.join(r['params'])})", r["kind"], r["flops_per_element"] or "-",
                   r["defined_at"]) for r in rows])
    if blocks:
        out += "\n" + _table([("block", "defined at")] + [(f"{b['name']}({', '.join(b['params'])})",
                                                          b["defined_at"]) for b in blocks])
    return out


def _param(p) -> str:
    """A block parameter as written: `x: dt[n, d]`, `f: dim`, `dt: dtype` (its own source text)."""
    span = p.span
    if span is not None and span.line == span.end_line:
        text = span.source.line(span.line)[span.column - 1: span.end_column - 1].strip()
        if text.startswith(p.name):
            return " ".join(text.split())
    return f"{p.name}: {p.kind}"


def _table(table) -> str:
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in table]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines) + "\n"


def _load(path: str):
    from costlang import load
    return load(path).program


def _where(span) -> str:
    if span is None:
        return "built in"
    return f"{Path(span.source.name).name}:{span.line}"


def _completion(args) -> str:
    return completion_script(args.command_line, args.shell)


def completion_script(parser, shell: str) -> str:
    """The `shell` completion script for `parser` (the whole command line's: `args.command_line`)."""
    try:
        import shtab
    except ImportError:
        raise CostlangError("shell completion needs the shtab package",
                            hint="pip install shtab (or pip install \"costlang[completion]\")") from None
    from costlang.frontend import ast
    from costlang.frontend.resolve import resolve
    program = resolve(ast.Module("<stdlib>", ()), None)
    hardware = sorted(set(program.hardware) | set(program.systems))
    models = sorted(m["name"] for m in zoo())
    preamble = {"bash": "".join(
        f"_costlang_{kind}() {{ compgen -W \"{' '.join(names)}\" -- \"$1\"; {files}}}\n"
        for kind, names, files in (("hardware", hardware, "compgen -f -X '!*.cost' -- \"$1\"; "),
                                   ("models", models, "")))}
    complete = {"hardware": {"bash": "_costlang_hardware", "zsh": "(" + " ".join(hardware) + ")"},
                "models": {"bash": "_costlang_models", "zsh": "(" + " ".join(models) + ")"}}
    for action in _actions(parser):
        if "--hardware" in action.option_strings or action.dest == "name" and action.help == "the hardware to show":
            action.complete = complete["hardware"]
        elif action.dest == "model":
            action.complete = complete["models"]
    return shtab.complete(parser, shell=shell, preamble=preamble if shell == "bash" else "")


def _actions(parser):
    """Every action of the parser and of its subcommands' parsers."""
    import argparse
    for action in parser._actions:
        yield action
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):
                yield from _actions(sub)


def _editor(args) -> str:
    from costlang import __version__
    from costlang.editors.textmate import write_vscode_extension
    folder = Path(args.folder)
    if folder.exists() or folder.is_symlink():
        raise CostlangError(f"{folder} exists already; costlang writes a new folder and never replaces one",
                            hint="name a folder that does not exist yet")
    written = write_vscode_extension(folder, __version__)
    return "".join(f"wrote {p}\n" for p in written)

