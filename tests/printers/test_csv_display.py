"""CSV output of `run` and `compare`, a concise Analysis repr, rich display of single results."""
import csv
import io

from conftest import EXAMPLES
from costlang import load
from costlang.cli import main


def rows(text):
    return list(csv.reader(io.StringIO(text)))


def test_run_csv_has_exact_integers_and_round_tripping_floats(capsys):
    assert main(["run", str(EXAMPLES / "roofline/gemm_4096.cost"), "--csv"]) == 0
    header, c = rows(capsys.readouterr().out)
    assert header[:4] == ["kernel", "ops", "count", "FLOP"]
    # 2·4096³ FLOP, 3·4096²·2 B, I = 4096/3, I* = 1e15/2e12 = 500,
    # T_compute = 2·4096³/1e15 s, T_memory = 100663296/2e12 s; compute-bound
    assert c[:6] == ["C", "matmul", "1", "137438953472", "100663296", repr(4096 / 3)]
    assert c[6] == "500"
    assert float(c[7]) == 137438953472 / 1e15 and float(c[8]) == 100663296 / 2e12
    assert c[9] == c[7] and c[10] == "compute-bound"


def test_compare_csv_has_one_column_per_scenario(capsys):
    f = str(EXAMPLES / "queries/llm_decode_batch.cost")
    assert main(["compare", f, "--scenario", "int4: weights=int4", "--csv"]) == 0
    table = {r[0]: r[1:] for r in rows(capsys.readouterr().out)}
    assert table["quantity"] == ["unit", "baseline", "int4"]
    # weights P = 70e9: fp16 2 B each → 1.4e11 B; int4 0.5 B → 3.5e10 B; T_memory = bytes / 2e12 B/s
    assert table["bytes"] == ["B", "140000000000", "35000000000"]
    assert table["T_memory"] == ["s", "0.07", "0.0175"]
    # I = 2·P·B / (P·b) = 2B/b: B for fp16 (b = 2), 4B for int4 (b = 1/2); I* = 1000e12/2e12 = 500,
    # so the crossing is B = 500 (fp16) and B = 125 (int4). The bound row is words, not a repr.
    assert table["bound"] == ["", "memory-bound when B < 500, balanced at B = 500, else compute-bound",
                              "memory-bound when B < 125, balanced at B = 125, else compute-bound"]


def test_analysis_repr_is_one_short_line():
    a = load(EXAMPLES / "queries/decode_crossing.cost").analyze()
    text = repr(a)
    assert text == (f"<costlang.Analysis {str(EXAMPLES / 'queries/decode_crossing.cost')!r}: 1 kernel on "
                    "chapter_bf16, fusion elementwise, free symbols B>")


def test_show_renders_a_kernel_a_solve_and_a_comparison_in_both_languages():
    a = load(EXAMPLES / "queries/llm_decode_batch.cost").analyze()
    kernel = a.show(a.kernels[0], lang="ko")
    assert kernel._repr_markdown_().startswith("## 커널 `step`")
    assert "\\subsection*{" in kernel._repr_latex_()
    solve = a.show(a.solves[0])
    assert "500" in solve._repr_markdown_() and "500" in solve._repr_latex_()   # B* = I*·b/2 = 500
    table = a.show(a.comparisons[0])._repr_markdown_()
    assert table.startswith("```\n") and "int4" in table
    whole = a.show(lang="ko")._repr_markdown_()
    assert whole.startswith("# 유도 과정")
