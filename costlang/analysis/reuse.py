"""Reuse and access: how a kernel's traffic at each memory level follows from its tiling.

Input: the program, the hardware, a kernel's ops and its algorithmic `KernelCost` (each tensor
read once, written once). Output: the same kernel's `KernelCost` with the modelled traffic:

- **Access pattern** (`{ stride = S }` on an op): memory moves whole sectors (`sector`, 32 B by
  default), so a read of n elements of b bytes, S elements apart, touches n · min(S·b, sector)
  bytes; S = 1 is coalesced (n·b).
- **Tiled matmul** (`{ bm; bn; bk }` or `{ tile }`): each A tile is re-read once per column of C
  tiles (N/bn times) and each B tile once per row (M/bm times): HBM bytes =
  b·(tm·tn·tk·(bm·bk + bk·bn) + M·N). As K grows, I → 2·bm·bn/(bm + bn) FLOP per element read
  (= T for square tiles: the chapter's "I ≈ T"), 2·bm·bn/(b·(bm + bn)) FLOP/B (T/2 for fp16). The working set b·(bm·bk + bk·bn) + 4·bm·bn (fp32
  accumulators) is checked against the staging level's capacity.
- **FlashAttention** (a kernel holding an attention chain, `passes/flash.py`): Dao et al. 2022,
  Algorithm 1 with on-chip size M elements: Bc = ⌈M/(4d)⌉, Br = min(Bc, d), Tc = ⌈Nk/Bc⌉, except
  that Bc is lowered to the largest block whose working set (K, V blocks B_c·d, Q, O blocks B_r·d,
  scores B_r·B_c, fp32 row statistics) fits the capacity, as an implementation must;
  K and V are read once, Q Tc times, O written Tc times and read Tc − 1 times, the running max
  and sum (fp32, 2 per row) written and read Tc − 1 times each. Tc = 1 is the ideal
  |Q| + |K| + |V| + |O|; for large N it is Θ(N²d²/M). In a training step the forward also
  writes the row statistics (ℓ, m) once for the backward.
- **FlashAttention's backward** (Algorithm 2, the loop of Algorithm 4 in the appendix): the same
  blocks; the outer loop over the T_c blocks of K and V reads K, V once and writes dK, dV once;
  each pass of the inner loop reads Q, O, dO and the statistics and reads and writes dQ: Q, O, dO
  and (ℓ, m) are read T_c times, dQ written T_c times and read T_c − 1 times. O is read for
  D = rowsum(dO ∘ O) (at dO's size: O and dO have one shape). S and P are recomputed on chip.
  T_c = 1 is the ideal |Q| + |K| + |V| + |O| + |dO| + |dQ| + |dK| + |dV| + the statistics.

Levels: tiles live in the **staging level**, the farthest `per SM` level with a capacity. That
level and every farther one carry the modelled traffic; nearer levels carry the algorithmic
traffic (no model of reuse there). Farther than the staging level, an operand that a level in
between can hold whole (a per-chip cache such as L2) crosses the farther levels only once.
"""
from __future__ import annotations

import dataclasses
from typing import Optional

import sympy

from costlang.errors import SemanticError
from costlang.ir.program import Hardware, Program, in_stdlib, users_span
from costlang.passes.costs import KernelCost, TileModel, Traffic

__all__ = ["model_traffic", "staging_level", "flash_blocks", "flash_working_set", "ACCUMULATOR_BYTES", "STATS_BYTES"]

#: tensor-core GEMMs accumulate in fp32 (4 B per element of the C tile)
ACCUMULATOR_BYTES = sympy.Integer(4)
#: FlashAttention's running max and sum: fp32, 2 values per query row
STATS_BYTES = sympy.Integer(4)


def staging_level(hw: Hardware):
    """The level tiles live in: the farthest per-SM level that states a capacity (shared memory,
    VMEM), or None when there is none."""
    return next((m for m in hw.memories if m.per_sm and m.capacity is not None), None)


def model_traffic(program: Program, hw: Hardware, ops: tuple[str, ...], cost: KernelCost) -> KernelCost:
    nodes = [program.nodes[n] for n in ops]
    cost = _strided(program, hw, nodes, cost)
    kinds = [n.op.name if n.kind == "rowwise" else n.kind for n in nodes]
    if kinds.count("matmul") >= 2 and "softmax" in kinds and "grad_softmax" in kinds:
        return _flash_backward(program, hw, nodes, cost)
    if kinds.count("matmul") >= 2 and "softmax" in kinds:
        return _flash(program, hw, nodes, cost)
    tiled = next((n for n in nodes if n.kind == "matmul" and n.option("bm") is not None), None)
    if tiled is not None:
        return _tiled(program, hw, tiled, cost)
    return cost


