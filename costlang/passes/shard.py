"""Sharding: the resolved (whole-model) program → the program one chip runs, collectives inserted.

Input: a `Program` with a selected system, `shard` statements (a mesh axis or none per dim of an
input or weight) and `parallel` statements. Output: a new `Program` whose tensors have per-chip
shapes (a dim split over an axis of p chips is dim/p) and whose nodes have per-chip FLOPs, with
the collectives the splits imply inserted as ordinary collective nodes.

Contract. Before: every node's inputs are defined earlier (definition order is topological).
After: the same node names in the same order, each op's FLOPs divided by the chips that share
its work; where an op's result is a partial sum over an axis (a matmul whose contracted dim is
split, a reduction over a split dim), the op writes `<out>_partial` and a node `<out>_all_reduce`
(the stdlib op `all_reduce`, or the algorithm named) turns it back into `<out>` on every chip.

Propagation (GSPMD-like, one pass in definition order, then a pass that builds the local program):
an input or weight without a `shard` line is free and takes the split its first use needs
(elementwise: its operands'; matmul: the other operand's contracted dim); `parallel tensor over
AXIS` makes a free weight of a matmul column-parallel (split on N) when the activation's
contracted dim is whole, row-parallel (split on K, so an all-reduce follows) when it is split
(Megatron); a custom kernel that `gathers = V` rows of a free weight of V rows (the embedding)
has that weight split over its rows under `parallel tensor` (Megatron's vocabulary-parallel
embedding): each chip looks up the rows in its range, writes zeros for the others, and an
all-reduce sums the chips' results; its stated reads are shared by the chips (each gathers the
rows of its range: 1/p of them when the ids spread evenly over the vocabulary, a lower bound for
the ids every chip reads whole); `parallel data over AXIS` splits the first dim of every input.
"""
from __future__ import annotations

import dataclasses
from typing import Optional

import sympy

from costlang.errors import CostlangError, ErrorGroup, SemanticError
from costlang.ir.kinds import same_dim
from costlang.ir.program import OpNode, Program, Tensor, in_stdlib
from costlang.ir.system import comms_of
from costlang.passes.parallelism import (collective_node, fresh, insert_all_to_all, insert_gradient_all_reduce, insert_sends,
                          insert_zero, scale_to_stage, stage_repeats, stage_share, zero_shard,
                          insert_dense_all_reduce, end_weights, smaller_end, trainable_count,
                          zero_stage)

__all__ = ["shard_program", "split_errors"]

Spec = tuple  # one mesh-axis name (or None) per dim


def shard_program(program: Program) -> Program:
    """The per-chip program (see the module docstring); errors are positioned at the statements."""
    p = _Propagation(program)
    for node in program.nodes.values():
        p.node(node)
    return _localize(program, p)


