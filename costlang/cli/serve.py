"""`costlang serve [FILE|DIR]`: the playground page on 127.0.0.1 (costlang.web; needs the `web` extra).

  costlang serve examples/               every .cost file of the folder in the page's menu
  costlang serve examples/roofline/gemm_4096.cost --port 8000
"""
from __future__ import annotations

import sys

from costlang.cli.common import ArgumentError, argument_span

__all__ = ["add_parsers"]


def add_parsers(sub) -> list:
    p = sub.add_parser("serve", help="the playground: edit a .cost file in the browser and watch its roofline")
    p.add_argument("file", nargs="?", default=".", help="a .cost file or a folder of them (default: this folder)")
    p.add_argument("--port", type=int, default=0, help="the port (default: a free one, printed)")
    p.add_argument("--host", default="127.0.0.1", help="the address to bind (default 127.0.0.1: this machine only)")
    p.set_defaults(handler=_serve)
    return [p]


def _serve(args) -> str:
    from pathlib import Path
    try:
        import uvicorn

        from costlang.web.app import make_app
    except ImportError:
        raise ArgumentError("the playground needs Starlette and uvicorn: pip install \"costlang[web]\"",
                            argument_span("serve", "serve")) from None
    root = Path(args.file)
    if not root.exists():
        raise ArgumentError(f"there is no file or folder {args.file!r}", argument_span("file", args.file))
    import socket
    port = args.port
    if port == 0:
        with socket.socket() as s:
            s.bind((args.host, 0))
            port = s.getsockname()[1]
    print(f"costlang playground: http://{args.host}:{port}/  (serving {root.resolve()}; Ctrl-C stops it)",
          file=sys.stderr, flush=True)
    uvicorn.run(make_app(root), host=args.host, port=port, log_level="warning")
    return ""