def _strided(program, hw, nodes, cost: KernelCost) -> KernelCost:
    strides = {program.tensors[t].storage: n.option("stride") for n in nodes if n.option("stride") is not None
               for t in n.inputs}
    if not strides:
        return cost
    reads = []
    for t in cost.reads:
        stride = strides.get(t.tensor)
        if stride is None or stride == 1:
            reads.append(t)
            continue
        size = program.tensors[t.tensor].dtype.size
        per = sympy.Min(stride * size, hw.sector)
        reads.append(Traffic(t.tensor, t.role, t.bytes / size * per, t.ideal, per / size, "strided"))
    return dataclasses.replace(cost, reads=tuple(reads))


def _tiled(program, hw, node, cost: KernelCost) -> KernelCost:
    a, b = (program.tensors[t] for t in node.inputs)
    c = program.tensors[node.output]
    (M, K), N = a.shape[-2:], b.shape[-1]
    bm, bn, bk = (node.option(k) for k in ("bm", "bn", "bk"))
    c_batch = c.numel / (M * N)
    reuse = {a.storage: c_batch / (a.numel / (M * K)) * N / bn,
             b.storage: c_batch / (b.numel / (K * N)) * M / bm}
    stage = staging_level(hw)
    ws = a.dtype.size * bm * bk + b.dtype.size * bk * bn + ACCUMULATOR_BYTES * bm * bn
    figures = (("M", M), ("N", N), ("K", K), ("bm", bm), ("bn", bn), ("bk", bk),
               ("tm", M / bm), ("tn", N / bn), ("tk", K / bk))
    tiling = TileModel("matmul", figures, stage.name if stage else None,
                       stage.capacity if stage else None, ws, (),
                       sympy.cancel(2 * bm * bn / (bm + bn)),
                       sympy.cancel(2 * bm * bn / (a.dtype.size * bm + b.dtype.size * bn)))
    reads = tuple(_times(t, reuse[t.tensor], "tiled") if t.tensor in reuse else t for t in cost.reads)
    modelled = dataclasses.replace(cost, reads=reads, tiling=tiling)
    levels = _levels(hw, stage, modelled, cost, reuse, program.bindings)
    main = list(hw.memories).index(hw.main_memory)
    s = list(hw.memories).index(stage) if stage is not None else len(hw.memories) - 1
    if main > s:
        return dataclasses.replace(modelled, level_bytes=levels)
    held = _held_by(list(hw.memories)[main + 1:s], cost, reuse, program.bindings)
    reads = tuple(Traffic(t.tensor, t.role, t.ideal, t.ideal, sympy.Integer(1), "cached")
                  if t.tensor in held else t for t in reads)
    tiling = dataclasses.replace(tiling, held=tuple(sorted(held.items())))
    return dataclasses.replace(modelled, reads=reads, tiling=tiling, level_bytes=levels)


def _times(t: Traffic, times, why) -> Traffic:
    return Traffic(t.tensor, t.role, t.bytes * times, t.ideal, times, why)


def _levels(hw: Hardware, stage, modelled: KernelCost, plain: KernelCost, reuse: dict, bindings):
    """Bytes per level, farthest first: the modelled traffic down to the staging level, the
    algorithmic traffic nearer than it; an operand that a per-chip level between holds whole
    crosses the levels farther than that one once."""
    levels = list(hw.memories)
    s = levels.index(stage) if stage is not None else len(levels) - 1
    out = []
    for i, m in enumerate(levels):
        if i > s:
            out.append((m.name, plain.bytes))
            continue
        held = _held(levels[i + 1:s], plain, reuse, bindings)
        total = sympy.Add(*[(t.ideal if t.tensor in held else t.bytes) for t in modelled.reads + modelled.writes])
        out.append((m.name, total))
    return tuple(out)


def _held(between, plain: KernelCost, reuse: dict, bindings) -> set:
    return set(_held_by(between, plain, reuse, bindings))


def _held_by(between, plain: KernelCost, reuse: dict, bindings) -> dict:
    """The re-read operands a per-chip level in `between` can hold → that level: both if they fit
    together, else the smaller one if it fits (numbers only: a symbolic size is not assumed to fit)."""
    sizes = {t.tensor: t.bytes.xreplace(bindings) for t in plain.reads if t.tensor in reuse}
    for m in reversed(between):
        if m.per_sm or m.capacity is None:
            continue
        for group in (sorted(sizes), *[[n] for n in sorted(sizes, key=lambda n: _num(sizes[n]))]):
            total = sympy.Add(*[sizes[n] for n in group])
            cap = m.capacity.xreplace(bindings)
            if group and total.is_number and cap.is_number and total <= cap:
                return {n: m.name for n in group}
    return {}


