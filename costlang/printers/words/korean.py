"""Korean particles (조사) chosen by the final sound of what precedes them: n은, L2는, 160이, `W`를.

Input: the text a particle follows (a name, a number, a code span or a math fragment, as the
printers format it) and the particle in either form (`은`, `는` or `은/는`). Output: the particle
that fits, read the way a Korean speaker reads the text aloud: numbers in Sino-Korean (160 → 백육십,
ends in ㅂ), Latin letters by their English names (n → 엔, ends in ㄴ; L → 엘, ends in ㄹ), fractions
numerator last (1/6 → 육분의 일). Templates use it as a format spec: `"{x:는} 자유 변수다"`.

>>> fill("{a:은} {b:이다}, {c:를} 읽는다", a="n", b="160", c="`logits`")
'n은 160이다, `logits`를 읽는다'
>>> fill("{a:는} {b:로}", a="L2", b="HBM")
'L2는 HBM으로'
"""
from __future__ import annotations

import re
import string

__all__ = ["final_consonant", "particle", "fill"]

# (after a final consonant, after a vowel); 으로/로 also takes 로 after ㄹ
_PAIRS = [("은", "는"), ("이", "가"), ("을", "를"), ("과", "와"), ("으로", "로"), ("이다", "다"),
          ("이면", "면"), ("이어야", "여야"), ("이고", "고"), ("이며", "며"), ("이라", "라"), ("이므로", "므로")]
_BY_FORM = {form: pair for pair in _PAIRS for form in pair}
_BY_FORM.update({f"{a}/{b}": (a, b) for a, b in _PAIRS})
_BY_FORM.update({f"{a}({b})": (a, b) for a, b in _PAIRS})

_RIEUL = "ㄹ"
# Sino-Korean digits: 영 일 이 삼 사 오 육 칠 팔 구, and the units that end numbers with zeros
_DIGIT_FINAL = {"0": "ㅇ", "1": _RIEUL, "2": "", "3": "ㅁ", "4": "", "5": "", "6": "ㄱ", "7": _RIEUL,
                "8": _RIEUL, "9": ""}
_ZEROS_FINAL = {1: "ㅂ", 2: "ㄱ", 3: "ㄴ"}                    # 십, 백, 천
_MYRIAD_FINAL = ("ㄴ", "ㄱ", "", "ㅇ")                        # 만, 억, 조, 경
# English letter names as Koreans say them: 엘, 엠, 엔, 알 end in a consonant; the rest in a vowel
_LETTER_FINAL = {"l": _RIEUL, "m": "ㅁ", "n": "ㄴ", "r": _RIEUL}
_JONG = ("", "ㄱ", "ㄲ", "ㄳ", "ㄴ", "ㄵ", "ㄶ", "ㄷ", "ㄹ", "ㄺ", "ㄻ", "ㄼ", "ㄽ", "ㄾ", "ㄿ", "ㅀ", "ㅁ", "ㅂ", "ㅄ",
         "ㅅ", "ㅆ", "ㅇ", "ㅈ", "ㅊ", "ㅋ", "ㅌ", "ㅍ", "ㅎ")

_ASIDE = re.compile(r"(?:\\quad|\\qquad|\s)\s*\([^()]*\)\s*$")
_FRACTION = re.compile(r"\\[dt]?frac\{([^{}]*)\}\{([^{}]*)\}\s*$")
_SLASH = re.compile(r"(\d+)\s*/\s*\d+$")
_COMMAND = re.compile(r"\\[A-Za-z]+")
_NUMBER = re.compile(r"[\d,\u202f\u2009]*\d(?:\.\d+)?$")   # digit groups: 1,000 or thin spaces


def final_consonant(text: str) -> str:
    """The final consonant (받침) of the last spoken syllable of `text`, or "" for a vowel.

    >>> [final_consonant(t) for t in ("n", "L2", "160", "HBM", "$\\\\frac{1}{6}$", "logits", "커널")]
    ['ㄴ', '', 'ㅂ', 'ㅁ', 'ㄹ', '', 'ㄹ']
    >>> [final_consonant(t) for t in ("\\\\(B \\\\le 376\\\\)", "$B \\\\le 376$", "\\\\(T_{\\\\mathrm{kernel}}\\\\)")]
    ['ㄱ', 'ㄱ', 'ㄹ']
    >>> final_consonant("$I^{*} = 500 \\\\quad (T_{\\\\mathrm{memory}} > T_{\\\\mathrm{compute}})$")   # 오백
    'ㄱ'
    """
    text = text.strip().rstrip("`$'\" ")
    if text.endswith(("\\)", "\\]")):     # LaTeX's inline and display math: \(B \le 376\)
        text = text[:-2]
    text = text.rstrip("\\")
    text = _ASIDE.sub("", text) or text     # `I^{*} = 500 \quad (T_memory > T_compute)`: read up to the aside
    m = _FRACTION.search(text)
    if m:                                   # read "six parts of one": the numerator is spoken last
        return final_consonant(m.group(1))
    m = _SLASH.search(text)
    if m:
        return final_consonant(m.group(1))
    text = text.replace("\\,", "\u2009")
    text = _COMMAND.sub("", text).replace("{", "").replace("}", "").rstrip("_^`$)]'\" ")
    if not text:
        return ""
    last = text[-1]
    if last.isdigit():
        return _number_final(_NUMBER.search(text).group(0))
    if "가" <= last <= "힣":
        return _JONG[(ord(last) - ord("가")) % 28]
    return _LETTER_FINAL.get(last.lower(), "") if last.isascii() and last.isalpha() else ""


def _number_final(number: str) -> str:
    """160 → 백육십 (ㅂ), 1000 → 천 (ㄴ), 10^5 → 십만 (ㄴ), 10^8 → 억 (ㄱ), 0.5 → 영 점 오 ("")."""
    if "." in number:                       # digits after the point are read one by one
        return _DIGIT_FINAL[number[-1]]
    number = re.sub(r"[,\u202f\u2009]", "", number).lstrip("0") or "0"
    zeros = len(number) - len(number.rstrip("0"))
    if number == "0" or zeros == 0:
        return _DIGIT_FINAL[number[-1]]
    if zeros < 4:
        return _ZEROS_FINAL[zeros]
    return _MYRIAD_FINAL[min(zeros // 4, len(_MYRIAD_FINAL)) - 1]   # the unit of the lowest non-zero group


def particle(text: str, form: str) -> str:
    """The particle `form` (`은`, `는`, `은/는`, ...) that fits after `text`.

    >>> particle("matmul", "로"), particle("B", "으로"), particle("`W`", "을")
    ('로', '로', '를')
    """
    with_final, without = _BY_FORM[form]
    final = final_consonant(text)
    if with_final == "으로":
        return "로" if final in ("", _RIEUL) else "으로"
    return with_final if final else without


class _Formatter(string.Formatter):
    def format_field(self, value, format_spec: str) -> str:
        if format_spec in _BY_FORM:
            text = str(value)
            return text + particle(text, format_spec)
        return super().format_field(value, format_spec)


_FORMATTER = _Formatter()


def fill(template: str, **fields) -> str:
    """`template.format(**fields)`, where a field's format spec may be a particle: `{x:는}`."""
    return _FORMATTER.format(template, **fields)
