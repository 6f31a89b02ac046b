"""The IR holds no AST: nothing reachable from a resolved `ir.Program` is a front-end object.

The front end (costlang.frontend) turns text into a Program; the IR sits below it, so a Program's
lets, queries, solves, scenarios, compares and blocks are IR records (costlang.ir.statements) and
their expressions IR nodes (costlang.ir.expr). The walk follows dataclass fields, dicts, lists,
tuples and sets; sympy values and spans are leaves of the base layer.
"""
import dataclasses
from pathlib import Path

import pytest
import sympy

import costlang
from costlang.errors import Source, Span

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

#: files with lets, queries (one naming its unit), solves, scenarios, compare, blocks and repeat
FILES = {
    "composition/mlp_stack.cost": ("queries", "solves", "blocks", "repeats"),
    "queries/llm_decode_batch.cost": ("queries", "scenarios", "compares"),
    "llm/attention_vs_qkvo.cost": ("lets", "queries", "solves"),
    "parallel/kipply_260b_16xa100.cost": ("scenarios", "compares"),
    "composition/transformer_layer.cost": ("blocks", "repeats"),
}


def foreign(root) -> list[str]:
    """The paths (from the Program) of reachable objects whose class lives in costlang.frontend."""
    out, seen, todo = [], set(), [(root, "program")]
    while todo:
        obj, path = todo.pop()
        if id(obj) in seen or isinstance(obj, (str, int, float, bool, type(None), sympy.Basic, Source)):
            continue
        seen.add(id(obj))
        if type(obj).__module__.startswith("costlang.frontend"):
            out.append(f"{path}: {type(obj).__module__}.{type(obj).__qualname__}")
            continue
        if dataclasses.is_dataclass(obj):
            todo += [(getattr(obj, f.name), f"{path}.{f.name}") for f in dataclasses.fields(obj)]
        elif isinstance(obj, dict):
            todo += [(k, f"{path}[key {k!r}]") for k in obj] + [(v, f"{path}[{k!r}]") for k, v in obj.items()]
        elif isinstance(obj, (list, tuple, set, frozenset)):
            todo += [(v, f"{path}[{i}]") for i, v in enumerate(obj)]
        elif not isinstance(obj, Span) and type(obj).__module__.startswith("costlang"):
            todo += [(v, f"{path}.{k}") for k, v in vars(obj).items()]
    return out


@pytest.mark.parametrize("name", sorted(FILES))
def test_no_front_end_object_is_reachable(name):
    program = costlang.load(EXAMPLES / name).program
    for field in FILES[name]:  # the walk does cover each kind of statement the file has
        assert getattr(program, field), f"{name} has no {field}"
    assert foreign(program) == []


def test_the_walk_finds_a_front_end_object():
    """The walk itself can fail: an AST node put into a Program is found, with its path."""
    from costlang.frontend import ast
    program = costlang.load_string("dim N = 2\nlet x = N\n").program
    assert foreign(program) == []
    program.lets["y"] = ast.Module("m", ())
    assert foreign(program) == ["program.lets['y']: costlang.frontend.ast.Module"]


def test_statements_are_ir_records():
    program = costlang.load(EXAMPLES / "queries/llm_decode_batch.cost").program
    kinds = {type(x).__module__ for x in [*program.queries, *program.solves, *program.scenarios.values(),
                                           *program.compares, *program.lets.values()]}
    assert kinds == {"costlang.ir.statements"}
