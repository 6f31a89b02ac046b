"""The error catalogue: each kind of bad input gives one exact, positioned message.

Every case is pinned to its first line (`file:line:col: error: sentence`) and its hint; the
renderer's quoting (source line, caret under the span) is pinned for a few cases in full. Files
on disk (imports, import cycles, encodings, empty files) use `tmp_path`. The CLI prints the same
text to stderr, exits with status 2 and shows no traceback unless `--debug` is given.
"""
import pytest

from costlang import CostlangError, load, load_string
from costlang.cli import main
from costlang.frontend import loader

H = "use hardware chapter_gpu\n"
T = H + "input A: fp16[4]\n"

# (label, text of t.cost, first line of the error, its hint or None)
CATALOGUE = [
    ('missing comma in a call',
     T + 'input B: fp16[4]\nC = add(A B)\n',
     "t.cost:4:11: error: unexpected name 'B'",
     "expected '(', ')', ',', '=' or an operator (+ - * / @ ^); is a ',' missing before 'B'?"),
    ('unclosed parenthesis',
     T + 'C = add(A, A\n',
     't.cost:3:13: error: unexpected end of line',
     "the '(' at line 3, column 8 is never closed with ')'"),
    ('unknown character',
     H + 'dim N = 4 $ 5\n',
     "t.cost:2:11: error: unexpected character '$'",
     "costlang has no '$': its operators are + - * / @ ^ and comments start with #"),
    ('matmul of numbers',
     H + 'dim N = 4 @ 5\n',
     "t.cost:2:9: error: '@' multiplies matrices (tensors); numbers multiply with '*'",
     "write `a * b`"),
    ('missing colon in a tensor declaration',
     H + 'input A fp16[4]\n',
     "t.cost:2:9: error: unexpected name 'fp16'",
     "expected ':'"),
    ('trailing comma in a shape',
     H + 'input A: fp16[4,]\n',
     "t.cost:2:17: error: unexpected ']'",
     "expected '(', '-', a name or a number"),
    ('file ends inside an expression',
     H + 'query 1 +',
     't.cost:2:10: error: the file ends in the middle of a statement',
     "expected '(', '-', a name or a number"),
    ('unclosed hardware block',
     H + 'hardware h {\n  peak fp16 = 1 TFLOP/s\n',
     't.cost:4:1: error: the file ends in the middle of a statement',
     "the '{' at line 2, column 12 is never closed with '}'"),
    ('unclosed string',
     H + 'query "abc = 1\n',
     't.cost:2:7: error: this string is not closed on its line',
     'a quoted string ends with \'"\' on the line where it starts'),
    ('single-quoted string',
     "use hardware chapter_gpu\nquery 'abc' = 1\n",
     't.cost:2:7: error: unexpected character "\'"',
     'quoted strings use double quotes: "..."'),
    ('implicit multiplication',
     H + 'dim N = 4\nlet x = 2 N\n',
     "t.cost:3:11: error: unexpected name 'N'",
     "expected ';', a unit such as GB or TFLOP/s, an operator (+ - * / @ ^), end of line or end of file; to multiply, write '*' before 'N'"),
    ('keyword in the wrong place',
     H + 'dim N = 4 for\n',
     "t.cost:2:11: error: unexpected keyword 'for'",
     "expected ',', ';', end of line or end of file"),
    ('no-break space',
     H + "let x = 1\u00a0+ 2\n",
     't.cost:2:10: error: unexpected character U+00A0',
     'no-break space is not a space costlang accepts; replace it with an ordinary space'),
    ('stray closing parenthesis',
     H + ')\n',
     "t.cost:2:1: error: unexpected ')'",
     "expected ';', a statement (a keyword such as 'dim', 'input' or 'let', or a name), end of line or end of file"),
    ('huge literal',
     H + 'dim N = 1e500\n',
     "t.cost:2:9: error: the number '1e500' is too large to work with exactly",
     'numbers have at most 400 digits and exponents of at most 400'),
    ('deeply nested expression',
     H + "let x = " + "-(" * 10000 + "1" + ")" * 10000 + "\n",
     't.cost:2:9: error: this expression nests operators or calls more than 100 deep',
     'split it into named parts with `let`'),
    ('unit written twice',
     H + 'let bw = 4 GB/s/s\n',
     "t.cost:2:17: error: unknown name 's'",
     "'s' is a unit: write it right after a number, e.g. `1 s`"),
    ('a size never declared',
     H + 'input x: fp16[B, 8]\n',
     "t.cost:2:15: error: unknown name 'B'",
     "did you forget `dim B`? ('B' is also a unit: as one, write it right after a number, e.g. `1 B`)"),
    ('misspelled operator',
     T + 'C = ad(A, A)\n',
     "t.cost:3:5: error: unknown operator 'ad'",
     "did you mean 'add'?"),
    ('misspelled dtype',
     H + 'input A: fp61[4]\n',
     "t.cost:2:10: error: unknown dtype 'fp61'",
     "did you mean 'fp6'?"),
    ('misspelled hardware',
     'use hardware chapter_gp\n',
     "t.cost:1:14: error: unknown hardware 'chapter_gp'",
     "did you mean 'chapter_gpu'?"),
    ('misspelled result function',
     T + 'C = add(A, A)\nquery flop(C)\n',
     "t.cost:4:7: error: unknown function 'flop'",
     "did you mean 'flops'?"),
    ('unknown name in a shape',
     H + 'input A: fp16[N]\n',
     "t.cost:2:15: error: unknown name 'N'",
     None),
    ('tensor used before its definition',
     T + 'C = add(A, D)\nD = add(A, A)\n',
     "t.cost:3:12: error: unknown tensor 'D'",
     "'D' is defined later, at line 4; define it before this line"),
    ('let used before its definition',
     H + 'let a = b\nlet b = 1\n',
     "t.cost:2:9: error: unknown name 'b'",
     "'b' is defined later, at line 3; define it before this line"),
    ('duplicate dim',
     H + 'dim N = 4\ndim N = 5\n',
     "t.cost:3:5: error: 'N' is already defined (at line 2)",
     'every name is assigned once; pick a new name'),
    ('reassigned tensor',
     T + 'C = add(A, A)\nC = mul(A, A)\n',
     "t.cost:4:1: error: 'C' is already defined (at line 3)",
     'every name is assigned once; pick a new name'),
    ('duplicate query label',
     H + 'query "x" = 1\nquery "x" = 2\n',
     "t.cost:3:1: error: a query named 'x' already exists",
     None),
    ('hardware selected twice',
     H + 'use hardware chapter_gpu\n',
     't.cost:2:1: error: hardware is already selected in this file (at line 1)',
     None),
    ('misspelled op kind',
     H + 'op g(x): elemwise, flops = 1\n',
     "t.cost:2:10: error: unknown op kind 'elemwise'",
     "did you mean 'elementwise'?"),
    ('misspelled custom kernel option',
     T + 'C = custom(A) { flop = 1 }\n',
     "t.cost:3:17: error: unknown custom kernel option 'flop'",
     "did you mean 'flops'?"),
    ('misspelled hardware option',
     H + 'hardware h : chapter_gpu { lanch = 1 us }\n',
     "t.cost:2:28: error: unknown hardware option 'lanch'",
     "did you mean 'launch'?"),
    ('bytes plus seconds',
     H + 'let t = 2 B + 3 s\n',
     't.cost:2:9: error: cannot add seconds to bytes',
     'both sides of + and - must have the same unit'),
    ('FLOPs plus bytes',
     T + 'C = add(A, A)\nquery flops(C) + bytes(C)\n',
     't.cost:4:7: error: cannot add bytes to FLOPs',
     'both sides of + and - must have the same unit'),
    ('peak given in bytes',
     H + 'hardware h : chapter_gpu { peak fp16 = 1 TB }\n',
     't.cost:2:40: error: the peak of fp16 must be a compute rate (FLOP/s), not bytes',
     None),
    ('dim given in bytes',
     H + 'dim N = 2 B\n',
     "t.cost:2:9: error: the value of dim 'N' must be a plain number, not bytes",
     None),
    ('bytes to a fractional power',
     H + 'query 2 B ^ 0.5\n',
     't.cost:2:13: error: bytes can only be raised to a whole-number power',
     None),
    ('matmul inner dimensions',
     H + 'input A: fp16[4, 3]\ninput B: fp16[4, 3]\nC = matmul(A, B)\n',
     't.cost:4:5: error: matmul: inner dimensions differ: A[4, 3] · B[4, 3]',
     'the last dimension of A (3) must equal the first matrix dimension of B (4)'),
    ('shapes that do not broadcast',
     T + 'input B: fp16[5]\nC = add(A, B)\n',
     't.cost:4:5: error: add: shapes A[4] and B[5] do not broadcast',
     'dimension 5 does not match 4 (and neither is 1)'),
    ('negative dimension',
     H + 'input A: fp16[-4]\n',
     't.cost:2:15: error: a dimension must be a positive whole number, not -4',
     None),
    ('zero dimension',
     H + 'input A: fp16[0]\n',
     't.cost:2:15: error: a dimension must be a positive whole number, not 0',
     None),
    ('zero dim',
     H + 'dim N = 0\n',
     "t.cost:2:9: error: dim 'N' must be positive, not 0",
     None),
    ('fractional dim',
     H + 'dim N = 3.5\n',
     "t.cost:2:9: error: dim 'N' counts elements and must be a whole number, not 7/2",
     'use `param` for a real-valued parameter'),
    ('reshape to another size',
     H + 'input A: fp16[4, 4]\nC = reshape(A) -> fp16[5]\n',
     't.cost:3:5: error: reshape: A[4, 4] has 16 elements, the result shape [5] has 5',
     None),
    ('axis out of range',
     T + 'C = sum(A, axis = 3)\n',
     't.cost:3:19: error: sum: axis 3 is out of range for A[4]',
     None),
    ('matmul of a vector',
     T + 'C = matmul(A, A)\n',
     't.cost:3:5: error: matmul needs tensors of at least two dimensions; A has shape [4]',
     None),
    ('division by zero',
     H + 'let x = 1 / 0\n',
     't.cost:2:13: error: cannot divide by zero',
     None),
    ('division by an expression that is zero',
     H + 'dim N\nlet x = 1 / (N - N)\n',
     "t.cost:3:14: error: cannot divide by 'N - N', which is 0",
     None),
    ('absurd exponent',
     H + 'let x = 2 ^ (2 ^ 100)\n',
     "t.cost:2:9: error: '2 ^ (2 ^ 100)' is too large to compute exactly",
     'exact results are limited to about 12000 bits'),
    ('absurd exponent through a bound dim',
     H + 'dim N = 100\ndim M = 2 ^ (2 ^ N)\n',
     "t.cost:3:9: error: '2 ^ (2 ^ N)' is too large to compute exactly",
     'exact results are limited to about 12000 bits'),
    ('negative absurd exponent',
     H + 'let x = 2 ^ -(2 ^ 100)\n',
     "t.cost:2:9: error: '2 ^ -(2 ^ 100)' is too large to compute exactly",
     'exact results are limited to about 12000 bits'),
    ('logarithm of zero',
     H + 'let x = log2(0)\n',
     "t.cost:2:9: error: 'log2(0)' is not a finite real number",
     'log2() needs a positive argument'),
    ('hardware without bandwidth',
     H + 'hardware h { peak fp16 = 1 TFLOP/s }\n',
     "t.cost:2:1: error: hardware 'h' states no memory bandwidth",
     'add `memory HBM { bandwidth = ... TB/s; capacity = ... GB }`'),
    ('hardware without a peak',
     H + 'hardware h { memory HBM { bandwidth = 1 TB/s } }\n',
     "t.cost:2:1: error: hardware 'h' states no peak FLOP/s",
     'add e.g. `peak fp16 = 989 TFLOP/s`'),
    ('no hardware selected',
     'input A: fp16[4]\nC = add(A, A)\n',
     't.cost:1:1: error: no hardware is selected',
     'add a line such as `use hardware h100_sxm` (`costlang hardware` lists the presets)'),
    ('no peak for the dtype',
     'use hardware note_virtual\ninput A: fp16[4]\nC = add(A, A)\n',
     "t.cost:3:5: error: hardware 'note_virtual' states no peak FLOP/s for fp16, which kernel 'C' computes in",
     'it states peaks for: fp32; add `peak fp16 = ...` to a hardware that extends it'),
    ('block on a library op',
     T + 'C = add(A, A) { flops = 2 }\n',
     "t.cost:3:17: error: only custom kernels take a { ... } block; 'add' is an elementwise op",
     None),
    ('number as a matmul operand',
     T + 'C = matmul(A, 4)\n',
     "t.cost:3:15: error: '4' is a number, not a tensor",
     'only elementwise ops take a number as an operand (`x * 0.5`)'),
    ('input marked as output',
     T + 'output A\n',
     "t.cost:3:8: error: 'A' is an input; only computed tensors can be outputs",
     None),
    ('measurement without time',
     T + 'C = add(A, A)\nmeasure C { traffic = 1 GB }\n',
     't.cost:4:1: error: a measurement needs `time = ...`',
     None),
    ('verdict in arithmetic',
     T + 'C = add(A, A)\nquery bound(C) + 1\n',
     't.cost:4:7: error: bound() gives a verdict, not a number; query it on its own',
     'write `query bound(C)`'),
    ('dtype of size zero',
     H + 'dtype q = 0 B\n',
     "t.cost:2:11: error: dtype 'q' must have a positive size, not 0",
     None),
    ('missing stdlib module',
     H + 'import nosuchmodule\n',
     "t.cost:2:1: error: cannot import 'nosuchmodule': the stdlib has no module of that name",
     'stdlib modules: amd, collectives, deepseek_v3, dtypes, google, gpt2_medium, hardware, intel, llama2_13b, llama2_70b, llama2_7b, llama3_70b, llama3_8b, llm, mixtral_8x7b, nvidia, ops, prelude, systems, tinyllama_1b, train; to import a file, quote its path: import "nosuchmodule.cost"'),
    ('python file imported',
     H + 'import "module.py"\n',
     't.cost:2:1: error: cannot import "module.py": only .cost files can be imported',
     None),
    ('solve without a free symbol',
     H + 'param p\nsolve 1 = 2 for p\n',
     't.cost:3:1: error: neither side depends on p, so there is nothing to solve',
     'solve for a dim or param that the two sides use'),
    ('solve for an unknown name',
     H + 'param p\nsolve p = 8 for q\n',
     "t.cost:3:17: error: cannot solve for 'q': it is not a dim or param of this file",
     'solve for a dim, a param, `bandwidth` or `peak`'),
    ('unknown fusion mode',
     H + 'fusion fuse_all\n',
     "t.cost:2:8: error: unknown fusion mode 'fuse_all'",
     'modes are: none, elementwise, epilogue, flash'),
]


