"""Systems: many chips of one hardware on a mesh of named axes, each axis joined by a link.

Input: built by `frontend.system` from `system` definitions. Output: read by `passes.shard`
(axis sizes), `analysis.comms` (T_comms of collectives) and the printers. A link's bandwidth is
kept per direction (`one_way`); `stated` records how its source gave it (one-way, or
bidirectional = both directions summed, halved here). Collective cost formulas are written in
the stdlib in the two placeholders `GROUP` (p, chips in the group) and `MESSAGE` (n, bytes of the
collective's input per chip).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import sympy

from costlang.errors import Span

__all__ = ["LINK_KINDS", "GROUP", "MESSAGE", "Link", "MeshAxis", "System", "Comms", "ShardSpec",
           "ParallelSpec", "Pool", "comms_of"]

LINK_KINDS = ("NVLink", "PCIe", "ICI", "InfiniBand", "Ethernet")

#: the placeholders of collective formulas (`sent = 2 * (p - 1) / p * n` in stdlib/collectives.cost)
GROUP = sympy.Symbol("p", positive=True, integer=True)
MESSAGE = sympy.Symbol("n", positive=True)


@dataclass(frozen=True)
class Link:
    kind: str                 # one of LINK_KINDS
    one_way: sympy.Expr       # B/s per link, per direction
    stated: str               # "one_way" or "bidirectional": how the figure was given
    latency: sympy.Expr       # α, s per step
    links: sympy.Expr         # links per chip along the axis a collective uses at once
    #: a fat tree: `leaf` chips of the axis under one leaf switch, whose uplinks carry
    #: 1/oversubscription of what its chips can send (1: non-blocking; None: one switch for all)
    oversubscription: sympy.Expr = sympy.Integer(1)
    leaf: Optional[sympy.Expr] = None

    @property
    def bandwidth(self) -> sympy.Expr:
        """The per-chip, per-direction bandwidth a collective over the axis gets: links · one_way."""
        return self.links * self.one_way

    def tree_factor(self, collective: str, group: sympy.Expr) -> sympy.Expr:
        """How much slower an oversubscribed fat tree makes a collective over `group` chips of the
        axis (1: not at all). The chips under one leaf switch (k = `leaf`) share uplinks worth k/r
        chips' bandwidth (r = `oversubscription`). An all-to-all sends (p − k)/(p − 1) of each
        chip's bytes across the spine: × max(1, r·(p − k)/(p − 1)). A ring laid out leaf by leaf
        crosses each leaf's uplinks once per direction: × max(1, r/k). No chip beyond one leaf: 1."""
        if self.leaf is None or self.oversubscription == 1:
            return sympy.Integer(1)
        r, k, p = self.oversubscription, self.leaf, group
        crossing = r * (p - k) / (p - 1)
        return sympy.Max(1, crossing) if collective == "all_to_all" else sympy.Max(1, sympy.Min(r / k, crossing))


@dataclass(frozen=True)
class MeshAxis:
    name: str
    size: sympy.Expr
    link: Link


@dataclass(frozen=True)
class System:
    name: str
    chip: str                          # a hardware name
    axes: tuple[MeshAxis, ...]
    span: Optional[Span] = None

    @property
    def chips(self) -> sympy.Expr:
        return sympy.Mul(*[a.size for a in self.axes])

    def axis(self, name: str) -> Optional[MeshAxis]:
        return next((a for a in self.axes if a.name == name), None)


@dataclass(frozen=True)
class Comms:
    """What a collective node sends: over which axis, with which formula, in bytes per chip."""
    axis: str
    collective: str           # the op's name (all_reduce, all_reduce_tree, ...)
    group: sympy.Expr         # p, the axis size
    message: sympy.Expr       # n, bytes of the input per chip
    sent: sympy.Expr          # bytes each chip sends (the op's formula with p and n put in)
    steps: sympy.Expr         # latency terms (α each)
    sent_formula: sympy.Expr  # the formula in p and n, for derivations
    steps_formula: sympy.Expr


def comms_of(spec, axis: str, group: sympy.Expr, message: sympy.Expr) -> Comms:
    """The `Comms` of collective op `spec` (an `OpSpec`) over an axis of `group` chips, `message` bytes each."""
    f = dict(spec.comms)
    put = {GROUP: group, MESSAGE: message}
    if group == 1:   # one chip in the group: nothing crosses a link, whatever the formula says (a send)
        return Comms(axis, spec.name, group, message, sympy.Integer(0), sympy.Integer(0), f["sent"], f["steps"])
    return Comms(axis, spec.name, group, message, f["sent"].xreplace(put), f["steps"].xreplace(put),
                 f["sent"], f["steps"])


@dataclass(frozen=True)
class Pool:
    """`pool NAME { hardware = HW; count = N; network = ...; latency = ... }`: `count` replicas of one
    hardware that serve the block instances placed on it (`{ pool = NAME }` on a call). `link` is
    each replica's network bandwidth (B/s, one direction) and `latency` its α, for the transfers
    between pools (the KV cache of a prefilled request); None where the file states no link."""
    name: str
    hardware: str
    count: sympy.Expr
    link: Optional[sympy.Expr]
    latency: sympy.Expr
    span: Span


@dataclass(frozen=True)
class ShardSpec:
    """`shard T: [tp, _]`: the mesh axis (or None) of each dim of tensor T."""
    tensor: str
    axes: tuple[Optional[str], ...]
    span: Span


@dataclass(frozen=True)
class ParallelSpec:
    """`parallel KIND over AXIS { options }`."""
    kind: str
    axis: str
    options: tuple[tuple[str, object], ...]
    span: Span
