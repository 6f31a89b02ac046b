"""Parsing: `.cost` text → `ast.Module`, built while Lark parses.

The grammar is `grammar/costlang.lark` (LALR, contextual lexer, strict). A builder whose method
names are the grammar's rule names makes the AST while Lark parses (`frontend.reductions`: no
parse tree is built); numbers become exact sympy Rationals from their digits (`1e12` is an
Integer, `0.5` is 1/2). Syntax errors become `CostSyntaxError`s that say, in words, what was
found and what was expected.
"""
from __future__ import annotations

import hashlib
from contextlib import nullcontext
from fractions import Fraction
from functools import lru_cache

import sympy
from lark import Lark, Token
from lark import __version__ as lark_version
from lark.exceptions import UnexpectedInput

from costlang import _resources
from costlang.budget import time_budget
from costlang.errors import CostSyntaxError, Source, Span
from costlang.units import parse_unit
from costlang.frontend import ast
from costlang.frontend.reductions import parse_reducing
from costlang.frontend.syntax_errors import MAX_NESTING, NESTING_RULES, syntax_error, too_deep

__all__ = ["parse", "parser", "build_parser", "tables_match"]

MAX_NUMBER_DIGITS = 400
MAX_NUMBER_EXPONENT = 400


_OPTIONS = dict(parser="lalr", lexer="contextual", strict=True, propagate_positions=True,
                maybe_placeholders=True)


def build_parser(grammar_text: str) -> Lark:
    """A parser built from the grammar's text (about 0.5 s of CPU: done once, at development time)."""
    return Lark(grammar_text, **_OPTIONS)


@lru_cache(maxsize=1)
def parser() -> Lark:
    """The Lark parser, loaded from the tables shipped in the package (`_generated/parser_tables.py`).

    The tables are Lark's own serialization, written as a Python literal by
    `python -m tools.build_parser`; loading them takes milliseconds and reads no pickle.
    When they do not match the grammar (it was edited and the tables not regenerated) or were
    built by another Lark version, the parser is built from the grammar instead: slower, same result.
    """
    text = _resources.grammar_file().read_text(encoding="utf-8")
    if tables_match(text):
        from costlang.frontend._generated import parser_tables as tables
        return Lark._load_from_dict(tables.DATA, tables.MEMO)  # what Lark's standalone module does
    return build_parser(text)


def tables_match(grammar_text: str) -> bool:
    """Whether the shipped tables were built from this grammar text by the installed Lark."""
    try:
        from costlang.frontend._generated import parser_tables as tables
    except ImportError:  # a checkout before the first build_parser run
        return False
    return (tables.LARK_VERSION == lark_version
            and tables.GRAMMAR_SHA256 == hashlib.sha256(grammar_text.encode("utf-8")).hexdigest())


#: main files parsed lately, by (name, text): a what-if resolves its file again without parsing it again
_KEPT: dict = {}
_KEEP = 16


def keep(module: ast.Module, text: str) -> ast.Module:
    """Remember a parsed main file (`api.load` does) for `parse_kept`; the AST is immutable."""
    if len(_KEPT) >= _KEEP:
        _KEPT.pop(next(iter(_KEPT)))
    _KEPT[module.source_name, text] = module
    return module


def parse_kept(text: str, name: str = "<string>") -> ast.Module:
    """`parse`, remembered: a compare's scenarios resolve the main file again, and `api.load` or the
    first scenario has parsed it for all of them. (`parse` itself always parses: each load of a
    file is timed against its own budget.)"""
    module = _KEPT.get((name, text))
    return module if module is not None else keep(parse(text, name), text)


