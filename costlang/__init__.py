"""costlang: a symbolic cost-model language for GPU and accelerator performance.

Pipeline: text → AST (`frontend.parser`, built while Lark parses) → resolved program (`frontend.resolve`)
→ operator graph (`ir.graph`) → kernels (`passes.fusion`) → costs and roofline (`analysis`)
→ printers (`printers`).
"""
from costlang.api import Analysis, Model, load, load_string
from costlang.errors import CostlangError

__all__ = ["Analysis", "CostlangError", "Model", "load", "load_string"]
__version__ = "0.1.0"
