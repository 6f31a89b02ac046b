"""`costlang run FILE` (the report, or its JSON or CSV) and `costlang check FILE` (errors only).

Input: argparse arguments. Output: the text to print; errors are `CostlangError`s, which
`cli.main` prints with their position and turns into exit status 2.
"""
from __future__ import annotations

from costlang.cli.common import add_number_options, add_set_option, apply_cli_settings
from costlang.ir.names import FUSION_MODES

__all__ = ["add_parsers"]


def add_parsers(sub) -> list:
    run = sub.add_parser("run", help="analyse a .cost file and print the report")
    run.add_argument("file", help="the .cost file to analyse")
    run_format = run.add_mutually_exclusive_group()
    run_format.add_argument("--json", action="store_true", help="print one JSON object instead of the text report")
    run_format.add_argument("--csv", action="store_true", help="print the kernels table as CSV (numbers in SI base units)")
    run.add_argument("--fusion", choices=FUSION_MODES, help="fusion mode (default: the file's, else elementwise)")
    run.add_argument("--hardware", help="analyse on another hardware preset")
    run.add_argument("--compare-fusion", action="store_true",
                     help="also show the program unfused next to the chosen fusion mode, with ratios")
    run.add_argument("--train", nargs="?", const="", metavar="SETTINGS",
                     help="analyse one training step of the file's forward (as if it ended with "
                          "`train { SETTINGS }`, e.g. --train \"optimizer = adamw\")")
    view = run.add_mutually_exclusive_group()
    view.add_argument("--kernels", action="store_true", default=None,
                      help="the full report: every kernel's row, traffic, memory levels and attainable "
                           "performance (the default up to 12 kernels)")
    view.add_argument("--summary", action="store_false", dest="kernels",
                      help="the summary: totals, verdict, the kernels that take the most time, footprint, "
                           "queries and solves (the default above 12 kernels)")
    run.add_argument("--instances", action="store_true",
                     help="list every instance of every repeated block (its count must be bound)")
    run.set_defaults(handler=_run, kernels=None)
    check = sub.add_parser("check", help="parse and resolve a .cost file; print nothing but errors")
    check.add_argument("file", help="the .cost file to parse and resolve")
    check.add_argument("--hardware", help="also check that this hardware exists and the program runs on it")
    check.set_defaults(handler=_check)
    return [run, check]


def add_run_options(run) -> None:
    """`--set`, `--units` and `--exact`, added after the other commands' own options (their order in `--help`)."""
    add_set_option(run)
    add_number_options(run)


def _run(args) -> str:
    from costlang import load
    from costlang.queries.pipeline import analyze
    model = load(args.file, train=args.train)
    analysis = analyze(apply_cli_settings(model, args.set), fusion=args.fusion, hardware=args.hardware)
    comparison = None
    if args.compare_fusion:
        from costlang.queries.compare import compare_fusion
        comparison = compare_fusion(analysis)
    if args.json:
        from costlang.printers.data.json import to_json
        return to_json(analysis, comparison)
    if args.csv:
        from costlang.printers.data.csv import run_csv
        return run_csv(analysis)
    from costlang.printers.text.report import report
    return report(analysis, comparison, instances=args.instances, kernels=args.kernels)


def _check(args) -> str:
    from costlang import load
    model = load(args.file)
    if args.hardware:
        model.analyze(hardware=args.hardware)
    return ""