def parse(text: str, name: str = "<string>", budgeted: bool = True) -> ast.Module:
    """Parse the text of one `.cost` file into an AST.

    >>> m = parse("dim N = 1e8\\ninput A: fp16[N]")
    >>> m.statements[0].value.value
    100000000
    """
    source = Source(name, text)
    lark = parser()  # built outside the budget: the budget is for work on the user's input
    # A very long file parses in time linear in its length; the budget turns "too long to wait
    # for" into a clear error the user can lift with --time-budget. The stdlib (`budgeted=False`)
    # is not the user's input and is never cut short.
    budget = time_budget(None, f"parsing {name}", Span(source, 1, 1, 1, 2)) if budgeted else nullcontext()
    with budget:
        try:
            statements, deep, error = parse_reducing(lark, text, _ToAst(source), NESTING_RULES, MAX_NESTING)
        except UnexpectedInput as e:
            raise syntax_error(e, source, lark) from None
    if deep is not None:  # after the syntax errors, before the others, as when a tree was checked
        raise too_deep(Span(source, deep.line, deep.column, deep.end_line, deep.end_column))
    if error is not None:
        raise error
    return ast.Module(name, tuple(statements))


# --- tree → AST -------------------------------------------------------------------------------

def _number(tok: Token, source: Source) -> sympy.Rational:
    text = tok.replace("_", "")
    mantissa, _, exponent = text.lower().partition("e")
    if len(mantissa) > MAX_NUMBER_DIGITS or (exponent and abs(int(exponent)) > MAX_NUMBER_EXPONENT):
        raise CostSyntaxError(f"the number {str(tok)[:40]!r} is too large to work with exactly",
                              _tok_span(tok, source),
                              f"numbers have at most {MAX_NUMBER_DIGITS} digits and "
                              f"exponents of at most {MAX_NUMBER_EXPONENT}")
    f = Fraction(text)
    return sympy.Rational(f.numerator, f.denominator)


def _tok_span(tok: Token, source: Source) -> Span:
    return Span(source, tok.line, tok.column, tok.end_line, tok.end_column)


def _options(children) -> tuple:
    return tuple(c for c in children if isinstance(c, ast.Option))


