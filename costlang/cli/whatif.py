"""The command line's what-if parts: `--set` on `run`, and the `compare` and `sweep` commands.

Input: argparse arguments. Output: the text (or CSV, or JSON) the command prints; errors are
`CostlangError`s, which `cli.main` prints with their position and turns into exit status 2.
Every value on the command line is parsed by the costlang parser (never by Python):

  costlang run FILE --set B=1 --set hw=h100_sxm --set "weights=int4"
  costlang compare FILE --scenario "int4: weights=int4" --scenario "2xBW: bandwidth=2*bandwidth()"
  costlang sweep FILE --over B=1..1024:pow2 --show "tokens/s" --show "1/t_kernel()" [--csv|--json]
"""
from __future__ import annotations

from costlang.cli.common import add_number_options, add_set_option, apply_cli_settings

__all__ = ["add_parsers"]


def add_parsers(sub) -> list:
    """The `compare` and `sweep` subcommands."""
    cmp = sub.add_parser("compare", help="the file and what-if scenarios side by side, with ratios")
    cmp.add_argument("file", help="the .cost file to compare scenarios of")
    cmp.add_argument("--scenario", action="append", default=[], metavar="[NAME:] SETTINGS",
                     help="settings separated by ';', e.g. \"int4: weights=int4\" (repeatable)")
    cmp_format = cmp.add_mutually_exclusive_group()
    cmp_format.add_argument("--json", action="store_true", help="print JSON instead of a table")
    cmp_format.add_argument("--csv", action="store_true", help="print CSV instead of a table")
    sw = sub.add_parser("sweep", help="tabulate quantities over one or two dims or params")
    sw.add_argument("file", help="the .cost file to sweep")
    sw.add_argument("--over", action="append", required=True, metavar="NAME=LO..HI[:SPACING]",
                    help="a range: :pow2, :lin[:N] or :log[:N] (default :lin:11); once or twice; NAME "
                         "alone: 1..10000 on a log scale, the range `plot` draws by default")
    sw.add_argument("--show", action="extend", nargs="+", default=[], metavar="QUERY_OR_EXPR",
                    help="query names of the file or expressions, one or several after one --show "
                         "(repeatable; default: T_kernel and I)")
    out = sw.add_mutually_exclusive_group()
    out.add_argument("--csv", action="store_true", help="print CSV")
    out.add_argument("--json", action="store_true", help="print JSON")
    sw.add_argument("--no-cache", action="store_true",
                    help="neither read nor keep this sweep's compiled plan (by default a sweep asked "
                         "again, over any range, is read back from it without re-analysing the file)")
    for p, handler in ((cmp, _compare), (sw, _sweep)):
        add_set_option(p)
        p.add_argument("--hardware", help="analyse on another hardware preset")
        add_number_options(p)
        p.set_defaults(handler=handler)
    return [cmp, sw]


def _analysis(args, extras: bool = True, answers: bool = True):
    from costlang import load
    from costlang.queries.pipeline import analyze
    model = load(args.file)
    program = apply_cli_settings(model, getattr(args, "set", []))
    return analyze(program, fusion=getattr(args, "fusion", None), hardware=getattr(args, "hardware", None),
                   extras=extras, answers=answers)


def _compare(args) -> str:
    """The `--scenario`s beside the baseline; without any, the file's own `compare` statements (or,
    when it has none, the baseline beside every `scenario` of the file, or the baseline alone)."""
    base = _analysis(args, extras=not args.scenario)   # a column shows each solve's roots only
    found = (_cli_comparison(base, args.scenario),) if args.scenario else _file_comparisons(base)
    if args.json:
        from costlang.printers.data.whatif import comparison_dict
        from costlang.printers.data.json import dumps
        dicts = [comparison_dict(c) for c in found]
        return dumps(dicts[0] if len(dicts) == 1 else dicts)
    if args.csv:
        from costlang.printers.data.csv import comparison_csv
        return "\n".join(comparison_csv(c) for c in found)
    from costlang.printers.text.whatif import comparison_lines
    return "\n".join("\n".join(comparison_lines(c)) + "\n" for c in found)


def _cli_comparison(base, texts: list):
    from costlang.queries.whatif import Settings, compare_analyses, scenario_analysis
    from costlang.frontend.settings import parse_scenario
    from costlang.budget import time_budget
    from costlang.errors import Source, Span
    from costlang.queries.whatif import baseline_settings
    named = [("baseline", baseline_settings(base), base)]
    if not texts:
        return compare_analyses(named)
    with time_budget(None, f"comparing {len(texts)} scenario{'s' * (len(texts) != 1)}",  # one budget for all
                     Span(Source("--scenario", texts[0]), 1, 1, 1, len(texts[0]) + 1)):
        for text in texts:
            name, settings = parse_scenario(text)
            named.append((name, Settings((text,)), scenario_analysis(base, settings)))
    return compare_analyses(named)


def _file_comparisons(base) -> tuple:
    from costlang.queries.whatif import file_scenarios
    if base.comparisons:
        return tuple(base.comparisons)
    scenarios = file_scenarios(base)
    return (scenarios if scenarios is not None else _cli_comparison(base, []),)


#: what a sweep shows when no --show names anything
DEFAULT_SHOWS = ("t_kernel()", "intensity()")


