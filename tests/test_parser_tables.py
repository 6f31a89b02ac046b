"""The parser ships prebuilt: its tables are generated from the grammar once, never in a user's process."""

from costlang import _resources
from costlang.frontend import parser as parser_module
from costlang.frontend.parser import build_parser, parser, tables_match
from costlang.tools import build_parser as build_tool


def test_the_shipped_tables_match_the_grammar():
    # After a grammar change: python -m costlang.tools.build_parser
    assert build_tool.main(["--check"]) == 0
    assert tables_match(_resources.grammar_file().read_text(encoding="utf-8"))


def test_a_changed_grammar_does_not_match_the_tables():
    text = _resources.grammar_file().read_text(encoding="utf-8")
    assert not tables_match(text + "\n// edited\n")


def test_the_loaded_parser_reads_what_the_built_one_reads():
    # The same parse tree (same rules, positions) from the shipped tables and from the grammar.
    source = ("use hardware chapter_gpu\ndim N = 4_096\ninput A: fp16[N, N]\ninput B: fp16[N, N]\n"
              "output C = matmul(A, B)\nquery \"t\" = time(C)\n")
    built = build_parser(_resources.grammar_file().read_text(encoding="utf-8"))
    assert parser().parse(source) == built.parse(source)
    assert [t.name for t in parser().terminals] == [t.name for t in built.terminals]


def test_loading_the_parser_does_not_build_it(monkeypatch):
    # parser() takes the shipped tables; it never reaches the grammar-compiling constructor.
    def refuse(*args, **kwargs):
        raise AssertionError("the parser was built from the grammar at run time")
    monkeypatch.setattr(parser_module, "build_parser", refuse)
    parser.cache_clear()
    try:
        assert parser().parse("dim N = 1\n") is not None
    finally:
        parser.cache_clear()
