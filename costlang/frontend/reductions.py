"""Parsing without a parse tree: the AST is built at each reduction of Lark's LALR parser.

Input: the loaded Lark parser (its rules, parse table and contextual lexer), the text, and a
builder with one method per rule name (`parser._ToAst`), each called as `method(meta, children)`.
Output: what the builder's `start` method returns.

Lark's own `transformer=` option builds values during the parse too, but cannot give a rule its
position (it refuses `v_args(meta=True)`), and the parse tree it would otherwise build costs as
much again to build and to walk. So each rule gets a callback here: Lark's child filter (which
children a rule keeps, `_inlined` rules spliced in, `[optional]` placeholders) picks the
children; the rule's position is the one `propagate_positions` would give it (from its first to
its last child, anonymous tokens included); `?rule`s with one child pass it on. The nesting of
operators and calls is measured on the way (`syntax_errors.MAX_NESTING`), and an error a
builder method raises waits until the parse is done, so syntax errors come first as before.
The parse runs Lark 1.x's own LALR driver and contextual lexer (`_Parser`, the frontend's lexer
thread) with these callbacks in place of its tree builder's.
"""
from __future__ import annotations

from functools import lru_cache

from lark import Lark, Tree
from lark.parse_tree_builder import maybe_create_child_filter
from lark.parsers.lalr_analysis import Reduce

from costlang.errors import CostlangError

__all__ = ["Reduced", "parse_reducing"]


class Reduced:
    """A reduced rule's value and the text it covers (`line`, `column` to `end_line`,
    `end_column`, None when it covers none); `depth`: operators and calls nested in it."""
    __slots__ = ("value", "line", "column", "end_line", "end_column", "depth")

    def __init__(self, value, line, column, end_line, end_column, depth=0):
        self.value, self.line, self.column = value, line, column
        self.end_line, self.end_column, self.depth = end_line, end_column, depth

    @property
    def children(self):
        """An inlined rule's kept children, which Lark's child filter splices into its parent."""
        return self.value


class _Run:
    """One parse: the builder, the first error it raised, the outermost expression too deep."""

    def __init__(self, builder, nesting_rules: frozenset, max_nesting: int):
        self.builder, self.nesting_rules, self.max_nesting = builder, nesting_rules, max_nesting
        self.error = None
        self.too_deep = None


def parse_reducing(lark: Lark, text: str, builder, nesting_rules: frozenset, max_nesting: int):
    """Parse `text`, building values with `builder`; returns (value, too_deep, error): the
    `start` rule's value, the last outermost `Reduced` nested deeper than `max_nesting` (or
    None), the first `CostlangError` a builder method raised (or None). Raises Lark's
    `UnexpectedInput` on a syntax error."""
    run = _Run(builder, nesting_rules, max_nesting)
    table, plans = _plans(lark)
    callbacks = {rule: _callback(run, *plan) for rule, *plan in plans}
    frontend = lark.parser
    lalr = type(frontend.parser.parser)(table, callbacks)
    result = lalr.parse(frontend._make_lexer_thread(text), "start")
    return result.value, run.too_deep, run.error


class _Reduction:
    """A rule as the parse table's reductions name it, for the driver: the rule's `origin` and
    `expansion`, hashed and compared by identity. Lark's `Rule` hashes and compares in Python,
    and the driver does both at every reduction (it looks the callback up and asserts the rule
    is not the end state): 120,000 times each for an 80-layer model, a tenth of the parse."""
    __slots__ = ("origin", "expansion")

    def __init__(self, rule):
        self.origin, self.expansion = rule.origin, rule.expansion


@lru_cache(maxsize=4)
def _plans(lark: Lark) -> tuple:
    """(the parse table with `_Reduction`s in place of Lark's rules, and per rule: its
    `_Reduction`, its callback's name, its child filter, whether it passes a lone child on,
    whether one child is all it ever has)."""
    plans, reductions = [], {}
    for rule in lark.rules:
        options = rule.options
        make_filter = maybe_create_child_filter(
            rule.expansion, options.keep_all_tokens, False,
            options.empty_indices if lark.options.maybe_placeholders else None)
        keep = make_filter(_kept) if make_filter else None
        name = rule.alias or options.template_source or rule.origin.name
        expand1 = bool(options.expand1) and not rule.alias
        reductions[rule] = reduction = _Reduction(rule)
        plans.append((reduction, name, keep, expand1, keep is None and len(rule.expansion) == 1))
    table = lark.parser.parser._parse_table
    states = {state: {token: (action, reductions[arg] if action is Reduce else arg)
                      for token, (action, arg) in actions.items()}
              for state, actions in table.states.items()}
    return type(table)(states, table.start_states, table.end_states), tuple(plans)


def _kept(children: list) -> list:
    return children


def _first(children: list):
    return children[0]


def _callback(run: _Run, name: str, keep, expand1: bool, single: bool):
    method = getattr(run.builder, name, None)
    if expand1 and single:
        return _first  # `?sum: product`: the child itself, covering the same text
    nesting = name in run.nesting_rules
    inlined = method is None and name.startswith("_")

    def reduce(children: list):
        kept = keep(children) if keep is not None else children
        node = _covering(children)
        if inlined:  # its parent splices the kept children in (and measures their nesting)
            node.value = kept
            return node
        if expand1 and len(kept) == 1:
            only = kept[0]
            if type(only) is not Reduced:
                return only
            node.value, node.depth = only.value, only.depth
            return node
        values, depth = [], 0
        for child in kept:
            if type(child) is Reduced:
                if child.depth > depth:
                    depth = child.depth
                child = child.value
            values.append(child)
        node.depth = depth + nesting
        if nesting and node.depth > run.max_nesting:
            run.too_deep = node  # built after what it holds: the last one is an outermost one
        if method is None:  # a rule the builder does not know: a tree, as Lark would build
            node.value = Tree(name, values)
        elif run.error is None:
            try:
                node.value = method(node, values)
            except CostlangError as e:
                run.error = e
        return node

    return reduce


def _covering(children: list) -> Reduced:
    """A node covering the children's text, as Lark's `propagate_positions` computes it."""
    for first in children:
        if first is not None and first.line is not None:
            break
    else:
        return Reduced(None, None, None, None, None)
    for last in reversed(children):
        if last is not None and last.line is not None:
            break
    return Reduced(None, first.line, first.column, last.end_line, last.end_column)
