"""Standalone LaTeX derivations compile without an overfull line.

Runs only where TeX is installed (pdfLaTeX for English; XeLaTeX with kotex for Korean): CI has no
TeX and checks the math through KaTeX instead (test_derive_render.py). Long inline formulas may
break after `+` and relations (`printers.latex.breakable`), long display rows continue on a new
row (`wrap_rows`), and the standalone preamble sets margins and emergency stretch.
"""
import shutil
import subprocess

import pytest

from conftest import EXAMPLES
from costlang import load
from costlang.queries.compare import compare_fusion
from costlang.cli.derive import render_derivation

FILES = ["roofline/gemm_4096.cost", "queries/decode_crossing.cost", "roofline/exercises/ex4_fusion.cost",
         "queries/llm_decode_batch.cost"]


def _kotex() -> bool:
    kpsewhich = shutil.which("kpsewhich")
    return bool(kpsewhich) and bool(subprocess.run([kpsewhich, "kotex.sty"], capture_output=True,
                                                   text=True).stdout.strip())


@pytest.mark.slow  # compiles PDFs with TeX (where installed); COSTLANG_SLOW=1 runs it
@pytest.mark.skipif(not shutil.which("pdflatex"), reason="TeX is not installed (CI checks the math with KaTeX)")
@pytest.mark.parametrize("lang", ["en", "ko"])
@pytest.mark.parametrize("rel", FILES)
def test_standalone_document_compiles_without_overfull_lines(rel, lang, tmp_path):
    engine = "pdflatex" if lang == "en" else "xelatex"
    if lang == "ko" and not (shutil.which(engine) and _kotex()):
        pytest.skip("XeLaTeX with kotex is not installed")
    a = load(EXAMPLES / rel).analyze()
    tex = render_derivation(a, fmt="latex", lang=lang, standalone=True, extras=(compare_fusion(a),))
    (tmp_path / "d.tex").write_text(tex, encoding="utf-8")
    r = subprocess.run([engine, "-interaction=nonstopmode", "-halt-on-error", "d.tex"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=180)
    log = (tmp_path / "d.log").read_text(encoding="utf-8", errors="replace")
    assert r.returncode == 0, log[-2000:]
    assert "Overfull \\hbox" not in log, [line for line in log.splitlines() if "Overfull" in line]
