"""The AST of a `.cost` file: small frozen dataclasses, each with the `Span` it came from.

Input: built by `frontend.parser` from the Lark tree. Output: read by `frontend.resolve`, which
makes the IR from it (`ir.program`, `ir.statements`). Expressions are the IR's own nodes
(`ir.expr`: `Num`, `Quantity`, `Name`, `Call`, `BinOp`, `Neg`, `Const`, and `Option` for
`name = expr`), named here too, and so are the statements a program answers over its analysis
(`ir.statements`: `Let`, `Query`, `Solve`, `Scenario`, `Compare`, one record for both); nothing
here is ever evaluated as Python text.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Union

from costlang.errors import Span
# expressions are IR nodes, shared with the IR (lets, queries, solves, scenario settings)
from costlang.ir.expr import BinOp, Call, Const, Expr, Name, Neg, Num, Option, Quantity  # noqa: F401
# the statements a program answers are IR records already (the AST's are the same): one copy
from costlang.ir.statements import Compare, Explore, Let, Query, Scenario, Solve  # noqa: F401


# --- statements ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Import:
    target: str
    is_path: bool
    span: Span
    args: tuple["Option", ...] = ()   # `with { L = 80 }`: values for the file's dims and params
    alias: Optional["Name"] = None    # `as big`: the file's names live under `big.`


@dataclass(frozen=True)
class Binding:
    """A `dim` or `param`: a positive symbol, free or bound to a value."""
    kind: str  # "dim" (a positive integer count) or "param" (a positive real)
    name: str
    value: Optional[Expr]
    span: Span


@dataclass(frozen=True)
class DtypeDef:
    name: str
    size: Expr
    span: Span


@dataclass(frozen=True)
class TensorType:
    dtype: str
    dims: tuple[Expr, ...]
    span: Span
    dtype_span: Span


@dataclass(frozen=True)
class TensorDecl:
    role: str  # "input", "weight", "cache" or "state" (an optimizer's)
    name: str
    type: TensorType
    span: Span
    frozen: bool = False  # `weight W: bf16[d, d] frozen`: a training step computes no dW for it


@dataclass(frozen=True)
class OpCall:
    """`op(args) [as dtype] [-> type] [{ options }]`; infix tensor operators become OpCalls too
    (`a + b` is `add(a, b)`). Arguments may be nested tensor expressions."""
    op: str
    args: tuple[Expr, ...]
    kwargs: tuple[Option, ...]
    as_dtype: Optional[Name]
    result_type: Optional[TensorType]
    body: tuple[Option, ...]
    span: Span
    op_span: Span


@dataclass(frozen=True)
class RepeatCall:
    """`repeat COUNT block(args)`: the block's returns feed its first tensor parameters, COUNT times."""
    count: Expr
    call: OpCall
    span: Span


@dataclass(frozen=True)
class Assign:
    name: str                 # the first target
    call: Union[OpCall, RepeatCall]
    is_output: bool
    span: Span
    name_span: Span
    targets: tuple[Name, ...] = ()   # every target (`q, k = split(x)`); () means just `name`

    @property
    def target_names(self) -> tuple[Name, ...]:
        return self.targets or (Name(self.name, self.name_span),)


@dataclass(frozen=True)
class BlockParam:
    """`x: dt[n, d]` (a tensor), `f: dim`, `s: param` or `dt: dtype`, with an optional default."""
    name: str
    kind: str  # "tensor", "dim", "param" or "dtype"
    type: Optional[TensorType]
    default: Optional[Expr]
    span: Span


@dataclass(frozen=True)
class Return:
    values: tuple[Expr, ...]
    span: Span


@dataclass(frozen=True)
class BlockDef:
    """`block NAME(params) { statements; return ... }`: a subgraph instantiated at each call."""
    name: str
    params: tuple[BlockParam, ...]
    body: tuple["Statement", ...]
    span: Span


@dataclass(frozen=True)
class GradDef:
    """`grad OP(a, b) { da = ...; db = ... }`: the gradient of an op's inputs, as costlang
    statements over its inputs, its result `y` and the result's gradient `dy` (frontend.backward)."""
    op: Name
    params: tuple[str, ...]
    body: tuple["Assign", ...]
    span: Span


@dataclass(frozen=True)
class Train:
    """`train { options }`: the program is one training step (frontend.backward)."""
    options: tuple[Option, ...]
    span: Span


@dataclass(frozen=True)
class OutputMark:
    names: tuple[Name, ...]
    span: Span


@dataclass(frozen=True)
class OpDef:
    name: str
    params: tuple[str, ...]
    kind: Name
    options: tuple[Option, ...]
    span: Span


