"""Reading `.cost` files from disk: bytes → UTF-8 text → `ast.Module`, with errors for both steps.

Input: a path (and the span of the import that names it, if any). Output: the file's text or
module. Only regular files of at most `MAX_FILE_BYTES` are read (a FIFO, a device or a directory
is refused without waiting on it: the file is opened non-blocking and checked before any read);
undecodable bytes are reported at their line and column. An error about the main file itself
points at its line 1, column 1. Parsed modules are kept while their file is unchanged (same size and
modification time), so the prelude is not parsed again for every file; the stdlib's modules ship
parsed (`frontend.shipped`), so no process parses them while they are unchanged.
"""
from __future__ import annotations

import contextvars
import errno
import os
import stat
from pathlib import Path
from typing import Optional

from costlang.errors import CostImportError, CostSyntaxError, Source, Span
from costlang.frontend import ast
from costlang.frontend.parser import parse
from costlang.frontend.shipped import shipped_module

__all__ = ["read_text", "read_module", "MAX_FILE_BYTES", "reading_log", "files_read"]

#: larger files are refused before they are read: parsing them would take minutes
MAX_FILE_BYTES = 8 * 2 ** 20


def read_text(path: Path, span: Optional[Span] = None, display: Optional[str] = None) -> str:
    """The text of a `.cost` file: UTF-8 (a leading byte-order mark is dropped), at most `MAX_FILE_BYTES`."""
    name = display or str(path)
    span = span or Span(Source(name, ""), 1, 1, 1, 1)
    _note_read(path)
    _check_not_system(path, name, span)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))  # a FIFO must not block here
    except OSError as e:
        raise CostImportError(f"cannot read {name}: {_reason(e)}", span) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):  # a device such as /dev/zero would never end
            raise CostImportError(f"cannot read {name}: it is not a regular file", span)
        if info.st_size > MAX_FILE_BYTES:
            raise _too_large(name, info.st_size, span)
        with os.fdopen(os.dup(fd), "rb") as f:
            data = f.read(MAX_FILE_BYTES + 1)  # /proc files state size 0: read no more than allowed
    except OSError as e:
        raise CostImportError(f"cannot read {name}: {_reason(e)}", span) from None
    finally:
        os.close(fd)
    if len(data) > MAX_FILE_BYTES:
        raise _too_large(name, MAX_FILE_BYTES, span, more=True)
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as e:
        raise _not_utf8(data, e, name) from None


#: pseudo-filesystems whose files describe the machine or the process (environment, memory maps)
_SYSTEM_FOLDERS = ("/proc", "/sys", "/dev")


def _check_not_system(path: Path, name: str, span: Span) -> None:
    """A path (or a symbolic link) into /proc, /sys or /dev is refused before it is read: the
    errors about a file quote its lines, and /proc/self/environ holds the environment's secrets."""
    try:
        real = os.path.realpath(path)
    except (OSError, ValueError):
        return  # reading reports it
    if any(real == f or real.startswith(f + "/") for f in _SYSTEM_FOLDERS):
        raise CostImportError(f"cannot read {name}: it is a file of the system ({real.split('/')[1]}), "
                              "not a .cost file", span, "name a .cost file of your own")


def _reason(e: OSError) -> str:
    return {errno.ELOOP: "it is a loop of symbolic links", errno.EISDIR: "it is a folder, not a file",
            errno.ENAMETOOLONG: "the path is too long"}.get(e.errno, e.strerror or str(e))


def _too_large(name: str, size: int, span: Span, more: bool = False) -> CostImportError:
    return CostImportError(f"cannot read {name}: it has {'more than ' * more}{size} bytes; a .cost file may have "
                           f"at most {MAX_FILE_BYTES} (8 MiB)", span, "split it into files that import each other")


def _not_utf8(data: bytes, e: UnicodeDecodeError, name: str) -> CostSyntaxError:
    line_start = data.rfind(b"\n", 0, e.start) + 1
    line = data.count(b"\n", 0, e.start) + 1
    column = len(data[line_start: e.start].decode("utf-8")) + 1  # in characters, as spans count
    span = Span(Source(name, data.decode("utf-8", errors="replace")), line, column, line, column + 1)
    return CostSyntaxError(f"{name} is not UTF-8 text: the byte 0x{data[e.start]:02x} cannot be decoded",
                           span, "save the file as UTF-8")


def read_module(path: Path, span: Optional[Span] = None, display: Optional[str] = None) -> ast.Module:
    """The parsed module of a file; unchanged files (the stdlib above all) are parsed once."""
    name = display or str(path)
    try:
        info = path.stat()
        key = (str(path.resolve()), info.st_mtime_ns, info.st_size, name) if stat.S_ISREG(info.st_mode) else None
    except (OSError, RuntimeError):
        key = None  # read_text reports the problem
    if key in _PARSED:
        _note_read(path)
        return _PARSED[key]
    text, stdlib = read_text(path, span, name), _in_stdlib(path)
    module = (stdlib and shipped_module(path, text, name)) or parse(text, name, budgeted=not stdlib)
    if key is not None:
        if len(_PARSED) >= _PARSED_LIMIT:
            _PARSED.pop(next(iter(_PARSED)))
        _PARSED[key] = module  # modules are immutable, so sharing them is safe
    return module


def _in_stdlib(path: Path) -> bool:
    from costlang._resources import in_stdlib
    try:
        return in_stdlib(path)
    except (OSError, RuntimeError):
        return False


_PARSED: dict[tuple, ast.Module] = {}
_PARSED_LIMIT = 64


#: the files read since the innermost `reading_log()` began (None: no log is kept)
_READ_LOG: contextvars.ContextVar = contextvars.ContextVar("costlang_files_read", default=None)


def reading_log():
    """A context in which every `.cost` file read is noted (`files_read()`): a command's `-o` may
    write over none of them (an imported library is as much the user's work as the main file)."""
    from contextlib import contextmanager

    @contextmanager
    def log():
        token = _READ_LOG.set(set())
        try:
            yield
        finally:
            _READ_LOG.reset(token)
    return log()


def files_read() -> set:
    """The real paths of the files read in the current `reading_log()` (empty outside one)."""
    return set(_READ_LOG.get() or ())


def _note_read(path: Path) -> None:
    log = _READ_LOG.get()
    if log is not None:
        try:
            log.add(os.path.realpath(path))
        except (OSError, ValueError):
            pass
