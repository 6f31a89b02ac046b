"""The kernel graph kept up to date while fusion merges kernels, with a pruned cycle test.

Input: the operator graph and a starting partition. Output: an object that answers "would merging
kernel a into its consumer b close a cycle?" and performs the merge, without rebuilding the
quotient graph (`kernels.kernel_graph`) for each proposal.

Each kernel keeps a position in a topological order of the kernel graph. A path from a to b other
than the edge a → b can only pass through kernels positioned between them, so the search for one
is pruned to that window (Pearce and Kelly, "A dynamic topological sort algorithm for directed
acyclic graphs", JEA 2007): fusion merges neighbours, so the windows stay small and a sweep over
the edges is linear in practice. A merge reorders only the window: the kernels that reach b go
before the merged kernel, those a reaches go after it, and every other position is kept.
"""
from __future__ import annotations

import networkx as nx

from costlang.ir.graph import ordered_topological_sort

__all__ = ["KernelDag"]


class KernelDag:
    """Kernels (lists of ops) as integer ids, with successor/predecessor sets and positions."""

    def __init__(self, G: nx.DiGraph, groups, index: dict[str, int]):
        self.index = index
        self.ops: dict[int, list[str]] = dict(enumerate(list(g) for g in groups))  # unordered inside
        self.owner: dict[str, int] = {op: i for i, g in self.ops.items() for op in g}
        self.succ: dict[int, set[int]] = {i: set() for i in self.ops}
        self.pred: dict[int, set[int]] = {i: set() for i in self.ops}
        for u, v in G.edges:
            b = self.owner.get(v)
            if b is None:
                continue
            for a in self._upstream(G, u):
                if a != b:
                    self.succ[a].add(b)
                    self.pred[b].add(a)
        first = {k: min(index[op] for op in g) for k, g in self.ops.items()}
        edges = ((a, b) for a, bs in self.succ.items() for b in bs)
        self.pos: dict[int, int] = {k: i for i, k in enumerate(
            ordered_topological_sort(self.ops, edges, key=first.__getitem__))}

    def _upstream(self, G, n, seen=None) -> set[int]:
        """The kernels that produce what n reads (views are followed to the ops behind them)."""
        if n in self.owner:
            return {self.owner[n]}
        seen = set() if seen is None else seen
        out: set[int] = set()
        for p in G.predecessors(n):
            if p not in seen:
                seen.add(p)
                out |= self._upstream(G, p, seen)
        return out

    def group(self, op: str):
        """The id of the kernel that holds op (None for a view)."""
        return self.owner.get(op)

    def _forward(self, a: int, b: int) -> set[int]:
        """Kernels reachable from a (not through the edge a → b) positioned before b."""
        limit, seen, stack = self.pos[b], set(), [s for s in self.succ[a] if s != b]
        while stack:
            k = stack.pop()
            if k in seen or self.pos[k] >= limit:
                continue
            seen.add(k)
            stack.extend(self.succ[k])
        return seen

    def _backward(self, a: int, b: int) -> set[int]:
        """Kernels that reach b (not through the edge a → b) positioned after a."""
        limit, seen, stack = self.pos[a], set(), [p for p in self.pred[b] if p != a]
        while stack:
            k = stack.pop()
            if k in seen or self.pos[k] <= limit:
                continue
            seen.add(k)
            stack.extend(self.pred[k])
        return seen

    def closes_cycle(self, a: int, b: int) -> bool:
        """Whether merging producer a with consumer b would close a cycle: some path from a to b
        other than the edge a → b (through a kernel between them)."""
        if self.pos[a] > self.pos[b]:
            a, b = b, a
        return any(b in self.succ[k] for k in self._forward(a, b))

    def merge(self, a: int, b: int) -> tuple[int, int]:
        """Merge kernels a and b; returns (kept id, absorbed id). The larger kernel keeps its id
        and takes the smaller one's ops, so each op changes owner O(log n) times over a pass."""
        if self.pos[a] > self.pos[b]:
            a, b = b, a
        keep, gone = (a, b) if len(self.ops[a]) >= len(self.ops[b]) else (b, a)
        forward, backward = self._forward(a, b), self._backward(a, b)
        slots = sorted(self.pos[k] for k in forward | backward | {a, b})
        by_pos = lambda k: self.pos[k]  # noqa: E731
        for k, slot in zip(sorted(backward - forward, key=by_pos) + [keep] + sorted(forward, key=by_pos), slots):
            self.pos[k] = slot
        del self.pos[gone]
        moved = self.ops.pop(gone)
        self.ops[keep].extend(moved)
        for op in moved:
            self.owner[op] = keep
        for s in self.succ.pop(gone):
            self.pred[s].discard(gone)
            if s != keep:
                self.succ[keep].add(s)
                self.pred[s].add(keep)
        for p in self.pred.pop(gone):
            self.succ[p].discard(gone)
            if p != keep:
                self.pred[keep].add(p)
                self.succ[p].add(keep)
        self.succ[keep].discard(keep)
        self.pred[keep].discard(keep)
        return keep, gone

    def groups(self) -> list[tuple[str, ...]]:
        """The kernels, each as its ops in program order."""
        return [tuple(sorted(g, key=self.index.__getitem__)) for g in self.ops.values()]
