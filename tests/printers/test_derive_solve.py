"""Solve results in derivations: the equation, the solved forms and the value,
the regimes, the whole-number answers, no-crossing reasons and approximations, in both
languages and both formats, checked against values derived by hand.

Exercise 2(b): a square fp16 GEMM of side n has FLOPs = 2n³ and bytes = 3·n²·b with b = 2, so
I(n) = 2n/(3b) = n/3; I(n) = I* = 500 ⇔ n* = 3·b·I*/2 = 3·2·500/2 = 1500 (an integer: the last
memory-bound n is n* − 1 = 1499, the first compute-bound n* + 1 = 1501; n = 1500 is balanced).

decode_crossing.cost: I(B) = 2·B·d/(b·(2B + d)) = I* ⇔ B* = I*·b·d/(2·(d − I*·b)); with b = 2 and
I* = 500, B* = 500·d/(d − 1000); d = 8192: B* = 8192000/14384 = 512000/899 ≈ 569.5, so
⌊B*⌋ = 569 is the last memory-bound batch and ⌈B*⌉ = 570 the first compute-bound one; for d ≫ B,
B* ≈ I*·b/2 = 500. The `>=` solve holds for B ≥ B*.
"""
from pathlib import Path

import pytest

import costlang
from costlang.printers.derivation.latex import LatexDocPrinter
from costlang.printers.derivation.markdown import MarkdownPrinter

EX = Path(__file__).resolve().parents[2] / "examples"
PRINTERS = {"md": MarkdownPrinter, "latex": LatexDocPrinter}


def derivation(rel, fmt="md", lang="en"):
    analysis = costlang.load(EX / rel).analyze()
    return PRINTERS[fmt](lang=lang).doprint(analysis)


def solve_section(text, heading):
    """The text from the solve's heading to the next section heading of the same level."""
    start = text.index(heading)
    ends = [i for i in (text.find("\n## ", start + 1), text.find("\n\\subsection*", start + 1)) if i > 0]
    return text[start: min(ends) if ends else len(text)]


# --- exercise 2(b): n* = 3·b·I*/2 = 1500 -----------------------------------------------------

def test_exercise_2_solve_markdown_english():
    text = solve_section(derivation("roofline/exercises/ex2_gemm_1024.cost"), "## Solve `n*`")
    assert "Solve `intensity(Z)` $=$ `critical_intensity(Z)` for $n$:" in text
    assert "n^{*} &= \\frac{3 \\cdot b \\cdot I^{*}}{2} \\\\\n&= 1500\n\\end{aligned}" in text
    assert "where $b = 2\\,\\mathrm{B}$ (bytes per element), $I^{*} = 500\\,\\mathrm{FLOP/B}$ " \
           "(critical intensity)." in text
    assert "- $n < n^{*}$: memory-bound\n- $n > n^{*}$: compute-bound" in text
    assert "- largest whole $n$ that is memory-bound: $n^{*} - 1 = 1499$" in text
    assert "- smallest whole $n$ that is compute-bound: $n^{*} + 1 = 1501$" in text


def test_exercise_2_solve_korean_and_latex():
    ko = solve_section(derivation("roofline/exercises/ex2_gemm_1024.cost", lang="ko"), "## 풀이 `n*`")
    assert "`intensity(Z)` $=$ `critical_intensity(Z)`를 $n$에 대해 푼다:" in ko
    assert "n^{*} &= \\frac{3 \\cdot b \\cdot I^{*}}{2} \\\\\n&= 1500" in ko
    assert "여기서 $b = 2\\,\\mathrm{B}$ (원소당 바이트), $I^{*} = 500\\,\\mathrm{FLOP/B}$ (임계 강도)." in ko
    assert "- $n < n^{*}$: 메모리 바운드\n- $n > n^{*}$: 연산 바운드" in ko
    assert "- 메모리 바운드인 가장 큰 정수 $n$: $n^{*} - 1 = 1499$" in ko
    assert "- 연산 바운드인 가장 작은 정수 $n$: $n^{*} + 1 = 1501$" in ko
    tex = solve_section(derivation("roofline/exercises/ex2_gemm_1024.cost", "latex"),
                        "\\subsection*{Solve \\texttt{n*}}")
    assert "\\texttt{intensity(Z)} \\(=\\) \\texttt{critical\\_intensity(Z)} for \\(n\\):" in tex
    assert "\\[\n\\begin{aligned}\nn^{*} &= \\frac{3 \\cdot b \\cdot I^{*}}{2} \\\\\n&= 1500\n\\end{aligned}\n\\]" in tex
    assert "  \\item largest whole \\(n\\) that is memory-bound: \\(n^{*} - 1 = 1499\\)" in tex


