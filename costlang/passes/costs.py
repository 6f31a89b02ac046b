"""Kernel costs: the FLOPs a kernel does and the algorithmic bytes it moves, with provenance.

Input: a `Program`, one `Kernel`, the program's outputs and who reads each storage.
Output: `KernelCost`. A kernel reads each storage it uses but does not produce, once, and writes
each storage it produces that is a program output or is read by another kernel, once
(DOMAIN.md: each kernel reads each input once and writes each output once, at its dtype's size).
So inside a fused kernel an intermediate whose consumers are all in the kernel never touches
memory, one with a consumer elsewhere is written once, and a tensor two of its ops read (a
diamond) is read once. A broadcast operand is read at its own size, once. Storages are followed
through views, so a view's consumer reads the viewed tensor.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Optional

import sympy

from costlang.ir.graph import consumers_of_storage, program_outputs
from costlang.ir.program import Program

__all__ = ["Traffic", "KernelCost", "Costing", "kernel_cost", "partition_costs", "role_of", "grouped_sum"]


@dataclass(frozen=True)
class Traffic:
    """Bytes of one tensor crossing the memory level, and why (its role). With a model of reuse
    or access (`analysis.reuse`), `bytes` is the modelled traffic, `algorithmic` the bytes of
    reading or writing it once, and `times` how many times it crosses ("times" may be symbolic)."""
    tensor: str
    role: str   # input, weight, intermediate, output, stats, or stated (custom kernels)
    bytes: sympy.Expr
    algorithmic: Optional[sympy.Expr] = None   # None: the same as `bytes`
    times: Optional[sympy.Expr] = None         # re-reads (tiling) or sector waste (stride)
    why: Optional[str] = None                  # "tiled", "flash", "strided", "cached"

    @property
    def ideal(self) -> sympy.Expr:
        return self.bytes if self.algorithmic is None else self.algorithmic


@dataclass(frozen=True)
class TileModel:
    """A kernel's tiling, as data for the derivation: `kind` is "matmul" or "flash"; `figures`
    are its named sizes in order (bm, bn, bk, tm, tn, tk / M, d, Bc, Br, Tc); the tiles live in
    `stage` (a level name, None when the hardware states no on-chip capacity), whose capacity per
    SM the `working_set` (bytes) is checked against."""
    kind: str
    figures: tuple[tuple[str, sympy.Expr], ...]
    stage: Optional[str]
    capacity: Optional[sympy.Expr]
    working_set: sympy.Expr
    #: re-read operands a per-chip level between HBM and the stage holds whole: (tensor, level)
    held: tuple[tuple[str, str], ...] = ()
    #: a tiled matmul's intensity as K → ∞, per element read and per byte:
    #: 2·bm·bn/(bm + bn) FLOP per element (= T for square tiles), 2·bm·bn/(bA·bm + bB·bn) FLOP/B
    limit_per_element: Optional[sympy.Expr] = None
    limit: Optional[sympy.Expr] = None
    #: FlashAttention's leading term for large N, without the ceilings: 3·|Q|·Tc with
    #: Tc ≈ 4·d·N/M, i.e. 12·b·N²·d²/M per head: Θ(N²·d²/M)
    theta: Optional[sympy.Expr] = None


@dataclass(frozen=True)
class KernelCost:
    flops: sympy.Expr
    reads: tuple[Traffic, ...]
    writes: tuple[Traffic, ...]
    math_dtype: str
    #: bytes at each memory level, farthest first (empty: every level sees `bytes`)
    level_bytes: tuple[tuple[str, sympy.Expr], ...] = ()
    tiling: Optional[TileModel] = None

    @cached_property  # a frozen value: its sums are computed once
    def algorithmic_bytes(self) -> sympy.Expr:
        """Each tensor read once and written once (DOMAIN.md), whatever the tiling or access."""
        return sympy.Add(*[t.ideal for t in self.reads + self.writes])

    @cached_property  # a frozen value: its sums are computed once
    def bytes_read(self) -> sympy.Expr:
        return sympy.Add(*[t.bytes for t in self.reads])

    @cached_property  # a frozen value: its sums are computed once
    def bytes_written(self) -> sympy.Expr:
        return sympy.Add(*[t.bytes for t in self.writes])

    @cached_property  # a frozen value: its sums are computed once
    def bytes(self) -> sympy.Expr:
        return self.bytes_read + self.bytes_written


def role_of(program: Program, storage: str, outputs: set[str]) -> str:
    if storage in outputs and program.tensors[storage].role != "gradient":  # a weight's gradient stays one
        return "output"
    return program.tensors[storage].role


def kernel_cost(program: Program, ops: tuple[str, ...], outputs: set[str],
                consumers: dict[str, set[str]]) -> KernelCost:
    nodes = [program.nodes[n] for n in ops]
    tensors = program.tensors
    produced = [n.output for n in nodes if n.output]
    reads: list[Traffic] = []
    seen: set[str] = set()
    for node in nodes:
        partial = dict(node.partial_reads) if node.partial_reads else {}
        for t in node.inputs:
            tensor = tensors[t]
            s = tensor.storage
            if s in produced:
                continue
            if t in partial:  # a gather reads only the rows it gathers
                key, name, size = f"{s}@{node.name}", s, partial[t]
            elif tensor.partial:  # a slice or split part: its reader reads only that part
                key, name, size = t, t, tensor.bytes
            else:
                key, name, size = s, s, tensors[s].bytes
            if key not in seen:
                seen.add(key)
                reads.append(Traffic(name, role_of(program, s, outputs), size))
    inside = set(ops)
    writes = [Traffic(s, role_of(program, s, outputs), tensors[s].bytes) for s in produced
              if s in outputs or not consumers.get(s, inside) <= inside]
    stated = nodes[0] if len(nodes) == 1 and nodes[0].kind == "custom" else None
    if stated is not None and stated.reads is not None:
        reads = [Traffic("(stated)", "stated", stated.reads)]
    if stated is not None and stated.writes is not None:
        writes = [Traffic("(stated)", "stated", stated.writes)]
    anchor = next((n for n in nodes if n.kind != "elementwise"), _widest_math(nodes))
    return KernelCost(sympy.Add(*[n.flops for n in nodes]), tuple(reads), tuple(writes),
                      anchor.math_dtype.name)


def _widest_math(nodes):
    """The op of a fused elementwise kernel whose math dtype is widest (first on ties): its peak is
    the kernel's, so a kernel mixing fp16 and fp32 math is not timed at the fp16 peak."""
    best = nodes[0]
    for n in nodes[1:]:
        if (n.math_dtype.size - best.math_dtype.size).is_positive:
            best = n
    return best


