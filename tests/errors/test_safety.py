"""Safety: nothing in costlang evaluates text from a file as code, and hostile text is only an error.

The first test reads the package's own source with `ast` and fails on any call that turns text into
code or objects (eval, exec, compile, __import__, sympify, parse_expr, S("...")). The others put a
Python payload into every place of a `.cost` file where an expression or a name can stand, and
check that each produces an ordinary, positioned `CostlangError` (and that the payload never ran).
"""
import ast as pyast

import pytest

from conftest import ROOT
from costlang import CostlangError, load_string
from costlang.cli import main

PACKAGE = ROOT / "costlang"
#: builtins that run text as code, called by their bare name (or as `builtins.NAME`)
BUILTIN_CALLS = {"eval", "exec", "compile", "__import__"}
#: library functions that parse text into code or expressions, however they are reached
PARSING_CALLS = {"sympify", "parse_expr", "S", "import_module", "literal_eval", "lambdify",
                 "parse_latex"}


def _called_name(call: pyast.Call):
    """The forbidden name a call reaches, or None (`re.compile` is not the builtin `compile`)."""
    f = call.func
    if isinstance(f, pyast.Name) and f.id in BUILTIN_CALLS | PARSING_CALLS:
        return f.id
    if isinstance(f, pyast.Attribute):
        owner = f.value.id if isinstance(f.value, pyast.Name) else None
        if f.attr in PARSING_CALLS or (f.attr in BUILTIN_CALLS and owner in ("builtins", "__builtins__")):
            return f.attr
    return None


def forbidden_calls(text: str, filename: str) -> list[str]:
    """`file:line: name(...)` for every forbidden call in one module's source."""
    found = []
    for node in pyast.walk(pyast.parse(text, filename)):
        if isinstance(node, pyast.Call) and _called_name(node):
            found.append((node.lineno, f"{filename}:{node.lineno}: {_called_name(node)}(...)"))
        if isinstance(node, (pyast.Import, pyast.ImportFrom)):
            names = {a.name.split(".")[-1] for a in node.names}
            if names & PARSING_CALLS:
                found.append((node.lineno, f"{filename}:{node.lineno}: imports {sorted(names)}"))
    return [text for _, text in sorted(found)]


def test_the_scanner_finds_what_it_looks_for():
    source = ("import sympy, re\nfrom sympy.parsing.sympy_parser import parse_expr\n"
              "x = eval('1')\nsympy.sympify('x')\ny = sympy.S('1/2')\n__import__('os')\n"
              "re.compile('a')\nbuiltins.exec('1')\nz = sympy.S.One\n")
    assert forbidden_calls(source, "bad.py") == [
        "bad.py:2: imports ['parse_expr']", "bad.py:3: eval(...)", "bad.py:4: sympify(...)",
        "bad.py:5: S(...)", "bad.py:6: __import__(...)", "bad.py:8: exec(...)"]


def test_package_source_never_turns_text_into_code():
    files = sorted(PACKAGE.rglob("*.py"))
    assert len(files) > 20
    found = []
    for path in files:
        found += forbidden_calls(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))
    assert found == []


#: Python that would run a shell command if any of it were evaluated; the bare forms parse as costlang
PAYLOADS = ("__import__('os').system('touch pwned')", "__import__(os)", "eval(exec(compile))")
BASE = "use hardware chapter_gpu\ndim N = 8\ninput A: fp16[N]\n"

# (label, the statement after BASE): "{}" is where the payload stands
PLACES = {
    "dim value": "dim M = {}",
    "param value": "param p = {}",
    "dim name": "dim {}",
    "shape": "input X: fp16[{}]",
    "dtype of a tensor": "input X: {}[N]",
    "dtype size": "dtype d = {}",
    "let": "let x = {}",
    "query": "query {}",
    "query label": "query {} = 1",
    "op argument": "C = add(A, {})",
    "op name": "C = {}(A, A)",
    "op keyword": "C = sum(A, axis = {})",
    "result dtype": "C = add(A, A) as {}",
    "custom option": "C = custom(A) {{ flops = {} }}",
    "op definition": "op evil(x): elementwise, flops = {}",
    "hardware peak": "hardware h {{ peak fp16 = {} }}",
    "hardware memory": "hardware h {{ peak fp16 = 1 TFLOP/s; memory HBM {{ bandwidth = {} }} }}",
    "hardware base": "hardware h : {} {{ peak fp16 = 1 TFLOP/s }}",
    "use": "use hardware {}",
    "import name": "import {}",
    "import path": 'import "{}"',
    "measure": "C = add(A, A)\nmeasure C {{ time = {} }}",
    "output": "output {}",
    "fusion": "fusion {}",
    "solve": "param q\nsolve {} = 1 for q",
    "solve target": "solve 1 = 2 for {}",
}


@pytest.mark.parametrize("payload", PAYLOADS)
@pytest.mark.parametrize("place", sorted(PLACES))
def test_python_payload_is_an_ordinary_error(place, payload, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    text = BASE + PLACES[place].format(payload) + "\n"
    with pytest.raises(CostlangError) as info:
        load_string(text, "evil.cost").analyze()
    span = info.value.span
    assert span is not None and span.file == "evil.cost"
    assert 1 <= span.line <= text.count("\n") and 1 <= span.column <= len(text)
    assert info.value.render().startswith(f"evil.cost:{span.line}:{span.column}: error: ")
    assert not (tmp_path / "pwned").exists()


def test_payload_through_the_cli(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "evil.cost"
    path.write_text(BASE + "let x = __import__(os)\nquery x\n", encoding="utf-8")
    assert main(["run", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{path}:4:9: error: unknown function '__import__'\n")
    assert "Traceback" not in err
    assert not (tmp_path / "pwned").exists()


def test_only_cost_files_can_be_imported(tmp_path):
    (tmp_path / "module.py").write_text("raise SystemExit('ran')\n", encoding="utf-8")
    main_file = tmp_path / "main.cost"
    main_file.write_text('import "module.py"\n', encoding="utf-8")
    from costlang import load
    with pytest.raises(CostlangError) as info:
        load(main_file, display="main.cost")
    assert info.value.render() == (
        'main.cost:1:1: error: cannot import "module.py": only .cost files can be imported\n'
        ' 1 | import "module.py"\n'
        '   | ^^^^^^^^^^^^^^^^^^')


def test_names_never_reach_python_attribute_lookup():
    # Names such as __class__ or __dict__ must be ordinary unknown names, not Python attributes.
    for name in ("__class__", "__dict__", "__builtins__", "__init__", "__globals__"):
        with pytest.raises(CostlangError) as info:
            load_string(BASE + f"query {name}\n", "evil.cost")
        assert info.value.message == f"unknown name '{name}'"


def test_terminal_control_characters_are_not_echoed(tmp_path):
    # A file cannot make an error message send escape sequences to the terminal.
    with pytest.raises(CostlangError) as info:
        load_string(BASE + "let x = 1 \x1b[2J\n", "evil.cost")
    assert "\x1b" not in info.value.render()
    assert info.value.render().splitlines()[1] == " 4 | let x = 1 ?[2J"
