"""costlang: a symbolic cost-model language for GPU and accelerator performance.

Pipeline: text → AST (`frontend.parser`, built while Lark parses) → resolved program (`frontend.resolve`)
→ operator graph (`ir.graph`) → kernels (`passes.fusion`) → costs and roofline (`analysis`)
→ printers (`printers`).

The names below are imported on first use (PEP 562), so a command that needs no sympy (a sweep
read back from its compiled plan, `--help`) does not pay for importing it.
"""
__all__ = ["Analysis", "CostlangError", "Model", "load", "load_string"]
__version__ = "0.1.0"


def __getattr__(name: str):
    if name in ("Analysis", "Model", "load", "load_string"):
        from costlang import api
        return getattr(api, name)
    if name == "CostlangError":
        from costlang.errors import CostlangError
        return CostlangError
    raise AttributeError(f"module 'costlang' has no attribute {name!r}")


def __dir__():
    return sorted({*globals(), *__all__})