class _Propagation:
    def __init__(self, program: Program):
        self.program = program
        self.system = program.system
        self.spec: dict[str, Spec] = {}
        self.explicit: dict[str, object] = {}        # tensor → the span of its shard line
        self.view_of: dict[str, tuple] = {}          # a view of a free tensor → (source, node)
        self.view_maps: dict[tuple, int] = {}        # (from shape, to shape, split dim) → the dim it went to
        self.partial: dict[str, str] = {}            # node → axis its result is a partial sum over
        self.summed_later: dict[str, str] = {}       # partial node → axis, all-reduced after a sum of partials
        self.partial_sums: set[str] = set()          # the adds of partials (each chip adds whole tensors)
        self.producer: dict[str, str] = {}           # tensor → the node that writes it
        self.readers: dict[str, int] = {}            # tensor → how many nodes read it
        self.row_wise_read: set[str] = set()         # tensors a row-wise op (softmax, a norm) reads
        for n in program.nodes.values():
            if n.output:
                self.producer[n.output] = n.name
            for t in n.inputs:
                self.readers[t] = self.readers.get(t, 0) + 1
            if n.kind == "rowwise":
                self.row_wise_read.update(n.inputs)
        self.parallel = {s.kind: s for s in program.parallels}
        for s in program.shardings:
            self.spec[s.tensor] = s.axes
            self.explicit[s.tensor] = s.span
        self.experts: set[str] = set()               # custom nodes whose experts are split (expert parallel)
        self.gathered: set[str] = set()              # custom gathers from a row-split weight (vocabulary parallel)
        batch = [self.parallel[k] for k in ("data", "expert") if k in self.parallel]
        self.compound: Optional[tuple] = None    # expert and data together: the batch over both axes
        if len(batch) > 1:
            if program.training is None and "gradients" in dict(batch[0].options):
                raise SemanticError("expert and data parallelism together train with a `train` statement, "
                                    "which derives the backward and reduces the experts' gradients over the "
                                    "data axis and the rest over both", batch[0].span,
                                    "add `train { }` and drop `gradients = ...` (or set it in `train`)")
            data, expert = batch
            name = f"{expert.axis}·{data.axis}"   # the tokens split over both: each node its batch, each
            self.compound = (name, expert.axis, data.axis)   # GPU of it a part (attention data-parallel)
            batch = [dataclasses.replace(expert, axis=name)]
        self.batch_axes = {split.axis for split in batch}
        self.batch_split: dict[str, tuple] = {}      # custom node → the axes its stated work splits over
        for split in batch:
            for t in program.tensors.values():
                if t.role == "input" and t.name not in self.spec and t.shape and t.name not in program.gradient_seeds:
                    self.spec[t.name] = (split.axis,) + (None,) * (len(t.shape) - 1)
                    self.explicit[t.name] = split.span
        # context parallelism: the sequence (second dim) of every input split; the keys and values a
        # matmul needs whole are gathered first (`gather_before`: node → (operand, dim, axis) each)
        self.context = self.parallel.get("context")
        if self.context is not None and program.training is not None and "expert" in self.parallel:
            raise SemanticError("context and expert parallelism together are modelled for a forward pass: in a "
                                "training step the weights' gradients would sum over the tokens' two splits "
                                "(experts, sequence) at once", self.context.span,
                                "take `train` out, or split the sequence or the experts, not both")
        self.gather_before: dict[str, list] = {}
        self.scatter: dict[str, tuple] = {}          # node → (axis, dim): its partial sum reduce-scattered
        self.sequences: list = []                    # the sequence lengths context parallelism splits
        self.also_over: dict[str, str] = {}          # weight gradient → a second axis its rows split over
        if self.context is not None:
            for t in program.tensors.values():
                if t.role == "input" and len(t.shape) >= 2 and t.name not in program.gradient_seeds:
                    spec = list(self.spec.get(t.name) or (None,) * len(t.shape))
                    if t.name in self.explicit and any(x is not None for x in spec) and spec[1] is not None:
                        continue   # split by hand on its second dim: kept
                    spec[1] = self.context.axis
                    self.sequences.append(t.shape[1])
                    self.spec[t.name] = tuple(spec)
                    self.explicit.setdefault(t.name, self.context.span)
        # a training step under data parallelism (ZeRO, passes.parallelism.insert_zero)
        self.training = program.training
        self.data = self.parallel.get("data")
        self.deferred: dict[str, str] = {}          # weight gradients reduced once per step, not per op → axis
        self.zero_split: set[str] = set()           # flat buffers ZeRO splits into ⌈n/N_d⌉ shards
        zero = zero_stage(program)
        if self.training is not None and self.data is not None:
            for t in program.tensors.values():
                if (t.role == "state" and zero >= 1) or (t.name == self.training.buffer and zero >= 2):
                    self.zero_split.add(t.name)

    # --- specs of tensors, free or fixed ---------------------------------------------------
    def shape(self, t: str):
        return self.program.tensors[t].shape

    def get(self, t: str) -> Optional[Spec]:
        return self.spec.get(t)

    def fix(self, t: str, spec: Spec, span) -> None:
        old = self.spec.get(t)
        if old is not None:
            if tuple(old) != tuple(spec):
                raise SemanticError(f"'{t}' would be split two ways: {_text(old)} and {_text(spec)}", span,
                                    "a tensor has one split; shard it with a `shard` line, or copy it")
            return
        self.spec[t] = tuple(spec)
        if t in self.view_of:
            source, node = self.view_of[t]
            self.fix(source, _view_inverse(self, node, spec), span)

    def fixed(self, t: str, span) -> Spec:
        """The spec of t; a free tensor is fixed whole (replicated) by this use."""
        if self.get(t) is None:
            self.fix(t, (None,) * len(self.shape(t)), span)
        return self.spec[t]

    def weight(self, t: str) -> bool:
        storage = self.program.tensors[t].storage
        return self.program.tensors[storage].role == "weight"

    # --- one node ----------------------------------------------------------------------------
    def node(self, n: OpNode) -> None:
        for x in n.inputs:   # a loss gradient is split as the forward output it is the gradient of
            forward = self.program.gradient_seeds.get(x)
            if forward is not None and self.get(x) is None and self.get(forward) is not None:
                self.fix(x, self.spec[forward], n.span)
        handler = getattr(self, "_" + n.kind, None)
        out = handler(n) if handler else self._whole(n)
        self._sum_of_partials(n)
        if self._weight_gradient(n) and self.partial.get(n.name) is not None \
                and self.partial[n.name] in (self.data.axis, self._compound_axis()):
            # a weight's gradient summed over the chip's part of the batch: the data-parallel sum is
            # the step's one gradient reduction (all-reduce, or reduce-scatter under ZeRO), not a
            # collective after this op; with expert parallelism beside it (the batch over both axes)
            # the dense weights' gradients are first all-reduced over the expert axis once per step
            self.deferred[n.name] = self.partial.pop(n.name)
        if n.output and out is not None:
            self.spec[n.output] = tuple(out)
            _check_distinct(out, self.partial.get(n.name), n)

    def _compound_axis(self) -> Optional[str]:
        return self.compound[0] if self.compound is not None else None

    def _sum_of_partials(self, n: OpNode) -> None:
        """A sum of partial sums over one axis is a partial sum over it: the all-reduce moves after
        the add (a backward's gradient of a tensor several column-parallel matmuls read, e.g. the
        normed input of Q, K and V: one all-reduce, as Megatron-LM has, not one per matmul). Only
        where each operand is read by this add alone (another reader needs it reduced)."""
        if n.kind != "elementwise" or n.op is None or n.op.name != "add" or len(n.inputs) < 2:
            return
        producers = [self.producer.get(t) for t in n.inputs]
        axes = {self.partial.get(k) for k in producers}
        if len(axes) != 1 or None in axes or any(self.readers.get(t, 0) != 1 for t in n.inputs):
            return
        if self._weight_gradient(n) or any(k in self.deferred for k in producers):
            return
        for k in producers:   # each still did its part of the contraction (its work is split)
            self.summed_later[k] = self.partial.pop(k)
        self.partial[n.name] = axes.pop()
        self.partial_sums.add(n.name)

    def _whole(self, n: OpNode) -> Optional[Spec]:
        """custom kernels: inputs whole; the result whole (its figures are per chip as stated). A first
        input split on its first dim over the batch's axis (data or expert parallel) splits the result
        the same way, and the kernel's stated work with it (`batch_split`)."""
        first = self.get(n.inputs[0]) if n.inputs else None
        axis = first[0] if first else None
        for t in n.inputs:
            self.fixed(t, n.span)
        if not n.output:
            return None
        out = (None,) * len(self.shape(n.output))
        if axis is not None and axis in self.batch_axes and out:
            self.batch_split[n.name] = (axis,)
            out = (axis,) + out[1:]
        return self._keep_sequence(n, first, out)

    def _context_axis(self) -> Optional[str]:
        return self.context.axis if self.context is not None else None

    def _keep_sequence(self, n: OpNode, first, out) -> Spec:
        """A custom kernel fed the sequence split over the context axis (its first input's second dim)
        keeps it, an embedding's tokens or a norm's rows: its result's second dim is split too, and
        its stated work is its slice's (`batch_split`)."""
        context = self._context_axis()
        if context is not None and first is not None and len(first) > 1 and first[1] == context and len(out) > 1:
            self.batch_split[n.name] = self.batch_split.get(n.name, ()) + (context,)
            out = tuple(out[:1]) + (context,) + tuple(out[2:])
        return out

    def _custom(self, n: OpNode) -> Optional[Spec]:
        """A custom kernel stating `experts = E` under `parallel expert`: the weights whose first dim is
        E are split on it, the tokens keep their split, and the result follows the first input's.
        One stating `gathers = V` under `parallel tensor`: see `_gather`."""
        if n.option("gathers") is not None and self.parallel.get("tensor") is not None:
            return self._gather(n)
        experts, expert = n.option("experts"), self.parallel.get("expert")
        if experts is None or expert is None or not n.output:
            return self._whole(n)
        for t in n.inputs:
            shape = self.shape(t)
            if self.weight(t) and shape and same_dim(shape[0], experts, self.program.bindings):
                self.fix(t, (expert.axis,) + (None,) * (len(shape) - 1), n.span)
            else:
                self.fixed(t, n.span)
        self.experts.add(n.name)
        first, out = self.spec[n.inputs[0]], self.shape(n.output)
        if not out:
            return ()
        # the expert axis's share of the work is insert_all_to_all's; the sequence's is kept here
        return self._keep_sequence(n, first, ((first[0] if first else None),) + (None,) * (len(out) - 1))

    def _gather(self, n: OpNode) -> Optional[Spec]:
        """Vocabulary-parallel gather: a free weight of `gathers` rows is split on its rows over the
        tensor axis; the result (whole on every chip, zeros outside the chip's rows) is a partial sum."""
        axis, rows = self.parallel["tensor"].axis, n.option("gathers")
        split = False
        for t in n.inputs:
            shape = self.shape(t)
            if (not split and self.weight(t) and self.get(t) is None and shape
                    and same_dim(shape[0], rows, self.program.bindings)):
                self.fix(t, (axis,) + (None,) * (len(shape) - 1), n.span)
                split = True
            else:
                self.fixed(t, n.span)
        if not n.output:
            return None
        out = self.shape(n.output)
        first = self.spec[n.inputs[0]] if n.inputs else ()
        if split:
            self.partial[n.name] = axis
            self.gathered.add(n.name)
        if not out:
            return ()
        # the chip looks up its own tokens: its part of the batch, its slice of the sequence
        batch = first[0] if first else None
        if batch is not None and batch in self.batch_axes:
            self.batch_split[n.name] = (batch,)
        return self._keep_sequence(n, first, (batch,) + (None,) * (len(out) - 1))

    def _collective(self, n: OpNode) -> Spec:
        return self.fixed(n.inputs[0], n.span)

    def _view(self, n: OpNode) -> Optional[Spec]:
        (x,) = n.inputs
        if self.get(x) is None:
            self.view_of[n.output] = (x, n)
            return None
        return _view_forward(self, n, self.spec[x])

    def _elementwise(self, n: OpNode) -> Spec:
        out = self.shape(n.output)
        decided: list = [None] * len(out)
        for t in n.inputs:
            s = self.get(t)
            if s is None:
                continue
            for i, axis in _aligned(self.shape(t), s, out):
                if axis is not None and decided[i] not in (None, axis):
                    raise SemanticError(f"{n.op.name}: operands are split over different axes "
                                        f"({decided[i]} and {axis}) on the same dimension", n.span)
                decided[i] = decided[i] or axis
        for t in n.inputs:
            want = tuple(decided[i] for i, _ in _aligned(self.shape(t), (None,) * len(self.shape(t)), out))
            if self.get(t) is None:
                self.fix(t, want, n.span)
            elif tuple(self.spec[t]) != want:
                raise SemanticError(f"{n.op.name}: '{t}' is {_text(self.spec[t])} but the other operands are "
                                    f"{_text(want)}", n.span,
                                    f"shard '{t}' the same way, or gather the split operand first (all_gather)")
        return decided

    def _matmul(self, n: OpNode) -> Spec:
        a, b = n.inputs
        sa, sb = self.get(a), self.get(b)
        tensor = self.parallel.get("tensor")
        if sa is None and sb is None:
            sa = self.fixed(a, n.span)
        if sb is None:
            sb = self._free_rhs(a, b, sa, tensor, n)
            self.fix(b, sb, n.span)
        if sa is None:
            sa = _batch(self.shape(a), sb, self.shape(b)) + (None, sb[-2])
            self.fix(a, sa, n.span)
        if self.context is not None:
            sb = self._gathered_keys(n, b, sa, sb)
        ka, kb = sa[-1], sb[-2]
        if ka != kb:
            raise SemanticError(f"matmul: the contracted dimension is {_axis_text(ka)} in '{a}' but "
                                f"{_axis_text(kb)} in '{b}'", n.span,
                                "split both operands' contracted dimension over the same axis, or neither")
        batch = _merge_batch(self.shape(a)[:-2], sa[:-2], self.shape(b)[:-2], sb[:-2], n)
        summed = n.option("sum_leading")  # a weight's gradient: its leading (batch) dims are contracted too
        if summed is not None:
            lead = self._over_data_and_context(
                {x for x in batch[:int(summed)] if x is not None} | ({ka} if ka is not None else set()), n)
            if len(lead) > 1:
                raise SemanticError("matmul: a weight gradient's rows are split over two axes", n.span)
            if lead:
                self.partial[n.name] = lead.pop()
            return tuple(batch[int(summed):]) + (sa[-2], sb[-1])
        out = tuple(batch) + (sa[-2], sb[-1])
        dim = self._scattered(n, ka, out) if ka is not None else None
        if dim is not None:
            # a gradient of the gathered keys or values (dV = Pᵀ·dO, dKᵀ = Qᵀ·dS): every chip's
            # queries add to every key's; each chip keeps its slice of the sequence: a reduce-scatter
            # (ring attention's backward sends the same bytes), not an all-reduce
            self.scatter[n.name] = (ka, dim)
            return tuple(ka if i == dim else a for i, a in enumerate(out))
        if ka is not None:
            self.partial[n.name] = ka
        return out

    def _over_data_and_context(self, lead: set, n: OpNode) -> set:
        """A weight's gradient summed over rows split over the data axis (the batch) and the context
        axis (the sequence): summed over the context axis after this op, over the data axis with the
        step's gradient reduction (its work split over both)."""
        data = self.data.axis if self.data is not None else None
        context = self._context_axis()
        if len(lead) == 2 and lead == {data, context}:
            self.also_over[n.name] = data
            return {context}
        return lead

    def _scattered(self, n: OpNode, axis, out) -> Optional[int]:
        """The dim (rows, else columns) of a matmul's partial sum over the context axis that is the
        whole sequence, where the sum is reduce-scattered; None: not such a sum."""
        if self.context is None or axis != self.context.axis:
            return None
        shape = self.shape(n.output)
        for dim in (len(out) - 2, len(out) - 1):
            if out[dim] is None and any(same_dim(shape[dim], s, self.program.bindings) for s in self.sequences):
                return dim
        return None

    def _gathered_keys(self, n: OpNode, b: str, sa, sb):
        """Under context parallelism each chip holds a slice of the sequence: Q·Kᵀ needs every key
        (Kᵀ's columns split like Q's rows) and P·V every value (V's rows split, P's columns whole),
        so the right operand's split dim is gathered from the other chips before the matmul (ring
        attention sends the same bytes, overlapped with the blocks' compute)."""
        axis = self.context.axis
        dim = None
        if sb[-1] == axis and sa[-2] == axis:
            dim = len(sb) - 1
        elif sb[-2] == axis and sa[-1] is None:
            dim = len(sb) - 2
        if dim is None:
            return sb
        self.gather_before.setdefault(n.name, []).append((b, dim, axis))
        return tuple(None if i == dim else x for i, x in enumerate(sb))

    def _weight_gradient(self, n: OpNode) -> bool:
        """Whether n writes a part of a training step's gradient buffer (a weight's gradient)."""
        if self.training is None or self.data is None or not n.output or self.training.buffer is None:
            return False
        return self.program.tensors[n.output].storage == self.training.buffer

    def _free_rhs(self, a, b, sa, tensor, n) -> Spec:
        """The split of a free right operand: column- or row-parallel under `parallel tensor`,
        else the one that keeps the matmul local (contracted dim as the activation's)."""
        sb = _batch(self.shape(b), sa, self.shape(a))
        if tensor is not None and self.weight(b) and sa[-1] is None and tensor.axis not in sa \
                and n.output not in self.row_wise_read:
            # column-parallel; a product a row-wise op reads whole (an MoE router's scores, whose
            # softmax needs every expert's) keeps its weight whole, as Megatron-LM replicates it
            return sb + (None, tensor.axis)
        return sb + (sa[-1], None)                      # row-parallel when the activation is split

    def _reduce(self, n: OpNode) -> Spec:
        (x,) = n.inputs
        s = self.fixed(x, n.span)
        out = self.shape(n.output)
        summed = n.option("sum_leading")  # a broadcast operand's gradient: the leading dims summed
        if summed is not None:
            lead = self._over_data_and_context({x for x in s[:int(summed)] if x is not None}, n)
            if len(lead) > 1:
                raise SemanticError("the gradient of a broadcast operand is summed over rows split over two "
                                    "axes", n.span)
            if lead:
                self.partial[n.name] = lead.pop()
            return s[int(summed):]
        axis = _reduced_axis(self.shape(x), out, self.program.bindings, n)
        if s[axis] is not None:
            self.partial[n.name] = s[axis]
        return s[:axis] + s[axis + 1:]

    def _rowwise(self, n: OpNode) -> Spec:
        """A rowwise op (softmax, a norm; in a backward, of several operands of one shape: the output,
        its gradient): every operand split alike, the rows whole."""
        specs = [self.fixed(x, n.span) for x in n.inputs]
        s = specs[0]
        for x, other in zip(n.inputs[1:], specs[1:]):
            if other != s:
                raise SemanticError(f"{n.op.name} reads '{n.inputs[0]}' {_text(s)} and '{x}' {_text(other)}: its "
                                    "operands must be split alike", n.span)
        x = n.inputs[0]
        if s and s[-1] is not None:
            raise SemanticError(f"{n.op.name} works on whole rows, but the last dimension of '{x}' is split "
                                f"over {s[-1]}", n.span, "gather it first: `g = all_gather(x, over = ..., axis = -1)`")
        return s


