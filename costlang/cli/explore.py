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

from costlang.cli.common import ArgumentError, add_number_options, add_set_option, argument_span

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
    ex.add_argument("--train", nargs="?", const="", metavar="SETTINGS",
                    help="explore training steps: the settings of a `train { ... }` statement to add, e.g. "
                         "\"optimizer = adamw; master = fp32\" (a --choose of recompute, zero ... joins them)")
    ex.add_argument("--hardware", help="analyse on another hardware preset")
    add_set_option(ex)
    add_number_options(ex)
    ex.set_defaults(handler=explore_command)
    return [ex]


def _flags(args) -> bool:
    return bool(args.choose or args.over or args.require or args.maximize or args.minimize)


def _source(args) -> str:
    from pathlib import Path
    try:
        return Path(args.file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        from costlang.errors import CostImportError, Source, Span
        raise CostImportError(f"cannot read {args.file}: {getattr(e, 'strerror', None) or e}",
                              Span(Source(args.file, ""), 1, 1, 1, 1)) from None


def _search(args, source: str):
    """The search the command-line flags describe."""
    from costlang.queries.explore import parse_choice, parse_constraint, parse_objective
    objectives = [parse_objective(t, "max") for t in args.maximize] + [parse_objective(t, "min")
                                                                        for t in args.minimize]
    if not objectives:
        raise ArgumentError("explore needs an objective: --maximize or --minimize a query or expression",
                            argument_span("--maximize", ""), "e.g. --maximize \"tokens/s per chip\"")
    if len(args.over) > 2:
        raise ArgumentError("explore sweeps at most two numeric choices", argument_span("--over", args.over[2]),
                            "make the others --choose lists")
    return _make(args, source, [parse_choice(t) for t in args.choose], args.over,
                 [parse_constraint(t) for t in args.require], objectives)


def _make(args, source, choices, axes, constraints, objectives):
    from costlang.budget import budget_seconds
    from costlang.queries.explore import Search
    return Search(source, str(args.file), tuple(args.set), tuple(choices), tuple(axes), tuple(constraints),
                  tuple(objectives), fusion=args.fusion, hardware=args.hardware, budget=budget_seconds(),
                  train=args.train)


def _file_searches(args, source: str) -> list:
    """The file's `explore` statements, each a search (with the statement's spans for its errors)."""
    from costlang import load
    from costlang.queries.explore import parse_choice, parse_constraint, parse_objective
    statements = load(args.file, train=args.train).program.explores
    if not statements:
        raise ArgumentError("nothing to explore: the file has no `explore` statement and the command gives no "
                            "--maximize or --minimize", argument_span("--maximize", ""),
                            "add an `explore { choose ...; maximize ... }` statement, or the flags")
    out = []
    for st in statements:
        with _at_statement(st):
            if not st.objectives:
                raise ArgumentError("an explore statement needs an objective (maximize or minimize)", None)
            if len(st.axes) > 2:
                raise ArgumentError("explore sweeps at most two numeric choices", st.axes[2][1],
                                    "make the others `choose` lists")
            choices = [_placed(parse_choice, span, t) for t, span in st.choices]
            constraints = [_placed(parse_constraint, span, t) for t, span in st.constraints]
            objectives = [_placed(parse_objective, span, t, sense) for sense, t, span in st.objectives]
        out.append((st, _make(args, source, choices, [t for t, _ in st.axes], constraints, objectives)))
    return out


def _placed(fn, span, *a):
    """`fn(*a)`, its error moved from the command-line text to the statement's line."""
    from costlang.errors import CostlangError
    try:
        return fn(*a)
    except CostlangError as e:
        e.span = span
        raise


class _at_statement:
    """Errors about an explore statement's parts (found by the command-line checks) point at the
    part's line (`span`), or at the statement."""

    def __init__(self, statement, span=None):
        self.statement, self.span = statement, span

    def __enter__(self):
        return self

    def __exit__(self, kind, e, tb):
        from costlang.errors import CostlangError
        if isinstance(e, CostlangError) and (e.span is None or e.span.source.name.startswith("--")):
            e.span = self.span or self.statement.span
        return False


def _check(search, statement=None) -> None:
    """What every structure would refuse alike is refused once, here: the file, the `--set`s, the
    ranges and the constraints' and objectives' syntax (their meaning is checked per structure). For a
    statement, an error about one of its lines points at that line."""
    spans = {}
    if statement is not None:
        spans = {**{t: sp for t, sp in statement.axes}, **{t.partition("=")[0]: sp for t, sp in statement.choices},
                 **{t: sp for t, sp in statement.constraints}, **{t: sp for _, t, sp in statement.objectives}}
    at = lambda key: _at_statement(statement, spans.get(key)) if statement is not None else _nowhere()  # noqa: E731
    from costlang.frontend.edits import apply_settings
    from costlang.frontend.parser import parse
    from costlang.frontend.settings import parse_settings
    from costlang.queries.sweep import parse_axis
    from costlang import load
    model = load(search.name, train=search.train)
    program = model.program
    if search.settings:
        program = apply_settings(program, [o for t in search.settings for o in parse_settings(t)])
    for text in search.axes:
        with at(text):
            parse_axis(program, text)
    for c in search.choices:   # a chip or a fusion mode is checked without an analysis: a typo fails at once
        if c.name in ("hardware", "hw", "fusion"):
            for v in c.values:
                with at(c.name):
                    apply_settings(program, parse_settings(f"{c.name} = {v}", "--choose"))
    for c in search.constraints:
        for side in (c.left, c.right):
            with at(c.text):
                parse(f"query {side}", "--require")
    for o in search.objectives:
        if not any(q.name == o.text for q in program.queries):
            with at(o.text):
                parse(f"query {o.text}", f"--{o.sense}imize")


class _nowhere:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def explore_command(args) -> str:
    if args.workers < 1:
        raise ArgumentError("--workers is a positive whole number", argument_span("--workers", str(args.workers)))
    source = _source(args)
    if _flags(args):
        searches = [(None, _search(args, source))]
    else:
        searches = _file_searches(args, source)
    for statement, search in searches:
        _check(search, statement)
    progress = _progress() if sys.stderr.isatty() else None
    results = []
    if args.scheduler or args.workers > 1:
        client, cluster = _client(args)
        try:
            results = [_run(s, client, progress) for _, s in searches]
        finally:
            client.close()
            if cluster is not None:
                cluster.close()
    else:
        results = [_run(s, None, progress) for _, s in searches]
    if len(results) > 1 and (args.plot or args.output or args.csv or args.json):
        raise ArgumentError("the file has several explore statements: --plot, -o, --csv and --json take one",
                            argument_span("--plot" if args.plot else "-o", args.plot or args.output or ""),
                            "keep one explore statement, or give the search as flags")
    labels = [st.label if st is not None else None for st, _ in searches]
    return "\n".join(_printed(args, r, label) for r, label in zip(results, labels))


def _run(search, client, progress):
    from costlang.queries.explore import run_search
    return run_search(search, client, progress)


def _printed(args, result, label) -> str:
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
    head = [] if label is None else [f"explore {label}"]
    return "\n".join(head + exploration_lines(result)) + "\n"


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
