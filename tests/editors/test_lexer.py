"""The Pygments lexer for .cost: found through its entry point, no Error token anywhere."""
from pathlib import Path

from pygments import highlight, lex
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name, get_lexer_for_filename
from pygments.token import Comment, Error, Keyword, Name, Number, String

from costlang.editors.lexer import CostLexer

ROOT = Path(__file__).resolve().parents[2]
FILES = sorted((ROOT / "examples").rglob("*.cost")) + sorted((ROOT / "stdlib").rglob("*.cost"))


def test_registered_through_the_entry_point():
    assert isinstance(get_lexer_by_name("cost"), CostLexer)
    assert isinstance(get_lexer_for_filename("gemm_4096.cost"), CostLexer)


def test_every_example_and_stdlib_file_lexes_without_errors():
    assert len(FILES) >= 14
    for path in FILES:
        text = path.read_text(encoding="utf-8")
        tokens = list(lex(text, CostLexer()))
        assert "".join(v for _, v in tokens).rstrip("\n") == text.rstrip("\n")
        errors = [(t, v) for t, v in tokens if t in Error]
        assert not errors, (path.name, errors[:3])
        assert "<span" in highlight(text, CostLexer(), HtmlFormatter())


def test_token_kinds():
    tokens = [(t, v) for t, v in lex('use hardware h100 # the GPU\nquery "I" = 2 TB/s * flops(C)\n',
                                     CostLexer()) if v.strip()]
    assert tokens[:3] == [(Keyword, "use"), (Keyword, "hardware"), (Name, "h100")]
    assert (Comment.Single, "# the GPU") in tokens
    assert (String.Double, '"I"') in tokens
    assert (Number, "2") in tokens and (Keyword.Type, "TB/s") in tokens
    assert (Name.Function, "flops") in tokens
