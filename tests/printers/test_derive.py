"""Derivations: the recipe's steps and values for the lecture documents' examples, both languages,
the printer's settings and dispatch, and the golden files being current."""
import subprocess
import sys
from pathlib import Path

import pytest

import costlang
from costlang.analysis.derive import derive_kernel
from costlang.cli import main
from costlang.printers.derivation.printer import DerivationPrinter
from costlang.printers.derivation.latex import LatexDocPrinter
from costlang.printers.derivation.markdown import MarkdownPrinter
from tools import regen
ROOT = Path(__file__).resolve().parents[2]
EX = ROOT / "examples"


def md(path, lang="en", **kw):
    return MarkdownPrinter(lang=lang).doprint(costlang.load(EX / path).analyze(**kw))


def test_example_a_vector_add_fp16_steps():
    text = md("roofline/vector_add_fp16.cost")
    # ① bytes: three fp16 tensors of N = 2^20 elements
    assert "- read `A` (input, `fp16`): $N \\cdot 2 = 2\\,097\\,152\\,\\mathrm{B}" in text
    assert "&= 6 \\cdot N \\\\\n&= 6 \\cdot 1\\,048\\,576 \\\\\n&= 6\\,291\\,456\\,\\mathrm{B} \\approx 6.29\\,\\mathrm{MB}" in text
    # ③ I = 1/6 ≈ 0.167 against I* = 10^15 / (2 × 10^12) = 500
    assert "&= \\frac{1\\,048\\,576}{6\\,291\\,456} \\\\\n&= \\frac{1}{6}\\,\\mathrm{FLOP/B} \\approx 0.167\\,\\mathrm{FLOP/B}" in text
    assert "&= \\frac{10^{15}}{2 \\times 10^{12}} \\\\\n&= 500\\,\\mathrm{FLOP/B}" in text
    # attainable = BW × I = 10^12/3 ≈ 333 GFLOP/s, 1/3000 ≈ 0.0333 % of peak (chapter: 0.33 TFLOP/s, 0.03 %)
    assert "&= \\frac{10^{12}}{3}\\,\\mathrm{FLOP/s} \\approx 3.33 \\times 10^{11}" not in text
    assert "&= \\frac{10^{12}}{3}\\,\\mathrm{FLOP/s} \\approx 333\\,\\mathrm{GFLOP/s}" in text
    assert "&= \\frac{1}{3000} \\approx 0.0333\\,\\%" in text
    assert "Since $I = \\frac{1}{6} < I^{*} = 500" in text and "the kernel is memory-bound" in text


def test_example_b_gemm_keeps_the_recipe_form():
    text = md("roofline/gemm_4096.cost")
    assert "\\mathrm{FLOP} &= 2 \\cdot M \\cdot N \\cdot K \\\\\n&= 2 \\cdot 4096 \\cdot 4096 \\cdot 4096" in text
    assert "137\\,438\\,953\\,472\\,\\mathrm{FLOP} \\approx 137\\,\\mathrm{GFLOP}" in text
    assert "\\mathrm{byte} &= M \\cdot K \\cdot 2 + K \\cdot N \\cdot 2 + M \\cdot N \\cdot 2" in text
    assert "100\\,663\\,296\\,\\mathrm{B} \\approx 101\\,\\mathrm{MB}" in text
    assert "\\frac{4096}{3}\\,\\mathrm{FLOP/B} \\approx 1365\\,\\mathrm{FLOP/B}" in text
    assert "I = \\frac{4096}{3} > I^{*} = 500" in text and "compute-bound" in text


def test_note_3x2x3_gemm_shows_2_m_n_k_not_just_36():
    text = md("kernel_time/gemm_3x2x3.cost")
    assert "\\mathrm{FLOP} &= 2 \\cdot 3 \\cdot 3 \\cdot 2 \\\\\n&= 36\\,\\mathrm{FLOP}" in text
    assert "3 \\cdot 2 \\cdot 4 + 2 \\cdot 3 \\cdot 4 + 3 \\cdot 3 \\cdot 4 \\\\\n&= 84\\,\\mathrm{B}" in text


def test_note_vector_add_fp32_times():
    text = md("kernel_time/vector_add_fp32.cost")
    # T_compute = 1e8 / 2e13 = 5 µs exactly; T_memory = 1.2e9 / 1e12 = 1.2 ms exactly
    assert "&= 5 \\times 10^{-6}\\,\\mathrm{s} = 5\\,\\mu \\mathrm{s}" in text
    assert "&= 0.0012\\,\\mathrm{s} = 1.2\\,\\mathrm{ms}" in text
    # 1.2e9 B is exactly 1.2 GB: the derivation writes the prefixed figure alone
    assert "&= 1.2\\,\\mathrm{GB}\n" in text and "1.2 \\times 10^{9}\\,\\mathrm{B}" not in text