class _ToAst:
    """Method names are the grammar's rule names (and aliases); each is called as
    `method(meta, children)` when its rule is reduced, `meta` giving the rule's position."""

    def __init__(self, source: Source):
        self.source = source

    def _span(self, meta) -> Span:
        return Span(self.source, meta.line, meta.column, meta.end_line, meta.end_column)

    def _tspan(self, tok: Token) -> Span:
        return _tok_span(tok, self.source)

    # expressions
    def number(self, meta, c):
        return ast.Num(_number(c[0], self.source), str(c[0]), self._span(meta))

    def unit_literal(self, meta, c):
        scale, unit = parse_unit(str(c[1]))
        return ast.Quantity(_number(c[0], self.source) * scale, unit, f"{c[0]} {c[1]}", self._span(meta))

    def name(self, meta, c):
        return ast.Name(str(c[0]), self._span(meta))

    def func(self, meta, c):
        args = [a for a in c[1:] if a is not None]
        return ast.Call(str(c[0]), tuple(a for a in args if not isinstance(a, ast.Option)),
                        self._span(meta), self._tspan(c[0]), _options(args))

    def _binop(op):  # noqa: N805 - a factory used in the class body
        def build(self, meta, c):
            return ast.BinOp(op, c[0], c[1], self._span(meta))
        return build

    add, sub, mul, div, pow = _binop("+"), _binop("-"), _binop("*"), _binop("/"), _binop("^")
    matmul_op = _binop("@")

    def neg(self, meta, c):
        return ast.Neg(c[0], self._span(meta))

    # statements
    def import_stmt(self, meta, c):
        tok, args, alias = c
        is_path = tok.type == "STRING"
        return ast.Import(str(tok)[1:-1] if is_path else str(tok), is_path, self._span(meta),
                          args or (), alias)

    def import_args(self, meta, c):
        return _options(c)

    def import_alias(self, meta, c):
        return ast.Name(self._plain(c[0]), self._tspan(c[0]))

    def _plain(self, tok: Token, span: Span = None) -> str:
        """A name being defined: plain, since a dotted name refers into a namespace."""
        if "." in tok:
            raise CostSyntaxError(f"'{tok}' cannot be defined: a dotted name refers to a name inside "
                                  "a block instance or an imported namespace", span or self._tspan(tok),
                                  f"pick a plain name such as '{str(tok).replace('.', '_')}'")
        return str(tok)

    def binding(self, meta, c):
        return (self._plain(c[0]), c[1], self._span(meta))

    def _bindings(kind):  # noqa: N805
        def build(self, meta, c):
            return [ast.Binding(kind, n, v, s) for n, v, s in c]
        return build

    dim_stmt, param_stmt = _bindings("dim"), _bindings("param")

    def dtype_stmt(self, meta, c):
        return ast.DtypeDef(self._plain(c[0]), c[1], self._span(meta))

    def role(self, meta, c):
        return str(c[0])

    def tensor_type(self, meta, c):
        dims = tuple(d for d in c[1:] if d is not None)
        return ast.TensorType(str(c[0]), dims, self._span(meta), self._tspan(c[0]))

    def tensor_stmt(self, meta, c):
        return ast.TensorDecl(c[0], self._plain(c[1]), c[2], self._span(meta), c[3] is not None)

    def keyword_arg(self, meta, c):
        return ast.Option(str(c[0]), c[1], self._span(meta))

    def call(self, meta, c):
        expr, as_dtype, result_type, body = c
        call = ast.as_op_call(expr, ast.Name(str(as_dtype), self._tspan(as_dtype)) if as_dtype else None,
                              result_type, body or ())
        if call is None:
            raise CostSyntaxError("the right-hand side of an assignment must apply an operator or a "
                                  "block", expr.span, "e.g. `y = relu(x)`, `y = x @ W + b`, `y = copy(x)`")
        return call

    def repeat_call(self, meta, c):
        count, block, *rest, body = c
        args = [a for a in rest if a is not None]
        call = ast.OpCall(str(block), tuple(a for a in args if not isinstance(a, ast.Option)),
                          _options(args), None, None, tuple(body or ()), self._span(meta), self._tspan(block))
        return ast.RepeatCall(count, call, self._span(meta))

    def names(self, meta, c):
        return [ast.Name(str(t), self._tspan(t)) for t in c]

    def _assign(self, meta, c, is_output):
        targets = tuple(ast.Name(self._plain(n.id, n.span), n.span) for n in c[0])
        first = targets[0]
        return ast.Assign(first.id, c[1], is_output, self._span(meta), first.span,
                          targets if len(targets) > 1 else ())

    def assign_stmt(self, meta, c):
        return self._assign(meta, c, False)

    def output_assign(self, meta, c):
        return self._assign(meta, c, True)

    def output_stmt(self, meta, c):
        return ast.OutputMark(tuple(c[0]), self._span(meta))

    # blocks
    def param_kind(self, meta, c):
        return str(c[0])

    def block_param(self, meta, c):
        name, kind, default = c
        if isinstance(kind, ast.TensorType):
            return ast.BlockParam(self._plain(name), "tensor", kind, default, self._span(meta))
        return ast.BlockParam(self._plain(name), kind, None, default, self._span(meta))

    def return_stmt(self, meta, c):
        return ast.Return(tuple(c), self._span(meta))

    def block_def(self, meta, c):
        name, *rest = c
        params = tuple(p for p in rest if isinstance(p, ast.BlockParam))
        body = []
        for item in rest:
            if not isinstance(item, ast.BlockParam) and item is not None:
                body.extend(item if isinstance(item, list) else [item])
        return ast.BlockDef(self._plain(name), params, tuple(body), self._span(meta))

    def grad_def(self, meta, c):
        op, *rest = c
        params = tuple(str(t) for t in rest if isinstance(t, Token))
        body = tuple(x for x in rest if isinstance(x, ast.Assign))
        return ast.GradDef(ast.Name(str(op), self._tspan(op)), params, body, self._span(meta))

    def train_stmt(self, meta, c):
        return ast.Train(tuple(c[0] or ()), self._span(meta))

    def option(self, meta, c):
        return ast.Option(str(c[0]), c[1], self._span(meta))

    def block(self, meta, c):
        return _options(c)

    def op_def(self, meta, c):
        params = tuple(str(t) for t in c[1:] if isinstance(t, Token) and t.type == "NAME")
        # The kind is the last bare NAME token; params come before it.
        name_tokens = [t for t in c[1:] if isinstance(t, Token)]
        kind = name_tokens[-1]
        return ast.OpDef(self._plain(c[0]), params[:-1], ast.Name(str(kind), self._tspan(kind)),
                         _options(c), self._span(meta))

    def peak_item(self, meta, c):
        first, second, value = c
        if second is None:
            return ast.PeakDef(ast.Name(str(first), self._tspan(first)), value, self._span(meta))
        return ast.PeakDef(ast.Name(str(second), self._tspan(second)), value, self._span(meta),
                           ast.Name(str(first), self._tspan(first)))

    def memory_item(self, meta, c):
        name, per, body = c
        return ast.MemoryDef(str(name), body, self._span(meta),
                             ast.Name(str(per), self._tspan(per)) if per is not None else None)

    def efficiency_item(self, meta, c):
        key, value, source = c
        return ast.EfficiencyDef(ast.Name(str(key), self._tspan(key)), value,
                                 str(source)[1:-1] if source is not None else None, self._span(meta))

    def hardware_def(self, meta, c):
        name, base, *items = c
        return ast.HardwareDef(
            self._plain(name), ast.Name(str(base), self._tspan(base)) if base else None,
            tuple(i for i in items if isinstance(i, ast.PeakDef)),
            tuple(i for i in items if isinstance(i, ast.MemoryDef)),
            _options(items), self._span(meta),
            tuple(i for i in items if isinstance(i, ast.EfficiencyDef)))

    def use_kind(self, meta, c):
        return str(c[0])

    def use_stmt(self, meta, c):
        return ast.Use(ast.Name(str(c[-1]), self._tspan(c[-1])), self._span(meta), c[0] or "hardware")

    def name_list(self, meta, c):
        return tuple(ast.Name(str(t), self._tspan(t)) for t in c)

    def axis_item(self, meta, c):
        return ast.AxisDef(str(c[0]), c[1], self._span(meta))

    def link_item(self, meta, c):
        return ast.LinkDef(ast.Name(str(c[0]), self._tspan(c[0])), c[1], c[2], self._span(meta))

    def system_def(self, meta, c):
        name, base, *items = c
        return ast.SystemDef(
            str(name), ast.Name(str(base), self._tspan(base)) if base else None,
            tuple(i for i in items if isinstance(i, ast.AxisDef)),
            tuple(i for i in items if isinstance(i, ast.LinkDef)),
            _options(items), self._span(meta))

    def shard_stmt(self, meta, c):
        return ast.Shard(c[0], c[1], self._span(meta))

    def parallel_stmt(self, meta, c):
        kind, axis, body = c
        return ast.Parallel(ast.Name(str(kind), self._tspan(kind)), ast.Name(str(axis), self._tspan(axis)),
                            body or (), self._span(meta))

    def let_stmt(self, meta, c):
        return ast.Let(self._plain(c[0]), c[1], self._span(meta))

    def query_stmt(self, meta, c):
        label, value, unit = c
        if label is None:
            label = value.span.text if value.span.line == value.span.end_line else "query"
        elif label.type == "STRING":
            label = str(label)[1:-1]
        return ast.Query(str(label), value, self._span(meta), *(unit or (None, None)))

    def query_unit(self, meta, c):
        count, per = c
        return (str(count), None if per is None else str(per)), self._span(meta)

    def measure_stmt(self, meta, c):
        return ast.Measure(ast.Name(str(c[0]), self._tspan(c[0])), c[1], self._span(meta))

    def fusion_stmt(self, meta, c):
        return ast.FusionMode(ast.Name(str(c[0]), self._tspan(c[0])), self._span(meta))

    def relop(self, meta, c):
        return str(c[0])

    def relation(self, meta, c):
        return (c[0], c[1], c[2])

    def solve_stmt(self, meta, c):
        label, what, target = c
        lhs, relation, rhs = what if isinstance(what, tuple) else (None, "regimes", None)
        if label is None:
            label = self._text(meta) or "solve"
        elif label.type == "STRING":
            label = str(label)[1:-1]
        return ast.Solve(str(label), lhs, relation, rhs, ast.Name(str(target), self._tspan(target)),
                         self._span(meta))

    def _text(self, meta) -> str:
        """A one-line statement's text after its keyword (the default label of a solve)."""
        if meta.line != meta.end_line:
            return ""
        # Source.line counts lines as the lexer does (str.splitlines also breaks at \f, \x1c, ...)
        line = self.source.line(meta.line)[meta.column - 1: meta.end_column - 1]
        words = line.split(None, 1)
        return words[1] if len(words) > 1 else line

    def pool_def(self, meta, c):
        return ast.PoolDef(self._plain(c[0]), tuple(c[1] or ()), self._span(meta))

    def scenario_stmt(self, meta, c):
        return ast.Scenario(self._plain(c[0]), _options(c[1:]), self._span(meta))

    def explore_stmt(self, meta, c):
        label = str(c[0])[1:-1] if c and isinstance(c[0], Token) and c[0].type == "STRING" else "explore"
        parts = {"choose": [], "over": [], "require": [], "objective": []}
        for kind, item in (x for x in c if isinstance(x, tuple)):
            parts[kind].append(item)
        return ast.Explore(label, tuple(parts["choose"]), tuple(parts["over"]), tuple(parts["require"]),
                           tuple(parts["objective"]), self._span(meta))

    def choose_item(self, meta, c):
        name, *values = c
        return "choose", (f"{name}={','.join(v.span.text for v in values)}", self._span(meta))

    def over_item(self, meta, c):
        """`over B = pow2(1, 512)` (also lin/log with a count) is the range `B=1..512:pow2`; a list of
        values is itself (`B=1,8,64`)."""
        name, *values = c
        (first,) = values[:1]
        if len(values) == 1 and isinstance(first, ast.Call) and first.func in ("pow2", "lin", "log"):
            if not (2 <= len(first.args) <= (2 if first.func == "pow2" else 3)) or first.kwargs:
                raise CostSyntaxError(f"{first.func}() takes the two ends of the range"
                                      + ("" if first.func == "pow2" else " and, optionally, the number of points"),
                                      first.span, f"e.g. over {name} = {first.func}(1, 512"
                                      + (")" if first.func == "pow2" else ", 10)"))
            lo, hi, *count = (a.span.text for a in first.args)
            text = f"{name}={lo}..{hi}:{first.func}" + (f":{count[0]}" if count else "")
            return "over", (text, self._span(meta))
        return "over", (f"{name}={','.join(v.span.text for v in values)}", self._span(meta))

    def require_item(self, meta, c):
        lhs, op, rhs = c[0]
        return "require", (f"{lhs.span.text} {op} {rhs.span.text}", self._span(meta))

    def require_fits(self, meta, c):
        return "require", ("fits", self._span(meta))

    def maximize_item(self, meta, c):
        return "objective", ("max", self._objective(c[0]), self._span(meta))

    def minimize_item(self, meta, c):
        return "objective", ("min", self._objective(c[0]), self._span(meta))

    @staticmethod
    def _objective(what) -> str:
        return str(what)[1:-1] if isinstance(what, Token) else what.span.text

    def compare_stmt(self, meta, c):
        return ast.Compare(tuple(ast.Name(str(t), self._tspan(t)) for t in c), self._span(meta))

    def start(self, meta, c):
        flat = []
        for item in c:
            flat.extend(item if isinstance(item, list) else [item])
        return flat
