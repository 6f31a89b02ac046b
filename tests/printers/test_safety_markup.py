"""Markup safety: text from a `.cost` file is inert in Markdown and LaTeX output.

A label can hold `\\input{…}`, `\\write18`, `^^5c` (TeX's way of writing a backslash), unbalanced
braces, `$`, `<script>` and backticks. Each place a label reaches a derivation is pinned here: a
query's name (a display-math row), a solve's name (a heading), an efficiency's source (prose), and
the file's name (the title). The LaTeX documents are checked at the string level (no control word
but the printer's, no `^^`, balanced braces, no live `%`), every math fragment renders in KaTeX, and
where TeX is installed `test_latex_compile.py` compiles the standalone document.
"""
import re
import shutil
import subprocess

import pytest

from costlang.cli import main
from costlang.printers.safe import latex_text, markdown_code, markdown_text
from test_derive_render import _MD, _TEX, fragments, render_all

HOSTILE = r"a`<script>alert(1)</script>` $x$ ^^5c \input{/etc/passwd} \write18{ls} }{ #%&~_*[x](y) |"
MARKUP = ('hardware g : chapter_gpu { efficiency HBM = 9/10 "' + HOSTILE + '" }\nuse hardware g\n'
          "dim N = 4096\ninput x: fp16[N]\noutput y = relu(x)\nparam p\n"
          f'query "{HOSTILE}" = t_kernel(y)\nsolve "{HOSTILE}": t_kernel(y) = p * 1 s for p\n')
NAME = "x<b>$`.cost"

#: HOSTILE in LaTeX text mode, written out by hand: each special character as the command printing it
HOSTILE_TEX = (r"a`\textless{}script\textgreater{}alert(1)\textless{}/script\textgreater{}` \$x\$ "
               r"\textasciicircum{}\textasciicircum{}5c \textbackslash{}input\{/etc/passwd\} "
               r"\textbackslash{}write18\{ls\} \}\{ \#\%\&\textasciitilde{}\_*[x](y) \textbar{}")
#: HOSTILE as a label inside a formula: the same, with its brackets in braces (`{[}x{]}(y)`: the same
#: glyphs in TeX and KaTeX, and no `[text](url)` a Markdown renderer would make a link of)
HOSTILE_MATH = HOSTILE_TEX.replace("[x](y)", "{[}x{]}(y)")
#: HOSTILE as Markdown prose: backslashes before \ ` * _ [ ] < > # ! | $ ~ & (not before ( ) { } % ^)
HOSTILE_MD = (r"a\`\<script\>alert(1)\</script\>\` \$x\$ ^^5c \\input{/etc/passwd} \\write18{ls} }{ "
              r"\#%\&\~\_\*\[x\](y) \|")


def test_the_escapes_by_hand():
    assert latex_text(HOSTILE) == HOSTILE_TEX
    assert markdown_text(HOSTILE) == HOSTILE_MD
    # a code span is fenced by one backtick more than the longest run inside (HOSTILE has runs of 1)
    assert markdown_code(HOSTILE) == "``" + HOSTILE + "``"
    assert markdown_code("``a") == "``` ``a ```"  # starts with a backtick: padded by a space
    assert latex_text("a\nb") == markdown_text("a\rb") == "a b"  # a line break would end a heading


@pytest.fixture
def derive(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / NAME).write_text(MARKUP, encoding="utf-8")

    def run(*args):
        status = main(["derive", NAME, *args])
        out, err = capsys.readouterr()
        assert status == 0, err
        return out
    return run


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_markdown_shows_labels_as_written(derive, lang):
    out = derive("--lang", lang)
    lines = out.split("\n")
    assert lines[0].endswith(": ``x<b>$`.cost``") and lines[0].startswith("# ")  # the title: a code span
    assert any(line.startswith("## ") and line.endswith("``" + HOSTILE + "``") for line in lines)  # the solve
    assert f"({HOSTILE_MD})" in out                                       # the efficiency's source
    assert r"\text{\texttt{" + HOSTILE_MATH + "}} &= " in out              # the query, inside $$ … $$
    outside_code = re.sub(r"(`+)(?!`).*?(?<!`)\1(?!`)", "", out)          # CommonMark code spans taken out
    assert "<script" not in outside_code and "<b>" not in outside_code
    assert not re.search(r"(?<!\\)\$x", outside_code)                      # no `$` of the label opens math


