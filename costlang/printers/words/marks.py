"""A sweep row's marks in words (no sympy: a sweep read back from its compiled plan prints them too)."""
from __future__ import annotations

from costlang.printers.words.phrases import phrase

__all__ = ["mark_text"]


def mark_text(marks) -> str:
    """A sweep row's marks (`Mark`s) in words: '← k compute-bound from here'."""
    bound = phrase("en", "verdict_words")
    return "; ".join(f"← {m.kernel} {bound[m.bound.value]}" + (" here" if m.bound.value == "balanced" else
                                                                " from here") for m in marks)