def _error(text: str, name: str = "t.cost") -> CostlangError:
    with pytest.raises(CostlangError) as info:
        load_string(text, name).analyze()
    return info.value


def test_the_catalogue_is_large_and_distinct():
    assert len(CATALOGUE) >= 40
    assert len({label for label, *_ in CATALOGUE}) == len(CATALOGUE)
    assert len({first for _, _, first, _ in CATALOGUE}) == len(CATALOGUE)


@pytest.mark.parametrize("label, text, first, hint", CATALOGUE, ids=[c[0] for c in CATALOGUE])
def test_catalogue(label, text, first, hint):
    lines = _error(text).render().split("\n")
    assert lines[0] == first
    assert [line[len("  = hint: "):] for line in lines if line.startswith("  = hint: ")] == \
        ([hint] if hint else [])
    line_number = first.split(":")[1]
    assert lines[1].startswith(f" {line_number} | ") and "^" in lines[2]


def test_full_rendering_of_a_syntax_error():
    assert _error(T + "input B: fp16[4]\nC = add(A B)\n").render() == (
        "t.cost:4:11: error: unexpected name 'B'\n"
        " 4 | C = add(A B)\n"
        "   |           ^\n"
        "  = hint: expected '(', ')', ',', '=' or an operator (+ - * / @ ^); "
        "is a ',' missing before 'B'?")


