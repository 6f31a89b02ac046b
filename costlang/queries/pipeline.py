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

__all__ = ["analyze", "build"]


def with_hardware_file(program: Program, path: str) -> tuple:
    """The program with the hardware a `.cost` file defines added (a file that extends presets, such as
    a calibrated one), and the name of the file's last hardware. The file is resolved as costlang
    (never evaluated); one defining no hardware, or one the program already defines differently, is an
    error at the `--hardware` argument."""
    import copy
    from pathlib import Path

    from costlang.errors import CostImportError, SemanticError, Source, Span
    from costlang.frontend.loader import read_text
    from costlang.frontend.parser import parse
    from costlang.frontend.resolve import resolve
    span = Span(Source("--hardware", path), 1, 1, 1, len(path) + 1)
    file = Path(path)
    if not file.is_file():
        raise CostImportError(f"--hardware {path}: there is no such file", span,
                              "give a hardware name (`costlang hardware` lists them) or a .cost file of hardware")
    other = resolve(parse(read_text(file), path), file.resolve())
    here = file.resolve()
    defined = [n for n, h in other.hardware.items() if h.span is not None and Path(h.span.file).resolve() == here]
    if not defined:
        raise SemanticError(f"{path} defines no hardware", span,
                            "a hardware file holds `hardware NAME : BASE { ... }` definitions, as `calibrate -o` writes")
    out = copy.copy(program)
    out.hardware = dict(program.hardware)
    for n in defined:
        if n in out.hardware and out.hardware[n] != other.hardware[n]:
            raise SemanticError(f"{path} defines hardware '{n}', which the program defines otherwise", span,
                                "rename it in one of the files")
        out.hardware[n] = other.hardware[n]
    return out, defined[-1]


def build(text: str, name: str, path=None, train: Optional[str] = None) -> Program:
    """A file's text to its resolved program: parsed, resolved (the backward derived when it trains;
    `train`: the settings of a `--train`), sharded when it runs on many chips, and under the scenario
    it uses (`use scenario NAME`)."""
    from costlang.errors import CostSyntaxError, Source, Span
    from costlang.frontend.parser import keep, parse
    from costlang.frontend.resolve import resolve
    module = keep(parse(text, name), text)  # for the what-ifs, which resolve the file again
    if not module.statements:
        raise CostSyntaxError("the file is empty: there is nothing to analyse", Span(Source(name, text), 1, 1, 1, 1),
                              "start with `use hardware chapter_gpu` and an `input` declaration")
    program = resolve(module, path, overrides=_train_overrides(train))
    resolved_span = program.main_span
    if program.shardings or program.parallels:
        import dataclasses

        from costlang.passes.shard import shard_program  # the per-chip program (many chips)
        origin = dataclasses.replace(program.origin, after=shard_program)  # what-ifs shard again
        program = shard_program(program)
        program.origin = origin
    program.main_span = program.main_span or resolved_span
    if program.used_scenario is not None:   # `use scenario NAME`: its settings, as if given with --set
        from costlang.frontend.edits import apply_settings
        scenario, _ = program.used_scenario
        program = apply_settings(program, program.scenarios[scenario].settings)
    return program


def _train_overrides(text: Optional[str]):
    """`--train [SETTINGS]` as what-if overrides (kept by every what-if that resolves the file again)."""
    if text is None:
        return None
    from costlang.errors import Source, Span
    from costlang.frontend.settings import parse_settings
    from costlang.ir.program import Overrides
    options = parse_settings(text, "--train") if text.strip() else ()
    return Overrides(train=options, train_span=Span(Source("--train", text if text.strip() else "--train"), 1, 1, 1, 2))


def _figure(analysis, func: str, instance: str):
    """`func(instance)` over an analysis, as a query computes it (an exact expression)."""
    from costlang.errors import Source, Span
    from costlang.ir.expr import Call, Name
    from costlang.queries.evaluate import evaluate_in
    text = f"{func}({instance})"
    span = Span(Source("<pool>", text), 1, 1, 1, len(text) + 1)
    return evaluate_in(analysis, Call(func, (Name(instance, span),), span, span)).expr


def analyze(program: Program, fusion: Optional[str] = None, hardware: Optional[str] = None,
            extras: bool = True, answers: bool = True) -> Analysis:
    """Costs, roofline figures, measurements, query answers, solves and comparisons for a program
    under a fusion mode. `hardware` is a name, or a `.cost` file of hardware definitions (what
    `costlang calibrate -o` writes): its last hardware is analysed on. `extras=False`: the solves
    find their roots only (a comparison's columns show nothing else); `answers=False`: no solve or
    comparison is answered (a sweep or a plot evaluates the queries only)."""
    if hardware is not None and hardware.endswith(".cost") and hardware not in program.hardware:
        program, hardware = with_hardware_file(program, hardware)
    with running("analysing the kernels", program.main_span):
        analysis = analyze_with_queries(program, fusion=fusion, hardware=hardware)
    analysis.solves, analysis.comparisons = (), ()
    if program.pools:
        from costlang.queries.pools import pool_answers
        analysis.pools = pool_answers(analysis, _figure)
    if program.solves and answers:  # the solver and the what-ifs are imported only by files that use them
        from costlang.queries.solve import answer_solves
        analysis.solves = answer_solves(analysis, extras)  # each notes its statement (`budget.running`)
    if program.compares and answers:
        from costlang.queries.whatif import answer_compares
        analysis.comparisons = answer_compares(analysis)
    return analysis
