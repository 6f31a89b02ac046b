"""The playground's server (see the package docstring): a Starlette application over one folder.

Every answer is data the page shows with `textContent` (never as HTML). Requests larger than
`MAX_BODY` are refused; paths are resolved and must stay inside the served folder (no `..`, no
symbolic link out of it); an analysis holds a lock (sympy's caches and the budgets' timers are
process-wide) and runs under `budget.limit` like a command.
"""
from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from pathlib import Path

__all__ = ["make_app", "MAX_BODY", "analyze_text", "point"]

MAX_BODY = 256 * 1024           # bytes of a request: a .cost file is far smaller
MAX_FILES = 2000                # files listed
_CACHE: "OrderedDict[str, object]" = OrderedDict()   # text hash → analysis (the sliders reuse it)
_LOCK = threading.Lock()
STATIC = Path(__file__).with_name("static")


def _error_dict(e) -> dict:
    span = e.span
    return {"line": span.line if span else 1, "col": span.column if span else 1,
            "end_col": span.end_column if span and span.end_line == span.line else None,
            "message": e.message, "hint": e.hint if isinstance(e.hint, str) else (e.hint() if e.hint else None),
            "text": e.render()}


def analyze_text(text: str, name: str = "playground.cost", lang: str = "en", settings=None) -> dict:
    """The page's view of a text: its errors (positioned), or its report, kernels (for the plot), free
    symbols (for the sliders) and derivation. `settings` are --set-like values for bound symbols."""
    from costlang.budget import DEFAULT_SECONDS, limit
    from costlang.errors import CostlangError
    with _LOCK, limit(DEFAULT_SECONDS):
        try:
            a = _analysis(text, name, settings)
            return {"ok": True, **_view(a, lang)}
        except CostlangError as e:
            parts = getattr(e, "errors", None) or [e]
            return {"ok": False, "errors": [_error_dict(x) for x in parts]}
        except RecursionError:
            return {"ok": False, "errors": [{"line": 1, "col": 1, "message": "the input is nested too deeply",
                                             "hint": None, "text": "the input is nested too deeply"}]}
        except (ValueError, ArithmeticError) as e:   # values too large to work with exactly: bad input
            return _too_large(e, name)


def _too_large(e: Exception, name: str) -> dict:
    """The error the command line gives for values too large to work with exactly; any other
    exception is raised again (a bug, a server error)."""
    from costlang.errors import too_large
    found = too_large(e)
    if found is None:
        raise e
    message, hint = found
    return {"ok": False, "errors": [{"line": 1, "col": 1, "message": message, "hint": hint,
                                     "text": f"{name}:1:1: error: {message}\n  = hint: {hint}"}]}


def _key(text, name, settings) -> str:
    return hashlib.sha256(json.dumps([text, name, sorted((settings or {}).items())]).encode()).hexdigest()


def _analysis(text, name, settings):
    key = _key(text, name, settings)
    if key in _CACHE:
        _CACHE.move_to_end(key)
        return _CACHE[key]
    from costlang import load_string
    m = load_string(text, name)
    a = m.analyze(settings=settings or None)
    _CACHE[key] = a
    while len(_CACHE) > 16:
        _CACHE.popitem(last=False)
    return a


def _float(e):
    try:
        x = float(e)
    except (TypeError, ValueError):
        return None
    return x if x == x and abs(x) != float("inf") else None


def _view(a, lang: str) -> dict:
    from costlang.printers.text.report import report
    from costlang.printers.derivation.markdown import MarkdownPrinter
    hw = a.hardware
    free = sorted(str(s) for s in a.program.free_symbols)
    kernels = [{"name": k.name, "intensity": _float(a.value(k.intensity)), "bound": _bound(a, k),
                "attainable": _float(a.value(k.flops / k.t_kernel)) if not free else None} for k in a.kernels]
    peak = max((p for _, p in hw.peaks), default=None)
    sizes = {n: _float(d.value) for n, d in a.program.symbols.items()
             if d.value is not None and d.value.is_number and n not in free}
    return {"report": report(a), "kernels": kernels, "free": free, "sizes": sizes,
            "hardware": {"name": hw.name, "peak": _float(a.value(a.totals.critical_intensity * hw.main_memory.bandwidth))
                         if hw.main_memory is not None else _float(peak),
                         "bandwidth": _float(hw.main_memory.bandwidth) if hw.main_memory is not None else None},
            "derivation": MarkdownPrinter(lang=lang).doprint(a)}


def _bound(a, k) -> str:
    """The kernel's verdict in words (with symbols free, its regimes; the sliders' point answers come
    from /api/point)."""
    from costlang.printers.words.verdicts import bound_text
    return bound_text(k.bound)


def point(text: str, values: dict, name: str = "playground.cost") -> dict:
    """The kernels at slider values: the free symbols' analysed expressions evaluated (compiled, no new
    analysis): each kernel's intensity, attainable FLOP/s and bound there."""
    import dataclasses

    from costlang.budget import DEFAULT_SECONDS, limit
    from costlang.errors import CostlangError
    from costlang.queries.points import kernels_at
    with _LOCK, limit(DEFAULT_SECONDS):
        try:
            a = _analysis(text, name, None)
            found = kernels_at(a, values)
        except CostlangError as e:
            return {"ok": False, "errors": [_error_dict(e)]}
        except KeyError as e:
            message = e.args[0]
            return {"ok": False, "errors": [{"line": 1, "col": 1, "message": message, "hint": None, "text": message}]}
        except (ValueError, ArithmeticError) as e:
            return _too_large(e, name)
        return {"ok": True, "kernels": [dataclasses.asdict(k) for k in found]}


