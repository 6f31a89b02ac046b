"""Hardware listings and sheets as text: `costlang hardware` and `costlang hardware show NAME`.

Input: a `Program` (for the list) or a `HardwareSheet`. Output: a string, deterministic.
"""
from __future__ import annotations

import os

from costlang import _resources
from costlang.analysis.hardware_sheet import HardwareSheet, describe
from costlang.ir.program import Program
from costlang.units import BYTE, BYTE_PER_S, FLOP_PER_S, SECOND
from costlang.printers.numbers import count_text, exact_or_approx, human
from costlang.printers.text.report import _table

__all__ = ["hardware_list", "hardware_sheet_text"]

#: the dtype whose peak the list shows: the first of these the hardware states
_HEADLINE = ("bf16", "fp16", "fp8", "fp32")


def hardware_list(program: Program) -> str:
    rows = []
    for name, hw in program.hardware.items():
        dtype = next((d for d in _HEADLINE if hw.peak(d) is not None), hw.peaks[0][0])
        mem = hw.main_memory
        rows.append([name, f"{dtype} {human(hw.peak(dtype), FLOP_PER_S)}",
                     human(mem.bandwidth, BYTE_PER_S),
                     human(mem.capacity, BYTE) if mem.capacity is not None else "—",
                     human(hw.launch, SECOND), describe(program, name)])
    header = ["name", "matrix peak (dense)", "memory BW", "capacity", "launch", "what"]
    lines = ["hardware (`costlang hardware show NAME` prints every figure with its source)", ""]
    lines += ["  " + line for line in _table(rows, header)]
    if program.systems:   # several chips on a mesh: `use system NAME`
        srows = [[name, f"{count_text(sys.chips)} × {sys.chip}",
                  ", ".join(f"{a.name} = {count_text(a.size)}" for a in sys.axes),
                  ", ".join(dict.fromkeys(a.link.kind for a in sys.axes if a.link is not None))]
                 for name, sys in program.systems.items()]
        lines += ["", "systems (`use system NAME`; the stdlib's are in stdlib/hardware/)", ""]
        lines += ["  " + line for line in _table(srows, ["name", "chips", "mesh axes", "links"])]
    return "\n".join(lines) + "\n"


def hardware_sheet_text(sheet: HardwareSheet) -> str:
    hw = sheet.hardware
    lines = [f"hardware {hw.name}" + (f" : {hw.base}" if hw.base else "")]
    for i, d in enumerate(sheet.chain):
        where = f"{_shown_path(d.file)}:{d.line}"
        lines += ["", (f"defined at {where}" if i == 0 else
                       f"inherited from {d.name} ({where}); figures restated above replace these")]
        lines += ["  " + h for h in d.header]
        width = max((len(f.text) for f in d.figures), default=0)
        for f in d.figures:
            if not f.text:
                lines.append(f"    # {f.note}")
            else:
                lines.append(f"    {f.text.ljust(width)}  " + (f"# {f.note}" if f.note else "(no source given)"))
    mem = ", ".join(f"{m.name}{' per SM' if m.per_sm else ''} " + "; ".join(x for x in (
        human(m.bandwidth, BYTE_PER_S) if m.bandwidth is not None else "",
        human(m.capacity, BYTE) if m.capacity is not None else "") if x) for m in hw.memories)
    lines += ["", "resolved (dense peaks; SI units: 1 TB/s = 10^12 B/s, 1 GB = 10^9 B)",
              "  matrix peaks: " + ", ".join(f"{d} {human(p, FLOP_PER_S)}" for d, p in hw.peaks)]
    if hw.vector_peaks:
        lines.append("  vector peaks: " + ", ".join(f"{d} {human(p, FLOP_PER_S)}" for d, p in hw.vector_peaks))
    if hw.sms is not None:
        lines.append(f"  SMs (compute units): {exact_or_approx(hw.sms)}")
    lines += [
              f"  memory: {mem}",
              f"  launch overhead: {human(hw.launch, SECOND)}"
              + (" (a lower bound: restate it for your system)" if hw.launch == 0 else ""),
              f"  I* at {hw.main_memory.name}, matrix peaks (FLOP/B): "
              + ", ".join(f"{d} {exact_or_approx(i)}" for d, i in sheet.critical_intensities)]
    return "\n".join(lines) + "\n"


def _shown_path(path: str) -> str:
    """A stdlib file as `stdlib/NAME.cost` (wherever costlang is installed); others as given."""
    try:
        rel = os.path.relpath(path, _resources.stdlib_dir())
    except ValueError:
        return path
    return path if rel.startswith("..") else "stdlib/" + rel.replace(os.sep, "/")