def test_example_c_and_exercise_3_decode():
    text = md("roofline/llm_decode_70b.cost")
    assert "&= 140\\,\\mathrm{GB}" in text
    assert "&= 0.07\\,\\mathrm{s} = 70\\,\\mathrm{ms}" in text
    assert "\\frac{100}{7}\\,\\mathrm{tokens/s} \\approx 14.3\\,\\mathrm{tokens/s}" in text
    ex3 = md("roofline/exercises/ex3_decode_130b_int4.cost")
    assert "- read `W4` (weight, `int4`): $P \\cdot 0.5 = 65\\,\\mathrm{GB}$" in ex3
    assert "\\frac{600}{13}\\,\\mathrm{tokens/s} \\approx 46.2\\,\\mathrm{tokens/s}" in ex3


def test_effective_bandwidth_measurement():
    text = md("kernel_time/effective_bandwidth.cost")
    assert "\\mathrm{BW}_{\\mathrm{effective}} &= \\frac{\\mathrm{byte}}{t_{\\mathrm{measured}}}" in text
    assert "&= 500\\,\\mathrm{GB/s}" in text
    assert "&= 800\\,\\mathrm{GB/s}" in text
    assert "&= 0.8 = 80\\,\\%" in text
    assert "\\frac{2}{3} \\approx 0.667" in text  # case 2: 1 TB/s of 1.5 TB/s


def test_free_symbol_verdict_is_solved():
    text = md("roofline/exercises/ex2_gemm_1024.cost")
    assert "&= \\frac{n}{3}\\,\\mathrm{FLOP/B}" in text
    assert "The kernel is memory-bound when $n < 1500$, balanced at $n = 1500$, else compute-bound." in text


def test_korean_uses_the_chapters_terms():
    text = md("roofline/vector_add_fp16.cost", lang="ko")
    for term in ("데이터 이동량", "연산량", "산술 강도", "임계 강도", "달성 가능 성능", "메모리 바운드"):
        assert term in text
    assert "이므로 메모리 바운드다" in text
    assert "연산 바운드다" in md("roofline/gemm_4096.cost", lang="ko")
    # the math is the same in both languages: only the words change
    en = md("roofline/vector_add_fp16.cost")
    maths = lambda t: [l for l in t.splitlines() if l.startswith("&") or "&=" in l]  # noqa: E731
    assert maths(text) == maths(en)


def test_fused_kernel_sums_flops_of_its_ops():
    text = md("roofline/exercises/ex4_fusion.cost")
    assert "\\mathrm{FLOP} &= N + N + N \\\\\n&= 3 \\cdot N" in text
    assert "&= 0.375\\,\\mathrm{FLOP/B}" in text  # 3N / 8N
    unfused = md("roofline/exercises/ex4_fusion.cost", fusion="none")
    assert unfused.count("## Kernel") == 3 and "Whole program (3 kernel launches)" in unfused
    assert "&= 0.1875\\,\\mathrm{FLOP/B}" in unfused  # 3N / 16N


def test_latex_fragment_and_standalone():
    a = costlang.load(EX / "roofline/gemm_4096.cost").analyze()
    frag = LatexDocPrinter().doprint(a)
    assert frag.startswith("\\section*{Derivation: \\texttt{gemm\\_4096.cost}}")
    assert "\\documentclass" not in frag and "\\[\n\\begin{aligned}" in frag
    doc = LatexDocPrinter(lang="ko", standalone=True).doprint(a)
    assert doc.startswith("\\documentclass[11pt]{article}") and "\\usepackage{kotex}" in doc
    assert doc.rstrip().endswith("\\end{document}") and "\\usepackage{amsmath}" in doc
    assert "\\usepackage{kotex}" not in LatexDocPrinter(standalone=True).doprint(a)


def test_printer_settings_are_validated():
    with pytest.raises(ValueError, match="setting 'lang' of MarkdownPrinter cannot be 'fr'"):
        MarkdownPrinter(lang="fr")
    with pytest.raises(TypeError, match="unknown setting 'colour'"):
        MarkdownPrinter(colour=True)


def test_dispatch_is_by_class_name():
    class Extra:
        pass

    class WithExtra(MarkdownPrinter):
        def _print_Extra(self, obj, **_):
            return "extra printed"

    assert WithExtra().doprint(Extra()) == "extra printed"
    with pytest.raises(TypeError, match="MarkdownPrinter has no way to print a Extra"):
        MarkdownPrinter().doprint(Extra())
    assert issubclass(LatexDocPrinter, DerivationPrinter)


