"""The `explore` command: the best configuration over structural and numeric choices, serially or on Dask.

  costlang explore FILE --choose hardware=h100_sxm,h200_sxm --choose n=1,2,4,8 --over B=1..512:pow2 \\
      --require fits --require "t_kernel(prefill) <= 1 s" --maximize "tokens/s per chip" \\
      [--minimize ...] [--workers N | --scheduler ADDRESS] [--csv | --json] [--plot front.png] [-o best.cost]

Every value is parsed by the costlang parser. Each combination of `--choose` values is one analysis;
`--over` ranges are swept on each analysed structure without a new one. `--workers N` (N > 1) runs
the structures on a local Dask cluster of N worker processes; `--scheduler ADDRESS` on a Dask
cluster the user already runs (its workers need costlang installed and the file's imports at the
same paths). Results come back in configuration order: a distributed search prints what a serial one
does.
"""
from __future__ import annotations

import sys

from costlang.cli.common import ArgumentError, add_number_options, add_set_option, argument_span, emit

__all__ = ["add_parsers", "explore_command"]

#: a search is many analyses: its wall-clock bound is larger than a single command's, but still bounded
EXPLORE_WALL_SECONDS = 1800.0


def add_parsers(sub) -> list:
    ex = sub.add_parser("explore", help="search structural and numeric choices for the best configuration")
    ex.add_argument("file", help="the .cost file to explore")
    ex.add_argument("--choose", action="append", default=[], metavar="SETTING=V1,V2,...",
                    help="a structural choice: each value is a new analysis (hardware, fusion, weights, a "
                         "parallel degree ...); repeatable, all combinations are tried")
    ex.add_argument("--over", action="append", default=[], metavar="NAME=LO..HI[:SPACING]",
                    help="a numeric choice swept on each structure without a new analysis (at most two)")
    ex.add_argument("--require", action="append", default=[], metavar="CONSTRAINT",
                    help="`fits` (footprint within capacity) or `LEFT <= RIGHT` with queries or expressions")
    ex.add_argument("--maximize", action="append", default=[], metavar="QUERY_OR_EXPR", help="an objective")
    ex.add_argument("--minimize", action="append", default=[], metavar="QUERY_OR_EXPR", help="an objective")
    where = ex.add_mutually_exclusive_group()
    where.add_argument("--workers", type=int, default=1, metavar="N",
                       help="N > 1: a local Dask cluster of N worker processes (default 1: serial)")
    where.add_argument("--scheduler", metavar="ADDRESS", help="a running Dask scheduler, e.g. tcp://host:8786")
    out = ex.add_mutually_exclusive_group()
    out.add_argument("--csv", action="store_true", help="every configuration as CSV")
    out.add_argument("--json", action="store_true", help="every configuration as JSON")
    ex.add_argument("--plot", metavar="FILE", help="draw the Pareto front of the first two objectives")
    ex.add_argument("-o", "--output", help="write the best configuration (first objective) as a .cost file")
    ex.add_argument("--force", action="store_true", help="replace an existing output file")
    ex.add_argument("--fusion", help="fusion mode (default: the file's)")
    ex.add_argument("--hardware", help="analyse on another hardware preset")
    add_set_option(ex)
    add_number_options(ex)
    ex.set_defaults(handler=explore_command)
    return [ex]


def _search(args):
    from pathlib import Path

    from costlang.budget import budget_seconds
    from costlang.queries.explore import Search, parse_choice, parse_constraint, parse_objective
    objectives = [parse_objective(t, "max") for t in args.maximize] + [parse_objective(t, "min")
                                                                        for t in args.minimize]
    if not objectives:
        raise ArgumentError("explore needs an objective: --maximize or --minimize a query or expression",
                            argument_span("--maximize", ""), "e.g. --maximize \"tokens/s per chip\"")
    if len(args.over) > 2:
        raise ArgumentError("explore sweeps at most two numeric choices", argument_span("--over", args.over[2]),
                            "make the others --choose lists")
    if args.workers < 1:
        raise ArgumentError("--workers is a positive whole number", argument_span("--workers", str(args.workers)))
    path = Path(args.file)
    try:
        source = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        from costlang.errors import CostImportError, Source, Span
        raise CostImportError(f"cannot read {args.file}: {getattr(e, 'strerror', None) or e}",
                              Span(Source(args.file, ""), 1, 1, 1, 1)) from None
    return Search(source, str(path), tuple(args.set), tuple(parse_choice(t) for t in args.choose),
                  tuple(args.over), tuple(parse_constraint(t) for t in args.require), tuple(objectives),
                  fusion=args.fusion, hardware=args.hardware, budget=budget_seconds())


