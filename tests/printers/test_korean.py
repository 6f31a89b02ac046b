"""Korean particles: chosen by the final sound of what precedes them, read aloud.

Readings (hand-checked): n 엔 (ㄴ) → n은; L2 엘이 (no final) → L2는; 160 백육십 (ㅂ) → 160이;
HBM 에이치비엠 (ㅁ) → HBM으로; matmul (ㄹ) → matmul로; `logits` 로짓츠 (no final) → `logits`를;
1000 천 (ㄴ) → 1000은; 10^5 = 100000 십만 (ㄴ); 10^8 억 (ㄱ) → 100000000을; 0.5 영 점 오 → 0.5는;
1/6 육분의 일 (ㄹ) → 1/6은; 569.5 → 569.5는; 4,096 사천구십육 (ㄱ) → 4,096이; 4,092 → 4,092가; 커널 (ㄹ) → 커널로; 바이트 → 바이트를.
"""
import pytest

from costlang.printers.words.korean import fill, final_consonant, particle


@pytest.mark.parametrize("text, form, expected", [
    ("n", "은/는", "은"), ("L2", "은/는", "는"), ("160", "이/가", "이"), ("B", "이/가", "가"),
    ("HBM", "으로", "으로"), ("matmul", "으로", "로"), ("`logits`", "을", "를"), ("`W`", "을", "를"),
    ("1000", "은", "은"), ("100000", "이", "이"), ("100000000", "을", "을"), ("0.5", "는", "는"),
    ("1/6", "은", "은"), ("569.5", "는", "는"), ("커널", "로", "로"), ("바이트", "을", "를"),
    ("$n$", "은", "은"), ("\\(B^{*}\\)", "는", "는"), ("$\\frac{512000}{899}$", "이", "이"),
    ("T_{\\mathrm{kernel}}", "은", "은"), ("1,000", "이", "이"), ("4,096", "이", "이"), ("4,092", "이", "가"),
    ("GEMM", "과", "과"), ("I*", "와", "와"), ("10", "이다", "이다"), ("2", "이다", "다"),
])
def test_particle_follows_the_final_sound(text, form, expected):
    assert particle(text, form) == expected


def test_every_form_of_a_pair_chooses_the_same():
    for form in ("은", "는", "은/는", "은(는)"):
        assert particle("n", form) == "은" and particle("L2", form) == "는"


def test_fill_writes_particles_after_fields():
    assert fill("{x:는} 자유 변수다. {v:이면} {k:를} 다시 읽는다.", x="B", v="160", k="`logits`") == \
        "B는 자유 변수다. 160이면 `logits`를 다시 읽는다."
    assert fill("{a} + {b:0>3}", a="x", b="7") == "x + 007"   # ordinary format specs still work


def test_final_consonant_of_hangul_and_empty():
    assert final_consonant("밥") == "ㅂ" and final_consonant("바운드") == "" and final_consonant("") == ""


def test_korean_derivation_wording():
    """The Korean phrases of a crossing's derivation, in a real one (decode_crossing.cost, B free)."""
    from conftest import EXAMPLES
    from costlang import load
    from costlang.cli.derive import render_derivation
    ko = render_derivation(load(EXAMPLES / "queries/decode_crossing.cost").analyze(), lang="ko")
    assert ko.startswith("# 유도 과정: `decode_crossing.cost`")
    assert "가정: FMA 1회" in ko and "약속" not in ko
    assert "자유 변수: $B$. 아래 결과는 $B$에 대한 식이다." in ko
    assert "## 구하는 값" in ko and "질의" not in ko
    assert "`x` 읽기 (입력, `bf16`)" in ko and "읽기 `x`" not in ko       # the tensor first, then 읽기
    assert "`critical_intensity(y)`를 $B$에 대해 푼다" in ko               # `…(y)` reads with a vowel: 를
    assert "HBM을 오가는" in ko and "$T_{\\mathrm{kernel}}$은 실측" in ko   # 엠 → 을, kernel (ㄹ) → 은
    assert "을(를)" not in ko and "은(는)" not in ko and "이(가)" not in ko


# --- the particle after every math fragment of the committed Korean derivations -------------------

def _fragments_with_particles(text: str, tex: bool):
    """(math fragment with its delimiters, the particle written right after it) for every fragment
    followed by one of the paired particles (은/는, 이/가, 을/를, 과/와, 으로/로, 이다/다, 이면/면, ...)."""
    import re
    from costlang.printers.words.korean import _BY_FORM
    forms = sorted({f for f in _BY_FORM if "/" not in f and "(" not in f}, key=len, reverse=True)
    math = r"\\\((?:(?!\\\)).)*\\\)" if tex else r"\$[^$\n]+\$"
    for m in re.finditer(rf"({math})({'|'.join(forms)})(?![가-힣])", text):
        yield m.group(1), m.group(2)


def test_every_particle_after_math_in_the_goldens_fits_its_spoken_form():
    # One rule for Markdown ($...$) and LaTeX (\(...\)): the particle agrees with the final sound of
    # the fragment read aloud: \(B \le 376\) ends in 육 (ㄱ): 이면; \(T_{\mathrm{kernel}}\) in 널 (ㄹ): 은;
    # \(I < I^{*} = 500 \quad (T_memory > T_compute)\) is read up to its aside, 500 (오백, ㄱ): 이므로. Before the rule was shared, the
    # LaTeX printer read `\)` as the end and wrote 면 and 는 after these.
    from pathlib import Path
    from costlang.printers.words.korean import particle
    root = Path(__file__).resolve().parents[2] / "examples"
    checked, wrong = 0, []
    for path in sorted(root.glob("**/_generated/*.ko.*")):
        text = path.read_text(encoding="utf-8")
        for fragment, written in _fragments_with_particles(text, path.suffix == ".tex"):
            checked += 1
            if particle(fragment, written) != written:
                wrong.append(f"{path.name}: {fragment}{written} (should be {particle(fragment, written)})")
    assert checked > 100 and not wrong, "\n".join(wrong[:20])
    assert particle(r"\(B \le 376\)", "면") == "이면" and particle(r"\(T_{\mathrm{kernel}}\)", "는") == "은"
    assert particle(r"\(n < 1500\)", "면") == "이면"    # 천오백: 백 ends in ㄱ