# --- decode_crossing.cost: B* = 512000/899 ≈ 569.5 --------------------------------------------

DECODE_FORMS = ("B^{*} &= \\frac{b \\cdot d \\cdot I^{*}}{2 \\cdot \\left(d - b \\cdot I^{*}\\right)} \\\\\n"
                "&= \\frac{500 \\cdot d}{d - 1000} \\\\\n"
                "&= \\frac{512\\,000}{899} \\approx 569.5\n\\end{aligned}")


@pytest.mark.parametrize("fmt", ["md", "latex"])
@pytest.mark.parametrize("lang", ["en", "ko"])
def test_decode_crossing_forms_are_the_same_in_every_variant(fmt, lang):
    text = derivation("queries/decode_crossing.cost", fmt, lang)
    assert text.count(DECODE_FORMS) == 2   # `B*` and `compute-bound batches` share the crossing
    # exact floor and ceiling of 512000/899 = 569.52...; the large-d approximation I*·b/2 = 500
    assert text.count("\\left\\lfloor B^{*} \\right\\rfloor = 569") == 2
    assert text.count("\\left\\lceil B^{*} \\right\\rceil = 570") == 2
    assert text.count("B^{*} \\approx \\frac{b \\cdot I^{*}}{2} = 500") == 2
    assert "\\frac{d}{b} = \\frac{d}{2} = 4096\\,\\mathrm{FLOP/B}" in text   # I(B) → d/b as B → ∞


def test_decode_crossing_markdown_english():
    text = derivation("queries/decode_crossing.cost")
    star = solve_section(text, "## Solve `B*`")
    assert "where $b = 2\\,\\mathrm{B}$ (bytes per element), $I^{*} = 500\\,\\mathrm{FLOP/B}$ " \
           "(critical intensity), $d = 8192$." in star
    assert "On each side of the crossing:\n\n- $B < B^{*}$: memory-bound\n- $B > B^{*}$: compute-bound" in star
    assert "- largest whole $B$ that is memory-bound: $\\left\\lfloor B^{*} \\right\\rfloor = 569$\n" \
           "- smallest whole $B$ that is compute-bound: $\\left\\lceil B^{*} \\right\\rceil = 570$" in star
    assert "Approximation for large $d$: $B^{*} \\approx \\frac{b \\cdot I^{*}}{2} = 500$ " \
           "(the root itself: $\\frac{512\\,000}{899} \\approx 569.5$)." in star
    ineq = solve_section(text, "## Solve `compute-bound batches`")
    assert "Solve `intensity(y)` $\\ge$ `critical_intensity(y)` for $B$:" in ineq
    assert "The relation holds for $B \\ge B^{*}$." in ineq
    assert "On each side" not in ineq    # an inequality says where it holds instead


def test_decode_crossing_korean_and_latex():
    ko = derivation("queries/decode_crossing.cost", lang="ko")
    assert "## 풀이 `B*`" in ko and "`intensity(y)` $\\ge$ `critical_intensity(y)`를 $B$에 대해 푼다:" in ko
    assert "- 메모리 바운드인 가장 큰 정수 $B$: $\\left\\lfloor B^{*} \\right\\rfloor = 569$" in ko
    assert "- 연산 바운드인 가장 작은 정수 $B$: $\\left\\lceil B^{*} \\right\\rceil = 570$" in ko
    assert "$B \\ge B^{*}$에서 성립한다." in ko
    assert "$d$가 클 때의 근사: $B^{*} \\approx \\frac{b \\cdot I^{*}}{2} = 500$ " \
           "(근 자체: $\\frac{512\\,000}{899} \\approx 569.5$)." in ko
    tex = derivation("queries/decode_crossing.cost", "latex", "ko")
    assert "\\subsection*{풀이 \\texttt{compute-bound batches}}" in tex
    assert "  \\item \\(B < B^{*}\\): 메모리 바운드" in tex and "\\(B \\ge B^{*}\\)에서 성립한다." in tex


def test_decode_crossing_golden_files_carry_the_solve():
    for suffix in (".en.md", ".ko.md", ".en.tex", ".ko.tex"):
        golden = (EX / "queries" / "_generated" / ("decode_crossing" + suffix)).read_text(encoding="utf-8")
        assert golden.count(DECODE_FORMS) == 2, suffix


# --- no crossing, hardware targets, regime maps ----------------------------------------------

