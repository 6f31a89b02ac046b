"""The command line: `costlang COMMAND FILE ...`, one module per group of commands.

`run` and `check` (run.py), `derive` and `plot` (derive.py), `compare` and `sweep` (whatif.py),
`hardware`, `validate` and `calibrate` (hardware.py), `ops`, `completion` and `editor` (info.py),
`explore` (explore.py);
what they share is in common.py. Each group adds its subcommands with `add_parsers(sub)` and names
each one's handler with `set_defaults(handler=...)`: a handler takes the parsed arguments and
returns the text to print. `--hardware NAME` works on every command that analyses a file.

Bad input prints `file:line:col: error: ...` with the source line and a caret, and exits with
status 2; `--debug` adds the Python traceback. Output goes to stdout; errors to stderr.
"""
from __future__ import annotations

import argparse
import os
import sys
import traceback
from typing import Optional, Sequence

from costlang.budget import DEFAULT_SECONDS, DEFAULT_WALL_SECONDS, limit, wall_clock_limit
from costlang.errors import CostlangError, too_large
from costlang.printers.safe import terminal_safe

__all__ = ["main", "command", "build_parser"]

EXIT_OK, EXIT_INTERNAL, EXIT_INPUT = 0, 1, 2


def build_parser() -> argparse.ArgumentParser:
    from costlang import __version__
    p = argparse.ArgumentParser(prog="costlang", description="Symbolic roofline cost models from .cost files.")
    p.add_argument("--version", action="version", version=f"costlang {__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    from costlang.cli import derive, explore, hardware, info, run, serve, simulate, whatif
    groups = run.add_parsers(sub)
    groups += hardware.add_parsers(sub)
    groups += derive.add_parsers(sub)
    run.add_run_options(groups[0])
    groups += whatif.add_parsers(sub)
    groups += info.add_parsers(sub)
    groups += explore.add_parsers(sub)
    groups += simulate.add_parsers(sub)
    groups += serve.add_parsers(sub)
    for s in groups:
        s.add_argument("--debug", action="store_true", help="show Python tracebacks")
        s.add_argument("--time-budget", type=_seconds, default=DEFAULT_SECONDS, metavar="SECONDS",
                       help="time limit for each symbolic simplification or solve "
                            f"(default {DEFAULT_SECONDS:g})")
        wall = explore.EXPLORE_WALL_SECONDS if s.prog.endswith(" explore") else DEFAULT_WALL_SECONDS
        if s.prog.endswith(" serve"):
            wall = None   # a server runs until stopped; each request has its own budgets
        s.add_argument("--wall-limit", type=_seconds, default=wall, metavar="SECONDS",
                       help="wall-clock limit for the whole command, on top of the per-operation budgets "
                            + (f"(default {wall:g})" if wall is not None else "(default: none, for a server)"))
    p.set_defaults(command_line=p)
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
    args = build_parser().parse_args(argv)
    if args.command == "sweep":   # asked before: read back from its compiled plan, without sympy
        from costlang.cli.whatif import cached_sweep
        out = cached_sweep(args)
        if out is not None:
            sys.stdout.write(terminal_safe(out))
            return EXIT_OK
    from costlang.frontend.loader import reading_log
    try:
        from costlang.frontend.parser import parser
        from costlang.printers.floats import number_style
        parser()  # loading the parser's tables (about 0.6 s in a fresh process) is outside every limit
        with reading_log(), limit(getattr(args, "time_budget", DEFAULT_SECONDS)), \
                wall_clock_limit(getattr(args, "wall_limit", None), args.command, _file_span(args)), \
                number_style(binary=getattr(args, "units", "decimal") == "binary", exact=getattr(args, "exact", False)):
            out = args.handler(args)
    except CostlangError as e:
        _debug(args)
        text = _placed(e, args).render()
        if text.startswith("error: "):  # no file: the command is the place
            text = f"costlang {args.command}: {text}"
        print(terminal_safe(text), file=sys.stderr)
        return EXIT_INPUT
    except RecursionError:  # a structure nested too deeply for Python: bad input, said plainly
        _debug(args)
        print(terminal_safe(f"{_where(args)}: error: the input is nested too deeply to analyse"), file=sys.stderr)
        return EXIT_INPUT
    except Exception as e:  # a bug in costlang, not in the input
        _debug(args)
        found = too_large(e)   # values too large to work with exactly: bad input
        if found is not None:
            print(terminal_safe(f"{_where(args)}: error: {found[0]}\n  = hint: {found[1]}"), file=sys.stderr)
            return EXIT_INPUT
        print(terminal_safe(f"costlang: internal error: {type(e).__name__}: {e} (run with --debug for details)"),
              file=sys.stderr)
        return EXIT_INTERNAL
    sys.stdout.write(terminal_safe(out))
    return getattr(args, "exit_status", EXIT_OK)   # `validate`: 3 when a measurement beats the lower bound


def _debug(args) -> None:
    """With `--debug`, the traceback of the exception being handled, made as safe as every other
    output: its messages quote the input (an import string, a label), escapes included."""
    if getattr(args, "debug", False):
        print(terminal_safe(traceback.format_exc()), end="", file=sys.stderr)


def _file_span(args):
    """The input file's line 1, column 1 (None for a command without a file)."""
    from costlang.errors import Source, Span
    files = getattr(args, "files", None) or [getattr(args, "file", None)]
    return Span(Source(str(files[0]), ""), 1, 1, 1, 1) if files[0] else None


def _where(args) -> str:
    """What an error with no place of its own points at: the (first) input file, else the command."""
    files = getattr(args, "files", None) or [getattr(args, "file", None)]
    return f"{files[0]}:1:1" if files[0] else f"costlang {args.command}"


def _placed(e: CostlangError, args) -> CostlangError:
    """Every exit-2 error carries a position: one found with no span of its own (a whole-command
    condition, such as no `measure` block in any file) points at the input file's line 1, column 1,
    or (in `main`) names the command when there is no file."""
    from costlang.errors import ErrorGroup, Source, Span
    files = getattr(args, "files", None) or [getattr(args, "file", None)]
    parts = e.errors if isinstance(e, ErrorGroup) else [e]
    for part in parts:
        if part.span is None:
            if files[0]:
                part.span = Span(Source(str(files[0]), ""), 1, 1, 1, 1)
    if isinstance(e, ErrorGroup) and e.span is None:
        e.span = parts[0].span
    return e


def command() -> None:
    """The `costlang` program (the installed script, `python -m costlang`): `main`, then an exit
    that skips tearing the interpreter down, which frees every object sympy made one by one
    (about 0.2 s of CPU after a small file, 0.5 s after an 80-layer model) in a process about to
    end. Output is flushed first; every file costlang writes is closed as soon as it is written.
    Only the program collects garbage less often (`main` called in a process leaves it as it is)."""
    _collect_less()
    status = main()
    _disarm()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:  # a closed pipe: the interpreter reports it, as it would without the shortcut
        sys.exit(status)
    os._exit(status)


def _disarm() -> None:
    """No budget timer outlives the command: a SIGPROF after the handlers are gone would end the
    process with status 155 instead of its own."""
    import signal
    if hasattr(signal, "setitimer"):
        for timer in (signal.ITIMER_PROF, signal.ITIMER_REAL):
            signal.setitimer(timer, 0)
        signal.signal(signal.SIGPROF, signal.SIG_IGN)


if __name__ == "__main__":
    sys.exit(main())
