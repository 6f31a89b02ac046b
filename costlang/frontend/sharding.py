"""Sharding statements: `shard T, ...: [axis | _, ...]` and `parallel KIND over AXIS [{ ... }]`.

Input: `ast.Shard` / `ast.Parallel` and the resolver. Output: `ShardSpec` / `ParallelSpec` records
on the program; `passes.shard` turns the program into the per-chip one once the whole file is
resolved (so a `shard` line may follow the model it splits, e.g. an imported one).
"""
from __future__ import annotations

from costlang.errors import SemanticError, did_you_mean
from costlang.ir.system import ParallelSpec, ShardSpec
from costlang.units import DIMENSIONLESS
from costlang.frontend import ast

__all__ = ["shard_statement", "parallel_statement", "PARALLEL_KINDS"]

#: each kind and the options it takes (name → unit, or None for a name such as a dtype):
#: `gradients = DTYPE` makes the step a training step (data parallel's gradient all-reduce);
#: `microbatches = m` is the pipeline's micro-batch count (1 when not given); `virtual = v` its
#: virtual stages per chip (interleaved 1F1B, Narayanan et al. 2021; 1 when not given)
#: `overlap = f` (any kind) is the fraction of the parallelism's communication hidden behind
#: compute, as the user states it (with its source): `t_estimate()` (analysis.comms);
#: `parallel context` splits the sequence (the second dim of every input) and gathers the keys and
#: values attention needs from the other chips (passes.shard)
PARALLEL_KINDS = {"tensor": {"algorithm": None, "overlap": DIMENSIONLESS},
                  "data": {"gradients": None, "algorithm": None, "overlap": DIMENSIONLESS},
                  "pipeline": {"microbatches": DIMENSIONLESS, "virtual": DIMENSIONLESS, "overlap": DIMENSIONLESS},
                  "expert": {"algorithm": None, "overlap": DIMENSIONLESS},
                  "context": {"overlap": DIMENSIONLESS}}


def _system(r, span):
    system = r.program.system
    if system is None:
        raise SemanticError("sharding splits tensors over the mesh axes of a system, and no system is selected",
                            span, "add `use system dgx_h100` (or a system of your own) before this line")
    return system


def _axis(r, system, name: ast.Name) -> str:
    if system.axis(name.id) is None:
        raise r.unknown(name, f"axis of system '{system.name}'", [a.name for a in system.axes])
    return name.id


def shard_statement(r, s: ast.Shard) -> None:
    system = _system(r, s.span)
    spec = tuple(None if n.id == "_" else _axis(r, system, n) for n in s.spec)
    used = [a for a in spec if a is not None]
    if len(used) != len(set(used)):
        raise SemanticError("a tensor can be split over a mesh axis only once", s.span)
    for t in s.tensors:
        tensor = r.program.tensors.get(t.id)
        if tensor is None:
            raise r.unknown(t, "tensor", r.program.tensors)
        if tensor.role not in ("input", "weight"):
            raise SemanticError(f"'{t.id}' is computed; only inputs and weights are sharded by hand "
                                "(computed tensors follow their operands)", t.span)
        if len(tensor.shape) != len(spec):
            raise SemanticError(f"'{t.id}' has {len(tensor.shape)} dimensions, the split names {len(spec)}",
                                s.span, "write one entry per dimension: a mesh axis, or _ to keep it whole")
        if any(x.tensor == t.id for x in r.program.shardings):
            raise SemanticError(f"'{t.id}' is already sharded", t.span)
        r.program.shardings.append(ShardSpec(t.id, spec, s.span))


def parallel_statement(r, s: ast.Parallel) -> None:
    system = _system(r, s.span)
    if s.kind.id not in PARALLEL_KINDS:
        raise SemanticError(f"unknown parallelism '{s.kind.id}'", s.kind.span,
                            did_you_mean(s.kind.id, PARALLEL_KINDS) or f"kinds are: {', '.join(PARALLEL_KINDS)}")
    axis = _axis(r, system, s.axis)
    allowed = PARALLEL_KINDS[s.kind.id]
    options = []
    for o in s.options:
        if o.name not in allowed:
            raise SemanticError(f"'parallel {s.kind.id}' takes no option '{o.name}'", o.span,
                                f"it takes: {', '.join(allowed)}" if allowed else "it takes no options")
        if allowed[o.name] is None:
            if not isinstance(o.value, ast.Name):
                raise SemanticError(f"'{o.name}' takes a name", o.value.span)
            options.append((o.name, r.dtype(o.value.id, o.value.span) if o.name == "gradients" else o.value))
        elif o.name == "overlap":
            value = r.expect(o.value, DIMENSIONLESS, "an overlap").expr
            bound = value.xreplace(r.program.bindings)
            if bound.is_number and not (bound.is_nonnegative and (bound - 1).is_nonpositive):
                raise SemanticError(f"an overlap is the fraction of the communication hidden behind compute, from 0 "
                                    f"to 1, not {bound}", o.value.span, "e.g. `overlap = 0.8`, with its source in a comment")
            options.append((o.name, value))
        else:
            options.append((o.name, _whole(r, o)))
    if any(p.kind == s.kind.id for p in r.program.parallels):
        raise SemanticError(f"'parallel {s.kind.id}' is given twice", s.span)
    if any(p.axis == axis for p in r.program.parallels):
        raise SemanticError(f"axis '{axis}' already carries another parallelism", s.axis.span)
    r.program.parallels.append(ParallelSpec(s.kind.id, axis, tuple(options), s.span))


def _whole(r, o: ast.Option):
    value = r.expect(o.value, DIMENSIONLESS, f"'{o.name}'").expr
    bound = value.xreplace(r.program.bindings)
    if bound.is_number and not (bound.is_integer and bound.is_positive):
        raise SemanticError(f"'{o.name}' counts and must be a positive whole number, not {bound}", o.value.span)
    return value
