"""The parser ships prebuilt: its tables are generated from the grammar once, never in a user's process."""

from costlang import _resources
from costlang.frontend import parser as parser_module
from costlang.frontend.parser import build_parser, parser, tables_match
from tools import build_parser as build_tool
def test_the_shipped_tables_match_the_grammar():
    # After a grammar change: python -m tools.build_parser
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


# --- the stdlib ships parsed (frontend/shipped.py, costlang/frontend/_generated/stdlib_ast.json) ------------

def test_the_shipped_stdlib_is_current():
    # After changing stdlib/, the grammar, the parser or the AST classes: python -m tools.build_parser
    assert build_tool.stdlib_current(), "stale: run `python -m tools.build_parser`"


def test_every_shipped_stdlib_module_equals_its_parse():
    from costlang.frontend.parser import parse
    from costlang.frontend.shipped import shipped_module
    files = _resources.stdlib_files()
    assert len(files) >= 5
    for path in files:
        text = path.read_text(encoding="utf-8")
        shipped = shipped_module(path, text, str(path))
        assert shipped is not None, path.name
        assert shipped == parse(text, str(path), budgeted=False), path.name
        # spans carry the file's own source, so errors in the stdlib still quote its lines
        assert shipped.statements[0].span.source.text == text and shipped.source_name == str(path)


def test_a_changed_stdlib_file_is_parsed_not_taken_from_the_artefact():
    from costlang.frontend.shipped import shipped_module
    path = _resources.stdlib_dir() / "prelude.cost"
    text = path.read_text(encoding="utf-8")
    assert shipped_module(path, text + "\n# edited\n", "prelude.cost") is None
    assert shipped_module(path.with_name("not_in_stdlib.cost"), text, "x.cost") is None


def test_encoding_round_trips_numbers_and_refuses_other_objects():
    import pytest
    import sympy
    from costlang.errors import Source, Span
    from costlang.frontend import ast
    from costlang.frontend.shipped import decode, encode
    source = Source("f.cost", "dim N = 1/3\n")
    num = ast.Num(sympy.Rational(1, 3), "1/3", Span(source, 1, 9, 1, 12))
    assert encode(num) == ["D", "Num", ["Q", 1, 3], "1/3", ["S", 1, 9, 1, 12]]
    back = decode(encode(num), source)
    assert back == num and back.value == sympy.Rational(1, 3) and back.span.source is source
    with pytest.raises(TypeError):
        encode(sympy.Symbol("N"))