# --- helpers of the propagation ---------------------------------------------------------------

def _text(spec) -> str:
    return "[" + ", ".join(a or "_" for a in spec) + "]"


def _axis_text(axis) -> str:
    return f"split over {axis}" if axis else "whole"


def _aligned(shape, spec, out):
    """(output dim index, axis) for each dim of an operand, aligned from the right; broadcast dims skipped."""
    offset = len(out) - len(shape)
    return [(offset + i, spec[i]) for i in range(len(shape)) if not (shape[i] == 1 and out[offset + i] != 1)]


def _batch(shape, other_spec, other_shape) -> Spec:
    """Batch dims of a free operand, taking the other operand's splits (aligned from the right)."""
    nb, ob = len(shape) - 2, len(other_shape) - 2
    out = []
    for i in range(nb):
        j = ob - (nb - i)
        out.append(other_spec[j] if 0 <= j and other_shape[j] == shape[i] else None)
    return tuple(out)


def _merge_batch(sha, sa, shb, sb, n):
    nb = max(len(sha), len(shb))
    out = []
    for i in range(1, nb + 1):
        axes = {s[-i] for sh, s in ((sha, sa), (shb, sb)) if len(sh) >= i and not sh[-i] == 1}
        axes.discard(None)
        if len(axes) > 1 or (axes and any(len(sh) >= i and s[-i] is None and sh[-i] != 1
                                          for sh, s in ((sha, sa), (shb, sb)))):
            raise SemanticError("matmul: the operands' batch dimensions are split differently", n.span)
        out.append(axes.pop() if axes else None)
    return tuple(reversed(out))


