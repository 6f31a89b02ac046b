"""Property tests of the fusion pass over random operator DAGs (hypothesis).

Programs are built directly as IR (the resolver's call rules from `ir.kinds` give shapes and
FLOPs), which keeps a few hundred examples within seconds. Shapes come from a family that always
broadcasts ([M, N], [N], [1, N], [M, 1], []), with M and N bound or free; dtypes, fan-out,
outputs, casts, reductions, identity reshapes (views) and custom kernels are drawn at random.

Properties, for the elementwise and epilogue modes: every non-view op is in exactly one kernel;
FLOPs are preserved; bytes never increase; bytes equal an independent per-tensor count; the
kernel graph is acyclic and kernels come in dependency order; fusing the fused partition again
changes nothing (the pass is a fixed point: no further merge is allowed). For pure elementwise
DAGs over one iteration space, each weakly connected component becomes exactly one kernel.
"""
import networkx as nx
import sympy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from costlang import load_string
from costlang.passes.costs import partition_costs
from costlang.errors import Source, Span
from costlang.frontend.calls import CUSTOM
from costlang.ir.graph import operator_graph, program_outputs
from costlang.ir.kinds import RULES, CallContext
from costlang.ir.program import OpNode, Program, Tensor
from costlang.passes.fusion import fuse
from costlang.passes.kernels import kernel_graph, one_kernel_per_op

SETTINGS = settings(max_examples=150, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])
SPAN = Span(Source("<random>", ""), 1, 1, 1, 1)
BASES = {bound: load_string("dim M = 3, N = 5" if bound else "dim M, N").program for bound in (True, False)}
SHAPES = (("M", "N"), ("N",), (1, "N"), ("M", 1), ())
DTYPES = ("fp16", "bf16", "fp32")
UNARY, BINARY = ("exp", "relu", "neg", "gelu"), ("add", "mul", "maximum")


def _new_program(bound: bool) -> Program:
    base = BASES[bound]
    p = Program("<random>", dtypes=base.dtypes, ops=base.ops, hardware=base.hardware)
    for s in base.symbols.values():
        p.add_symbol(s)
    return p


def _shape(p: Program, dims) -> tuple:
    return tuple(p.symbols[d].symbol if isinstance(d, str) else sympy.Integer(d) for d in dims)


def _apply(p: Program, name, op, args, cast=None, axis=None, result_shape=None):
    """Add `name = op(args)` to p the way the resolver does (see frontend/calls.py)."""
    spec = p.ops[op]
    inputs = tuple(p.tensors[a] for a in args)
    # fp16 with bf16 (one size, neither wider) needs `{ math = ... }` in a file: the first one's here
    tie = len({t.dtype.name for t in inputs}) > 1 and len({t.dtype.size for t in inputs}) == 1
    math = inputs[0].dtype if tie else None
    r = RULES[spec.kind](CallContext(spec, inputs, axis, result_shape, p.bindings, SPAN, math))
    storage = inputs[0].storage if r.is_view else name
    dtype = p.dtypes[cast] if cast else r.dtype
    p.tensors[name] = Tensor(name, dtype, r.shape, "intermediate", SPAN, storage)
    p.nodes[name] = OpNode(name, spec, args, name, r.flops, r.dtype, SPAN)


def _custom(p: Program, name, arg):
    x = p.tensors[arg]
    p.tensors[name] = Tensor(name, x.dtype, x.shape, "intermediate", SPAN, name)
    p.nodes[name] = OpNode(name, CUSTOM, (arg,), name, 3 * x.numel, x.dtype, SPAN)


