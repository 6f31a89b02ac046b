"""Text for blocks and repeats: "× L" labels, repeated bodies, fusion across blocks, footprint, instances.

Input: an `Analysis` (and `analysis.composition`'s data). Output: report lines.
"""
from __future__ import annotations

from costlang.analysis.composition import crossings, instance_names, repeats
from costlang.units import BYTE, FLOP, SECOND
from costlang.printers.numbers import human

__all__ = ["kernel_label", "repeat_lines", "crossing_lines", "footprint_lines", "instance_lines"]


def _count(value) -> str:
    return str(value).replace("*", "·")


def kernel_label(k) -> str:
    """A kernel's name, marked "× L" when it runs inside a repeated body."""
    return k.name if k.count == 1 else f"{k.name} × {_count(k.count)}"


def repeat_lines(a) -> list[str]:
    """Each repeated body once: its kernels, figures per iteration, and × its count."""
    reps = repeats(a)
    if not reps:
        return []
    v = a.value
    out = ["", "repeated bodies (analysed once, × the count)"]
    for r in reps:
        bound = v(r.count)
        at = f" (= {bound})" if bound != r.count and bound.is_number else ""
        out.append(f"  {r.name} = repeat({_count(r.count)}){at} {r.block}: {len(r.kernels)} kernel"
                   f"{'s' * (len(r.kernels) != 1)} per iteration ({', '.join(r.kernels)})")
        for label, f in (("per iteration", r.per_iteration), (f"× {_count(r.count)}", r.total)):
            out.append(f"    {label}: FLOPs {human(v(f.flops), FLOP)}; bytes {human(v(f.bytes), BYTE)}; "
                       f"T_kernel {human(v(f.t_kernel), SECOND)}; launches {_count(v(f.launches))}; "
                       f"weights {human(v(f.weight_bytes), BYTE)}"
                       + (f"; caches {human(v(f.cache_bytes), BYTE)}" if f.cache_bytes != 0 else ""))
    return out


def crossing_lines(a) -> list[str]:
    """The kernels fusion built from ops of more than one block instance."""
    found = crossings(a)
    if not found:
        return []
    out = ["", "fusion across blocks"]
    for kernel, scopes in found:
        names = ", ".join(s or "the top level" for s in scopes)
        out.append(f"  {kernel}: fuses ops of {names}")
    return out


def footprint_lines(a) -> list[str]:
    f, v = a.footprint, a.value
    gathered = "" if f.gathered == 0 else (f" + weights gathered in flight {human(v(f.gathered), BYTE)} "
                                            "(ZeRO-3/FSDP: the two largest units)")
    line = (f"  {human(v(f.bytes), BYTE)} = weights and caches {human(v(f.resident), BYTE)}{gathered} + peak live "
            f"activations {human(v(f.live), BYTE)}")
    if f.peak_at is not None:
        line += f" (at kernel {f.peak_at})"
    if f.capacity is not None:
        room = v(f.capacity - f.bytes)
        fits = room.is_nonnegative
        verdict = ("fits" if fits else "does not fit") if fits is not None else (
            f"fits while {human(v(f.bytes), BYTE)} ≤ {human(v(f.capacity), BYTE)}")
        line += f"; vs capacity {human(v(f.capacity), BYTE)}: {verdict}"
        if fits is not None:
            line += f" ({'headroom' if fits else 'short by'} {human(abs(room), BYTE)})"
    return ["", "footprint", line]


def instance_lines(a) -> list[str]:
    """Every instance of every repeat, with the weights each one owns (only for bound counts)."""
    p = a.program
    if not p.repeats:
        return ["", "instances: the program repeats nothing"]
    out = ["", "instances"]
    for name, rep in p.repeats.items():
        listed = instance_names(a, name)
        if listed is None:
            out.append(f"  {name}: the count {rep.count} is free; bind it (e.g. --set {rep.count}=4) "
                       "to list the instances")
            continue
        weights = [t.name[len(name):] for t in p.tensors.values()
                   if t.role in ("weight", "cache") and t.name.startswith(name + ".")]
        names, count = listed
        for inst in names:
            out.append(f"  {inst}: " + (", ".join(inst + w for w in weights) or "no weights"))
        if count > len(names):
            out.append(f"  ... and {count - len(names)} more instances of {name} like these "
                       f"(repeat({rep.count}) at {rep.span}: the first {len(names)} are listed)")
    return out