def test_full_rendering_of_a_shape_error_shows_both_shapes():
    assert _error(H + "input A: fp16[4, 3]\ninput B: fp16[4, 3]\nC = matmul(A, B)\n").render() == (
        "t.cost:4:5: error: matmul: inner dimensions differ: A[4, 3] · B[4, 3]\n"
        " 4 | C = matmul(A, B)\n"
        "   |     ^^^^^^^^^^^^\n"
        "  = hint: the last dimension of A (3) must equal the first matrix dimension of B (4)")


def test_tabs_keep_the_caret_under_the_span():
    assert _error(H + "\tlet x = 1 B + 1 s\n").render().split("\n")[1:3] == [
        " 2 | \tlet x = 1 B + 1 s", "   | \t        ^^^^^^^^^"]


# --- several errors: all reported, in source order, without follow-on errors -----------------

def test_all_semantic_errors_of_a_file_are_reported_in_source_order():
    text = H + "input A: fp16[4]\nC = ad(A, A)\nlet x = 1 B + 1 s\ninput D: fp61[4]\nquery y\n"
    assert [line for line in _error(text).render().split("\n") if "error:" in line] == [
        "t.cost:3:5: error: unknown operator 'ad'",
        "t.cost:4:9: error: cannot add seconds to bytes",
        "t.cost:5:10: error: unknown dtype 'fp61'",
        "t.cost:6:7: error: unknown name 'y'",
    ]


