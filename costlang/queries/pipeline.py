"""The whole analysis of a program: roofline → queries → solves → comparisons.

Input: a resolved `Program`, a fusion mode and (optionally) another hardware. Output: the
`Analysis` of `analysis.roofline` with the file's queries (`analysis.queries`), solves
(`analysis.solve`) and scenario comparisons (`analysis.whatif`) answered. Each stage imports only
the ones before it: a solve or a scenario re-analyses a variant of the program through
`queries.analyze_with_queries`, never through this module.
"""
from __future__ import annotations

from costlang.budget import running

from typing import Optional

from costlang.ir.program import Program
from costlang.queries.evaluate import analyze_with_queries
from costlang.analysis.roofline import Analysis

__all__ = ["analyze"]


def analyze(program: Program, fusion: Optional[str] = None, hardware: Optional[str] = None) -> Analysis:
    """Costs, roofline figures, measurements, query answers, solves and comparisons for a program
    under a fusion mode."""
    with running("analysing the kernels", program.main_span):
        analysis = analyze_with_queries(program, fusion=fusion, hardware=hardware)
    analysis.solves, analysis.comparisons = (), ()
    if program.solves:  # the solver and the what-ifs are imported only by files that use them
        from costlang.queries.solve import answer_solves
        analysis.solves = answer_solves(analysis)  # each notes its statement (`budget.running`)
    if program.compares:
        from costlang.queries.whatif import answer_compares
        analysis.comparisons = answer_compares(analysis)
    return analysis
