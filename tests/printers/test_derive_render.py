"""Every math fragment of every derivation renders in a real renderer: KaTeX, through Node.

KaTeX is installed into tests/node from its lock file (`npm ci --prefix tests/node`) the first time
the check runs. When Node or npm is missing, or the install fails, this test fails (it is not
skipped): a broken formula must never pass unseen.
All fragments go to one node process.
"""
import fcntl
import json
import re
import shutil
import subprocess
from pathlib import Path

import costlang
import pytest
from costlang.printers.derivation.latex import LatexDocPrinter
from costlang.printers.derivation.markdown import MarkdownPrinter
from tools import regen
ROOT = Path(__file__).resolve().parents[2]
NODE_DIR = ROOT / "tests" / "node"
_MD = re.compile(r"\$\$\n(.*?)\n\$\$|\$([^$\n]+)\$", re.S)
_TEX = re.compile(r"\\\[\n(.*?)\n\\\]|\\\((.*?)\\\)", re.S)


def fragments(text: str, pattern) -> list[dict]:
    return [{"tex": m.group(1) if m.group(1) is not None else m.group(2), "display": m.group(1) is not None}
            for m in pattern.finditer(text)]


def render_all(frags: list[dict]) -> list:
    node, npm = shutil.which("node"), shutil.which("npm")
    assert node and npm, "Node.js (v18+) and npm are needed for the KaTeX check"
    _install_katex(npm)
    r = subprocess.run([node, str(NODE_DIR / "katex_check.js")], input=json.dumps(frags),
                       capture_output=True, text=True, cwd=NODE_DIR)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def _install_katex(npm: str) -> None:
    """`npm ci` once; parallel test workers (pytest-xdist) wait on a lock for the one installing."""
    with open(NODE_DIR / ".install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (NODE_DIR / "node_modules" / "katex").is_dir():
            install = subprocess.run([npm, "ci", "--prefix", str(NODE_DIR), "--no-audit", "--no-fund"],
                                     capture_output=True, text=True)
            assert install.returncode == 0, f"`npm ci --prefix tests/node` failed:\n{install.stderr}"


def test_fragment_extraction():
    text = "a $x$ b\n\n$$\n\\begin{aligned}\ny &= 1\n\\end{aligned}\n$$\n"
    assert fragments(text, _MD) == [{"tex": "x", "display": False},
                                    {"tex": "\\begin{aligned}\ny &= 1\n\\end{aligned}", "display": True}]
    assert fragments("\\(I^{*}\\) and \\[\nz\n\\]", _TEX) == [{"tex": "I^{*}", "display": False},
                                                            {"tex": "z", "display": True}]


def test_katex_catches_a_broken_formula():
    assert render_all([{"tex": "\\frac{1}{", "display": True}, {"tex": "I^{*}", "display": False}]) \
        [1] is None
    assert "KaTeX parse error" in render_all([{"tex": "\\fracc{1}{2}", "display": False}])[0]


def test_every_golden_math_fragment_renders_in_katex():
    frags, where = [], []
    for source, golden, fmt, lang in regen.golden_files(ROOT):
        text = golden.read_text(encoding="utf-8")
        found = fragments(text, _MD if fmt == "md" else _TEX)
        assert found, golden
        frags += found
        where += [golden.name] * len(found)
    # the standalone documents and the free-hardware variants print the same kinds of math
    a = costlang.load(ROOT / "examples/roofline/gemm_4096.cost").analyze(hardware="h100_sxm")
    for text, pattern in ((MarkdownPrinter(lang="ko").doprint(a), _MD),
                          (LatexDocPrinter(standalone=True).doprint(a), _TEX)):
        found = fragments(text, pattern)
        frags += found
        where += ["h100 variant"] * len(found)
    assert len(frags) > 1000
    errors = [(w, f["tex"], e) for w, f, e in zip(where, frags, render_all(frags)) if e is not None]
    assert not errors, errors[:5]


@pytest.mark.slow  # the golden fragments above run KaTeX by default; this one with COSTLANG_SLOW=1
def test_every_solve_math_fragment_renders_in_katex():
    """The solve sections (roots, regimes, whole answers, no-crossing reasons, limits, hardware
    targets, regime maps) of every query example, in both languages and both formats."""
    from test_derive_solve import REGIMES
    analyses = [costlang.load(p).analyze() for p in sorted((ROOT / "examples/queries").glob("*.cost"))]
    analyses.append(costlang.load_string(REGIMES, "regimes.cost").analyze())
    assert sum(len(a.solves) for a in analyses) >= 6
    frags = []
    for a in analyses:
        for lang in ("en", "ko"):
            frags += fragments(MarkdownPrinter(lang=lang).doprint(a), _MD)
            frags += fragments(LatexDocPrinter(lang=lang).doprint(a), _TEX)
    solve_math = [f for f in frags if "^{*}" in f["tex"] and ("\\rfloor" in f["tex"] or "\\sup" in f["tex"]
                                                              or "\\inf" in f["tex"] or "\\approx" in f["tex"])]
    assert solve_math
    errors = [(f["tex"], e) for f, e in zip(frags, render_all(frags)) if e is not None]
    assert not errors, errors[:5]