def _check(search) -> None:
    """What every structure would refuse alike is refused once, here: the file, the `--set`s, the
    ranges and the constraints' and objectives' syntax (their meaning is checked per structure)."""
    from costlang.frontend.edits import apply_settings
    from costlang.frontend.parser import parse
    from costlang.frontend.settings import parse_settings
    from costlang.queries.sweep import parse_axis
    from costlang import load
    model = load(search.name)
    program = model.program
    if search.settings:
        program = apply_settings(program, [o for t in search.settings for o in parse_settings(t)])
    for text in search.axes:
        parse_axis(program, text)
    for c in search.constraints:
        for side in (c.left, c.right):
            parse(f"query {side}", "--require")
    for o in search.objectives:
        if not any(q.name == o.text for q in program.queries):
            parse(f"query {o.text}", f"--{o.sense}imize")


def explore_command(args) -> str:
    from costlang.queries.explore import run_search
    search = _search(args)
    _check(search)
    progress = _progress() if sys.stderr.isatty() else None
    if args.scheduler or args.workers > 1:
        client, cluster = _client(args)
        try:
            result = run_search(search, client, progress)
        finally:
            client.close()
            if cluster is not None:
                cluster.close()
    else:
        result = run_search(search, None, progress)
    if args.plot:
        _plot(args, result)
    if args.output:
        from costlang.cli.common import write_output
        from costlang.printers.text.explore import best_program
        text = best_program(result)
        if text is None:
            raise ArgumentError("no configuration satisfies every constraint: there is nothing to write",
                                argument_span("-o", args.output))
        write_output(args, text.encode("utf-8"))
    if args.csv:
        from costlang.printers.data.csv import exploration_csv
        return exploration_csv(result)
    if args.json:
        from costlang.printers.data.json import dumps
        from costlang.printers.data.whatif import exploration_dict
        return dumps(exploration_dict(result))
    from costlang.printers.text.explore import exploration_lines
    return "\n".join(exploration_lines(result)) + "\n"


def _client(args):
    """A Dask client: on the user's scheduler, or on a local cluster of `--workers` processes."""
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise ArgumentError("a distributed search needs Dask: pip install 'costlang[explore]'",
                            argument_span("--workers", str(args.workers))) from None
    if args.scheduler:
        try:
            return Client(args.scheduler, timeout=10), None
        except (OSError, TimeoutError) as e:
            raise ArgumentError(f"cannot reach the Dask scheduler at {args.scheduler}: {e}",
                                argument_span("--scheduler", args.scheduler)) from None
    cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=None)
    return Client(cluster), cluster


def _progress():
    """A progress line on stderr (a terminal only): structures done of all."""
    def report(done: int, total: int) -> None:
        end = "\n" if done == total else ""
        print(f"\rexplored {done}/{total} structures", end=end, file=sys.stderr, flush=True)
    return report


def _plot(args, result) -> None:
    import copy
    from pathlib import Path

    from costlang.cli.common import check_output, write_output
    from costlang.printers.plot import FORMATS, pareto
    if len(result.search.objectives) < 2:
        raise ArgumentError("a Pareto plot needs two objectives", argument_span("--plot", args.plot),
                            "give a second --maximize or --minimize")
    suffix = Path(args.plot).suffix.lower()
    if suffix not in FORMATS:
        raise ArgumentError(f"cannot write a plot to {args.plot!r}", argument_span("--plot", args.plot),
                            "use .png, .svg or .pdf")
    target = copy.copy(args)
    target.output = args.plot
    check_output(target)
    write_output(target, pareto(result).to_bytes(suffix))