@pytest.mark.parametrize("broken, follow_on", [
    ("dtype q = foo", "input A: q[4]\nC = add(A, A)\nquery flops(C)\nmeasure C { time = 1 s }"),
    ("input A: fp16[Q]", "C = add(A, A)\noutput C\nquery bound(C)\nlet z = flops(C)\nquery z"),
    ("dim N = foo", "dim M = N * 2\ninput A: fp16[N, M]\nquery numel(A)"),
    ("input A: fp16[4]\nC = foo(A)", "D = add(C, C)\nE = matmul(D, D)\nquery flops(E)"),
    ("input A: fp16[4]\ninput B: fp16[5]\nC = add(A, B)", "D = mul(C, C)\noutput D\nquery bytes(D)"),
    ("hardware h { peak fp16 = 1 TB }", "hardware g : h { launch = 1 s }\nquery bandwidth(h)"),
    ("op g(x): elemwise, flops = 1", "input A: fp16[4]\nC = g(A)"),
    ("let a = 1 B + 1 s", "let b = a * 2\nquery b\nquery a"),
])
def test_a_failed_definition_causes_no_follow_on_errors(broken, follow_on):
    error = _error(H + broken + "\n" + follow_on + "\n")
    assert len(getattr(error, "errors", [error])) == 1, error.render()


