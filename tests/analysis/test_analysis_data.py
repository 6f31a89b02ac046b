"""Analysis returns data, printers make words: a scan of costlang/analysis/ for sentences,
and the structured values that replaced them.

The scan reads the source with `ast` (never imports it): no f-string of three or more words is built
outside an error message (a `raise`, an `...Error(...)` call, a `time_budget` description) or a
`__repr__`, and no string constant holds the printers' phrases (a verdict or regime said as a
clause: "is memory-bound", "from here", "as written").
"""
import ast
import re
from pathlib import Path

import sympy

from costlang import load_string
from costlang.analysis.bounds import COMPUTE, MEMORY
from costlang.queries.solve_terms import Case, Side, StepKind, Taken
from costlang.printers.words.solve import case_words, side_predicate, side_words

ANALYSIS = Path(__file__).resolve().parents[2] / "costlang" / "analysis"

#: clauses that only printers may write (each was once built in analysis/)
PHRASES = ("is memory-bound", "is compute-bound", "fits in memory", "does not fit", "from here",
           "changes bound", "as written", "is the larger", "is the smaller", " there", "solve for",
           "the equation", "with the bound values", "clear the denominators", "for every")


def _exempt(tree) -> set:
    """Ids of nodes inside error messages, budgets' descriptions, docstrings and __repr__."""
    out = set()
    for node in ast.walk(tree):
        inside = isinstance(node, ast.Raise) or (isinstance(node, ast.FunctionDef) and node.name == "__repr__")
        if isinstance(node, ast.Call):
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            inside = name.endswith("Error") or name == "time_budget"
        if inside:
            out |= {id(n) for n in ast.walk(node)}
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            out.add(id(node.value))   # a docstring or a bare string
    return out


def _strings(path: Path):
    """(line, kind, text) of each f-string and each string constant outside the exempt nodes."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = _exempt(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            skip |= {id(v) for v in node.values}
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.JoinedStr):
            yield node.lineno, "f", " ".join(v.value for v in node.values if isinstance(v, ast.Constant))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.lineno, "s", node.value


def test_analysis_builds_no_sentences():
    found = []
    for path in sorted(ANALYSIS.glob("*.py")):
        for line, kind, text in _strings(path):
            words = [w for w in text.split() if re.fullmatch(r"[A-Za-z]+[,;:]?", w)]
            if kind == "f" and len(words) >= 3 or any(p in text for p in PHRASES):
                found.append(f"{path.name}:{line}: {text!r}")
    assert found == []


def test_the_scan_finds_a_sentence(tmp_path):
    # the scan itself can fail: a regime said in words in an analysis module is found
    bad = tmp_path / "bad.py"
    bad.write_text('def f(k):\n    return f"{k} is memory-bound there"\n')
    assert [(kind, text) for _, kind, text in _strings(bad)] == [("f", " is memory-bound there")]


def test_a_solve_answers_in_structured_values():
    # decode GEMM with d free (test_solve.py): T_kernel(y) = 1 ms has two roots, one per max() branch
    text = """
hardware chapter_bf16 : chapter_gpu { peak bf16 = 1000 TFLOP/s }
use hardware chapter_bf16
dim d
dim B
input x: bf16[B, d]
weight W: bf16[d, d]
output y = matmul(x, W)
solve "T": t_kernel(y) = 1 ms for B
solve "fit": footprint() <= 80 GB for B
"""
    t, fit = load_string(text).analyze().solves
    # each root lies on one branch of max(T_compute, T_memory), which depends on d: not certain
    assert set(t.cases) == {Case((Taken("y", COMPUTE),), False), Case((Taken("y", MEMORY),), False)}
    assert {case_words(c) for c in t.cases} == {"if y is compute-bound there", "if y is memory-bound there"}
    assert case_words(Case((Taken("y", MEMORY),)), "ko") == "그 점에서 y는 메모리 바운드"
    assert t.steps[0].kind == StepKind.EQUATION
    assert all(isinstance(g.side, Side) for g in fit.regimes)
    assert side_words(Side.DOES_NOT_FIT, "footprint()", "capacity()") == "does not fit in memory"
    assert side_predicate(Side.ABOVE, "t_kernel(y)", "1 ms") == "satisfies t_kernel(y) > 1 ms"
    assert side_words(Side.FITS, "", "", "ko") == "메모리에 들어감"


def test_a_no_crossing_says_where_as_a_value():
    # I = (2·P·B/(B + 1)) / (2·P bytes of W) = B/(B + 1) < 1: sup 1 as B → ∞, so I = 1 has no
    # crossing; the place of the sup is (∞, approached), not text
    text = """
use hardware chapter_gpu
dim B
param P = 1e9
weight W: fp16[P]
step = custom(W) { flops = 2 * P * B / (B + 1); writes = 0; math = fp16 }
solve "never": intensity(step) = 1 for B
"""
    (r,) = load_string(text).analyze().solves
    n = r.no_crossing
    assert (n.extremum, n.value, n.at, n.approached) == ("sup", 1, sympy.oo, True)
