"""What the commands share: the argument error, `--set` and its settings, the number options, and
writing to `-o` safely.

Input: argparse arguments. Output: checked paths and written files; a bad argument is an
`ArgumentError` (a `CostlangError` whose span is the argument's own text), which `cli.main`
prints with a caret and turns into exit status 2.
"""
from __future__ import annotations

from pathlib import Path

from costlang.errors import CostlangError, Source, Span

__all__ = ["ArgumentError", "argument_span", "add_set_option", "add_number_options", "apply_cli_settings",
           "check_output", "write_output", "emit"]


class ArgumentError(CostlangError):
    """A command-line argument that cannot be used; its span is the argument's own text."""
    kind = "argument"


def argument_span(flag: str, text: str) -> Span:
    """A span over a whole argument, so that its error quotes it with a caret."""
    return Span(Source(flag, text), 1, 1, 1, max(len(text), 1) + 1)


def add_set_option(parser) -> None:
    parser.add_argument("--set", action="append", default=[], metavar="SETTING",
                        help="a what-if setting, e.g. B=1, hw=h100_sxm, weights=int4, fusion=none, "
                             "bandwidth=2*bandwidth() (repeatable)")


def add_number_options(parser) -> None:
    parser.add_argument("--units", choices=("decimal", "binary"), default="decimal",
                        help="bytes in kB/MB/GB (decimal, the default) or KiB/MiB/GiB (binary)")
    parser.add_argument("--exact", action="store_true",
                        help="exact integers in full (137438953472 FLOP) and fractions exactly")


def apply_cli_settings(model, texts):
    """The model's program with every `--set` applied (the model itself is not changed)."""
    if not texts:
        return model.program
    from costlang.frontend.edits import apply_settings
    from costlang.frontend.settings import parse_settings
    settings = [o for text in texts for o in parse_settings(text)]
    return apply_settings(model.program, settings)


def emit(text: str, args) -> str:
    if args.output is None:
        return text
    from costlang.printers.safe import terminal_safe  # the file is read on a terminal too
    write_output(args, terminal_safe(text).encode("utf-8"))
    return ""


def write_output(args, data: bytes) -> None:
    """Write `data` to `-o`; never over the input file, never through a symbolic link, and over an
    existing file only with `--force`. A path that cannot be written is bad input, not a crash."""
    import os
    path, span = check_output(args), argument_span("-o", args.output)  # again: the imports are known now
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
    if not args.force:
        flags |= os.O_EXCL  # the file did not exist a moment ago: it must not appear meanwhile
    try:
        fd = os.open(path, flags, 0o644)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
    except OSError as e:
        raise ArgumentError(f"cannot write {args.output!r}: {e.strerror or e}", span,
                            "check that the folder exists and can be written") from None


def check_output(args) -> Path:
    """The `-o` path, once it is known that writing it loses nothing: not an input file nor any file
    the program read (its imports), not through a symbolic link (the file or a folder on the way),
    and not an existing file without `--force`. Checked before the analysis too, so that a refused
    file name does not wait for it, and again as the file is written (the imports are known then)."""
    import os
    from costlang.frontend.loader import files_read
    output = args.output
    span = argument_span("-o", output)
    path = Path(output)
    if path.is_symlink():
        raise ArgumentError(f"will not write {output!r}: it is a symbolic link", span,
                            "name the file the link points to, or another file")
    linked = _linked_folder(path)
    if linked is not None:
        raise ArgumentError(f"will not write {output!r}: the folder {linked!r} on its way is a symbolic link",
                            span, "name the folder the link points to")
    if path.exists():
        inputs = getattr(args, "files", None) or [args.file]
        real = os.path.realpath(path)
        same = real in files_read() or any(_same(path, f) for f in inputs)
        if same:
            raise ArgumentError(f"will not write over the input file {output!r}", span,
                                "choose another name for the output: the program reads this file")
        if not args.force:
            raise ArgumentError(f"will not replace the existing file {output!r}", span,
                                "add --force to replace it, or choose another name")
        if not path.is_file():
            raise ArgumentError(f"cannot write {output!r}: it is not a regular file", span)
    return path


def _same(path: Path, other) -> bool:
    try:
        return path.samefile(other)
    except (OSError, ValueError):
        return False


def _linked_folder(path: Path):
    """The first folder of `path`, as written, that is a symbolic link (None if there is none). A
    relative path is checked from the current folder on; the folders above it are the user's setup."""
    current = None
    for part in path.parent.parts:
        current = Path(part) if current is None else current / part
        try:
            if current.is_symlink():
                return str(current)
        except OSError:
            return None
    return None