def _inside(root: Path, rel: str):
    """The file `rel` under `root`, or None when it would leave it (`..`, an absolute path, a link out)."""
    if not rel or "\x00" in rel or rel.startswith(("/", "\\")):
        return None
    path = (root / rel).resolve()
    try:
        path.relative_to(root)
    except ValueError:
        return None
    return path if path.suffix == ".cost" and path.is_file() else None


def _zoo() -> list:
    from costlang import _resources
    return sorted(p.stem for p in (_resources.stdlib_dir() / "models").glob("*.cost"))


def _zoo_text(model: str) -> str:
    """A small file that runs a zoo model's prefill over a free batch (the menu's zoo entries)."""
    return (f"# The zoo's {model} (stdlib/models/{model}.cost names its configuration's source):\n"
            f"# the prefill of B sequences of 1024 tokens on one H100, in bf16.\n"
            f"import {model}\nuse hardware h100_sxm\ndim B\ninput ids: int32[B, 1024]\n"
            f"y = {model}_prefill(ids, wt = bf16, kt = bf16, at = bf16, it = int32)\n")


def _safe_json_response():
    """Starlette's JSONResponse, strict and escaped: no NaN or Infinity (a non-finite number is a
    bug, said as a server error, never invalid JSON), and every character a terminal or an editor
    would act on (a bidirectional override in a served file, a C1 control) written as a JSON escape
    (the same string once decoded)."""
    from starlette.responses import JSONResponse

    from costlang.printers.safe import terminal_safe

    class SafeJSONResponse(JSONResponse):
        def render(self, content) -> bytes:
            text = json.dumps(content, ensure_ascii=False, allow_nan=False, indent=None, separators=(",", ":"))
            return terminal_safe(text).encode("utf-8")
    return SafeJSONResponse


def make_app(root):
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import FileResponse, PlainTextResponse
    JSONResponse = _safe_json_response()
    from starlette.routing import Route
    from starlette.concurrency import run_in_threadpool
    root = Path(root).resolve()
    folder = root if root.is_dir() else root.parent
    first = root.name if root.is_file() else None

    async def body(request: Request):
        if int(request.headers.get("content-length") or 0) > MAX_BODY:
            return None
        data = await request.body()
        if len(data) > MAX_BODY:
            return None
        try:
            value = json.loads(data)
        except ValueError:
            return {}
        return value if isinstance(value, dict) else {}

    async def page(request):
        return FileResponse(STATIC / "index.html", media_type="text/html; charset=utf-8")

    vendored = {str(p.relative_to(STATIC)) for p in (STATIC / "katex").rglob("*") if p.is_file()}

    async def static(request):
        name = request.path_params["name"]
        if name not in ("app.js", "style.css") and name not in vendored:   # a fixed list: no path from the URL
            return PlainTextResponse("not found", status_code=404)
        return FileResponse(STATIC / name)

    async def files(request):
        found = sorted(str(p.relative_to(folder)) for p in folder.rglob("*.cost")
                       if p.resolve().is_relative_to(folder))[:MAX_FILES]
        return JSONResponse({"files": found + [f"zoo/{m}" for m in _zoo()], "first": first})

    async def file(request):
        rel = request.query_params.get("path", "")
        if rel.startswith("zoo/") and rel[4:] in _zoo():   # a model of the zoo, as a file that calls it
            return JSONResponse({"path": rel, "text": _zoo_text(rel[4:])})
        path = _inside(folder, rel)
        if path is None:
            return JSONResponse({"error": "no such .cost file in the served folder"}, status_code=404)
        return JSONResponse({"path": str(path.relative_to(folder)), "text": path.read_text(encoding="utf-8")})

    async def keywords(request):   # the grammar's keywords, for the editor's highlighting
        from costlang.frontend.keywords import grammar_keywords
        return JSONResponse({"keywords": list(grammar_keywords())})

    async def analyze(request):
        data = await body(request)
        if data is None:
            return JSONResponse({"error": f"the request is larger than {MAX_BODY} bytes"}, status_code=413)
        text, lang = data.get("text"), data.get("lang", "en")
        if not isinstance(text, str) or lang not in ("en", "ko"):
            return JSONResponse({"error": "send {text: string, lang: en|ko}"}, status_code=400)
        name = data.get("name") if isinstance(data.get("name"), str) else "playground.cost"
        return JSONResponse(await run_in_threadpool(analyze_text, text, Path(name).name or "playground.cost", lang))

    async def at_point(request):
        data = await body(request)
        if data is None:
            return JSONResponse({"error": f"the request is larger than {MAX_BODY} bytes"}, status_code=413)
        text, values = data.get("text"), data.get("values")
        if not isinstance(text, str) or not isinstance(values, dict) or not all(
                isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0 for v in values.values()):
            return JSONResponse({"error": "send {text: string, values: {symbol: positive number}}"}, status_code=400)
        return JSONResponse(await run_in_threadpool(point, text, values))

    return Starlette(routes=[Route("/", page), Route("/static/{name:path}", static), Route("/api/files", files), Route("/api/keywords", keywords),
                             Route("/api/file", file), Route("/api/analyze", analyze, methods=["POST"]),
                             Route("/api/point", at_point, methods=["POST"])])
