"""No text a person reads contains raw sympy: every example under examples/ through
`run`, `compare` (its scenarios), `sweep` (over its first free symbol) and `derive` (Markdown and
LaTeX, English and Korean), in process, searched for sympy's spellings.

Banned: `Max(`, `Min(`, `Piecewise`, `True`/`False`, `Ne(`, `**`, `oo`, `&`-joined conditions, and
`= ≈` with nothing between them. Exclusions, each for a reason:
- Markdown bold (`**Times**`) is markup, not a power: `**…**` around words is removed before the scan.
- Text quoted from the file itself (a query's, a solve's or a label's own source text, in Markdown
  code spans or after `query`/`solve` in the text report) is the user's writing, not costlang's
  printing: a backquoted span, or a label, that occurs verbatim in the .cost source is removed. No
  example writes `**` or `Max(` in its source today, so this exclusion removes nothing yet.
"""
import contextlib
import io
import re
from pathlib import Path

import pytest

from conftest import EXAMPLES, example_files

BANNED = {
    "Max(": r"\bMax\(", "Min(": r"\bMin\(", "Piecewise": r"Piecewise", "True": r"\bTrue\b",
    "False": r"\bFalse\b", "Ne(": r"\bNe\(", "**": r"\*\*", "oo": r"\boo\b", "&": r"\)\s*&\s*\(|\s&\s",
    "= ≈": r"=\s*≈",
    # Python's product sign between operands (`n*(2*p - 2)/p`, `4*L`); not the I* of I*(B)
    "*": r"(?<=[\w)])(?<!\bI)\*[\w(]",
    "ceiling(": r"\bceiling\(", "log(p)/log(2)": r"\blog\([^()]*\)/log\(2\)",
    # a denominator that starts with a minus sign (`1 + m/(−1 − m)`): not simplified
    "/(−": r"/\(\s*[−-]",
    "< ≈": r"[<>≤≥]\s*≈",
    # a size symbol B beside the unit B (`8192·B B`)
    "B B": r"\bB B\b",
    # a bound or value that is a fraction of big whole numbers with no decimal beside it
    # (`T < 36244548937253/74158441520`); a term of a symbolic expression is not one
    "n/d": r"[<>=≤≥]\s*\d{5,}/\d{5,}(?![\d·(/*])(?!\s*≈)",
}


def _cli(argv):
    from costlang.cli import main
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(argv)
    assert rc == 0, f"{' '.join(argv)} failed: {(out.getvalue() + err.getvalue())[-400:]}"
    return out.getvalue()


def outputs(path: Path, analysis=None):
    """(command, text) for what `run`, `compare`, `sweep` and `derive` print for the file: the
    analysis is made once, as the commands make it (`analysis.pipeline.analyze`), unless given,
    and every printer reads it; `sweep` re-analyses with its symbol free, as the command does."""
    from costlang import load
    from costlang.queries.pipeline import analyze
    from costlang.queries.whatif import file_scenarios
    from costlang.cli.derive import render_derivation
    from costlang.printers.text.report import report
    from costlang.printers.text.whatif import comparison_lines
    analysis = analysis if analysis is not None else analyze(load(path).program)
    yield "run", report(analysis)
    compared = file_scenarios(analysis)   # what `costlang compare FILE` shows without --scenario
    if compared is not None:
        yield "compare", "\n".join(comparison_lines(compared))
    free = analysis.program.free_symbols
    if len(free) == 1:  # with two or more free, a one-symbol sweep has no numbers to show
        yield "sweep", _cli(["sweep", str(path), "--over", f"{free[0]}=1..1024:pow2"])
    for fmt in ("md", "latex"):
        for lang in ("en", "ko"):
            yield f"derive --format {fmt} --lang {lang}", render_derivation(analysis, fmt, lang)


def _quoted_source_removed(text: str, source: str) -> str:
    text = re.sub(r"\*\*(\S.*?\S)\*\*", r"\1", text)            # Markdown bold
    return re.sub(r"`([^`\n]+)`", lambda m: "" if m.group(1) in source else m.group(0), text)


