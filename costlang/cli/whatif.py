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


def _sweep(args) -> str:
    from costlang.queries.sweep import parse_axis, sweep
    from costlang.printers.data.csv import sweep_csv
    from costlang.printers.data.whatif import sweep_dict
    from costlang.printers.text.whatif import sweep_table
    base = _analysis(args, answers=False)   # a sweep evaluates queries, never the file's solves
    # `--over B` alone: the range `plot` draws by default, 1..10000 on a log scale
    texts = [t if "=" in t or not t.strip().isidentifier() else f"{t.strip()}=1..10000:log:21" for t in args.over]
    axes = [parse_axis(base.program, text) for text in texts]
    _check_grid(axes, args.over)
    result = sweep(base, axes, args.show or ["t_kernel()", "intensity()"])
    if args.csv:
        return sweep_csv(result)
    if args.json:
        from costlang.printers.data.json import dumps
        return dumps(sweep_dict(result))
    return sweep_table(result)


def _check_grid(axes, texts) -> None:
    """The grid of two axes has as many points as their product: it is capped, not only each axis."""
    import math

    from costlang.queries.sweep import MAX_GRID, SweepError, arg_span
    for i, a in enumerate(axes):
        if any(b.name == a.name for b in axes[:i]):   # the table would show it twice, with the last one winning
            raise SweepError(f"{a.name} is swept twice", arg_span("--over", texts[i]),
                             f"give each symbol one --over (a list such as {a.name}=1,8,64 takes any values)")
    if math.prod(len(a.values) for a in axes) > MAX_GRID:
        raise SweepError(f"a sweep has at most {MAX_GRID} points in all, not "
                         f"{' × '.join(str(len(a.values)) for a in axes)}", arg_span("--over", texts[-1]),
                         "use fewer points per symbol (e.g. :log:100)")

