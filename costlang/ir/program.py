"""The resolved program: what a `.cost` file means once names, shapes, dtypes and units are known.

Input: built by `frontend.resolve` from the AST. Output: read by `ir.graph` (the operator DAG),
`analysis` (costs and roofline) and the printers. All numbers are sympy expressions in the
program's symbols; `Program.bindings` maps bound symbols to their values. The statements that are
answered over the analysis (lets, queries, solves, scenarios, compares) and the blocks' signatures
are IR records (`ir.statements`), their expressions unevaluated `ir.expr` trees: nothing reachable
from a Program is a front-end object (tests/ir/test_ir_pure.py).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping, Optional

import sympy

from costlang.errors import Source, Span
from costlang.units import Unit
from costlang.ir.statements import Block, Compare, Let, Query, Scenario, Solve
from costlang.ir.system import Comms, ParallelSpec, ShardSpec, System
from costlang.ir.names import FUSION_MODES, RESIDENT_ROLES, ROLES

__all__ = ["Overrides", "Origin", "Value", "SymbolDef", "Dtype", "OpSpec", "Tensor", "OpNode", "Memory", "Efficiency", "Hardware",
           "Measurement", "Program", "Training", "Instance", "Repeat", "FUSION_MODES", "ROLES", "RESIDENT_ROLES"]


@dataclass(frozen=True)
class Value:
    """A quantity: an exact sympy expression and its unit."""
    expr: sympy.Expr
    unit: Unit


@dataclass(frozen=True)
class SymbolDef:
    name: str
    symbol: sympy.Symbol
    kind: str  # "dim" or "param"
    value: Optional[sympy.Expr]
    span: Span


@dataclass(frozen=True)
class Dtype:
    name: str
    size: sympy.Expr  # bytes per element
    span: Optional[Span] = None


@dataclass(frozen=True)
class OpSpec:
    """An operator of the op library: its kind (how shapes and FLOPs follow) and FLOPs per element."""
    name: str
    params: tuple[str, ...]
    kind: str
    flops: sympy.Expr
    span: Optional[Span] = None
    #: a collective's formulas (`sent`, `steps`, `scale`) in `ir.system.GROUP` and `MESSAGE`
    comms: tuple[tuple[str, sympy.Expr], ...] = ()


@dataclass(frozen=True)
class Tensor:
    name: str
    dtype: Dtype
    shape: tuple[sympy.Expr, ...]
    role: str
    span: Span
    storage: str  # the tensor whose memory this one is (itself unless it is a view)
    repeat: tuple[str, ...] = ()  # the repeats (innermost last) whose body declares it
    partial: bool = False  # a view of part of its storage (slice, split): readers read only this part
    frozen: bool = False  # a weight a training step does not update (`frozen`): no gradient

    # computed once per tensor: costs, the verifier and the footprint ask for them again and again
    @functools.cached_property
    def numel(self) -> sympy.Expr:
        return sympy.Mul(*self.shape) if self.shape else sympy.Integer(1)

    @functools.cached_property
    def bytes(self) -> sympy.Expr:
        return self.numel * self.dtype.size


@dataclass(frozen=True)
class OpNode:
    """One operator application `name = op(inputs)`: a node of the operator graph."""
    name: str
    op: OpSpec
    inputs: tuple[str, ...]
    output: Optional[str]
    flops: sympy.Expr
    math_dtype: Dtype
    span: Span
    reads: Optional[sympy.Expr] = None   # stated bytes, for custom kernels
    writes: Optional[sympy.Expr] = None
    #: `{ ... }` options of the call: tiling (bm, bn, bk), access pattern (stride), efficiency_KEY
    options: tuple[tuple[str, sympy.Expr], ...] = ()
    scope: str = ""                      # the block instance it belongs to ("" at the top level)
    repeat: tuple[str, ...] = ()         # the repeats (innermost last) whose body it is in
    #: inputs read only in part (a gather reads only the gathered rows): tensor → bytes read
    partial_reads: tuple[tuple[str, sympy.Expr], ...] = ()
    comms: Optional["Comms"] = None      # what a collective sends (ir.system)
    #: a training step's recomputation of a forward node (`train { recompute = ... }`): its FLOPs
    #: are hardware FLOPs, not model FLOPs (MFU counts the model's, HFU both)
    recompute: bool = False
    #: an elementwise op's number operands (`x * 0.5`, `c - x`): (argument position, value); the
    #: tensor inputs fill the other positions in order
    constants: tuple[tuple[int, sympy.Expr], ...] = ()

    def option(self, key: str):
        return dict(self.options).get(key)

    def operands(self) -> tuple:
        """Each argument in the order written: a tensor's name, or a number operand's value."""
        if not self.constants:
            return self.inputs
        fixed, tensors = dict(self.constants), iter(self.inputs)
        return tuple(fixed[i] if i in fixed else next(tensors)
                     for i in range(len(self.inputs) + len(fixed)))

    @property
    def kind(self) -> str:
        return self.op.kind


@dataclass(frozen=True)
class Memory:
    """One level of the memory hierarchy. `per_sm`: bandwidth and capacity are per SM (core)."""
    name: str
    bandwidth: Optional[sympy.Expr]
    capacity: Optional[sympy.Expr]
    per_sm: bool = False


@dataclass(frozen=True)
class Efficiency:
    """A named achievable fraction of a peak (`compute`, `matrix`, `vector` or a level's name)."""
    key: str
    value: sympy.Expr
    source: Optional[str] = None
    where: str = "hardware"   # hardware, kernel or scenario: where it was stated


@dataclass(frozen=True)
class Hardware:
    """A chip: peaks per dtype (`peaks` are the matrix/tensor-core peaks, `vector_peaks` the vector
    units'), memory levels farthest first, launch overhead, SM count, access granularity and
    efficiency factors (1 unless stated)."""
    name: str
    peaks: tuple[tuple[str, sympy.Expr], ...]
    memories: tuple[Memory, ...]
    launch: sympy.Expr
    span: Optional[Span] = None
    vector_peaks: tuple[tuple[str, sympy.Expr], ...] = ()
    sms: Optional[sympy.Expr] = None
    sector: sympy.Expr = sympy.Integer(32)
    efficiencies: tuple[Efficiency, ...] = ()
    base: Optional[str] = None   # the hardware this one extends (`hardware NAME : BASE`)
    tdp: Optional[sympy.Expr] = None  # thermal design power, watts (`tdp = 700`), for energy figures
    #: energies per FLOP and per byte of main-memory traffic, picojoules (`energy()` uses them where
    #: both are stated, else tdp × T_kernel)
    pj_per_flop: Optional[sympy.Expr] = None
    pj_per_byte: Optional[sympy.Expr] = None

    def peak(self, dtype: str, unit: str = "matrix") -> Optional[sympy.Expr]:
        """The raw peak of `dtype` on the matrix or vector units (no efficiency factor). A vector
        peak not stated falls back to the plain (matrix) peak."""
        if unit == "vector" and dtype in dict(self.vector_peaks):
            return dict(self.vector_peaks)[dtype]
        return dict(self.peaks).get(dtype)

    def level(self, name: str) -> Optional[Memory]:
        return next((m for m in self.memories if m.name == name), None)

    def chip_bandwidth(self, m: Memory) -> sympy.Expr:
        """A level's bandwidth for the whole chip: per-SM figures times the SM count."""
        return m.bandwidth * self.sms if m.per_sm else m.bandwidth

    def efficiency(self, key: str) -> Optional[Efficiency]:
        return next((e for e in self.efficiencies if e.key == key), None)

    @property
    def main_memory(self) -> Memory:
        """The level costs are counted at: the one named HBM, else the first declared."""
        for m in self.memories:
            if m.name.upper() == "HBM":
                return m
        return self.memories[0]

    @property
    def bandwidth(self) -> sympy.Expr:
        return self.main_memory.bandwidth

    @property
    def capacity(self) -> Optional[sympy.Expr]:
        return self.main_memory.capacity


@dataclass(frozen=True)
class Measurement:
    node: str
    time: sympy.Expr
    traffic: Optional[sympy.Expr]
    span: Span


@dataclass(frozen=True)
class Instance:
    """One call of a block: its name (the prefix of everything it defines) and the block called."""
    name: str
    block: str
    span: Span
    repeat: tuple[str, ...] = ()  # the repeats it is inside (its own name last for a repeat's body)


@dataclass(frozen=True)
class Repeat:
    """`name = repeat(count) block(...)`: the body is instantiated once and runs `count` times."""
    name: str
    count: sympy.Expr
    span: Span
    outer: tuple[str, ...] = ()  # enclosing repeats
    #: (the outer tensor an iteration reads, the body's output that feeds the next iteration)
    carried: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Training:
    """`train { ... }`: the program is one training step: the forward as written, the backward
    derived from it (frontend.backward), and the optimizer's update. `options` are the statement's
    other settings (name → value: a sympy expression, or a name for words such as `adamw`)."""
    span: Span
    optimizer: Optional[str] = None
    recompute: str = "none"              # none, selective or full
    gradients: Optional[Dtype] = None    # the weights' gradients' dtype (default: each weight's own)
    options: tuple[tuple[str, object], ...] = ()
    #: weight → the tensor holding its gradient (filled when the backward is derived)
    weight_grads: tuple[tuple[str, str], ...] = ()
    #: the forward's nodes (the program's nodes before the backward's), in order
    forward_nodes: tuple[str, ...] = ()
    #: the flat gradient buffer every weight's gradient is a part of (frontend.optimizer)
    buffer: Optional[str] = None
    #: the optimizer's update kernel (its node), None without an optimizer
    update: Optional[str] = None

    def option(self, key: str, default=None):
        return dict(self.options).get(key, default)


@dataclass(frozen=True)
class Overrides:
    """What-if changes made while resolving, exactly as if the file said so (`frontend.variants`):
    dims and params take other values (None: free), tensors are stored in other dtypes. Every
    check runs again, so an error they cause points at the file's own span."""
    symbols: Mapping[str, Optional[sympy.Expr]] = field(default_factory=dict)
    dtypes: Mapping[str, str] = field(default_factory=dict)  # a storage tensor → its new dtype
    text: str = ""  # the settings as written, quoted by the errors they cause
    math: Optional[str] = None  # `math = DTYPE`: applied after resolving (frontend.variants)
    #: `--train [SETTINGS]`: the options of a `train` statement the file does not state, and their span
    train: Optional[tuple] = None
    train_span: Optional[Span] = None


@dataclass(frozen=True)
class Origin:
    """What a program was resolved from (the main file's text, its path, whether the prelude was
    loaded), so that a what-if can parse and resolve it again with `overrides`."""
    source: Optional[Source]
    path: Optional[Path]
    prelude: bool
    overrides: Overrides = Overrides()
    #: what turns the resolved program into the analysed one (the sharding pass), run again too
    after: Optional[Callable] = None


@dataclass
class Program:
    """Everything a file (with its imports and the prelude) defines, in definition order."""
    source_name: str
    symbols: dict[str, SymbolDef] = field(default_factory=dict)
    dtypes: dict[str, Dtype] = field(default_factory=dict)
    ops: dict[str, OpSpec] = field(default_factory=dict)
    tensors: dict[str, Tensor] = field(default_factory=dict)
    nodes: dict[str, OpNode] = field(default_factory=dict)
    outputs: set[str] = field(default_factory=set)
    hardware: dict[str, Hardware] = field(default_factory=dict)
    selected_hardware: Optional[str] = None
    hardware_span: Optional[Span] = None
    lets: dict[str, Let] = field(default_factory=dict)
    queries: list[Query] = field(default_factory=list)
    measurements: dict[str, Measurement] = field(default_factory=dict)
    fusion: Optional[str] = None
    main_span: Optional[Span] = None
    #: bound symbols → their values, each in terms of free symbols only (kept by `add_symbol`)
    bindings: dict[sympy.Symbol, sympy.Expr] = field(default_factory=dict)
    #: what-if statements (answered by analysis.solve and analysis.whatif)
    solves: list[Solve] = field(default_factory=list)
    scenarios: dict[str, Scenario] = field(default_factory=dict)
    #: `use scenario NAME` in the main file: the program is analysed under that scenario's settings
    used_scenario: Optional[tuple] = None   # (name, span)
    compares: list[Compare] = field(default_factory=list)
    explores: list = field(default_factory=list)   # `explore` statements (ir.statements.Explore), run by the command
    #: what-if settings applied to the file as written (`--set`, a scenario), as their text
    settings: tuple[str, ...] = ()
    #: blocks (their signatures), block calls and repeats (frontend.blocks)
    blocks: dict[str, Block] = field(default_factory=dict)
    instances: dict[str, Instance] = field(default_factory=dict)
    repeats: dict[str, Repeat] = field(default_factory=dict)

    def count(self, repeat: tuple[str, ...]) -> sympy.Expr:
        """How many times a body inside these repeats runs: the product of their counts."""
        return sympy.Mul(*[self.repeats[r].count for r in repeat]) if repeat else sympy.Integer(1)

    #: many chips (ir.system): systems, the selected one, and the sharding statements
    systems: dict[str, System] = field(default_factory=dict)
    selected_system: Optional[str] = None
    shardings: list[ShardSpec] = field(default_factory=list)
    parallels: list[ParallelSpec] = field(default_factory=list)
    #: set by passes.shard: the program is per chip (local shapes, collectives inserted)
    sharded: bool = False
    #: set by passes.shard under a pipeline: the weights outside the staged layers that the stage
    #: holding the most does not hold (the smaller end's: the head where the embedding is larger);
    #: per-chip memory (footprint, a training step's states) leaves them out
    other_stage_weights: frozenset = frozenset()
    #: set by passes.shard: the whole-model program it was sharded from (`parameters_system()`)
    whole: Optional["Program"] = field(default=None, repr=False, compare=False)
    #: set by passes.shard: the splits whose divisibility depends on a free symbol, (tensor, spec,
    #: axis sizes, span); a value of the symbol is checked against them without sharding again
    splits: tuple = field(default=(), repr=False, compare=False)
    #: sizes the shape checks found equal only through the symbols' values (`K` and `J` of a
    #: matmul, both 5): (a, b, span); a what-if that frees K ties J to it (`frontend.variants`)
    equalities: list = field(default_factory=list)
    #: what the program was resolved from: what-ifs resolve it again (`frontend.variants`)
    origin: Optional[Origin] = None
    #: sizes in free symbols that are positive whole numbers only for some of their values
    #: (`fp16[N - M]`, `fp16[N / 3]`): (size, span); assumed, stated by the printers, and checked
    #: at every point of a sweep
    sizes: list = field(default_factory=list)
    #: symbols a what-if tied to freed ones (`frontend.variants.unbind`): (name, value)
    ties: tuple = ()
    #: `train { ... }`: a training step (the backward's nodes follow the forward's)
    training: Optional[Training] = None
    #: a training step's loss-gradient seeds: seed tensor → the forward output it is the gradient of
    gradient_seeds: dict[str, str] = field(default_factory=dict)
    #: `{ recompute = POLICY }` on a block call: instance → (policy, span); the train statement's is the default
    recompute_calls: dict[str, tuple] = field(default_factory=dict)
    #: serving pools (`pool NAME { ... }`) and the block instances placed on them (`{ pool = NAME }`):
    #: instance → (pool name, span)
    pools: dict = field(default_factory=dict)
    placements: dict[str, tuple] = field(default_factory=dict)

    @property
    def system(self) -> Optional[System]:
        return self.systems.get(self.selected_system) if self.selected_system else None

    def add_symbol(self, s: SymbolDef) -> None:
        self.symbols[s.name] = s
        if s.value is not None:
            self.bindings[s.symbol] = s.value.xreplace(self.bindings)

    @property
    def free_symbols(self) -> list[sympy.Symbol]:
        return [s.symbol for s in self.symbols.values() if s.value is None]

    def producer(self, tensor: str) -> Optional[OpNode]:
        for n in self.nodes.values():
            if n.output == tensor:
                return n
        return None


def in_stdlib(span: Optional[Span]) -> bool:
    """Whether a span lies in one of the stdlib's files (a block the user called, not wrote)."""
    from costlang import _resources
    try:
        return span is not None and _resources.in_stdlib(span.file)   # remembered per file name
    except (OSError, ValueError):
        return False


def users_span(program: "Program", scope: str, span: Optional[Span]) -> Optional[Span]:
    """The user's line for something the stdlib declares inside block instance `scope`: `span` when it
    is the user's own, else the call of the innermost enclosing instance that the user wrote (the
    call of a zoo model, for a tensor of its attention)."""
    while in_stdlib(span) and scope:
        instance = program.instances.get(scope)
        if instance is not None:
            span = instance.span
        scope = scope.rpartition(".")[0]
    return span
