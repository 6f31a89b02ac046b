"""The whole analysis of a program: roofline → queries → solves → comparisons.

Input: a resolved `Program`, a fusion mode and (optionally) another hardware. Output: the
`Analysis` of `analysis.roofline` with the file's queries (`analysis.queries`), solves
(`analysis.solve`) and scenario comparisons (`analysis.whatif`) answered. Each stage imports only
the ones before it: a solve or a scenario re-analyses a variant of the program through
`queries.analyze_with_queries`, never through this module.
"""
from __future__ import annotations

from typing import Optional

from ..ir.program import Program
from .queries import analyze_with_queries
from .roofline import Analysis
from .solve import answer_solves
from .whatif import answer_compares

__all__ = ["analyze"]


def analyze(program: Program, fusion: Optional[str] = None, hardware: Optional[str] = None) -> Analysis:
    """Costs, roofline figures, measurements, query answers, solves and comparisons for a program
    under a fusion mode."""
    analysis = analyze_with_queries(program, fusion=fusion, hardware=hardware)
    analysis.solves = answer_solves(analysis)
    analysis.comparisons = answer_compares(analysis)
    return analysis
