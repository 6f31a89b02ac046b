"""The memory-hierarchy part of a kernel's derivation: per-level times, the tiling (tiled matmul or
FlashAttention), access granularity and efficiency factors.

Input: a `MemoryDerivation` (`analysis.derive_memory`). Output: markup blocks, through the
`DerivationPrinter`'s markup methods; a mixin like `SolveDerivation`.
"""
from __future__ import annotations

from costlang.analysis.derive_memory import derive_memory
from costlang.units import BYTE

__all__ = ["MemoryDerivationMixin"]


class MemoryDerivationMixin:
    def _memory_blocks(self, analysis, k) -> list[str]:
        d = derive_memory(analysis, k)
        if d is None:
            return []
        blocks = [self.paragraph(self.bold(self._say("memory_title")))]
        if d.levels:
            level = d.binding or analysis.hardware.main_memory.name
            blocks += [self.paragraph(self._say("memory_levels", Tm=self.math(r"T_{\mathrm{memory}}"),
                                                level=self.code(level))), self._steps(d.levels)]
        if d.tiling_kind == "matmul":
            blocks += self._tiled(analysis, k, d)
        elif d.tiling_kind == "flash":
            blocks += self._flashed(analysis, k, d)
        if d.strided:
            sector = self._chain(analysis.value(analysis.hardware.sector), BYTE).split(" ", 1)[1]
            blocks += [self.paragraph(self._say("strided", sector=self.math(sector))), self._steps(d.strided)]
        if d.efficiencies:
            items = ", ".join(self.code(e.key) + " " + self.math(self._tex(analysis.value(e.value))[0])
                              + (" (" + self.label(e.source) + ")" if e.source else "") for e in d.efficiencies)
            blocks.append(self.paragraph(self._say("efficiency", items=items)))
        return blocks

    def _tiled(self, analysis, k, d) -> list[str]:
        tile = self.math(r"b_m \times b_n \times b_k")
        steps = list(d.tiling)
        blocks = [self.paragraph(self._say("tiling_matmul", tile=tile)), self._steps(steps[:4]),
                  self.paragraph(self._say("tiling_limit")), self._steps(steps[4:6])]
        for tensor, level in d.held:
            blocks.append(self.paragraph(self._say("tiling_held", tensor=self.code(tensor), level=self.code(level))))
        blocks += [self._steps(steps[6:]), self._fit(analysis, k, d)]
        return blocks

    def _flashed(self, analysis, k, d) -> list[str]:
        steps = list(d.tiling)
        M = self.math("M")
        return [self.paragraph(self._say("flash", M=M, C=self.math("C"), Tc=self.math("T_c"))), self._steps(steps[:-1]),
                self.paragraph(self._say("flash_theta")), self._steps(steps[-1:]), self._fit(analysis, k, d)]

    def _fit(self, analysis, k, d) -> str:
        t = k.cost.tiling
        if t.capacity is None:
            return ""
        cap = self.math(self._chain(analysis.value(t.capacity), BYTE).split(" ", 1)[1])
        key = {True: "fits", False: "does_not_fit", None: "fit_unknown"}[d.fits]
        return self.paragraph(self._say(key, stage=self.code(d.stage), capacity=cap))