def raw_sympy(text: str, source: str):
    """(token, line) for each banned spelling in `text`, outside the user's own quoted source."""
    hits = []
    for line in _quoted_source_removed(text, source).splitlines():
        hits += [(token, line.strip()[:200]) for token, pattern in BANNED.items() if re.search(pattern, line)]
    return hits


def test_the_scan_finds_each_banned_spelling():
    # each banned spelling in a line of its own is found; bold Markdown and quoted source are not
    lines = ["T = Max(a, b)", "Min(a, b)", "Piecewise((1, x))", "when True", "False", "Ne(x, 1)", "x**2",
             "→ oo", "(a > b) & (c > d)", "I* = ≈ 292", "sent = n*(2*p - 2)/p", "steps = ceiling(log2)",
             "steps = ⌈log(p)/log(2)⌉", "1 + m/(−1 − m)", "B < ≈ 145.5", "bytes 8192·B B",
             "T < 36244548937253/74158441520"]
    assert [[t for t, _ in raw_sympy(line, "")] for line in lines] == [[t] for t in BANNED]
    assert [t for t, _ in raw_sympy("launches 4*L", "")] == ["*"]
    assert raw_sympy("**Times** and `x**2`", "query y = x**2") == []
    assert raw_sympy("fooo, Maximum, 2^3 · max(a, b) ≈ 3", "") == []
    # the accepted spellings of the same things
    assert raw_sympy("I* = 295.4; sent = 2·(p − 1)/p·n; ⌈log₂ p⌉; B < 145.5; 8192·B bytes; "
                     "T < 36244548937253/74158441520 ≈ 488.7; I = 8195/6 ≈ 1366; I*(B) = 19790/67", "") == []


#: the model-scale examples (80-layer decodes, MoE, Megatron, a 3-scenario compare): 4-10 s of CPU
#: each for all seven outputs, so their full scan runs here with the slow tests (COSTLANG_SLOW=1) to
#: keep the default suite under two minutes; their `run` report is scanned by the default run. Every
#: other example is scanned in full by tests/examples/test_all_files.py, from the analysis it makes anyway
HEAVY = {"llm/llama3_70b_h100_decode.cost", "llm/serving_llama3_8b_h100.cost", "llm/mixtral_decode_experts.cost",
         "parallel/megatron_llama3_70b_layer.cost", "queries/llm_decode_batch.cost", "composition/mlp_stack.cost",
         "memory/flash_attention.cost", "training/flash_attention_gpt2.cost", "training/megatron_flops.cost",
         "training/activation_memory_gpt.cost", "training/six_nd.cost", "training/chips_for_deadline.cost",
         "training/largest_micro_batch.cost", "serving/llama3_8b_h100.cost", "serving/speculative_llama2_7b.cost",
         "training/activation_memory_gpt_tp.cost", "explore/llama3_70b_serving.cost", "explore/llama3_8b_training.cost",
         "training/attention_reaches_mlp.cost", "parallel/zoo_llama3_70b_3d.cost", "serving/llama3_8b_h200_decode.cost",
         "serving/llama3_8b_pools.cost", "parallel/llama3_70b_nodes.cost",
         "parallel/llama3_70b_pods.cost"}


def test_the_heavy_list_names_existing_examples():
    assert HEAVY <= {str(p.relative_to(EXAMPLES)) for p in example_files()}


def raw_sympy_in_outputs(path: Path, analysis=None) -> list:
    """(command, token, line) for each banned spelling in any of the file's outputs."""
    source = path.read_text(encoding="utf-8")
    return [(command, token, line) for command, text in outputs(path, analysis) for token, line in raw_sympy(text, source)]


@pytest.mark.slow
@pytest.mark.parametrize("rel", sorted(HEAVY))
def test_no_raw_sympy_in_any_output_of_the_heavy_examples(rel):
    found = raw_sympy_in_outputs(EXAMPLES / rel)
    assert not found, "\n".join(f"{cmd}: {token!r} in {line}" for cmd, token, line in found[:20])
