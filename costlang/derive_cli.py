"""The lecture-notes commands: `costlang derive` (Markdown/LaTeX derivations) and `costlang plot`.

Input: parsed command-line arguments. Output: the text to print (empty when written to `-o`);
bad arguments are `ArgumentError`s (quoting the argument), which `cli.main` prints and turns into
exit status 2, like every other `CostlangError`. `cli.py` adds these subcommands; matplotlib is
imported only inside `plot`, so `costlang run` and `costlang derive` never load it. The analysis
behind a sweep plot is `analysis.curve`; `printers.plot` only draws.
"""
from __future__ import annotations

import argparse
import math
import re
from fractions import Fraction
from pathlib import Path

import sympy

from .errors import CostlangError, Source, Span
from .ir.program import FUSION_MODES
from .printers.phrases import LANGUAGES

__all__ = ["add_parsers", "derive_command", "plot_command", "render_derivation", "parse_range",
           "ArgumentError", "COMMANDS"]

FORMATS = ("md", "latex")
DEFAULT_RANGE = "1:10000"
# a plain positive number as --range takes it: 64, 0.5, 1e3, 1/3 (exponents of two digits at most)
_NUMBER = re.compile(r"\d+(\.\d*)?([eE][+-]?\d{1,2})?|\.\d+([eE][+-]?\d{1,2})?|\d+/\d+")


class ArgumentError(CostlangError):
    """A command-line argument that cannot be used; its span is the argument's own text."""
    kind = "argument"


def argument_span(flag: str, text: str) -> Span:
    """A span over a whole argument, so that its error quotes it with a caret."""
    return Span(Source(flag, text), 1, 1, 1, max(len(text), 1) + 1)


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
    plot.add_argument("--range", metavar="LO:HI",
                      help=f"the swept symbol's range, e.g. 64:8192 (default {DEFAULT_RANGE})")
    plot.add_argument("--against", metavar="QUERY|istar",
                      help="the reference line the sweep crosses (default: I* for an intensity)")
    from .cli_whatif import add_set_option
    add_set_option(plot)
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
    _write(output, lambda path: path.write_text(text, encoding="utf-8"))
    return ""


def _write(output: str, write) -> None:
    """Run `write(Path(output))`; a path that cannot be written is bad input, not a crash."""
    try:
        write(Path(output))
    except OSError as e:
        raise ArgumentError(f"cannot write {output!r}: {e.strerror or e}", argument_span("-o", output),
                            "check that the folder exists and can be written") from None


def derive_command(args) -> str:
    from . import load
    analysis = load(args.file).analyze(fusion=args.fusion, hardware=args.hardware)
    extras = ()
    if args.compare_fusion:
        from .analysis.compare import compare_fusion
        extras = (compare_fusion(analysis),)
    return _emit(render_derivation(analysis, args.format, args.lang, args.standalone, extras), args.output)


# --- plot --------------------------------------------------------------------------------------

def plot_command(args) -> str:
    """`costlang plot`: the roofline (one analysis per --hardware), or --sweep of a query."""
    _check_plot_options(args)
    plot = _plotting()
    suffix = Path(args.output).suffix.lower()
    if suffix not in plot.FORMATS:
        raise ArgumentError(f"cannot write a plot to {args.output!r}: the file name must end in "
                            f"{', '.join(plot.FORMATS[:-1])} or {plot.FORMATS[-1]}",
                            argument_span("-o", args.output))
    from . import load
    from .analysis.roofline import analyze
    from .cli_whatif import apply_cli_settings
    program = apply_cli_settings(load(args.file), args.set)
    if args.sweep:
        from .analysis.curve import query_curve
        lo, hi = parse_range(args.range if args.range is not None else DEFAULT_RANGE)
        a = analyze(program, fusion=args.fusion, hardware=(args.hardware or [None])[0])
        figure = plot.sweep(query_curve(a, args.sweep, lo, hi, args.against))
    else:
        hardware = args.hardware or [None]
        analyses = [analyze(program, fusion=args.fusion, hardware=h) for h in hardware]
        unfused = [analyze(program, fusion="none", hardware=h) for h in hardware] if args.compare_fusion else []
        figure = plot.roofline(analyses, unfused)
    _write(args.output, figure.save)
    return ""


def _check_plot_options(args) -> None:
    """Options that the chosen kind of plot would silently ignore are errors."""
    if not args.sweep:
        for flag, value in (("--range", args.range), ("--against", args.against)):
            if value is not None:
                raise ArgumentError(f"{flag} applies to a sweep plot only", argument_span(flag, value),
                                    f"add --sweep QUERY, or leave out {flag}")
        return
    if args.compare_fusion:
        raise ArgumentError("--compare-fusion applies to the roofline, not to a sweep plot", None,
                            "leave out --sweep, or --compare-fusion")
    if args.hardware and len(args.hardware) > 1:
        raise ArgumentError(f"a sweep plot takes one --hardware, not {len(args.hardware)}", None,
                            "overlaying several presets is for the roofline")


def _plotting():
    """`printers.plot`, once matplotlib is known to be installed."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise ArgumentError("`costlang plot` needs matplotlib, which is not installed", None,
                            "pip install 'costlang[plot]'") from None
    from .printers import plot
    return plot


def parse_range(text: str) -> tuple[sympy.Rational, sympy.Rational]:
    """`LO:HI`: two positive numbers, LO < HI, kept exact (parsed by `fractions`, never evaluated).

    >>> parse_range("64:8192"), parse_range("1e-3:0.5")
    ((64, 8192), (1/1000, 1/2))
    """
    span = argument_span("--range", text)
    lo_text, sep, hi_text = (t.strip() for t in text.partition(":"))
    if not (sep and _NUMBER.fullmatch(lo_text) and _NUMBER.fullmatch(hi_text)):
        raise ArgumentError(f"--range takes LO:HI, two positive numbers such as 64:8192, not {text!r}", span)
    lo, hi = (sympy.Rational(f.numerator, f.denominator) for f in map(Fraction, (lo_text, hi_text)))
    if lo <= 0:
        raise ArgumentError(f"the sweep's axis is logarithmic: --range must start above 0, not at {lo_text}",
                            span, "start at a small positive value, e.g. 1:" + hi_text)
    if lo >= hi:
        raise ArgumentError(f"--range must go up (LO < HI), not from {lo_text} to {hi_text}", span)
    if not math.isfinite(float(hi)):
        raise ArgumentError(f"--range is too wide for a plot: {hi_text}", span)
    return lo, hi


COMMANDS = {"derive": derive_command, "plot": plot_command}