def _check_distinct(spec, partial, n) -> None:
    used = [a for a in spec if a is not None] + ([partial] if partial else [])
    if len(used) != len(set(used)):
        raise SemanticError(f"{n.op.name}: the result would be split over the same axis twice", n.span,
                            "split the operands over different mesh axes")


def _reduced_axis(shape, out, bindings, n) -> int:
    for i in range(len(shape)):
        rest = shape[:i] + shape[i + 1:]
        if len(rest) == len(out) and all(same_dim(a, b, bindings) for a, b in zip(rest, out)):
            return i
    raise SemanticError("cannot tell which dimension this reduction removes", n.span)


def _is_transpose(p: _Propagation, n: OpNode) -> bool:
    src, out = p.shape(n.inputs[0]), p.shape(n.output)
    return (n.op.name == "transpose" and len(src) >= 2 and tuple(out) == tuple(src[:-2]) + (src[-1], src[-2]))


def _view_forward(p: _Propagation, n: OpNode, spec: Spec) -> Spec:
    src, out = p.shape(n.inputs[0]), p.shape(n.output)
    if _is_transpose(p, n):
        return tuple(spec[:-2]) + (spec[-1], spec[-2])
    return _carry(src, spec, out, p.program.bindings, n, p.view_maps, p._context_axis())