# --- files on disk ------------------------------------------------------------------------------

def _write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


def test_import_of_a_missing_file(tmp_path):
    main_file = _write(tmp_path / "main.cost", H + 'import "lib/missing.cost"\n')
    with pytest.raises(CostlangError) as info:
        load(main_file, display="main.cost")
    assert info.value.render().split("\n")[0::3] == [
        'main.cost:2:1: error: cannot import "lib/missing.cost": there is no file lib/missing.cost',
        "  = hint: a quoted path is relative to the importing file"]


def test_imports_resolve_relative_to_the_importing_file(tmp_path, monkeypatch):
    (tmp_path / "lib").mkdir()
    _write(tmp_path / "lib" / "shapes.cost", 'import "sizes.cost"\ninput A: fp16[N]\n')
    _write(tmp_path / "lib" / "sizes.cost", "dim N = 8\n")
    main_file = _write(tmp_path / "main.cost", H + 'import "lib/shapes.cost"\nC = add(A, A)\n')
    monkeypatch.chdir(tmp_path.parent)  # the working directory plays no part
    analysis = load(main_file).analyze()
    assert analysis.value(analysis.kernels[0].flops) == 8


def test_import_cycle_is_reported_with_its_chain(tmp_path):
    _write(tmp_path / "a.cost", 'import "b.cost"\ndim N = 4\n')
    _write(tmp_path / "b.cost", 'import "c.cost"\n')
    _write(tmp_path / "c.cost", 'import "a.cost"\n')
    main_file = _write(tmp_path / "main.cost", H + 'import "a.cost"\n')
    with pytest.raises(CostlangError) as info:
        load(main_file, display="main.cost")
    assert info.value.message == "import cycle: a.cost → b.cost → c.cost → a.cost"
    assert info.value.span.file.endswith("c.cost") and (info.value.span.line, info.value.span.column) == (1, 1)


