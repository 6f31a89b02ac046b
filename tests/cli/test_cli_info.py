"""`costlang --version`, `ops`, `completion` and `editor`: listings, scripts and editor files
built from the grammar's own keyword list, so the lexer, the TextMate grammar and the parser agree."""
import json
import re
from pathlib import Path

import pytest
from pygments import lex
from pygments.token import Keyword

from costlang.cli import main
from costlang.frontend.keywords import grammar_keywords
from costlang.editors.lexer import CostLexer
from costlang.editors.textmate import textmate_grammar

ROOT = Path(__file__).resolve().parents[2]
FILES = sorted((ROOT / "examples").rglob("*.cost")) + sorted((ROOT / "stdlib").rglob("*.cost"))


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_version_is_the_packages(capsys):
    version = re.search(r'^version = "([^"]+)"', (ROOT / "pyproject.toml").read_text(), re.M).group(1)
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0
    assert capsys.readouterr().out == f"costlang {version}\n"


def test_ops_lists_the_stdlib_with_flops_per_element(capsys):
    code, out, _ = run(capsys, "ops")
    assert code == 0
    rows = {line.split()[0]: line.split() for line in out.splitlines()[2:]}
    # stdlib/ops.cost: gelu counts 10 FLOP per element (the chapter's figure), matmul 2 per MAC
    assert rows["gelu(x)"][1:3] == ["elementwise", "10"]
    assert rows["matmul(a,"][2:4] == ["matmul", "2"]
    assert rows["transpose(x)"][1:3] == ["view", "-"]  # views do no work


def test_ops_of_a_file_shows_its_redefinition(tmp_path, capsys):
    f = tmp_path / "g.cost"
    f.write_text("use hardware chapter_gpu\nop gelu(x): elementwise, flops = 8\ndim N = 4\ninput x: fp16[N]\n"
                 "y = gelu(x)\n", encoding="utf-8")
    code, out, _ = run(capsys, "ops", str(f), "--json")
    assert code == 0
    gelu = next(o for o in json.loads(out)["ops"] if o["name"] == "gelu")
    assert gelu == {"name": "gelu", "params": ["x"], "kind": "elementwise", "flops_per_element": "8",
                    "defined_at": "g.cost:2"}


def test_ops_of_a_bad_file_is_an_input_error(tmp_path, capsys):
    f = tmp_path / "bad.cost"
    f.write_text("dim N = \n", encoding="utf-8")
    code, _, err = run(capsys, "ops", str(f))
    assert code == 2 and "bad.cost:1:" in err


@pytest.mark.parametrize("shell", ["bash", "zsh"])
def test_completion_knows_every_subcommand_and_option(shell, capsys):
    code, out, _ = run(capsys, "completion", shell)
    assert code == 0
    for word in ("run", "check", "derive", "plot", "compare", "sweep", "ops", "completion", "editor",
                 "--set", "--fusion", "--json", "--time-budget"):
        assert word in out, word


def test_editor_writes_a_vscode_extension_and_never_replaces_a_folder(tmp_path, capsys):
    target = tmp_path / "ext"
    code, out, _ = run(capsys, "editor", "vscode", str(target))
    assert code == 0 and out.count("wrote ") == 3
    manifest = json.loads((target / "package.json").read_text(encoding="utf-8"))
    assert manifest["contributes"]["languages"][0]["extensions"] == [".cost"]
    assert json.loads((target / "syntaxes/costlang.tmLanguage.json").read_text(encoding="utf-8")) \
        == textmate_grammar()
    code, _, err = run(capsys, "editor", "vscode", str(target))
    assert code == 2 and "exists already" in err


def test_keywords_come_from_the_grammar():
    keywords = set(grammar_keywords())
    # the what-if statements' words, which a hand-kept keyword list once missed
    assert {"solve", "for", "scenario", "compare", "regimes"} <= keywords
    grammar = (ROOT / "grammar" / "costlang.lark").read_text(encoding="utf-8")
    for word in keywords:
        assert f'"{word}"' in grammar


def test_pygments_and_textmate_mark_the_same_keywords():
    """Both are built from one list: on every example and stdlib file they agree word for word."""
    keyword_re = re.compile(textmate_grammar()["repository"]["keywords"]["match"])
    for path in FILES:
        text = path.read_text(encoding="utf-8")
        code = "\n".join(re.sub(r'#.*|"[^"\n]*"', "", line) for line in text.splitlines())
        textmate = sorted(m.group(0) for m in keyword_re.finditer(code))
        pygments = sorted(v for t, v in lex(text, CostLexer()) if t is Keyword)
        assert textmate == pygments, path.name


def test_ops_lists_a_files_blocks_with_their_parameters(capsys):
    code, out, _ = run(capsys, "ops", str(ROOT / "examples" / "composition" / "mlp_stack.cost"))
    assert code == 0
    # examples/composition/mlp_stack.cost, line 16: block mlp(x: dt[n, d], f: dim, dt: dtype)
    assert "mlp(x: dt[n, d], f: dim, dt: dtype)  mlp_stack.cost:16" in out
    code, out, _ = run(capsys, "ops", str(ROOT / "examples" / "composition" / "mlp_stack.cost"), "--json")
    assert json.loads(out)["blocks"] == [{"name": "mlp", "params": ["x: dt[n, d]", "f: dim", "dt: dtype"],
                                          "defined_at": "mlp_stack.cost:16"}]


def _bash_completes(script: str, line: str) -> list[str]:
    import shutil
    import subprocess
    bash = shutil.which("bash")
    words = line.split(" ")
    program = (f'source /dev/stdin; COMP_WORDS=({" ".join(words)}); COMP_CWORD={len(words) - 1}; '
               f'COMP_LINE="{line}"; COMP_POINT=${{#COMP_LINE}}; _shtab_costlang; printf "%s\\n" "${{COMPREPLY[@]}}"')
    out = subprocess.run([bash, "-c", program], input=script, capture_output=True, text=True, check=True).stdout
    return sorted(out.split())


def test_bash_completes_hardware_and_model_names(capsys):
    code, script, _ = run(capsys, "completion", "bash")
    assert code == 0
    # the presets that start with h1 (and no .cost file here starts so)
    assert _bash_completes(script, "costlang run --hardware h1") == ["h100_pcie", "h100_sxm"]
    assert "dgx_h100" in _bash_completes(script, "costlang plot --hardware dgx")   # systems too
    assert _bash_completes(script, "costlang hardware show a100_8") == ["a100_80gb"]
    assert _bash_completes(script, "costlang models llama3") == ["llama3_70b", "llama3_8b"]


def test_models_shows_one_model_or_names_the_zoo(capsys):
    code, out, _ = run(capsys, "models", "llama3_8b")
    assert code == 0 and "llama3_8b  8,030,261,248" in out and "llama3_70b" not in out
    code, _, err = run(capsys, "models", "llama3_9b")
    assert code == 2 and "'llama3_9b' is not in the model zoo" in err and "did you mean 'llama3_8b'?" in err