class Costing:
    """The kernel costs of one program, each set of ops costed once: the fusion verifier's costs
    and the analysis's are the same (and an op left alone by fusion is the same kernel unfused
    and fused). The program's storage consumers and outputs (`ir.graph`) are found once."""

    def __init__(self, program: Program):
        self.program = program
        self.consumers = consumers_of_storage(program)
        self.outputs = program_outputs(program, self.consumers)
        self._costs: dict = {}

    def of(self, ops: tuple[str, ...]) -> KernelCost:
        found = self._costs.get(ops)
        if found is None:
            found = self._costs[ops] = kernel_cost(self.program, ops, self.outputs, self.consumers)
        return found

    def partition(self, kernels) -> tuple[KernelCost, ...]:
        """The cost of every kernel of a partition (`Kernel`s), in the same order."""
        return tuple(self.of(k.ops) for k in kernels)


def partition_costs(program: Program, kernels) -> tuple[KernelCost, ...]:
    """The cost of every kernel of a partition (a tuple of `Kernel`s), in the same order."""
    return Costing(program).partition(kernels)


def grouped_sum(terms) -> sympy.Expr:
    """`sympy.Add(*terms)`, with equal terms counted first: a model's kernels repeat a few
    expressions, so m copies of a term become the one term m·t before sympy collects the sum
    (the same canonical sum, built from a few dozen terms instead of thousands).

    >>> B = sympy.Symbol("B", positive=True)
    >>> grouped_sum([2 * B, B + 1, 2 * B, B + 1]) == sympy.Add(2 * B, B + 1, 2 * B, B + 1)
    True
    """
    counts: dict = {}
    for t in terms:
        counts[t] = counts.get(t, 0) + 1
    return sympy.Add(*[t if m == 1 else m * t for t, m in counts.items()])