@dataclass(frozen=True)
class PeakDef:
    dtype: Name
    value: Expr
    span: Span
    unit: Optional[Name] = None   # `matrix` or `vector`; None: a plain peak (the matrix peak)


@dataclass(frozen=True)
class MemoryDef:
    name: str
    options: tuple[Option, ...]
    span: Span
    per: Optional[Name] = None    # `per SM`: bandwidth and capacity are per SM


@dataclass(frozen=True)
class EfficiencyDef:
    """`efficiency KEY = FRACTION ["source"]`: an achievable fraction of a peak."""
    key: Name
    value: Expr
    source: Optional[str]
    span: Span


@dataclass(frozen=True)
class HardwareDef:
    name: str
    base: Optional[Name]
    peaks: tuple[PeakDef, ...]
    memories: tuple[MemoryDef, ...]
    options: tuple[Option, ...]
    span: Span
    efficiencies: tuple[EfficiencyDef, ...] = ()


@dataclass(frozen=True)
class Use:
    hardware: Name
    span: Span
    kind: str = "hardware"  # "hardware", or "system" for `use system NAME`


@dataclass(frozen=True)
class AxisDef:
    """`axis NAME = SIZE` inside a system: a mesh axis, a group of chips."""
    name: str
    size: Expr
    span: Span


@dataclass(frozen=True)
class LinkDef:
    """`link KIND over AXIS, ... { one_way | bidirectional = ...; latency = ...; links = ... }`."""
    kind: Name
    axes: tuple[Name, ...]
    options: tuple[Option, ...]
    span: Span


@dataclass(frozen=True)
class SystemDef:
    """`system NAME [: BASE] { chip = HW; axis ...; link ... }`: chips of one hardware on a mesh."""
    name: str
    base: Optional[Name]
    axes: tuple[AxisDef, ...]
    links: tuple[LinkDef, ...]
    options: tuple[Option, ...]
    span: Span


@dataclass(frozen=True)
class Shard:
    """`shard T, ...: [axis | _, ...]`: split each tensor's dims over mesh axes (`_`: replicated)."""
    tensors: tuple[Name, ...]
    spec: tuple[Name, ...]
    span: Span


@dataclass(frozen=True)
class Parallel:
    """`parallel KIND over AXIS [{ options }]`: one parallelism (tensor, data, pipeline, expert)."""
    kind: Name
    axis: Name
    options: tuple[Option, ...]
    span: Span


@dataclass(frozen=True)
class PoolDef:
    """`pool NAME { hardware = HW; count = N; link = ...; latency = ... }`: chips that serve."""
    name: str
    options: tuple[Option, ...]
    span: Span


@dataclass(frozen=True)
class Measure:
    target: Name
    options: tuple[Option, ...]
    span: Span


@dataclass(frozen=True)
class FusionMode:
    mode: Name
    span: Span


Statement = Union[Import, Binding, DtypeDef, TensorDecl, Assign, OutputMark, OpDef, HardwareDef,
                  Use, Let, Query, Measure, FusionMode, Solve, Scenario, Compare, BlockDef, Return,
                  SystemDef, Shard, Parallel, GradDef, Train, Explore, PoolDef]


@dataclass(frozen=True)
class Module:
    """One parsed file: its statements in source order."""
    source_name: str
    statements: tuple[Statement, ...]


#: infix tensor operators → the ops they apply (so `op add(a, b): ...` in a file changes `+` too)
INFIX_OPS = {"+": "add", "-": "sub", "*": "mul", "/": "div", "^": "pow", "@": "matmul"}


def as_op_call(expr: Expr, as_dtype: Optional[Name] = None, result_type: Optional[TensorType] = None,
               body: tuple = ()) -> Optional[OpCall]:
    """The op application an expression over tensors stands for, or None (a name, a number).

    `f(a, b)` is `f` applied to a and b; `a + b` is `add(a, b)`, `a @ b` is `matmul(a, b)`, `-a` is
    `neg(a)`. The operands stay expressions: nested ones become nodes of their own when resolved.
    """
    if isinstance(expr, Call):
        return OpCall(expr.func, expr.args, expr.kwargs, as_dtype, result_type, body, expr.span,
                      expr.func_span)
    if isinstance(expr, BinOp):
        return OpCall(INFIX_OPS[expr.op], (expr.left, expr.right), (), as_dtype, result_type, body,
                      expr.span, expr.span)
    if isinstance(expr, Neg):
        return OpCall("neg", (expr.operand,), (), as_dtype, result_type, body, expr.span, expr.span)
    return None
