"""The lecture-notes commands: `costlang derive` (Markdown/LaTeX derivations) and `costlang plot`.

Input: parsed command-line arguments. Output: the text to print (empty when written to `-o`);
bad arguments are `ArgumentError`s (quoting the argument), which `cli.main` prints and turns into
exit status 2, like every other `CostlangError`. matplotlib is
imported only inside `plot`, so `costlang run` and `costlang derive` never load it. The analysis
behind a sweep plot is `queries.curve`; `printers.plot` only draws.
"""
from __future__ import annotations

import argparse
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING

from costlang.cli.common import ArgumentError, add_number_options, add_set_option, argument_span, check_output, emit, write_output
from costlang.ir.names import FUSION_MODES
from costlang.printers.words.phrases import LANGUAGES

if TYPE_CHECKING:
    import sympy

__all__ = ["add_parsers", "derive_command", "plot_command", "render_derivation"]

FORMATS = ("md", "latex")
DEFAULT_RANGE = "1..10000"


def add_parsers(sub) -> list[argparse.ArgumentParser]:
    derive = sub.add_parser("derive", help="write a step-by-step derivation (Markdown or LaTeX)")
    derive.add_argument("file", help="the .cost file to derive, step by step")
    derive.add_argument("--format", choices=FORMATS, default="md", help="md (default) or latex")
    derive.add_argument("--lang", choices=LANGUAGES, default="en", help="en (default) or ko")
    derive.add_argument("--standalone", action="store_true",
                        help="with --format latex: a compilable document, not a fragment for \\input")
    derive.add_argument("--fusion", choices=FUSION_MODES, help="fusion mode (default: the file's)")
    derive.add_argument("--hardware", help="derive on another hardware preset")
    derive.add_argument("--compare-fusion", action="store_true",
                        help="also derive the traffic before and after fusion (unfused vs the mode)")
    derive.add_argument("--steps", metavar="STEP,...",
                        help="the steps of each kernel to show, in the recipe's order: any of "
                             "bytes, flops, intensity, attainable, times, verdict (default: all)")
    derive.add_argument("-o", "--output", help="write to this file instead of stdout")
    derive.add_argument("--force", action="store_true", help="with -o: replace an existing file")
    plot = sub.add_parser("plot", help="draw the roofline (or a sweep) to a PNG, SVG or PDF file")
    plot.add_argument("file", help="the .cost file whose kernels (or query) to plot")
    plot.add_argument("-o", "--output", required=True, help="roofline.png, .svg or .pdf")
    plot.add_argument("--force", action="store_true", help="replace an existing file")
    plot.add_argument("--hardware", action="append", help="hardware preset (repeat to overlay several)")
    plot.add_argument("--fusion", choices=FUSION_MODES, help="fusion mode (default: the file's)")
    plot.add_argument("--compare-fusion", action="store_true",
                      help="also place the unfused kernels, with arrows to the kernels they fuse into")
    plot.add_argument("--sweep", metavar="QUERY",
                      help="plot this query against its free symbol instead of the roofline")
    plot.add_argument("--over", metavar="NAME=LO..HI[:SPACING]",
                      help="a free symbol's range, as `sweep --over` takes it: the roofline draws each "
                           "kernel's trajectory along it; a --sweep plot uses it as its x axis "
                           f"(default {DEFAULT_RANGE} on a log scale)")
    plot.add_argument("--linear", action="store_true", help="linear axes instead of logarithmic ones")
    plot.add_argument("--style", choices=("paper", "slides"), default="paper",
                      help="paper (default) or slides: a 16:9 figure with large type")
    plot.add_argument("--lang", choices=("en", "ko"), default="en",
                      help="the language of the figure's words (labels keep the file's names)")
    plot.add_argument("--dpi", type=_dpi, metavar="N", help="pixels per inch of a PNG (default 100; 200 or 300 for print)")
    plot.add_argument("--against", metavar="QUERY|istar",
                      help="the reference line the sweep crosses (default: I* for an intensity)")
    add_set_option(plot)
    add_set_option(derive)
    add_number_options(derive)
    derive.set_defaults(handler=derive_command)
    plot.set_defaults(handler=plot_command)
    return [derive, plot]


def render_derivation(analysis, fmt: str = "md", lang: str = "en", standalone: bool = False,
                      extras=(), steps=None) -> str:
    """The derivation of `analysis`, then of each extra result (e.g. a `FusionComparison`);
    `steps`: which steps of each kernel to show (default: all of `printers.derivation.STEPS`)."""
    from costlang.printers.derivation.printer import STEPS
    settings = {"lang": lang, "steps": tuple(steps) if steps else STEPS}
    if fmt == "md":
        from costlang.printers.derivation.markdown import MarkdownPrinter
        return MarkdownPrinter(**settings).doprint(analysis, extras=extras)
    from costlang.printers.derivation.latex import LatexDocPrinter
    return LatexDocPrinter(standalone=standalone, **settings).doprint(analysis, extras=extras)


def parse_steps(text):
    """`--steps intensity,verdict` → the steps in the recipe's order; unknown names are errors."""
    from costlang.printers.derivation.printer import STEPS
    if text is None:
        return None
    names = [t.strip() for t in text.split(",") if t.strip()]
    unknown = [n for n in names if n not in STEPS]
    if unknown or not names:
        from costlang.errors import did_you_mean
        raise ArgumentError(f"--steps takes steps among {', '.join(STEPS)}, not {unknown[0] if unknown else text!r}",
                            argument_span("--steps", text),
                            did_you_mean(unknown[0], STEPS) if unknown else None)
    return tuple(s for s in STEPS if s in names)