def _sweep(args) -> str:
    from costlang.cli import cache
    from costlang.queries.sweep import compiled_plan, parse_axis, sweep
    from costlang.printers.data.whatif import crossing_dict
    from costlang.printers.text.whatif import crossing_lines
    base = _analysis(args, answers=False)   # a sweep evaluates queries, never the file's solves
    texts = _axis_texts(args.over)
    axes = [parse_axis(base.program, text) for text in texts]
    _check_grid(axes, args.over)
    shows = args.show or DEFAULT_SHOWS
    result = sweep(base, axes, shows)
    lines, numbers = crossing_lines(result.crossings), [crossing_dict(c) for c in result.crossings]
    if not args.no_cache and cache.folder() is not None:   # for the next sweep over these symbols (`cached_sweep`)
        from costlang.frontend.loader import files_read
        names = tuple(a.name for a in axes)
        data = {"plan": compiled_plan(base, names, tuple(shows)).to_data(),
                "kinds": {n: base.program.symbols[n].kind for n in names},
                "crossings": {"text": lines, "json": numbers}}
        cache.store("sweep", _sweep_key(args, names, shows), data, files_read())
    return _sweep_output(args, result, lines, numbers)


def cached_sweep(args):
    """The sweep answered from the compiled plan an earlier sweep of the file over the same symbols
    kept (`cli.cache`), without sympy, the parser or networkx; None when none is kept, a file it
    was computed from changed, or anything about this sweep is not plain (a bound written as an
    expression, a size that is not whole somewhere): then `_sweep` answers, and reports."""
    if args.no_cache:
        return None
    from costlang.cli import cache
    from costlang.printers.floats import number_style
    from costlang.queries.tabulate import CompiledPlan, axis_from_text, grid
    try:  # any surprise in what is read back is a miss: the analysis then answers (or reports)
        texts = _axis_texts(args.over)
        shows = args.show or DEFAULT_SHOWS
        data = cache.load("sweep", _sweep_key(args, tuple(t.partition("=")[0].strip() for t in texts), shows))
        if data is None:
            return None
        plan = CompiledPlan.from_data(data["plan"])
        kinds = {str(n): k for n, k in data["kinds"].items() if k in ("dim", "param")}
        axes = [axis_from_text(t, "lin", kinds, _plain_number) for t in texts]
        _check_grid(axes, args.over)
        flat = grid(axes)
        if tuple(a.name for a in axes) != plan.symbols or plan.first_bad_size(flat) is not None:
            return None
        lines, numbers = data["crossings"]["text"], data["crossings"]["json"]
        if not (isinstance(lines, list) and all(isinstance(t, str) for t in lines) and isinstance(numbers, list)):
            return None
        with number_style(binary=args.units == "binary", exact=args.exact):
            return _sweep_output(args, plan.tabulate(axes, flat), lines, numbers)
    except Exception:   # noqa: BLE001 (never an error of its own: the full path decides what to report)
        return None


def _sweep_output(args, result, lines: list, numbers: list) -> str:
    """The sweep as CSV, JSON or a table, its crossings given in words (`lines`) and numbers."""
    from costlang.printers.data.sweep import csv_text, json_text
    from costlang.printers.text.sweep import table_text
    if args.csv:
        return csv_text(result)
    if args.json:
        return json_text(result, numbers)
    return table_text(result, lines)


def _axis_texts(over: list) -> list:
    """`--over B` alone: the range `plot` draws by default, 1..10000 on a log scale."""
    return [t if "=" in t or not t.strip().isidentifier() else f"{t.strip()}=1..10000:log:21" for t in over]


def _sweep_key(args, names: tuple, shows: list) -> list:
    """What a sweep's compiled plan depends on besides the files it read: the file, the swept
    symbols, the shown quantities, the settings, the hardware, the number style and the time budget
    (a verdict sympy could not decide within it is marked by the float signs instead)."""
    import os
    return [os.path.realpath(args.file), list(names), list(shows), list(args.set), args.hardware, args.units,
            args.exact, args.time_budget]


#: a bound the compiled path reads itself: digits, a fraction part, an exponent (every other
#: form, `2^10` or `1_000`, goes through the costlang parser)
_PLAIN = r"[0-9]{1,30}(?:\.[0-9]{1,30})?(?:[eE][+-]?[0-9]{1,3})?"


def _plain_number(name: str, text: str) -> float:
    """A plain decimal bound as the float of its exact value (what the parser's literal gives)."""
    import re
    from fractions import Fraction
    if re.fullmatch(_PLAIN, text) is None:
        raise ValueError(f"not a plain number: {text!r}")
    try:
        x = float(Fraction(text))
    except OverflowError:
        x = float("inf")
    if not x <= 1e300:
        raise ValueError(f"too large: {text!r}")
    return x


def _check_grid(axes, texts) -> None:
    """The grid of two axes has as many points as their product: it is capped, not only each axis."""
    import math

    from costlang.queries.tabulate import MAX_GRID, SweepError, arg_span
    for i, a in enumerate(axes):
        if any(b.name == a.name for b in axes[:i]):   # the table would show it twice, with the last one winning
            raise SweepError(f"{a.name} is swept twice", arg_span("--over", texts[i]),
                             f"give each symbol one --over (a list such as {a.name}=1,8,64 takes any values)")
    if math.prod(len(a.values) for a in axes) > MAX_GRID:
        raise SweepError(f"a sweep has at most {MAX_GRID} points in all, not "
                         f"{' × '.join(str(len(a.values)) for a in axes)}", arg_span("--over", texts[-1]),
                         "use fewer points per symbol (e.g. :log:100)")

