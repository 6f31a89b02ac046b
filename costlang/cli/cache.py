"""The command line's cache: answers kept as JSON data, keyed by what they depend on.

A command keeps what it computed (`store`) under a key made of its own inputs (the command's
arguments that matter, the working folder) and of the code that computed it (every file of the
package, the grammar and the stdlib by size and time of last change, the Python version, the
installed sympy, lark and networkx), with the SHA-256 of every file it read. `load` gives the data back only while each of those files
still has that hash; a changed import, preset or file is a miss, and the command computes again.
`costlang sweep` keeps its compiled plan here (`cli.whatif`), so that asking it again, over any
range and in any format, needs neither sympy nor the parser.

Where: `$COSTLANG_CACHE` (a folder, or `off` to keep nothing), else `$XDG_CACHE_HOME/costlang`,
else `~/.cache/costlang`; at most `MAX_ENTRIES` files, the oldest removed first. Nothing read
back is code: the files are JSON, each value is checked as it is read (`tabulate.CompiledPlan`),
and a file that is not what was written, or cannot be read, is a miss.
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Optional

__all__ = ["folder", "load", "store", "code_signature", "FORMAT", "MAX_ENTRIES"]

#: the version of the files' layout: a new one misses every older entry
FORMAT = 1
MAX_ENTRIES = 256
#: the files of the code whose contents decide an answer
_CODE_SUFFIXES = (".py", ".lark", ".cost", ".json")


def folder() -> Optional[Path]:
    """The cache's folder (None: `COSTLANG_CACHE=off`)."""
    chosen = os.environ.get("COSTLANG_CACHE")
    if chosen is not None:
        return None if chosen.strip().lower() in ("", "off", "0", "no") else Path(chosen)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "costlang"


_SIGNATURE: list = []


def code_signature() -> str:
    """One hash of the code that computes answers: the package's files, its grammar and stdlib
    (inside the package when installed, beside it in a checkout), each by path, size and time of
    last change (the rule Python's own bytecode cache follows for a source file), the Python
    version, and where and when sympy, lark and networkx were installed."""
    if _SIGNATURE:
        return _SIGNATURE[0]
    from costlang import _resources
    h = hashlib.sha256(repr(sys.version_info[:3]).encode())
    package = Path(__file__).resolve().parent.parent
    roots = [package, *(p for p in (_resources.stdlib_dir(), _resources.grammar_file().parent)
                        if package not in p.resolve().parents)]
    for root in roots:
        for path, info in sorted(_files(root)):
            h.update(f"\0{os.path.relpath(path, root)}\0{info.st_size}\0{info.st_mtime_ns}".encode())
    for name in ("sympy", "lark", "networkx"):
        spec = importlib.util.find_spec(name)
        origin = spec.origin if spec is not None else None
        info = os.stat(origin) if origin else None
        h.update(f"\0{name}\0{origin}\0{info and (info.st_mtime_ns, info.st_size)}".encode())
    _SIGNATURE.append(h.hexdigest())
    return _SIGNATURE[0]


def _files(root: Path) -> list:
    """(path, stat) of each file of the code under root."""
    out = []
    for here, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        out += [(p, os.stat(p)) for p in (os.path.join(here, n) for n in names if n.endswith(_CODE_SUFFIXES))]
    return out


def _path(kind: str, key: list) -> Optional[Path]:
    where = folder()
    if where is None:
        return None
    text = json.dumps([FORMAT, kind, code_signature(), os.getcwd(), key], sort_keys=True)
    return where / kind / f"{hashlib.sha256(text.encode()).hexdigest()}.json"


def load(kind: str, key: list):
    """The data kept for (kind, key) while every file it was computed from is unchanged; None else."""
    try:
        path = _path(kind, key)
        if path is None:
            return None
        entry = json.loads(path.read_bytes())
        if not isinstance(entry, dict) or entry.get("format") != FORMAT or not _unchanged(entry["files"]):
            return None
        return entry["data"]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _unchanged(files) -> bool:
    for name, digest in files:
        try:
            with open(name, "rb") as f:
                if hashlib.sha256(f.read()).hexdigest() != digest:
                    return False
        except (OSError, TypeError, ValueError):
            return False
    return True


def store(kind: str, key: list, data, files) -> None:
    """Keep `data` (JSON-ready) for (kind, key), computed from `files` (paths read); a folder that
    cannot be written keeps nothing, silently: the cache only saves time."""
    try:
        path = _path(kind, key)
        if path is None:
            return
        hashes = []
        for name in sorted(files):
            with open(name, "rb") as f:
                hashes.append([name, hashlib.sha256(f.read()).hexdigest()])
        text = json.dumps({"format": FORMAT, "files": hashes, "data": data}, allow_nan=False)
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, temporary = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(temporary, path)   # atomic: a reader sees the old file or the new one
        except BaseException:
            os.unlink(temporary)
            raise
        _trim(path.parent)
    except (OSError, ValueError, TypeError):
        return


def _trim(where: Path) -> None:
    entries = [e for e in os.scandir(where) if e.name.endswith(".json")]
    if len(entries) > MAX_ENTRIES:
        entries.sort(key=lambda e: (e.stat().st_mtime_ns, e.name))
        for e in entries[:len(entries) - MAX_ENTRIES]:
            try:
                os.unlink(e.path)
            except OSError:
                pass
