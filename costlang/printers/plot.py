"""Plots: analysis results → a log-log roofline, or a quantity swept against a symbol (matplotlib).

Input: one `Analysis` per hardware (optionally an unfused one too, for fusion arrows), or a sweep:
an expression in one symbol, a range, a reference line and the crossing. Output: a `Plot`, which
holds a matplotlib `Figure` (Agg canvas, no pyplot state), saves to PNG/SVG/PDF reproducibly and
shows itself in Jupyter (`_repr_png_`). matplotlib is imported only here, only when plotting.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

import sympy

from ..errors import SemanticError
from ..units import BYTE_PER_S, FLOP_PER_S, INTENSITY
from .mathtex import prefixed_tex

__all__ = ["Plot", "roofline", "sweep", "sample", "plot_command"]

_COLORS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown")
_FIXED_METADATA = {".svg": {"Date": None}, ".pdf": {"CreationDate": None, "ModDate": None},
                   ".png": {"Software": None}}


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
        if suffix not in _FIXED_METADATA:
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


def sample(expr, symbol, xs) -> list[float]:
    """`expr` at each x, exactly (no code generation from expressions), then as floats."""
    return [float(sympy.N(expr.xreplace({symbol: sympy.Rational(str(x))}), 15)) for x in xs]


def sweep(expr, symbol, lo: float, hi: float, reference=None, crossings: Sequence = (),
          ylabel: str = "", reference_label: str = "", points: int = 200) -> Plot:
    """`expr` against `symbol` on a log x axis from lo to hi, a reference line, crossings marked."""
    fig = _figure()
    ax = fig.add_subplot(1, 1, 1)
    ax.set_xscale("log")
    step = (hi / lo) ** (1 / (points - 1))
    xs = [lo * step ** j for j in range(points)]
    ys = sample(expr, symbol, xs)
    ax.plot(xs, ys, "-", label=ylabel or str(expr))
    if all(y > 0 for y in ys):
        ax.set_yscale("log")
    if reference is not None:
        ref = float(sympy.N(reference, 15))
        ax.axhline(ref, color="tab:red", linestyle="--", label=reference_label or f"{ref:.4g}")
    for c in crossings:
        x = float(sympy.N(c, 15))
        y = sample(expr, symbol, [x])[0]
        ax.plot([x], [y], "o", color="tab:red", label=f"crossing at {symbol} = {x:.4g}")
        ax.axvline(x, color="tab:red", linestyle=":", linewidth=1)
    ax.set_xlabel(str(symbol))
    ax.set_ylabel(ylabel)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    return Plot(fig)


def sweep_from_query(a, name: str, span: Optional[str], against: Optional[str]) -> Plot:
    """The query `name` (an expression in one free symbol) against that symbol, with the
    reference line (I* for an intensity, else the query `against`) and where they cross."""
    from ..analysis.derive import crossings
    by_name = {q.name: q for q in a.queries}
    if name not in by_name or not hasattr(by_name[name].value, "expr"):
        raise SemanticError(f"there is no numeric query named {name!r} to sweep", None,
                            "queries: " + ", ".join(sorted(by_name)))
    value = by_name[name].value
    expr = a.value(value.expr)
    free = sorted(expr.free_symbols, key=str)
    if len(free) != 1:
        raise SemanticError(f"query {name!r} must depend on exactly one free symbol to be swept, "
                            f"not {len(free)}", None, "leave one `dim` or `param` without a value")
    if against in (None, "istar") and value.unit == INTENSITY:
        reference, label = a.value(a.totals.critical_intensity), "I*"
    elif against in by_name:
        reference, label = a.value(by_name[against].value.expr), against
    else:
        reference, label = None, ""
    lo, hi = (float(x) for x in (span or "1:10000").split(":"))
    found = crossings(expr, reference, free[0], lo, hi) if reference is not None else ()
    return sweep(expr, free[0], lo, hi, reference, found, ylabel=name, reference_label=label)


def plot_command(args) -> str:
    """`costlang plot`: the roofline (one analysis per --hardware), or --sweep of a query."""
    from .. import load
    model = load(args.file)
    if args.sweep:
        plot = sweep_from_query(model.analyze(fusion=args.fusion), args.sweep, args.range, args.against)
    else:
        hardware = args.hardware or [None]
        analyses = [model.analyze(fusion=args.fusion, hardware=h) for h in hardware]
        unfused = [model.analyze(fusion="none", hardware=h) for h in hardware] if args.compare_fusion else []
        plot = roofline(analyses, unfused)
    plot.save(args.output)
    return ""
