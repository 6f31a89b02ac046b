"""The lecture-notes commands: `costlang derive` (Markdown/LaTeX derivations) and `costlang plot`.

Input: parsed command-line arguments. Output: the text to print (empty when written to `-o`).
`cli.py` adds these subcommands; matplotlib is imported only inside `plot`, so `costlang run`
and `costlang derive` never load it.
"""
from __future__ import annotations

import argparse
from pathlib import Path

from .ir.program import FUSION_MODES
from .printers.phrases import LANGUAGES

__all__ = ["add_parsers", "derive_command", "plot_command", "render_derivation", "COMMANDS"]

FORMATS = ("md", "latex")


def add_parsers(sub) -> list[argparse.ArgumentParser]:
    derive = sub.add_parser("derive", help="write a step-by-step derivation (Markdown or LaTeX)")
    derive.add_argument("file")
    derive.add_argument("--format", choices=FORMATS, default="md", help="md (default) or latex")
    derive.add_argument("--lang", choices=LANGUAGES, default="en", help="en (default) or ko")
    derive.add_argument("--standalone", action="store_true",
                        help="with --format latex: a compilable document, not a fragment for \\input")
    derive.add_argument("--fusion", choices=FUSION_MODES, help="fusion mode (default: the file's)")
    derive.add_argument("--hardware", help="derive on another hardware preset")
    derive.add_argument("--compare-fusion", action="store_true",
                        help="also derive the traffic before and after fusion (unfused vs the mode)")
    derive.add_argument("-o", "--output", help="write to this file instead of stdout")
    plot = sub.add_parser("plot", help="draw the roofline (or a sweep) to a PNG, SVG or PDF file")
    plot.add_argument("file")
    plot.add_argument("-o", "--output", required=True, help="roofline.png, .svg or .pdf")
    plot.add_argument("--hardware", action="append", help="hardware preset (repeat to overlay several)")
    plot.add_argument("--fusion", choices=FUSION_MODES, help="fusion mode (default: the file's)")
    plot.add_argument("--compare-fusion", action="store_true",
                      help="also place the unfused kernels, with arrows to the kernels they fuse into")
    plot.add_argument("--sweep", metavar="QUERY",
                      help="plot this query against its free symbol instead of the roofline")
    plot.add_argument("--range", metavar="LO:HI", help="the swept symbol's range, e.g. 64:8192")
    plot.add_argument("--against", metavar="QUERY|istar",
                      help="the reference line the sweep crosses (default: I* for an intensity)")
    for p in (derive, plot):
        p.add_argument("--debug", action="store_true", help="show Python tracebacks")
    return [derive, plot]


def render_derivation(analysis, fmt: str = "md", lang: str = "en", standalone: bool = False,
                      extras=()) -> str:
    """The derivation of `analysis`, then of each extra result (e.g. a `FusionComparison`)."""
    if fmt == "md":
        from .printers.markdown import MarkdownPrinter
        return MarkdownPrinter(lang=lang).doprint(analysis, extras=extras)
    from .printers.latex import LatexDocPrinter
    return LatexDocPrinter(lang=lang, standalone=standalone).doprint(analysis, extras=extras)


def _emit(text: str, output) -> str:
    if output is None:
        return text
    Path(output).write_text(text, encoding="utf-8")
    return ""


def derive_command(args) -> str:
    from . import load
    analysis = load(args.file).analyze(fusion=args.fusion, hardware=args.hardware)
    extras = ()
    if args.compare_fusion:
        from .analysis.compare import compare_fusion
        extras = (compare_fusion(analysis),)
    return _emit(render_derivation(analysis, args.format, args.lang, args.standalone, extras), args.output)


def plot_command(args) -> str:
    from .printers import plot
    return plot.plot_command(args)


COMMANDS = {"derive": derive_command, "plot": plot_command}