def _view_inverse(p: _Propagation, n: OpNode, spec: Spec) -> Spec:
    src, out = p.shape(n.inputs[0]), p.shape(n.output)
    if _is_transpose(p, n):
        return tuple(spec[:-2]) + (spec[-1], spec[-2])
    return _carry(out, spec, src, p.program.bindings, n, p.view_maps, p._context_axis())


def _carry(src, spec, out, bindings, n, maps=None, sequence_axis=None) -> Spec:
    """A reshape keeps a split when the split dim starts where a dim of the result starts (same
    product of the dims before it) and that dim is its outermost part (a run of result dims from it
    multiplies to the split dim) or holds it whole (a run of source dims from it multiplies to that
    dim): the split goes to that dim. Otherwise the view also permutes (the stdlib's attention lays
    [b, s, heads·head_dim] out as [b, kv_heads, group·s, head_dim]): when it keeps its leading (batch)
    dims, the split goes to the outermost result dim past them that has the split dim's symbols and
    divides it or is a multiple of it (heads go to kv_heads; the sequence never takes a split of heads).
    Sizes alone can be ambiguous where the numbers coincide (a literal sequence of 1024 = kv_heads ·
    head_dim): a permuting view that undoes an earlier one (the attention's output back to
    [b, s, heads·head_dim]) sends the split back where the earlier view took it from (`maps`)."""
    result = [None] * len(out)
    maps = {} if maps is None else maps
    key = (tuple(src), tuple(out))
    for i, axis in enumerate(spec):
        if axis is None:
            continue
        j = _positional(src, out, i, bindings)
        if j is None:
            j = next((a for (a_shape, b_shape, a), b in maps.items()
                      if (b_shape, a_shape) == key and b == i), None)
        if j is None and axis == sequence_axis:
            j = _sequence(src, out, i, bindings)   # the context split: the sequence, wherever it went
        if j is None:
            j = _permuted(src, out, i, bindings)
            if j is not None:
                maps[key + (i,)] = j
        if j is None:
            raise SemanticError(f"this reshape cannot keep the split of dimension {i} (over {axis})", n.span,
                                "a split survives a reshape only as the outermost part of a merged or split dim")
        result[j] = axis
    return tuple(result)