@st.composite
def programs(draw, barriers=True):
    """A random program. Without barriers: only elementwise ops, all over [M, N]."""
    p = _new_program(draw(st.booleans()))
    wide = []   # tensors of shape [M, N]: without barriers every op takes one as first operand
    for i in range(draw(st.integers(1, 3))):
        dims = SHAPES[0] if i == 0 else draw(st.sampled_from(SHAPES))
        p.tensors[f"x{i}"] = Tensor(f"x{i}", p.dtypes[draw(st.sampled_from(DTYPES))], _shape(p, dims),
                                    draw(st.sampled_from(("input", "weight"))), SPAN, f"x{i}")
        wide += [f"x{i}"] if dims == SHAPES[0] else []
    for j in range(draw(st.integers(2, 10))):
        _draw_op(draw, p, f"t{j}", wide, barriers)
    computed = [n for n in p.nodes if p.nodes[n].kind != "view"]
    if computed:
        p.outputs.update(draw(st.lists(st.sampled_from(computed), max_size=3, unique=True)))
    return p


def _draw_op(draw, p: Program, name, wide, barriers):
    names = list(p.tensors)
    first = draw(st.sampled_from(names if barriers else wide))
    choice = draw(st.sampled_from(("unary", "unary", "binary", "binary", "binary", "sum", "view", "custom")
                                  if barriers else ("unary", "binary")))
    cast = draw(st.sampled_from((None, None, "fp32", "fp16")))
    if choice == "unary":
        _apply(p, name, draw(st.sampled_from(UNARY)), (first,), cast)
    elif choice == "binary":
        _apply(p, name, draw(st.sampled_from(BINARY)), (first, draw(st.sampled_from(names))), cast)
    elif choice == "sum" and p.tensors[first].shape:
        _apply(p, name, "sum", (first,), axis=0)
    elif choice == "view":
        _apply(p, name, "reshape", (first,), result_shape=p.tensors[first].shape)
    else:
        _custom(p, name, first)
    if p.tensors[name].shape == _shape(p, SHAPES[0]):
        wide.append(name)


def _per_tensor_bytes(p: Program, kernels) -> sympy.Expr:
    """Bytes counted tensor by tensor: each storage is read once by every kernel that uses it
    without producing it, and written once if another kernel reads it or it is an output."""
    owner = {op: i for i, k in enumerate(kernels) for op in k.ops}
    outputs = program_outputs(p)
    total = sympy.Integer(0)
    for s in (t for t in p.tensors.values() if t.storage == t.name):
        producer = owner.get(s.name)
        readers = {owner[n.name] for n in p.nodes.values() if n.kind != "view"
                   for t in n.inputs if p.tensors[t].storage == s.name} - {producer}
        written = producer is not None and (s.name in outputs or bool(readers))
        total += s.bytes * (len(readers) + written)
    return total


def _total(costs, attr):
    return sympy.expand(sympy.Add(*[getattr(c, attr) for c in costs]))


def _check_partition(p: Program, mode: str):
    G = operator_graph(p)
    kernels = fuse(G, p, mode)
    placed = sorted(op for k in kernels for op in k.ops)
    assert placed == sorted(n for n in p.nodes if p.nodes[n].kind != "view")
    costs = partition_costs(p, kernels)
    unfused = partition_costs(p, one_kernel_per_op(G))
    assert _total(costs, "flops") == sympy.expand(sympy.Add(*[n.flops for n in p.nodes.values()]))
    saved = (_total(unfused, "bytes") - _total(costs, "bytes")).xreplace(p.bindings)
    assert saved.is_nonnegative, saved
    assert _total(costs, "bytes") == sympy.expand(_per_tensor_bytes(p, kernels))
    Q = kernel_graph(G, kernels)
    assert nx.is_directed_acyclic_graph(Q)
    position = {k.name: i for i, k in enumerate(kernels)}
    assert all(position[u] < position[v] for u, v in Q.edges)
    assert fuse(G, p, mode, start=kernels) == kernels
    return G, kernels


@SETTINGS
@given(programs())
def test_elementwise_fusion_keeps_its_contract(p):
    _check_partition(p, "elementwise")


@SETTINGS
@given(programs())
def test_epilogue_fusion_keeps_its_contract(p):
    _check_partition(p, "epilogue")


@settings(max_examples=60, deadline=None, derandomize=True)
@given(programs(barriers=False))
def test_one_iteration_space_fuses_each_component_into_one_kernel(p):
    G, kernels = _check_partition(p, "elementwise")
    assert len(kernels) == nx.number_weakly_connected_components(G)
