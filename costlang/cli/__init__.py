"""The command line: `costlang run|check FILE` and `--version` here; `derive` and `plot`
(derive_cli.py), `compare` and `sweep` (cli_whatif.py), `ops`, `completion` and `editor`
(cli_info.py), and `hardware` (cli_hardware.py) add their own subcommands.
`--hardware NAME` works on every command that analyses a file.

Bad input prints `file:line:col: error: ...` with the source line and a caret, and exits with
status 2; `--debug` adds the Python traceback. Output goes to stdout; errors to stderr.
"""
from __future__ import annotations

import argparse
import os
import sys
import traceback
from typing import Optional, Sequence

from costlang.budget import DEFAULT_SECONDS, limit
from costlang.errors import CostlangError
from costlang.printers.safe import terminal_safe
from costlang.ir.program import FUSION_MODES

__all__ = ["main", "command"]

EXIT_OK, EXIT_INTERNAL, EXIT_INPUT = 0, 1, 2


def _parser() -> argparse.ArgumentParser:
    from costlang import __version__
    p = argparse.ArgumentParser(prog="costlang", description="Symbolic roofline cost models from .cost files.")
    p.add_argument("--version", action="version", version=f"costlang {__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="analyse a .cost file and print the report")
    run.add_argument("file")
    run_format = run.add_mutually_exclusive_group()
    run_format.add_argument("--json", action="store_true", help="print one JSON object instead of the text report")
    run_format.add_argument("--csv", action="store_true", help="print the kernels table as CSV (numbers in SI base units)")
    run.add_argument("--fusion", choices=FUSION_MODES, help="fusion mode (default: the file's, else elementwise)")
    run.add_argument("--hardware", help="analyse on another hardware preset")
    run.add_argument("--compare-fusion", action="store_true",
                     help="also show the program unfused next to the chosen fusion mode, with ratios")
    run.add_argument("--instances", action="store_true",
                     help="list every instance of every repeated block (its count must be bound)")
    check = sub.add_parser("check", help="parse and resolve a .cost file; print nothing but errors")
    check.add_argument("file")
    check.add_argument("--hardware", help="also check that this hardware exists and the program runs on it")
    from costlang.cli.hardware import add_parsers as add_hardware_parsers
    hardware = add_hardware_parsers(sub)  # hardware, validate, calibrate (issue 15)
    from costlang.cli.derive import add_parsers
    notes = add_parsers(sub)  # derive, plot (issue 5)
    from costlang.cli.whatif import add_parsers as add_whatif_parsers, add_set_option
    add_set_option(run)
    whatif = add_whatif_parsers(sub)  # compare, sweep
    from costlang.cli.info import add_parsers as add_info_parsers
    info = add_info_parsers(sub)  # ops, completion, editor
    for s in (run, *whatif, notes[0]):
        s.add_argument("--units", choices=("decimal", "binary"), default="decimal",
                       help="bytes in kB/MB/GB (decimal, the default) or KiB/MiB/GiB (binary)")
        s.add_argument("--exact", action="store_true",
                       help="exact integers in full (137438953472 FLOP) and fractions exactly")
    for s in (run, check, *notes, *whatif, *info, *hardware):
        s.add_argument("--debug", action="store_true", help="show Python tracebacks")
        s.add_argument("--time-budget", type=_seconds, default=DEFAULT_SECONDS, metavar="SECONDS",
                       help="time limit for each symbolic simplification or solve "
                            f"(default {DEFAULT_SECONDS:g})")
    return p


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, not {text!r}")
    return value


def _collect_less() -> None:
    """Fewer cyclic garbage collections. A run allocates millions of small objects (the AST,
    sympy expressions) and frees few, and each full collection rescans the whole heap, which grows
    with the file: at 80 unrolled layers they took 0.4 s of a 3 s run, 1.3 s of 7 s at 160 (the
    superlinear part of the run). Objects are still freed by reference counting as soon as they
    are unused; only reference cycles wait longer (young ones are still collected)."""
    import gc
    gc.set_threshold(50_000, 20, 100)


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = _parser().parse_args(argv)
    try:
        from costlang.printers.numbers import number_style
        with limit(getattr(args, "time_budget", DEFAULT_SECONDS)), \
                number_style(binary=getattr(args, "units", "decimal") == "binary", exact=getattr(args, "exact", False)):
            out = COMMANDS[args.command](args)
    except CostlangError as e:
        if args.debug:
            traceback.print_exc()
        print(terminal_safe(e.render()), file=sys.stderr)
        return EXIT_INPUT
    except RecursionError:  # a structure nested too deeply for Python: bad input, said plainly
        if args.debug:
            raise
        print(f"{args.file}: error: the input is nested too deeply to analyse", file=sys.stderr)
        return EXIT_INPUT
    except Exception as e:  # a bug in costlang, not in the input
        if args.debug:
            raise
        print(terminal_safe(f"costlang: internal error: {type(e).__name__}: {e} (run with --debug for details)"),
              file=sys.stderr)
        return EXIT_INTERNAL
    sys.stdout.write(terminal_safe(out))
    return EXIT_OK


def command() -> None:
    """The `costlang` program (the installed script, `python -m costlang`): `main`, then an exit
    that skips tearing the interpreter down, which frees every object sympy made one by one
    (about 0.2 s of CPU after a small file, 0.5 s after an 80-layer model) in a process about to
    end. Output is flushed first; every file costlang writes is closed as soon as it is written.
    Only the program collects garbage less often (`main` called in a process leaves it as it is)."""
    _collect_less()
    status = main()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:  # a closed pipe: the interpreter reports it, as it would without the shortcut
        sys.exit(status)
    os._exit(status)


def _run(args) -> str:
    from costlang import load
    model = load(args.file)
    from costlang.queries.pipeline import analyze
    from costlang.cli.whatif import apply_cli_settings
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
    return report(analysis, comparison, instances=args.instances)


def _check(args) -> str:
    from costlang import load
    model = load(args.file)
    if args.hardware:
        model.analyze(hardware=args.hardware)
    return ""


COMMANDS = {"run": _run, "check": _check,
            "derive": lambda args: _notes("derive", args), "plot": lambda args: _notes("plot", args),
            "compare": lambda args: _whatif("compare", args), "sweep": lambda args: _whatif("sweep", args),
            "ops": lambda args: _info("ops", args), "completion": lambda args: _info("completion", args),
            "editor": lambda args: _info("editor", args),
            "hardware": lambda args: _hardware(args.command, args),
            "validate": lambda args: _hardware(args.command, args),
            "calibrate": lambda args: _hardware(args.command, args)}


def _info(command: str, args) -> str:
    from costlang.cli.info import COMMANDS as INFO, completion_script
    if command == "completion":
        return completion_script(_parser(), args.shell)
    return INFO[command](args)


def _hardware(command: str, args) -> str:
    from costlang.cli.hardware import COMMANDS as HARDWARE
    return HARDWARE[command](args)


def _whatif(command: str, args) -> str:
    from costlang.cli.whatif import COMMANDS as WHATIF
    return WHATIF[command](args)


def _notes(command: str, args) -> str:
    from costlang.cli.derive import COMMANDS as NOTES
    return NOTES[command](args)


if __name__ == "__main__":
    sys.exit(main())
