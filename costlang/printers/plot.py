"""Plots: analysis results → a log-log roofline, or a quantity swept against a symbol (matplotlib).

Input: one `Analysis` per hardware (optionally an unfused one too, for fusion arrows), or a
`QueryCurve` (`analysis.curve`: a query tabulated over one symbol, its reference line and the
exact crossings). Output: a `Plot`, which holds a matplotlib `Figure` (Agg canvas, no pyplot
state), saves to PNG/SVG/PDF reproducibly and shows itself in Jupyter (`_repr_png_`). This module
only draws; matplotlib is imported only here, only when plotting.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

import sympy

from ..units import BYTE_PER_S, FLOP_PER_S
from .mathtex import prefixed_tex

__all__ = ["Plot", "roofline", "sweep", "FORMATS"]

_COLORS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown")
_FIXED_METADATA = {".svg": {"Date": None}, ".pdf": {"CreationDate": None, "ModDate": None},
                   ".png": {"Software": None}}
FORMATS = (".png", ".svg", ".pdf")  # the file suffixes a plot can be saved as


def _figure(width=7.0, height=4.8):
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    fig = Figure(figsize=(width, height))
    FigureCanvasAgg(fig)
    return fig


@dataclass
class Plot:
    figure: object   # matplotlib.figure.Figure

    @property
    def axes(self):
        return self.figure.axes[0]

    def save(self, path) -> Path:
        """Write PNG, SVG or PDF; SVG and PDF carry no date and a fixed hash salt (reproducible)."""
        import matplotlib
        path = Path(path)
        suffix = path.suffix.lower()
        if suffix not in _FIXED_METADATA:  # the CLI checks this before it analyses anything
            raise ValueError(f"cannot write a plot to {path.name!r}: use .png, .svg or .pdf")
        with matplotlib.rc_context({"svg.hashsalt": "costlang"}):
            self.figure.savefig(path, metadata=_FIXED_METADATA[suffix], bbox_inches="tight")
        return path

    def _repr_png_(self) -> bytes:
        import io
        buf = io.BytesIO()
        self.figure.savefig(buf, format="png", bbox_inches="tight")
        return buf.getvalue()


def _number(a, e) -> Optional[float]:
    """A bound, finite, positive value as a float (a log axis cannot place anything else)."""
    v = a.value(e)
    if not (isinstance(v, sympy.Basic) and v.is_number) or v in (sympy.oo, sympy.zoo, sympy.nan):
        return None
    x = float(sympy.N(v, 20))
    return x if x > 0 else None


def _plain(text: str) -> str:
    """A prefixed value for a label (matplotlib mathtext would need `$`; the labels are plain)."""
    return text.replace(r"\,", " ").replace(r"\mathrm{", "").replace(r"\mu ", "µ").replace("}", "")


def _points(a):
    """(kernel name, I, attainable) for each kernel with a finite positive I."""
    out = []
    for k in a.kernels:
        i, p = _number(a, k.intensity), _number(a, k.attainable)
        if i is not None and p is not None:
            out.append((k, i, p))
    return out


def _roof(ax, a, color, tag, xs):
    """The memory slope(s) and one compute ceiling per dtype the kernels compute in, I* marked."""
    hw = a.hardware
    dtypes = sorted({k.cost.math_dtype for k in a.kernels if hw.peak(k.cost.math_dtype) is not None})
    main_bw = float(hw.bandwidth)
    for style, m in zip(("-", "--", ":"), [m for m in hw.memories if m.bandwidth is not None]):
        bw = float(m.bandwidth)
        top = max([float(hw.peak(d)) for d in dtypes] or [bw * xs[-1]])
        ax.plot([xs[0], top / bw], [bw * xs[0], top], style, color=color,
                label=f"{tag}{m.name} {_plain(prefixed_tex(bw, BYTE_PER_S)[0])}")
    for d in dtypes:
        peak = float(hw.peak(d))
        istar = peak / main_bw
        ax.plot([istar, xs[-1]], [peak, peak], "-", color=color, linewidth=2,
                label=f"{tag}{d} peak {_plain(prefixed_tex(peak, FLOP_PER_S)[0])}")
        ax.axvline(istar, color=color, linestyle=":", linewidth=1)
        ax.annotate(f"I* = {istar:.4g}", (istar, peak), textcoords="offset points", xytext=(4, -14),
                    color=color, fontsize=8)


def roofline(analyses: Sequence, unfused: Sequence = ()) -> Plot:
    """The roofline of each analysis' hardware with its kernels at (I, attainable).

    `unfused`: the same programs analysed with fusion "none", one per analysis; each unfused kernel
    gets an arrow to the fused kernel that contains its ops.
    """
    fig = _figure()
    ax = fig.add_subplot(1, 1, 1)
    ax.set_xscale("log")
    ax.set_yscale("log")
    xs = _x_range(analyses, unfused)
    for n, a in enumerate(analyses):
        color = _COLORS[n % len(_COLORS)]
        tag = f"{a.hardware.name}: " if len(analyses) > 1 else ""
        _roof(ax, a, color, tag, xs)
        for k, i, p in _points(a):
            ax.plot([i], [p], "o", color=color, label=f"{tag}kernel {k.name}")
            ax.annotate(k.name, (i, p), textcoords="offset points", xytext=(5, 5), fontsize=8)
        if n < len(unfused):
            _fusion_arrows(ax, a, unfused[n], color)
    ax.set_xlabel("arithmetic intensity I (FLOP/B)")
    ax.set_ylabel("attainable performance (FLOP/s)")
    names = ", ".join(a.hardware.name for a in analyses)
    ax.set_title(f"Roofline: {Path(analyses[0].program.source_name).name} on {names}")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    return Plot(fig)


def _x_range(analyses, unfused):
    values = [i for a in list(analyses) + list(unfused) for _, i, _ in _points(a)]
    values += [float(a.hardware.peak(k.cost.math_dtype)) / float(a.hardware.bandwidth)
               for a in analyses for k in a.kernels if a.hardware.peak(k.cost.math_dtype) is not None]
    lo, hi = (min(values), max(values)) if values else (0.1, 1000.0)
    return [lo / 10, hi * 10]


def _fusion_arrows(ax, fused, unfused, color):
    points = {k.name: (k, i, p) for k, i, p in _points(fused)}
    for k, i, p in _points(unfused):
        target = next((v for v in points.values() if set(k.ops) <= set(v[0].ops)), None)
        if target is None or set(target[0].ops) == set(k.ops):
            continue
        ax.plot([i], [p], "x", color=color, label=f"unfused {k.name}")
        ax.annotate("", xy=(target[1], target[2]), xytext=(i, p),
                    arrowprops={"arrowstyle": "->", "color": color})


def sweep(curve) -> Plot:
    """A `QueryCurve` (analysis.curve) on a log x axis: the query, its reference, crossings marked."""
    fig = _figure()
    ax = fig.add_subplot(1, 1, 1)
    ax.set_xscale("log")
    ax.plot(curve.xs, curve.ys, "-", label=curve.label)
    if len(curve.ys) and bool((curve.ys > 0).all()):
        ax.set_yscale("log")
    if curve.reference is not None:
        ref, label = curve.reference, curve.reference_label
        if (ref == ref[0]).all():
            ax.axhline(float(ref[0]), color="tab:red", linestyle="--", label=label)
        else:
            ax.plot(curve.xs, ref, "--", color="tab:red", label=label)
    for x, y in curve.crossings:
        x, y = float(sympy.N(x, 15)), float(sympy.N(y, 15))
        ax.plot([x], [y], "o", color="tab:red", label=f"crossing at {curve.symbol} = {x:.4g}")
        ax.axvline(x, color="tab:red", linestyle=":", linewidth=1)
    ax.set_xlabel(curve.symbol)
    ax.set_ylabel(curve.label)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    return Plot(fig)