def _is_one(dim, bindings) -> bool:
    return same_dim(dim, sympy.Integer(1), bindings)


def _run(dims, start, target, bindings) -> bool:
    """Whether dims[start], dims[start]·dims[start+1], ... reaches `target`."""
    product = sympy.Integer(1)
    for d in dims[start:]:
        product *= d
        if same_dim(product, target, bindings):
            return True
    return False


def _positional(src, out, i, bindings):
    before = sympy.Mul(*src[:i])
    for j in range(len(out)):
        if _is_one(out[j], bindings) or not same_dim(sympy.Mul(*out[:j]), before, bindings):
            continue  # size-1 dims never split
        if _run(out, j, src[i], bindings) or _run(src, i, out[j], bindings):
            return j
    return None


def _sequence(src, out, i, bindings):
    """Where a permuting view puts a split sequence: the first dim past the kept leading ones that is
    the sequence or a multiple of it (the attention's group·s), never one it divides (kv_heads)."""
    lead = 0
    while lead < min(len(src), len(out)) and lead != i and same_dim(src[lead], out[lead], bindings):
        lead += 1
    if lead == 0:
        return None
    for j in range(lead, len(out)):
        a, b = src[i].xreplace(bindings), out[j].xreplace(bindings)
        if not _is_one(out[j], bindings) and (b / a).is_integer:
            return j
    return None


def _permuted(src, out, i, bindings):
    lead = 0
    while lead < min(len(src), len(out)) and lead != i and same_dim(src[lead], out[lead], bindings):
        lead += 1
    if lead == 0:  # only a view that keeps its leading (batch) dims permutes the rest
        return None
    for j in range(lead, len(out)):
        if _is_one(out[j], bindings) or out[j].free_symbols != src[i].free_symbols:
            continue
        a, b = src[i].xreplace(bindings), out[j].xreplace(bindings)
        if (a / b).is_integer or (b / a).is_integer:
            return j
    return None


# --- the local program ------------------------------------------------------------------------

def _localize(program: Program, p: _Propagation) -> Program:
    sizes = {a.name: a.size for a in program.system.axes}
    if p.compound is not None:   # the batch over the expert and data axes at once
        name, inner, outer = p.compound
        sizes[name] = sizes[inner] * sizes[outer]
    errors: list[CostlangError] = []
    tensors: dict[str, Tensor] = {}
    said: set = set()
    splits: list = []   # (tensor, spec, sizes, span) of each split that a free symbol leaves undecided
    for t in program.tensors.values():
        spec = p.spec.get(t.name) or (None,) * len(t.shape)
        if t.name in p.zero_split:  # a ZeRO shard of a flat buffer, padded as ZeRO pads it
            tensors[t.name] = dataclasses.replace(t, shape=(zero_shard(t.shape[0], sizes[p.data.axis],
                                                                       program.bindings),))
            continue
        try:
            span = p.explicit.get(t.name) or t.span
            shape = _local_shape(t, spec, sizes, program.bindings, span)
            if any(axis is not None and not (dim / sizes[axis]).xreplace(program.bindings).is_number
                   for dim, axis in zip(t.shape, spec)):
                splits.append((t, spec, sizes, span))
        except _Undividable as e:
            error = _at_users_line(program, t, e)
            if (error.span, error.message) not in said:  # one error per parallel line and dimension
                said.add((error.span, error.message))
                errors.append(error)
            shape = t.shape
        tensors[t.name] = dataclasses.replace(t, shape=shape)
    if errors:
        raise ErrorGroup(errors)
    nodes: dict[str, OpNode] = {}
    algorithm = dict(p.parallel["tensor"].options).get("algorithm") if "tensor" in p.parallel else None
    for n in program.nodes.values():
        spec = p.spec.get(n.output) if n.output else None
        split = _work_axes(n, p, spec)
        flops = n.flops / sympy.Mul(*[sizes[a] for a in split]) if split else n.flops
        node = dataclasses.replace(n, flops=flops)
        if program.training is not None and n.name == program.training.update and p.data is not None:
            # the optimizer: under ZeRO (stage ≥ 1) each chip updates its 1/N_d of the parameters
            if zero_stage(program) >= 1:
                size = sizes[p.data.axis]
                node = dataclasses.replace(node, flops=n.flops / size, reads=_share(n.reads, size),
                                           writes=_share(n.writes, size))
        elif n.name in p.batch_split:  # a custom kernel's stated figures are the whole batch's
            size = sympy.Mul(*[sizes[a] for a in p.batch_split[n.name]])
            node = dataclasses.replace(node, flops=n.flops / size, reads=_share(n.reads, size),
                                       writes=_share(n.writes, size))
        if n.name in p.gathered:  # each chip gathers the rows of its range: the stated work is shared
            size = sizes[p.parallel["tensor"].axis]
            node = dataclasses.replace(node, reads=_share(node.reads, size))
        for operand, dim, axis in p.gather_before.get(n.name, ()):
            node = _insert_gather(program, node, operand, dim, axis, sizes[axis], tensors, nodes)
        if n.comms is not None:
            spec_op = program.ops[n.comms.collective]
            node = dataclasses.replace(node, comms=comms_of(spec_op, n.comms.axis, n.comms.group,
                                                            tensors[n.inputs[0]].bytes))
        if n.name in p.scatter:
            axis, dim = p.scatter[n.name]
            _insert_reduce_scatter(program, node, axis, sizes[axis], dim, tensors, nodes)
            continue
        axis = p.partial.get(n.name)
        if axis is None:
            nodes[n.name] = node
            continue
        _insert_all_reduce(program, node, axis, sizes[axis], tensors, nodes, algorithm)
    return dataclasses.replace(_parallelisms(program, p, tensors, nodes, sizes), splits=tuple(splits))