def _num(e):
    return e if e.is_number else sympy.oo


def _flash(program, hw, nodes, cost: KernelCost) -> KernelCost:
    first = next(n for n in nodes if n.kind == "matmul")
    last = [n for n in nodes if n.kind == "matmul"][-1]
    q, kt = (program.tensors[t] for t in first.inputs)
    o, v = program.tensors[last.output], program.tensors[last.inputs[1]]
    stage = staging_level(hw)
    if stage is None:
        span = first.span
        if in_stdlib(span):  # the user's line that chose this hardware, else the user's call of the model
            chosen = program.hardware_span if program.selected_hardware == hw.name else None
            call = users_span(program, first.scope, span)
            span = (chosen if chosen is not None and not in_stdlib(chosen)
                    else call if not in_stdlib(call) else program.main_span)
        scope = first.scope if span is not first.span else ""
        raise SemanticError(f"FlashAttention's block sizes come from the on-chip capacity, and hardware "
                            f"'{hw.name}' states none" + (f" (the attention of '{scope}')" if scope else ""), span,
                            f"name an on-chip level in a hardware of your own: `hardware my_chip : {hw.name} "
                            f"{{ memory {'VMEM' if hw.name.startswith('tpu') else 'SMEM'} per SM {{ bandwidth = ...; "
                            "capacity = ... }; sms = ... }` and `use hardware my_chip`, or leave out `fusion flash`")
    d, nk, b = q.shape[-1], kt.shape[-1], q.dtype.size
    M = stage.capacity / b
    bc, br = _fitting_blocks(stage, d, b, first)
    tc = sympy.ceiling(nk / bc)
    rows = o.numel / o.shape[-1]
    ws = flash_working_set(bc, br, d, b)
    tiling = TileModel("flash", (("M", M), ("d", d), ("N_k", nk), ("B_c", bc), ("B_r", br), ("T_c", tc)),
                       stage.name, stage.capacity, ws, theta=3 * q.bytes * 4 * d * nk / M)
    times = {q.storage: tc}
    reads = [(_times(t, times[t.tensor], "flash") if t.tensor in times else t) for t in cost.reads]
    writes = []
    for t in cost.writes:
        if t.tensor == o.storage:
            writes.append(_times(t, tc, "flash"))
            reads.append(Traffic(t.tensor, t.role, t.bytes * (tc - 1), sympy.Integer(0), tc - 1, "flash"))
        else:
            writes.append(t)
    stats = STATS_BYTES * 2 * rows * (tc - 1)
    reads.append(Traffic("(row max, row sum)", "stats", stats, sympy.Integer(0), tc - 1, "flash"))
    writes.append(Traffic("(row max, row sum)", "stats", stats, sympy.Integer(0), tc - 1, "flash"))
    if program.training is not None:  # kept for the backward: ℓ and m, fp32, once per row
        kept = STATS_BYTES * 2 * rows
        writes.append(Traffic("(statistics for the backward)", "stats", kept, sympy.Integer(0), sympy.Integer(1),
                              "flash"))
    modelled = dataclasses.replace(cost, reads=tuple(reads), writes=tuple(writes), tiling=tiling)
    return dataclasses.replace(modelled, level_bytes=_levels(hw, stage, modelled, cost, {}, program.bindings))