def derive_command(args) -> str:
    from costlang import load
    if args.output is not None:
        check_output(args)
    from costlang.queries.pipeline import analyze
    from costlang.cli.common import apply_cli_settings
    steps = parse_steps(args.steps)
    analysis = analyze(apply_cli_settings(load(args.file), args.set), fusion=args.fusion, hardware=args.hardware)
    extras = ()
    if args.compare_fusion:
        from costlang.queries.compare import compare_fusion
        extras = (compare_fusion(analysis),)
    return emit(render_derivation(analysis, args.format, args.lang, args.standalone, extras, steps), args)


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
    check_output(args)
    from costlang import load
    from costlang.queries.pipeline import analyze
    from costlang.cli.common import apply_cli_settings
    program = apply_cli_settings(load(args.file), args.set)
    axis = None
    if args.over is not None:
        from costlang.queries.curve import CURVE_POINTS
        from costlang.queries.sweep import parse_axis
        axis = parse_axis(program, args.over, default=f"log:{CURVE_POINTS if args.sweep else TRAJECTORY_POINTS}")
        if not PLOT_MIN <= min(axis.values) <= max(axis.values) <= PLOT_MAX:
            raise ArgumentError(f"a plot's axis runs from {PLOT_MIN:g} to {PLOT_MAX:g}: {axis.name} from "
                                f"{min(axis.values):g} to {max(axis.values):g} cannot be drawn",
                                argument_span("--over", args.over),
                                "narrow the range (`costlang sweep` takes values up to 1e300)")
    try:
        if args.sweep:
            figure = _sweep_plot(plot, program, args, axis)
        else:
            hardware = args.hardware or [None]
            analyses = [analyze(program, fusion=args.fusion, hardware=h) for h in hardware]
            unfused = [analyze(program, fusion="none", hardware=h) for h in hardware] if args.compare_fusion else []
            trajectories = []
            if axis is not None:
                from costlang.queries.curve import kernel_trajectories
                trajectories = [kernel_trajectories(a, axis) for a in analyses]
            elif not any(plot.points(a) for a in analyses):
                _nothing_to_place(program, analyses)
            figure = plot.roofline(analyses, unfused, trajectories, linear=args.linear, style=args.style,
                                   lang=args.lang)
        data = figure.to_bytes(suffix, dpi=args.dpi)
    except plot.FontError as e:   # Korean words (or a Korean label) and no font with Hangul
        raise ArgumentError(str(e), argument_span("--lang", args.lang)) from None
    write_output(args, data)
    return ""


def _nothing_to_place(program, analyses) -> None:
    """Why no kernel has a point on the roofline, at the file (no kernels) or at the declaration
    of the first free symbol they depend on."""
    if not any(a.kernels for a in analyses):
        raise ArgumentError("the file has no kernels to place on the roofline", program.main_span,
                            "compute a tensor first, e.g. `output y = relu(x)`")
    free = sorted(program.free_symbols, key=str)
    names = ", ".join(map(str, free))
    first = program.symbols.get(str(free[0])) if free else None
    raise ArgumentError(f"no kernel can be placed on the roofline: they depend on {names}, which "
                        "have no value", first.span if first else program.main_span,
                        f"give them values with --set (e.g. --set {free[0]}=1024), or draw each kernel's "
                        f"path with --over {free[0]}=1..4096" if free else None)


#: the x range a plot can draw: matplotlib pads and ticks a log axis beyond its data, and overflows
#: floats (a collapsed figure and numpy warnings) for data near 1e300
PLOT_MIN, PLOT_MAX = 1e-100, 1e100
TRAJECTORY_POINTS = 64   # samples along a roofline trajectory with the default spacing


def _sweep_plot(plot, program, args, axis):
    from costlang.queries.curve import query_curve
    from costlang.queries.pipeline import analyze
    a = analyze(program, fusion=args.fusion, hardware=(args.hardware or [None])[0], answers=False)
    if axis is None:
        lo, hi, name, xs = 1, 10000, None, None
    else:
        lo, hi, name, xs = (_exact(min(axis.values)), _exact(max(axis.values)), axis.name,
                            axis.values)
    curve = query_curve(a, args.sweep, lo, hi, args.against, symbol_name=name, xs=xs)
    query = next(q for q in a.queries if q.name == args.sweep).value
    unit = "" if query.unit.dimensionless else str(query.unit)
    return plot.sweep(curve, linear=args.linear, style=args.style, unit=unit, lang=args.lang)


def _exact(x: float) -> sympy.Rational:
    """A float bound of a range as the exact number it was typed as (64.0 → 64, 0.1 → 1/10)."""
    import sympy
    f = Fraction(repr(float(x)))  # float(): a numpy float's repr is `np.float64(2.0)`
    return sympy.Rational(f.numerator, f.denominator)


def _check_plot_options(args) -> None:
    """Options that the chosen kind of plot would silently ignore are errors."""
    if not args.sweep:
        for flag, value in (("--against", args.against),):
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
    from costlang.printers import plot
    return plot



def _dpi(text: str) -> int:
    if not text.isdigit() or not 10 <= int(text) <= 1200:
        raise argparse.ArgumentTypeError(f"expected a whole number of pixels per inch from 10 to 1200, not {text!r}")
    return int(text)