def test_cli_derive_writes_files(tmp_path, capsys):
    out = tmp_path / "a.ko.tex"
    assert main(["derive", str(EX / "roofline/vector_add_fp16.cost"), "--format", "latex", "--lang", "ko",
                 "-o", str(out)]) == 0
    assert capsys.readouterr().out == ""
    assert out.read_text(encoding="utf-8") == (EX / "roofline/_generated/vector_add_fp16.ko.tex").read_text(encoding="utf-8")
    assert main(["derive", str(EX / "roofline/vector_add_fp16.cost")]) == 0
    assert capsys.readouterr().out == (EX / "roofline/_generated/vector_add_fp16.en.md").read_text(encoding="utf-8")


def test_every_kernel_derivation_matches_the_analysis():
    for source in dict.fromkeys(s for s, _, _, _ in regen.golden_files(ROOT)):  # each source once, not per variant
        a = costlang.load(source).analyze()
        for k in a.kernels:
            d = derive_kernel(a, k)
            assert d.intensity.value == a.value(k.intensity)
            assert d.bytes.value == a.value(k.bytes) and d.flops.value == a.value(k.flops)
            assert d.t_kernel.value == a.value(k.t_kernel)


@pytest.mark.slow   # regenerates every golden (7 s); `.ci/run` runs it with the slow tests
def test_golden_files_are_current():
    stale = [str(g.relative_to(ROOT)) for s, g, fmt, lang in regen.golden_files(ROOT)
             if not g.exists() or g.read_text(encoding="utf-8") != regen.render(s, fmt, lang)]
    assert not stale, f"run `python -m tools.regen` to update: {stale}"


@pytest.mark.slow  # the same check as test_golden_files_are_current, through the command line
def test_regen_check_command():
    r = subprocess.run([sys.executable, "-m", "tools.regen", "--check", "--root", str(ROOT)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_fusion_comparison_section(capsys):
    # exercise 4: 16N B unfused → 8N B fused (× 1/2), I 3/16 → 3/8 (× 2), 3 launches → 1
    assert main(["derive", str(EX / "roofline/exercises/ex4_fusion.cost"), "--compare-fusion"]) == 0
    text = capsys.readouterr().out
    assert "## Fusion: none → elementwise" in text
    assert "Kernels before: `t1`, `t2`, `y`. After: `t1+t2+y`." in text
    assert "- traffic: $16\\,777\\,216\\,\\mathrm{B} \\approx 16.8\\,\\mathrm{MB} \\to 8\\,388\\,608\\,\\mathrm{B} " \
           "\\approx 8.39\\,\\mathrm{MB} \\quad (\\times\\, 0.5)$" in text
    assert "- I: $0.1875\\,\\mathrm{FLOP/B} \\to 0.375\\,\\mathrm{FLOP/B} \\quad (\\times\\, 2)$" in text
    assert "- launches: $3 \\to 1 \\quad (\\times\\, \\frac{1}{3})$" in text
    # the golden file of exercise 4 carries the same section, in Korean too
    assert "## 융합: none → elementwise" in (EX / "roofline/exercises/_generated/ex4_fusion.ko.md").read_text(encoding="utf-8")


def test_compare_fusion_with_a_free_size_gives_the_ratio_at_its_ends():
    # the lecture MLP on chapter_gpu (1000 TFLOP/s, 2 TB/s), in units of 1/244,140,625 s:
    # unfused T_kernel = 16·B + 2·max(32.768·B, 5·B + 16,384) + 4 (bias and GELU move 8·B·f + 2·f bytes),
    # fused = 8·B + 2·max(...) + 4 (one kernel moves 4·B·f + 2·f). At B = 1: 32,790 / 32,798 =
    # 16395/16399 ≈ 0.99976; as B → ∞: (8 + 65.536) / (16 + 65.536) = 9192/10192 = 1149/1274
    import sympy
    from costlang.queries.compare import compare_fusion, ratio_ends
    a = costlang.load(EX / "lecture" / "mlp_decode.cost").analyze()
    t = next(ch for ch in compare_fusion(a).changes if ch.figure == "t_kernel")
    x, first, last = ratio_ends(a, t)
    assert (str(x), first, last) == ("B", sympy.Rational(16395, 16399), sympy.Rational(1149, 1274))

def test_compare_fusion_summary_in_the_cli(capsys):
    assert main(["derive", str(EX / "lecture" / "mlp_decode.cost"), "--compare-fusion"]) == 0
    out = capsys.readouterr().out
    assert ("- T_kernel: after / before $\\times\\, 0.99976\\ldots$ at $B$ = 1, "
            "$\\times\\, \\frac{1149}{1274}$ as $B$ → ∞") in out
    assert "\\max" not in out.split("## Fusion")[1]