def _flash_backward(program, hw, nodes, cost: KernelCost) -> KernelCost:
    """FlashAttention's backward kernel (see the module docstring): the forward's blocks."""
    first = nodes[0]  # S' = Q·Kᵀ, recomputed
    q, kt = (program.tensors[t] for t in first.inputs)
    grad = next(n for n in nodes if n.kind == "rowwise" and n.op.name == "grad_softmax")
    dp = program.nodes[program.tensors[grad.inputs[1]].storage]
    do = program.tensors[dp.inputs[0]]
    stage = staging_level(hw)
    if stage is None:
        raise SemanticError(f"FlashAttention's block sizes come from the on-chip capacity, and hardware "
                            f"'{hw.name}' states none", users_span(program, first.scope, first.span),
                            "name an on-chip level in a hardware of your own, or leave out `fusion flash`")
    d, nk, b = q.shape[-1], kt.shape[-1], q.dtype.size
    bc, br = _fitting_blocks(stage, d, b, first)
    tc = sympy.ceiling(nk / bc)
    rows = do.numel / do.shape[-1]
    ws = flash_working_set(bc, br, d, b)
    tiling = TileModel("flash", (("M", stage.capacity / b), ("d", d), ("N_k", nk), ("B_c", bc), ("B_r", br),
                                 ("T_c", tc)), stage.name, stage.capacity, ws)
    again = {q.storage, do.storage}
    reads = [(_times(t, tc, "flash") if t.tensor in again else t) for t in cost.reads]
    reads.append(Traffic("(O, for D = rowsum(dO ∘ O))", "stats", do.bytes * tc, do.bytes, tc, "flash"))
    stats = STATS_BYTES * 2 * rows
    reads.append(Traffic("(statistics for the backward)", "stats", stats * tc, stats, tc, "flash"))
    after = nodes[nodes.index(grad) + 1:]
    ds = {grad.output} | {n.output for n in after if n.kind == "elementwise"}
    dq = program.tensors[next(n.output for n in after if n.kind == "matmul"     # dQ = dS·K
                              and program.tensors[n.inputs[0]].storage in ds)]
    writes = []
    for t in cost.writes:
        if t.tensor in (dq.name, dq.storage):  # (a weight's gradient is a part of the gradient buffer)
            writes.append(_times(t, tc, "flash"))
            reads.append(Traffic(t.tensor, t.role, t.bytes * (tc - 1), sympy.Integer(0), tc - 1, "flash"))
        else:
            writes.append(t)
    modelled = dataclasses.replace(cost, reads=tuple(reads), writes=tuple(writes), tiling=tiling)
    return dataclasses.replace(modelled, level_bytes=_levels(hw, stage, modelled, cost, {}, program.bindings))


def _fitting_blocks(stage, d, b, first):
    """The largest blocks (B_c, B_r) whose working set fits the on-chip level; an error at the
    kernel's first node when not even B_c = B_r = 1 does."""
    bc, br, _ = flash_blocks(stage.capacity, d, b)
    if bc is None:
        raise SemanticError(f"FlashAttention's blocks need a working set of at least "
                            f"{flash_working_set(1, 1, d, b)} bytes (B_c = B_r = 1, d = {d}), more than "
                            f"{stage.name}'s capacity", first.span,
                            f"give `{stage.name}` a larger capacity, or use `fusion epilogue`")
    return bc, br


def flash_working_set(bc, br, d, b):
    """Bytes on chip for blocks B_c × B_r: K_j and V_j (B_c·d each), Q_i and O_i (B_r·d each), the
    score block (B_r·B_c) at the dtype's size b, and the fp32 row max and sum (2 per row)."""
    return b * (2 * bc * d + 2 * br * d + br * bc) + STATS_BYTES * 2 * br


def flash_blocks(capacity, d, b):
    """The largest FlashAttention blocks whose working set fits in `capacity` bytes: B_r =
    min(B_c, d) as in Algorithm 1, B_c the largest whole number ≤ ⌈M/(4d)⌉ (M = capacity/b) that
    fits. The working set is linear in B_c while B_r = d, which holds from C ≥ 5·b·d² + 8·d on
    (then B_c ≤ (C − 2·b·d² − 8·d)/(3·b·d)); below, B_r = B_c and b·B² + (4·b·d + 8)·B ≤ C.
    Returns (B_c, B_r, rule): rule "rows_d", "square", or "either" when a size is a symbol
    (B_c is then the larger of the two bounds, which is right on both sides: each bound is at
    most the true one on the other's side); (None, None, None) when not even B_c = B_r = 1 fits.
    """
    capacity, d, b = (sympy.Integer(x) if isinstance(x, int) else x for x in (capacity, d, b))
    paper = sympy.ceiling(capacity / b / (4 * d))
    linear = sympy.Min(paper, sympy.floor((capacity - 2 * b * d ** 2 - 8 * d) / (3 * b * d)))
    lin = 4 * b * d + 8
    square = sympy.Min(paper, sympy.floor((sympy.sqrt(lin ** 2 + 4 * b * capacity) - lin) / (2 * b)))
    threshold = flash_working_set(d, d, d, b)          # 5·b·d² + 8·d: B_c = B_r = d fits
    if not (capacity.is_number and d.is_number):
        # below the threshold the linear bound is the smaller (it counts B_r = d > B_c rows), above
        # it the square one is (it counts B_r = B_c > d rows): the larger is right on both sides
        bc = sympy.Max(linear, square)
        return bc, sympy.Min(bc, d), "either"
    if capacity >= threshold:                          # then ⌈M/(4d)⌉ ≥ d as well
        return linear, d, "rows_d"
    if square < 1:
        return None, None, None
    return square, square, "square"


def bytes_at(cost: KernelCost, level: str) -> Optional[sympy.Expr]:
    return dict(cost.level_bytes).get(level)