def test_a_file_that_imports_itself(tmp_path):
    main_file = _write(tmp_path / "main.cost", H + 'import "main.cost"\n')
    with pytest.raises(CostlangError) as info:
        load(main_file, display="main.cost")
    assert info.value.render().split("\n")[0] == "main.cost:2:1: error: import cycle: main.cost → main.cost"


def test_non_utf8_file(tmp_path):
    path = tmp_path / "latin1.cost"
    path.write_bytes(H.encode() + "# café\n".encode("latin-1"))
    with pytest.raises(CostlangError) as info:
        load(path, display="latin1.cost")
    assert info.value.render() == (
        "latin1.cost:2:6: error: latin1.cost is not UTF-8 text: the byte 0xe9 cannot be decoded\n"
        " 2 | # caf\ufffd\n"
        "   |      ^\n"
        "  = hint: save the file as UTF-8")


def test_a_byte_order_mark_is_accepted(tmp_path):
    path = tmp_path / "bom.cost"
    path.write_bytes(b"\xef\xbb\xbf" + (T + "C = add(A, A)\n").encode())
    assert load(path).analyze().kernels[0].name == "C"


@pytest.mark.parametrize("text", ["", "\n\n", "# only a comment\n", "  \t\n; ;\n"])
def test_empty_file(tmp_path, text):
    path = _write(tmp_path / "empty.cost", text)
    with pytest.raises(CostlangError) as info:
        load(path, display="empty.cost")
    assert info.value.render().split("\n")[0] == \
        "empty.cost:1:1: error: the file is empty: there is nothing to analyse"


def test_files_that_are_not_regular_or_too_large(tmp_path, monkeypatch):
    with pytest.raises(CostlangError) as info:
        load(tmp_path, display="folder")
    assert info.value.message == "cannot read folder: it is not a regular file"
    monkeypatch.setattr(loader, "MAX_FILE_BYTES", 10)
    with pytest.raises(CostlangError) as info:
        load(_write(tmp_path / "big.cost", H), display="big.cost")
    assert info.value.message == "cannot read big.cost: it has 25 bytes; a .cost file may have at most 10 (8 MiB)"


# --- the command line ---------------------------------------------------------------------------

#: found by the analysis, which `costlang check` does not run
FOUND_BY_ANALYSIS = ("no hardware selected", "no peak for the dtype", "solve without a free symbol")
CLI_CASES = [c for c in CATALOGUE if c[0] in FOUND_BY_ANALYSIS + (
    "missing comma in a call", "unclosed hardware block", "misspelled operator", "bytes plus seconds",
    "matmul inner dimensions", "division by zero", "absurd exponent")]


@pytest.mark.parametrize("label, text, first, hint", CLI_CASES, ids=[c[0] for c in CLI_CASES])
def test_cli_prints_the_error_and_exits_with_status_2(tmp_path, capsys, monkeypatch, label, text, first, hint):
    monkeypatch.chdir(tmp_path)
    _write(tmp_path / "t.cost", text)
    for command in ("run", "check"):
        status = main([command, "t.cost"])
        captured = capsys.readouterr()
        if command == "check" and label in FOUND_BY_ANALYSIS:
            assert (status, captured.err) == (0, "")
            continue
        assert status == 2 and captured.out == ""
        assert captured.err.split("\n")[0] == first
        assert "^" in captured.err.split("\n")[2]
        assert "Traceback" not in captured.err


def test_cli_debug_adds_the_traceback(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _write(tmp_path / "t.cost", H + "let x = 1 / 0\n")
    assert main(["check", "--debug", "t.cost"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" in err and "t.cost:2:13: error: cannot divide by zero" in err


def test_cli_missing_file(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["run", "nowhere.cost"]) == 2
    assert capsys.readouterr().err == "nowhere.cost:1:1: error: cannot read nowhere.cost: No such file or directory\n"