def _no_live_tex(tex: str) -> None:
    """What TeX would read as a command, a group or a comment comes only from the printer."""
    words = set(re.findall(r"\\([A-Za-z]+)", tex))
    assert not words & {"input", "write", "immediate", "openout", "catcode", "def", "csname"}, words
    assert "^^" not in tex
    plain = re.sub(r"\\[\\{}$%&#_ ,]", "", tex)     # `\\` rows, escaped characters, thin spaces
    assert "%" not in plain and "#" not in plain
    depth = 0
    for c in plain:
        depth += {"{": 1, "}": -1}.get(c, 0)
        assert depth >= 0
    assert depth == 0


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_a_standalone_latex_document_with_hostile_labels_stays_inert(derive, lang):
    tex = derive("--format", "latex", "--lang", lang, "--standalone")
    assert tex.startswith("\\documentclass") and tex.rstrip().endswith("\\end{document}")
    _no_live_tex(tex)
    assert "\\texttt{x\\textless{}b\\textgreater{}\\$`.cost}" in tex                 # the title
    assert "\\texttt{" + HOSTILE_TEX + "}}" in tex                                  # the solve heading
    assert "(" + HOSTILE_TEX + ")" in tex                                           # the efficiency's source
    assert "\\text{\\texttt{" + HOSTILE_MATH + "}} &= " in tex                       # the query


def test_every_math_fragment_with_hostile_labels_renders_in_katex(derive):
    frags = []
    for lang in ("en", "ko"):
        md = re.sub(r"(`+)(?!`).*?(?<!`)\1(?!`)", "", derive("--lang", lang)).replace(r"\$", "")
        frags += fragments(md, _MD) + fragments(derive("--format", "latex", "--lang", lang), _TEX)
    assert any(HOSTILE_MATH.replace(r"\$", "") in f["tex"] or HOSTILE_MATH in f["tex"] for f in frags)
    errors = [(f["tex"][:200], e) for f, e in zip(frags, render_all(frags)) if e is not None]
    assert not errors, errors[:3]


@pytest.mark.slow  # runs pdfLaTeX where TeX is installed; COSTLANG_SLOW=1 runs it
@pytest.mark.skipif(not shutil.which("pdflatex"), reason="TeX is not installed (the string checks above run)")
def test_the_standalone_document_with_hostile_labels_compiles(derive, tmp_path):
    (tmp_path / "d.tex").write_text(derive("--format", "latex", "--standalone"), encoding="utf-8")
    r = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", "d.tex"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=180)
    log = (tmp_path / "d.log").read_text(encoding="utf-8", errors="replace")
    assert r.returncode == 0, log[-2000:]
    assert "(/etc/passwd" not in log  # \input{/etc/passwd} was printed, not read


def test_csv_cells_never_run_as_spreadsheet_formulas(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.cost").write_text('use hardware chapter_gpu\ndim N\ninput x: fp16[N]\noutput y = relu(x)\n'
                                     'query "=HYPERLINK(1)" = t_kernel(y)\n', encoding="utf-8")
    assert main(["sweep", "--csv", "t.cost", "--over", "N=1,2", "--show", "=HYPERLINK(1)"]) == 0
    # t_kernel(y) = 4·N B / 2 TB/s = 2·10^-12 s per element: numbers stay numbers, the label is quoted
    assert capsys.readouterr().out == "N,'=HYPERLINK(1),crossing\n1.0,2e-12,\n2.0,4e-12,\n"
    assert main(["compare", "--csv", "t.cost", "--scenario", "N=2"]) == 0
    assert "\n'=HYPERLINK(1),s,N/500000000000,4e-12\n" in capsys.readouterr().out
