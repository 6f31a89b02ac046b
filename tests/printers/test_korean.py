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
    """The phrases the issue asked for, in a real derivation (decode_crossing.cost, B free)."""
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