def test_no_crossing_says_why():
    # d = 512: I(B) rises to d/b = 256 < I* = 500; a crossing needs d > I*·b = 1000
    text = derivation("queries/no_crossing.cost")
    assert "No crossing: $\\sup_{B}$ `intensity(y)` $= 256\\,\\mathrm{FLOP/B} \\quad " \
           "(B \\to \\infty; \\; = \\frac{d}{b})$ $\\le$ `critical_intensity(y)` $= 500\\,\\mathrm{FLOP/B}$. " \
           "So for every $B$: memory-bound." in text
    assert "- a crossing $B^{*} = \\frac{500 \\cdot d}{d - 1000}$ needs $d > 1000$" in text
    assert "- a crossing $B^{*} = \\frac{b \\cdot d \\cdot I^{*}}{2 \\cdot \\left(d - b \\cdot I^{*}\\right)}$ " \
           "needs $d > b \\cdot I^{*}$" in text
    assert "\\begin{aligned}" not in solve_section(text, "## Solve `B*`")   # no root to display
    ko = derivation("queries/no_crossing.cost", lang="ko")
    assert "교차점이 없다: $\\sup_{B}$" in ko and "따라서 모든 $B$에서 메모리 바운드." in ko


def test_inverse_hardware_sets_the_given_value_aside():
    # B = 64, d = 8192: I = 2·64·8192/(2·(128 + 8192)) = 4096/65, so BW* = 10^15/I = 15.87 TB/s
    text = derivation("queries/inverse_hardware.cost")
    assert "The file's value $\\mathrm{BW} = 2\\,\\mathrm{TB/s}$ " \
           "is set aside: the solve leaves $\\mathrm{BW}$ free." in text
    assert "&= 15\\,869\\,140\\,625\\,000\\,\\mathrm{B/s} \\approx 15.87\\,\\mathrm{TB/s}" in text
    assert "- $\\mathrm{BW} < {\\mathrm{BW}}^{*}$: memory-bound" in text
    assert "{P_{\\mathrm{peak}}}^{*}" in text and "\\approx 126\\,\\mathrm{TFLOP/s}" in text


REGIMES = """hardware chapter_bf16 : chapter_gpu { peak bf16 = 1000 TFLOP/s }
use hardware chapter_bf16
dim d = 8192
dim B
input x: bf16[B, d]
weight W: bf16[d, d]
input c: bf16[d]
output y = matmul(x, W)
output z = relu(y)
output s = relu(c)
fusion none
solve regimes for B
"""


def regime_map(fmt="md", lang="en"):
    return PRINTERS[fmt](lang=lang).doprint(costlang.load_string(REGIMES, "regimes.cost").analyze())


def test_regime_map_per_kernel():
    text = regime_map()
    assert "## Solve `regimes for B`\n\nWhere each kernel turns from one bound to the other, as $B$ varies:" in text
    y = solve_section(text, "### Solve `regimes for B: y`")
    assert "Solve `t_memory(y)` $=$ `t_compute(y)` for $B$:" in y and "\\frac{512\\,000}{899} \\approx 569.5" in y
    z = text[text.index("### Solve `regimes for B: z`"):]
    assert "No crossing: $\\inf_{B}$ `t_memory(z) − t_compute(z)`" in z and "So for every $B$: memory-bound." in z
    assert "- `s`: memory-bound for every $B$" in text       # s does not depend on B at all
    ko = regime_map(lang="ko")
    assert "$B$에 따라 각 커널의 바운드가 바뀌는 지점:" in ko and "- `s`: 모든 $B$에서 메모리 바운드" in ko
    tex = regime_map("latex")
    assert "\\subsubsection*{Solve \\texttt{regimes for B: y}}" in tex
    assert "\\texttt{t\\_memory(z) - t\\_compute(z)}" in tex   # U+2212 is not in pdfLaTeX's input


def test_latex_text_symbols_and_braces_are_escaped():
    printer = LatexDocPrinter()
    assert printer.text("none → elementwise, B ≥ 1, ≈ 2") == \
        "none \\ensuremath{\\to} elementwise, B \\ensuremath{\\ge} 1, \\ensuremath{\\approx} 2"
    assert printer.code("a{b}_c") == "\\texttt{a\\{b\\}\\_c}"
    # a phrase's fields are filled in as markup; only its own words are escaped
    assert printer._fill("x_y {name} → {other_value}", name="\\(a_b\\)", other_value="1") == \
        "x\\_y \\(a_b\\) \\ensuremath{\\to} 1"