def split_errors(program: Program, bindings: dict) -> Optional[CostlangError]:
    """The first error (in the file's order) that sharding `program` would raise with the symbols'
    values `bindings` (one that binds the free symbols its splits depend on), from its splits
    alone: what a whole number for a free symbol must satisfy, checked without resolving and
    sharding the file again. None: every split divides (the file may reject the value otherwise)."""
    decided: dict = {}
    failing = []       # (tensor, spec, sizes, span, where its error lands) in the tensors' order
    for t, spec, sizes, span in program.splits:
        for dim, axis in zip(t.shape, spec):
            if axis is None:
                continue
            key = (dim, sizes[axis])
            divides = decided.get(key)
            if divides is None:
                bound = (dim / sizes[axis]).xreplace(bindings)
                divides = decided[key] = not bound.is_number or bool(bound.is_integer and bound.is_positive)
            if not divides:   # the first dimension that does not divide is the tensor's error
                split = next((s for s in program.parallels if s.axis == axis), None)
                lands = span if not in_stdlib(span) or split is None or in_stdlib(split.span) else split.span
                failing.append((t, spec, sizes, span, lands))
                break
    if not failing:
        return None
    files: dict = {}   # as ErrorGroup orders its errors: files in the order their first error came
    first = min(failing, key=lambda f: (files.setdefault(f[4].file, len(files)), f[4].line, f[4].column)
                if f[4] is not None else (1 << 30, 0, 0))
    t, spec, sizes, span, _ = first
    try:
        _local_shape(t, spec, sizes, bindings, span)
    except _Undividable as e:
        return _at_users_line(program, t, e)
    return None


def _parallelisms(program: Program, p: _Propagation, tensors, nodes, sizes) -> Program:
    """Pipeline stages and their sends; a training step's gradient all-reduce (passes.parallelism)."""
    repeats = program.repeats
    pipeline, data, expert = p.parallel.get("pipeline"), p.parallel.get("data"), p.parallel.get("expert")
    if expert is not None:
        share = sizes[p.compound[0]] if p.compound is not None else None
        nodes = insert_all_to_all(program, nodes, tensors, expert, sizes, p.experts, share)
    if pipeline is not None:
        repeats = stage_repeats(program, pipeline, sizes, program.bindings)
        nodes = insert_sends(program, nodes, tensors, pipeline, sizes)
    share = sympy.Integer(1)
    elsewhere = frozenset()
    if pipeline is not None and sizes[pipeline.axis].xreplace(program.bindings) != 1:
        elsewhere = smaller_end(program, tensors, end_weights(program), program.bindings)
    if program.training is not None:  # each chip updates its stage's layers, its part of each weight
        share = stage_share(program, repeats, tensors, elsewhere)
        scale_to_stage(program, nodes, tensors, share)
    if data is not None and program.training is not None:
        if p.compound is not None:
            dense = _dense_weights(program, p, tensors, repeats, expert.axis)
            nodes = insert_dense_all_reduce(program, nodes, tensors, expert, sizes, dense)
        nodes = insert_zero(program, nodes, tensors, data, sizes, share)
    elif data is not None and dict(data.options).get("gradients") is not None:
        insert_gradient_all_reduce(program, nodes, tensors, data, sizes, repeats, elsewhere)
    return dataclasses.replace(program, tensors=tensors, nodes=nodes, repeats=repeats, sharded=True, whole=program,
                               other_stage_weights=elsewhere)


def _dense_weights(program, p: _Propagation, tensors, repeats, axis) -> sympy.Expr:
    """The parameters a chip holds of the weights not split over the expert axis (their count)."""
    return trainable_count(program, tensors, repeats, lambda k: axis not in (p.spec.get(k) or ()))


def _share(stated, size):
    return stated / size if stated is not None else None


def _work_axes(n: OpNode, p: _Propagation, spec) -> set:
    """The mesh axes that share an op's work (its FLOPs are divided by their sizes)."""
    if n.kind in ("view", "custom", "collective"):
        return set()
    if n.kind in ("reduce", "rowwise"):
        return {a for a in p.spec.get(n.inputs[0], ()) if a}
    # a matmul whose partial result is all-reduced here or after a sum of partials did its part of
    # the contraction; the sum itself adds whole tensors on every chip
    contracted = None if n.name in p.partial_sums else (p.partial.get(n.name) or p.summed_later.get(n.name))
    return ({a for a in (spec or ()) if a} | ({contracted} if contracted else set())
            | ({p.deferred[n.name]} if n.name in p.deferred else set())
            | ({p.also_over[n.name]} if n.name in p.also_over else set()))


