"""`train { ... }`: the statement that makes a program one training step.

Input: an `ast.Train` and the resolver. Output: `Program.training` (`ir.program.Training`). The
backward itself is derived once the whole main file is resolved (frontend.backward), since the
forward graph must be complete first.

Settings (all optional):
  optimizer = NAME        the optimizer (a block of stdlib/train.cost, e.g. `adamw`, `sgd`)
  recompute = none | selective | full   activation recomputation (Korthikanti et al. 2022)
  gradients = DTYPE       the dtype the weights' gradients are kept in (default: each weight's)
  master = DTYPE          the optimizer's master weights and states (mixed precision: fp32)
  zero = 0 | 1 | 2 | 3    ZeRO stage over the data-parallel axis (FSDP is stage 3)
  micro_batches = N       gradient accumulation: N forward-backward passes per optimizer step
  tokens = N              tokens per step (for per-token figures; default: the model input's size)
"""
from __future__ import annotations

import sympy

from costlang.errors import SemanticError, did_you_mean
from costlang.ir.program import Training
from costlang.units import DIMENSIONLESS
from costlang.frontend import ast

__all__ = ["train_statement", "SETTINGS", "RECOMPUTE"]

RECOMPUTE = ("none", "selective", "full")
#: setting → what its value is: a word from a list, a dtype, or a number
SETTINGS = {"optimizer": "word", "recompute": RECOMPUTE, "gradients": "dtype", "master": "dtype",
            "zero": (0, 1, 2, 3), "micro_batches": "number", "tokens": "number"}


def train_statement(r, s: ast.Train) -> None:
    if r.program.training is not None:
        first = r.program.training.span
        raise SemanticError(f"the program is already a training step (line {first.line}"
                            f"{'' if first.file == s.span.file else ' of ' + first.file})", s.span,
                            "one `train` statement per program" if first.file == s.span.file
                            else "leave out --train, or drop the file's `train` statement")
    seen: dict = {}
    for o in s.options:
        if o.name not in SETTINGS:
            raise SemanticError(f"unknown train setting '{o.name}'", o.span,
                                did_you_mean(o.name, SETTINGS) or f"train takes: {', '.join(SETTINGS)}")
        if o.name in seen:
            raise SemanticError(f"'{o.name}' is given twice", o.span)
        seen[o.name] = _value(r, o, SETTINGS[o.name])
    recompute = seen.pop("recompute", "none")
    gradients = seen.pop("gradients", None)
    optimizer = seen.pop("optimizer", None)
    r.program.training = Training(s.span, optimizer, recompute, gradients, tuple(seen.items()))


def _value(r, o: ast.Option, kind):
    if kind == "dtype":
        if not isinstance(o.value, ast.Name):
            raise SemanticError(f"`{o.name}` names a dtype, e.g. `{o.name} = fp32`", o.value.span)
        return r.dtype(o.value.id, o.value.span)
    if kind == "word" or (isinstance(kind, tuple) and all(isinstance(k, str) for k in kind)):
        if not isinstance(o.value, ast.Name):
            raise SemanticError(f"`{o.name}` takes a name, e.g. `{o.name} = "
                                f"{kind[0] if isinstance(kind, tuple) else 'adamw'}`", o.value.span)
        word = o.value.id
        if isinstance(kind, tuple) and word not in kind:
            raise SemanticError(f"`{o.name}` is one of {', '.join(kind)}, not '{word}'", o.value.span,
                                did_you_mean(word, kind))
        return word
    value = r.expect(o.value, DIMENSIONLESS, f"'{o.name}'").expr
    bound = value.xreplace(r.program.bindings)
    if isinstance(kind, tuple):
        if not (bound.is_Integer and int(bound) in kind):
            raise SemanticError(f"`{o.name}` is one of {', '.join(map(str, kind))}, not {bound}", o.value.span)
        return sympy.Integer(bound)
    if bound.is_number and not bound.is_positive:
        raise SemanticError(f"`{o.name}` must be positive, not {bound}", o.value.span)
    return value
