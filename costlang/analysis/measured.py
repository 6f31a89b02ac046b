"""Measurements: `measure` blocks and the analysed kernels → figures derived from a measured time.

Input: an analysis's kernels (`analysis.roofline`) and the program's `measure` blocks (a time and,
optionally, the actual traffic). Output: `MeasuredResult`s (the note's section 3: effective
bandwidth, achieved throughput, fractions of the peaks); data only.
"""
from __future__ import annotations

from dataclasses import dataclass

from costlang.errors import SemanticError
from costlang.ir.program import Value
from costlang.units import BYTE, BYTE_PER_S, DIMENSIONLESS, FLOP_PER_S, SECOND

__all__ = ["MeasuredResult", "measured"]


@dataclass(frozen=True)
class MeasuredResult:
    """Figures derived from a measured time (and, if given, the measured actual traffic)."""
    node: str
    kernel: str
    figures: tuple[tuple[str, Value], ...]


def measured(analysis) -> tuple[MeasuredResult, ...]:
    out = []
    for m in analysis.program.measurements.values():
        if _whole_step(analysis, m):
            continue   # `measure step`: the training step's achieved MFU and HFU (analysis.training)
        _one_kernel(analysis, m)
        k = analysis.kernel_of(m.node)
        figures = [("measured_time", Value(m.time, SECOND)),
                   ("effective_bandwidth", Value(k.bytes / m.time, BYTE_PER_S)),
                   # of the algorithmic bytes, unless the traffic is stated (below): for a memory-bound
                   # kernel (an add) the figure that matters
                   ("fraction_of_peak_bandwidth", Value(k.bytes / m.time / k.bandwidth, DIMENSIONLESS)),
                   ("achieved_flops", Value(k.flops / m.time, FLOP_PER_S)),
                   ("fraction_of_peak_flops", Value(k.flops / m.time / k.peak, DIMENSIONLESS))]
        if m.traffic is not None:
            figures[1:3] = [("actual_traffic", Value(m.traffic, BYTE)),
                            ("achieved_throughput", Value(m.traffic / m.time, BYTE_PER_S)),
                            ("fraction_of_peak_bandwidth", Value(m.traffic / m.time / k.bandwidth,
                                                                 DIMENSIONLESS)), figures[1]]
        out.append(MeasuredResult(m.node, k.name, tuple(figures)))
    return tuple(out)


def _whole_step(analysis, m) -> bool:
    """`measure step { time = ... }`: the whole training step, when no kernel or instance is named `step`."""
    p = analysis.program
    if m.node != "step" or m.node in p.nodes or m.node in p.instances:
        return False
    if p.training is None:
        raise SemanticError("`measure step` measures a training step, and this program does not train", m.span,
                            "add `train { ... }` (or run it with --train), or measure a kernel by name")
    return True


def _one_kernel(analysis, m) -> None:
    """A measured time belongs to one kernel: a block instance (or repeat) named in a `measure`
    block must be one kernel (as fused), else its time would be set against its last kernel alone."""
    if m.node not in analysis.program.instances:
        return
    nodes, name = analysis.program.nodes, m.node  # its kernels, as `composition.instance_kernels` finds them
    kernels = [x for x in analysis.kernels
               if any(nodes[op].scope == name or nodes[op].scope.startswith(name + ".") for op in x.ops)]
    if len(kernels) == 1:
        return
    names = [x.ops[0] for x in kernels]
    shown = ", ".join(names[:4]) + (", …" if len(names) > 4 else "")
    raise SemanticError(f"'{m.node}' is a block instance of {len(kernels)} kernels under fusion "
                        f"{analysis.fusion}; a measured time belongs to one kernel", m.span,
                        f"measure one of its kernels by name ({shown}), or write the block's work as one "
                        "`custom` kernel")