def _local_shape(t: Tensor, spec, sizes, bindings, span):
    shape = []
    for dim, axis in zip(t.shape, spec):
        if axis is None:
            shape.append(dim)
            continue
        local = dim / sizes[axis]
        bound = local.xreplace(bindings)
        if bound.is_number and not (bound.is_integer and bound.is_positive):
            raise _Undividable(f"dimension {dim} of '{t.name}' = {dim.xreplace(bindings)} does not divide "
                               f"over axis {axis} of {sizes[axis].xreplace(bindings)} chips", span,
                               index=len(shape), value=dim.xreplace(bindings), axis=axis,
                               chips=sizes[axis].xreplace(bindings))
        shape.append(local)
    return tuple(shape)


class _Undividable(SemanticError):
    """A dimension that a split over a mesh axis does not divide (its index, value, axis and chips)."""

    def __init__(self, message, span, *, index, value, axis, chips):
        super().__init__(message, span)
        self.index, self.value, self.axis, self.chips = index, value, axis, chips


def _at_users_line(program: Program, t: Tensor, e: _Undividable) -> CostlangError:
    """A split that does not divide a tensor the stdlib declares (a model's KV heads) is the user's
    `parallel` line's doing: the error points there, names the tensor, and says what to change."""
    split = next((s for s in program.parallels if s.axis == e.axis), None)
    if not in_stdlib(e.span) or split is None or in_stdlib(split.span):
        return e
    scope = t.name.rpartition(".")[0]
    while scope and scope not in program.instances:  # the innermost block instance that holds it
        scope = scope.rpartition(".")[0]
    instance = program.instances.get(scope)
    kv = instance is not None and "attention" in instance.block and e.index == 1
    experts = split.kind == "expert" and e.index == 0
    what = (f"the {e.value} KV heads" if kv else f"the {e.value} experts" if experts
            else f"dimension {e.index} ({e.value}) of '{t.name}'")
    message = (f"{e.chips}-way {split.kind} parallelism over {split.axis} splits {what} of '{scope or t.name}'"
               f"{' (' + instance.block + ')' if instance is not None else ''}, and {e.chips} does not divide "
               f"{e.value}")
    if kv and (e.chips / e.value).is_integer:
        hint = (f"replicate the KV heads: build the model from llm's layers with kv_heads = {e.chips} (each KV "
                f"head then held by {e.chips / e.value} chips, its cache counted on each), or split over at most "
                f"{e.value} chips (a system of your own with `axis {split.axis} = {e.value}`)")
    elif kv:
        hint = (f"split over a number of chips that divides {e.value}, or over a multiple of {e.value} with the KV "
                f"heads replicated (llm's layers with kv_heads = the number of chips)")
    else:
        hint = (f"split over a number of chips that divides {e.value} (a system of your own with "
                f"`axis {split.axis} = ...`), or keep this dimension whole")
    return SemanticError(message, split.span, hint)


def _insert_gather(program, node: OpNode, operand: str, dim: int, axis, size, tensors, nodes) -> OpNode:
    """An all-gather of `operand`'s dim `dim` over `axis` before `node`, which reads the whole result."""
    taken = set(tensors) | set(program.nodes) | set(nodes)
    whole = fresh(f"{operand}_gathered", taken)
    source = tensors[operand]
    shape = tuple(d * size if i == dim else d for i, d in enumerate(source.shape))
    tensors[whole] = dataclasses.replace(source, name=whole, shape=shape, role="intermediate", storage=whole,
                                         partial=False)
    name = fresh(f"{source.storage}_all_gather", taken | {whole})   # a view (Kᵀ) is named for K
    nodes[name] = collective_node(program, "all_gather", None, name, source, whole, axis, size, node.span,
                                  node.repeat, node.scope)
    return dataclasses.replace(node, inputs=tuple(whole if x == operand else x for x in node.inputs))


def _insert_reduce_scatter(program, node: OpNode, axis, size, dim, tensors, nodes) -> None:
    """After a partial sum whose result each chip keeps a slice of (on `dim`): the reduce-scatter."""
    out = node.output
    taken = set(tensors) | set(program.nodes) | set(nodes)
    partial = fresh(f"{out}_partial", taken)
    local = tensors[out]
    whole = tuple(d * size if i == dim else d for i, d in enumerate(local.shape))
    tensors[partial] = dataclasses.replace(local, name=partial, shape=whole, role="intermediate", storage=partial)
    nodes[node.name] = dataclasses.replace(node, output=partial)
    name = fresh(f"{out}_reduce_scatter", taken | {partial})
    nodes[name] = collective_node(program, "reduce_scatter", None, name, tensors[partial], out, axis, size,
                                  node.span, node.repeat, node.scope)


def _insert_all_reduce(program, node: OpNode, axis, size, tensors, nodes, algorithm) -> None:
    out = node.output
    taken = set(tensors) | set(program.nodes) | set(nodes)
    partial = fresh(f"{out}_partial", taken)
    tensors[partial] = dataclasses.replace(tensors[out], name=partial, role="intermediate", storage=partial)
    nodes[node.name] = dataclasses.replace(node, output=partial)
    name = fresh(f"{out}_all_reduce", taken | {partial})
    nodes[name] = collective_node(program, "all_reduce", algorithm, name, tensors[partial], out, axis, size,
                                  node.span, node.repeat, node.scope)
