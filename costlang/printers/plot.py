"""Plots: analysis results → a log-log roofline, or a quantity swept against a symbol (matplotlib).

Input: one `Analysis` per hardware (optionally an unfused one too, for fusion arrows), or a
`QueryCurve` (`analysis.curve`: a query tabulated over one symbol, its reference line and the
exact crossings). Output: a `Plot`, which holds a matplotlib `Figure` (Agg canvas, no pyplot
state), saves to PNG/SVG/PDF reproducibly and shows itself in Jupyter (`_repr_png_`). This module
only draws; matplotlib is imported only here, only when plotting.
"""
from __future__ import annotations

import math
import re

from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

import numpy as np
import sympy

from costlang.units import BYTE_PER_S, FLOP_PER_S
from costlang.printers.derivation.mathtex import prefixed_tex
from costlang.printers.words.phrases import phrase

__all__ = ["Plot", "roofline", "sweep", "points", "validation", "pareto", "FORMATS"]

_COLORS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown")
_FIXED_METADATA = {".svg": {"Date": None}, ".pdf": {"CreationDate": None, "ModDate": None},
                   ".png": {"Software": None}}
FORMATS = (".png", ".svg", ".pdf")  # the file suffixes a plot can be saved as


@dataclass(frozen=True)
class Style:
    """Sizes for a figure: `paper` for notes, `slides` for a 16:9 slide seen from the back of a room."""
    width: float
    height: float
    font: float        # labels of points and annotations
    legend: float
    axis: float        # axis labels and title
    line: float
    marker: float


STYLES = {"paper": Style(7.0, 4.8, 8, 7, 10, 1.5, 6),
          "slides": Style(13.33, 7.5, 14, 12, 18, 2.5, 10)}


def _figure(style: Style):
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    fig = Figure(figsize=(style.width, style.height))
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
        path.write_bytes(self.to_bytes(suffix))
        return path

    def to_bytes(self, suffix: str, dpi: Optional[int] = None) -> bytes:
        """The file's contents for `.png`, `.svg` or `.pdf` (the file name never reaches matplotlib);
        `dpi` for a PNG (default 100). An SVG keeps its text as text (editable, searchable), naming
        its fonts; text in Korean, Chinese or Japanese is set in a font that has those glyphs."""
        import io

        import matplotlib
        _literal_labels(self.figure)
        cjk_fonts(self.figure)
        buf = io.BytesIO()
        with matplotlib.rc_context({"svg.hashsalt": "costlang", "svg.fonttype": "none"}):
            self.figure.savefig(buf, format=suffix.lstrip("."), metadata=_FIXED_METADATA[suffix],
                                bbox_inches="tight", dpi=dpi)
        return buf.getvalue()

    def _repr_png_(self) -> bytes:
        import io
        _literal_labels(self.figure)
        cjk_fonts(self.figure)
        buf = io.BytesIO()
        self.figure.savefig(buf, format="png", bbox_inches="tight")
        return buf.getvalue()


#: fonts with Hangul (and CJK ideographs), best first: Noto CJK and Source Han (Debian's
#: fonts-noto-cjk), Nanum (fonts-nanum), and the systems' own
CJK_FAMILIES = ("Noto Sans CJK KR", "Noto Sans KR", "Source Han Sans KR", "NanumGothic", "NanumBarunGothic",
                "Noto Sans CJK JP", "Noto Sans CJK SC", "Malgun Gothic", "Apple SD Gothic Neo", "AppleGothic",
                "UnDotum", "Baekmuk Gulim")
_CJK = re.compile("[\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")


class FontError(Exception):
    """No installed font has the glyphs a figure's text needs (the CLI says which to install)."""


def cjk_font() -> Optional[str]:
    """The first installed family of CJK_FAMILIES, or None."""
    from matplotlib import font_manager
    installed = {f.name for f in font_manager.fontManager.ttflist}
    return next((f for f in CJK_FAMILIES if f in installed), None)


def cjk_fonts(fig) -> None:
    """Every text of the figure with Hangul or CJK characters is set in a font that has them (with
    the default font after it for Latin text); FontError when none is installed, rather than empty
    boxes and a warning."""
    texts = [t for t in fig.findobj(lambda o: hasattr(o, "get_text") and hasattr(o, "set_fontfamily"))
             if _CJK.search(t.get_text() or "")]
    if not texts:
        return
    family = cjk_font()
    if family is None:
        raise FontError("the figure's text has Korean (or Chinese or Japanese) characters, and no installed "
                        "font has them: install one, e.g. Debian's `fonts-noto-cjk` or `fonts-nanum` "
                        "(apt install fonts-nanum), then run the command again")
    for t in texts:
        t.set_fontfamily([family, "DejaVu Sans"])


def _literal_labels(fig) -> None:
    """Labels, legends and notes hold user text (query names, symbols): shown as written, never
    read as matplotlib mathtext (`$\\frac{$` would not parse). Tick labels keep their mathtext."""
    texts = list(fig.texts)
    for ax in fig.axes:
        texts += [ax.title, ax.xaxis.label, ax.yaxis.label]
        if ax.get_legend() is not None:
            texts += ax.get_legend().get_texts()
    for t in texts:
        t.set_parse_math(False)


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


def points(a):
    """(kernel, I, attainable) for each kernel with a finite positive I."""
    out = []
    for k in a.kernels:
        i, p = _number(a, k.intensity), _number(a, k.attainable)
        if i is not None and p is not None:
            out.append((k, i, p))
    return out


def _roof(ax, a, color, tag, xs, style: Style, labels: list, words: dict):
    """The memory slope(s) and one compute ceiling per dtype the kernels compute in, I* marked."""
    hw = a.hardware
    ceilings = _ceilings(a)
    main_bw = float(hw.bandwidth)
    for line_style, m in zip(("-", "--", ":", "-."), [m for m in hw.memories if m.bandwidth is not None]):
        bw = _number(a, hw.chip_bandwidth(m))   # a per-SM level's ceiling is for the whole chip
        if bw is None:
            continue
        top = max([peak for _, peak in ceilings] or [bw * xs[-1]])
        ax.plot([xs[0], top / bw], [bw * xs[0], top], line_style, color=color, linewidth=style.line,
                label=f"{tag}{m.name} {_plain(prefixed_tex(bw, BYTE_PER_S)[0])}")
    for name, peak in ceilings:
        istar = peak / main_bw
        ax.plot([istar, xs[-1]], [peak, peak], "-", color=color, linewidth=style.line * 1.5,
                label=tag + words["peak"].format(dtype=name, value=_plain(prefixed_tex(peak, FLOP_PER_S)[0])))
        ax.axvline(istar, color=color, linestyle=":", linewidth=1)
        labels.append(_Label(f"I* = {istar:.4g}", istar, peak, color))


def _ceilings(a) -> list[tuple[str, float]]:
    """(name, FLOP/s) of each compute ceiling the kernels run under, as the report computes them:
    a kernel's own raw peak (the matrix units for matmuls, the vector units for elementwise,
    reductions and row-wise ops), named by its dtype and, off the matrix units, the units."""
    from costlang.analysis.roofline import unit_of
    found = {}
    for k in a.kernels:
        peak = _number(a, k.peak)
        if peak is None or a.hardware.peak(k.cost.math_dtype) is None:
            continue
        units = {unit_of(a.program.nodes[op]) for op in k.ops if a.program.nodes[op].kind != "view"}
        unit = units.pop() if len(units) == 1 else "mixed"
        if unit != "matrix" and k.cost.math_dtype not in dict(a.hardware.vector_peaks):
            unit = "matrix"   # no vector peak stated: the vector units run at the plain peak
        name = k.cost.math_dtype if unit == "matrix" else f"{k.cost.math_dtype} {unit}"
        found.setdefault((name, peak), None)
    return sorted(found, key=lambda c: (c[0], c[1]))


def _level_points(ax, a, color, st: Style, labels: list, named: set):
    """The hierarchical roofline: each kernel again at I(level) = FLOPs / bytes(level) for every
    level other than the main one whose bytes differ, under that level's ceiling (square markers);
    labelled for the `named` kernels."""
    main = a.hardware.main_memory.name
    for k in a.kernels:
        if len(k.levels) < 2:
            continue
        main_bytes = next(lt.bytes for lt in k.levels if lt.level == main)
        for lt in k.levels:
            if lt.level == main or a.value(lt.bytes - main_bytes) == 0:
                continue
            i = _number(a, k.flops / lt.bytes) if lt.bytes != 0 else None
            p = _number(a, sympy.Min(k.peak, lt.achievable * k.flops / lt.bytes)) if i else None
            if i is not None and p is not None:
                ax.plot([i], [p], "s", color=color, markersize=st.marker * 0.8, fillstyle="none")
                if k.name in named:
                    labels.append(_Label(f"{k.name} ({lt.level})", i, p, color))


@dataclass
class _Label:
    """A text to place next to a data point without covering another label."""
    text: str
    x: float
    y: float
    color: str


def roofline(analyses: Sequence, unfused: Sequence = (), trajectories: Sequence = (),
             linear: bool = False, style: str = "paper", lang: str = "en") -> Plot:
    """The roofline of each analysis' hardware with its kernels at (I, attainable).

    `unfused`: the same programs analysed with fusion "none", one per analysis; their kernels are
    drawn hollow, with an arrow to the (filled) fused kernel that contains their ops.
    `trajectories`: for each analysis, the `analysis.curve.Trajectory`s of its kernels along a free
    symbol: a line from the first sample to the last, with the crossing of I* marked.
    Labels are placed apart (with a leader line when moved away from their point). Kernels that
    cannot be placed (a free symbol left without a value) are listed under the plot.
    """
    st = STYLES[style]
    words = phrase(lang, "plot")
    fig = _figure(st)
    ax = fig.add_subplot(1, 1, 1)
    if not linear:
        ax.set_xscale("log")
        ax.set_yscale("log")
    xs = _x_range(analyses, unfused, trajectories)
    labels: list[_Label] = []
    for n, a in enumerate(analyses):
        color = _COLORS[n % len(_COLORS)]
        tag = f"{a.hardware.name}: " if len(analyses) > 1 else ""
        _roof(ax, a, color, tag, xs, st, labels, words)
        drawn = points(a)
        named = _named(a, drawn)
        if len(named) < len(drawn):   # a model's kernels: one legend entry; the slowest named
            ax.plot([i for _, i, _ in drawn], [p for _, _, p in drawn], "o", color=color, markersize=st.marker,
                    linestyle="none", label=tag + words["kernels"].format(n=len(drawn), top=len(named)))
        for k, i, p in drawn:
            if len(named) == len(drawn):
                ax.plot([i], [p], "o", color=color, markersize=st.marker, label=tag + words["kernel"].format(name=k.name))
            if k.name in named:
                labels.append(_Label(k.name, i, p, color))
        _level_points(ax, a, color, st, labels, named)
        if n < len(unfused):
            _fusion_arrows(ax, a, unfused[n], color, st, labels, words, named)
        if n < len(trajectories):
            _trajectories(ax, trajectories[n], color, tag, st, labels, lang)
    _axes(ax, st, linear, words)
    names = ", ".join(a.hardware.name for a in analyses)
    ax.set_title(words["title"].format(file=Path(analyses[0].program.source_name).name, hardware=names),
                 fontsize=st.axis)
    ax.legend(fontsize=st.legend, loc="lower right")
    missing = _unplaced(analyses, trajectories, words)
    if missing:
        fig.text(0.01, 0.005, words["not_drawn"].format(names=missing), fontsize=st.legend, color="dimgray")
    place_labels(ax, labels, st)
    return Plot(fig)


#: a roofline names (in its legend and beside its point) at most this many kernels of one
#: hardware: the ones that take the longest (T_kernel × count); the others are points only
MOST_NAMED = 12


def _named(a, drawn) -> set:
    """The names of the drawn kernels that get a label: all of them, or the `MOST_NAMED` slowest
    (ties in the analysis' kernel order)."""
    if len(drawn) <= MOST_NAMED:
        return {k.name for k, _, _ in drawn}
    time = lambda k: _number(a, k.t_kernel * k.count) or 0.0  # noqa: E731
    ranked = sorted(range(len(drawn)), key=lambda n: (-time(drawn[n][0]), n))
    return {drawn[n][0].name for n in ranked[:MOST_NAMED]}


#: the kernels a roofline cannot place are listed under it by name up to this many
MOST_LISTED = 4


def _unplaced(analyses, trajectories, words: dict) -> str:
    drawn = {t.kernel for ts in trajectories for t in ts}
    names = list(dict.fromkeys(k.name for a in analyses for k in a.kernels if k.name not in drawn and (
        _number(a, k.intensity) is None or _number(a, k.attainable) is None)))
    if len(names) > MOST_LISTED:
        return words["more"].format(names=", ".join(names[:MOST_LISTED - 1]), n=len(names) - MOST_LISTED + 1)
    return ", ".join(names)


def _axes(ax, st: Style, linear: bool, words: dict) -> None:
    """Units on both axes: I in FLOP/B, performance with SI prefixes (TFLOP/s)."""
    from matplotlib.ticker import EngFormatter
    ax.yaxis.set_major_formatter(EngFormatter(unit="FLOP/s", sep=" "))
    ax.set_xlabel(words["x"], fontsize=st.axis)
    ax.set_ylabel(words["y"], fontsize=st.axis)
    ax.tick_params(labelsize=st.legend)
    ax.grid(True, which="both" if not linear else "major", alpha=0.3)


def _x_range(analyses, unfused, trajectories=()):
    values = [i for a in list(analyses) + list(unfused) for _, i, _ in points(a)]
    values += [float(a.hardware.peak(k.cost.math_dtype)) / float(a.hardware.bandwidth)
               for a in analyses for k in a.kernels if a.hardware.peak(k.cost.math_dtype) is not None]
    values += [float(v) for ts in trajectories for t in ts for v in (t.intensity.min(), t.intensity.max())
               if v > 0 and v == v and v != float("inf")]
    lo, hi = (min(values), max(values)) if values else (0.1, 1000.0)
    return [lo / 10, hi * 10]


def _fusion_arrows(ax, fused, unfused, color, st: Style, labels: list, words: dict, named: set):
    """Unfused kernels hollow, each with an arrow to the fused kernel that took its ops; named
    (legend and label) where the fused kernel is, or all of them when every fused kernel is."""
    placed = {k.name: (k, i, p) for k, i, p in points(fused)}
    every = len(named) == len(placed)
    for k, i, p in points(unfused):
        target = next((v for v in placed.values() if set(k.ops) <= set(v[0].ops)), None)
        if target is None or set(target[0].ops) == set(k.ops):
            continue
        shown = every or target[0].name in named
        ax.plot([i], [p], "o", color=color, markerfacecolor="none", markersize=st.marker,
                label=words["unfused"].format(name=k.name) if shown else "_nolegend_")
        if shown:
            labels.append(_Label(k.name, i, p, color))
        ax.annotate("", xy=(target[1], target[2]), xytext=(i, p),
                    arrowprops={"arrowstyle": "->", "color": color})


def _trajectories(ax, trajectories, base, tag, st: Style, labels: list, lang: str = "en"):
    for n, t in enumerate(trajectories):
        ok = (t.intensity > 0) & (t.attainable > 0)
        if not ok.any():
            continue
        color = _COLORS[(_COLORS.index(base) + 1 + n) % len(_COLORS)]
        ax.plot(t.intensity[ok], t.attainable[ok], "-", marker=".", color=color, linewidth=st.line * 2,
                markersize=st.marker / 2, label=tag + phrase(lang, "plot")["path"].format(
                    kernel=t.kernel, symbol=t.symbol, lo=f"{t.xs[ok][0]:g}", hi=f"{t.xs[ok][-1]:g}"))
        first, last = ok.nonzero()[0][[0, -1]]
        labels.append(_Label(f"{t.kernel} ({t.symbol} = {t.xs[first]:g})", t.intensity[first],
                             t.attainable[first], color))
        labels.append(_Label(f"{t.symbol} = {t.xs[last]:g}", t.intensity[last], t.attainable[last], color))
        words = phrase(lang, "verdict_words")
        for x, (below, above) in zip(t.crossings, t.changes):
            value = float(sympy.N(x, 15))
            ax.plot([t.critical_intensity], [t.peak], "D", color=color, markersize=st.marker,
                    label=tag + phrase(lang, "plot")["crossing"].format(
                        kernel=t.kernel, below=words[below.value], symbol=t.symbol, x=f"{value:.4g}",
                        balanced=words["balanced"], above=words[above.value]))
            labels.append(_Label(f"{t.symbol}* = {value:.4g}", t.critical_intensity, t.peak, color))


# Offsets (in points, at the paper style's font) tried in turn for a label: beside the point first,
# then rings further out in twelve directions; scaled with the style's font size.
_OFFSETS = [(6, 6), (6, -14), (-6, 6), (-6, -14)] + [
    (round(r * math.cos(math.radians(a))), round(r * math.sin(math.radians(a)) - 4))
    for r in (18, 30, 44, 60, 80, 104, 132, 168, 210, 260) for a in range(15, 360, 30)]


def place_labels(ax, labels: Sequence[_Label], st: Style) -> list:
    """Annotate each label at the first offset where its box meets no box placed before, no point,
    no other text of the axes and not the legend (greedy, in display space); where every offset
    meets something, at the offset that overlaps least. Labels moved beyond the first ring get a
    leader line to their point. Returns the matplotlib `Annotation`s.

    A label's text is measured once (left- and right-aligned); its box at an offset is that box
    moved by the offset, and a leader line counts the placed boxes it crosses (sampled along it);
    a placed line becomes small boxes along it. All offsets are tried against all placed boxes at once."""
    fig = ax.figure
    cjk_fonts(fig)                 # the title and legend in a font with their glyphs, before measuring
    if any(_CJK.search(lab.text) for lab in labels) and cjk_font() is None:
        raise FontError("a label has Korean (or Chinese or Japanese) characters, and no installed font has "
                        "them: install one, e.g. Debian's `fonts-noto-cjk` or `fonts-nanum`")
    renderer = fig.canvas.get_renderer()
    fig.draw_without_rendering()   # fixes the axes' limits and transforms
    r = (st.marker / 2 + 1) * fig.dpi / 72   # a marker's radius in pixels, and a point more
    anchors = {tuple(ax.transData.transform((lab.x, lab.y))) for lab in labels}
    placed = [(x - r, y - r, x + r, y + r) for x, y in anchors]   # labels never cover a point
    placed += [t.get_window_extent(renderer).padded(2).extents for t in ax.texts if t.get_text()]
    if ax.get_legend() is not None:
        placed.append(ax.get_legend().get_window_extent(renderer).padded(2).extents)
    boxes = np.array(placed, dtype=float).reshape(-1, 4)
    frame = ax.get_window_extent(renderer)
    scale = st.font / STYLES["paper"].font
    offsets = np.array(_OFFSETS, dtype=float) * scale
    pixels = offsets * fig.dpi / 72                  # an offset in points, in pixels
    leader = np.arange(len(_OFFSETS)) >= 4
    out, seen = [], set()
    for lab in labels:
        key = (lab.text, round(lab.x, 12), round(lab.y, 12))
        if key in seen:          # two kernels with the same path and crossing: one label says it
            continue
        seen.add(key)
        ax_, ay = ax.transData.transform((lab.x, lab.y))
        candidates = np.empty((len(_OFFSETS), 4))
        for right in (False, True):                  # text to the right of its point, or to the left
            text = _annotate(ax, lab, -1.0 if right else 0.0, 0.0, st, leader=False)
            x0, y0, x1, y1 = _text_box(text, renderer).padded(2).extents
            text.remove()
            rows = (offsets[:, 0] < 0) if right else (offsets[:, 0] >= 0)
            dx, dy = pixels[rows, 0] + (fig.dpi / 72 if right else 0.0), pixels[rows, 1]
            candidates[rows] = np.stack([x0 + dx, y0 + dy, x1 + dx, y1 + dy], axis=1)
        w = np.minimum(candidates[:, None, 2], boxes[None, :, 2]) - np.maximum(candidates[:, None, 0], boxes[None, :, 0])
        h = np.minimum(candidates[:, None, 3], boxes[None, :, 3]) - np.maximum(candidates[:, None, 1], boxes[None, :, 1])
        overlap = np.where((w > 0) & (h > 0), w * h, 0.0).sum(axis=1)
        inside = ((candidates[:, 0] >= frame.x0) & (candidates[:, 2] <= frame.x1)
                  & (candidates[:, 1] >= frame.y0) & (candidates[:, 3] <= frame.y1))
        overlap += np.where(inside, 0.0, (candidates[:, 2] - candidates[:, 0]) * (candidates[:, 3] - candidates[:, 1]))
        # a leader line runs from the point to the text: each placed box it crosses counts as much
        # as a marker's area per sample of the line inside it
        crossed = _crossings(candidates[leader], (ax_, ay), boxes, r)
        overlap[leader] += crossed * (2 * r) ** 2
        free = np.flatnonzero(overlap == 0)
        n = int(free[0]) if len(free) else int(np.argmin(overlap))   # the first free offset, else the least overlap
        out.append(_annotate(ax, lab, offsets[n, 0], offsets[n, 1], st, leader=bool(leader[n])))
        box = candidates[n].copy()
        boxes = np.vstack([boxes, box])
        if leader[n]:   # the line, as a few small boxes along it, so that later labels keep off it
            boxes = np.vstack([boxes, _segment_boxes(box, (ax_, ay), 2.0)])
    return out


def _line_points(box, anchor):
    """Points along the line from `anchor` to the middle of each box (rows of x0, y0, x1, y1): their
    x and y, and whether each is outside its box, each of shape (boxes, samples)."""
    t = np.linspace(0.0, 1.0, 18)[1:-1]
    cx, cy = (box[:, 0] + box[:, 2]) / 2, (box[:, 1] + box[:, 3]) / 2
    xs = anchor[0] + (cx[:, None] - anchor[0]) * t[None, :]
    ys = anchor[1] + (cy[:, None] - anchor[1]) * t[None, :]
    outside = ~((xs >= box[:, 0, None]) & (xs <= box[:, 2, None]) & (ys >= box[:, 1, None]) & (ys <= box[:, 3, None]))
    return xs, ys, outside


def _crossings(candidates, anchor, boxes, r: float):
    """Per candidate box, how many samples of its leader line (outside the box itself and beyond
    the point's marker) fall inside a placed box."""
    xs, ys, outside = _line_points(candidates, anchor)
    away = np.hypot(xs - anchor[0], ys - anchor[1]) > 2 * r
    hit = ((xs[..., None] >= boxes[:, 0]) & (xs[..., None] <= boxes[:, 2])
           & (ys[..., None] >= boxes[:, 1]) & (ys[..., None] <= boxes[:, 3])).any(axis=-1)
    return (hit & outside & away).sum(axis=1)


def _segment_boxes(box, anchor, half: float):
    """Small boxes along a placed leader line (outside its text's box)."""
    xs, ys, outside = _line_points(box[None, :], anchor)
    xs, ys = xs[outside], ys[outside]
    return np.stack([xs - half, ys - half, xs + half, ys + half], axis=1).reshape(-1, 4)


def _text_box(annotation, renderer):
    """The box of an annotation's text alone (its arrow left out)."""
    from matplotlib.text import Text
    annotation.update_positions(renderer)
    return Text.get_window_extent(annotation, renderer)


def _annotate(ax, lab, dx: float, dy: float, st: Style, leader: bool):
    text = ax.annotate(lab.text, (lab.x, lab.y), textcoords="offset points", xytext=(dx, dy),
                       fontsize=st.font, color=lab.color, ha="left" if dx >= 0 else "right",
                       arrowprops={"arrowstyle": "-", "color": lab.color, "linewidth": 0.6} if leader else None)
    if _CJK.search(lab.text):
        text.set_fontfamily([cjk_font(), "DejaVu Sans"])
    return text


def sweep(curve, linear: bool = False, style: str = "paper", unit: str = "", lang: str = "en") -> Plot:
    """A `QueryCurve` (analysis.curve): the query against its symbol, its reference, crossings marked.
    `unit`: the query's unit, printed with SI prefixes on the y axis."""
    st = STYLES[style]
    fig = _figure(st)
    ax = fig.add_subplot(1, 1, 1)
    if not linear:
        ax.set_xscale("log")
    ax.plot(curve.xs, curve.ys, "-", linewidth=st.line, label=curve.label)
    if not linear and len(curve.ys) and bool((curve.ys > 0).all()):
        ax.set_yscale("log")
    if curve.reference is not None:
        ref, label = curve.reference, curve.reference_label
        if (ref == ref[0]).all():
            ax.axhline(float(ref[0]), color="tab:red", linestyle="--", label=label)
        else:
            ax.plot(curve.xs, ref, "--", color="tab:red", label=label)
    for x, y in curve.crossings:
        x, y = float(sympy.N(x, 15)), float(sympy.N(y, 15))
        ax.plot([x], [y], "o", color="tab:red", markersize=st.marker,
                label=phrase(lang, "plot")["crossing_at"].format(symbol=curve.symbol, x=f"{x:.4g}"))
        ax.axvline(x, color="tab:red", linestyle=":", linewidth=1)
    if unit:
        from matplotlib.ticker import EngFormatter
        ax.yaxis.set_major_formatter(EngFormatter(unit=unit, sep=" "))
    ax.set_xlabel(curve.symbol, fontsize=st.axis)
    ax.set_ylabel(f"{curve.label} ({unit})" if unit else curve.label, fontsize=st.axis)
    ax.set_title(phrase(lang, "plot")["against"].format(label=curve.label, symbol=curve.symbol), fontsize=st.axis)
    ax.tick_params(labelsize=st.legend)
    ax.grid(True, which="both" if not linear else "major", alpha=0.3)
    ax.legend(fontsize=st.legend)
    return Plot(fig)


def pareto(exploration, style: str = "paper") -> Plot:
    """Every feasible configuration of an exploration on its first two objectives, the Pareto front
    marked and joined (a search's data: `queries.explore.Exploration`)."""
    st = STYLES[style]
    fig = _figure(st)
    ax = fig.add_subplot(1, 1, 1)
    o0, o1 = exploration.search.objectives[:2]
    feasible = [c for c in exploration.configs() if c.feasible]
    front = exploration.front
    ax.scatter([c.objectives[0] for c in feasible], [c.objectives[1] for c in feasible], s=st.marker * 2,
               color="tab:gray", alpha=0.5, label=phrase("en", "explore_feasible"))
    ax.plot([c.objectives[0] for c in front], [c.objectives[1] for c in front], marker="o", color="tab:red",
            linewidth=st.line, markersize=st.marker, label=phrase("en", "explore_front"))
    ax.set_xlabel(f"{o0.text} ({phrase('en', 'explore_' + o0.sense)})", fontsize=st.axis)
    ax.set_ylabel(f"{o1.text} ({phrase('en', 'explore_' + o1.sense)})", fontsize=st.axis)
    if all(c.objectives[0] > 0 for c in feasible) and feasible:
        ax.set_xscale("log")
    if all(c.objectives[1] > 0 for c in feasible) and feasible:
        ax.set_yscale("log")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=st.legend)
    return Plot(fig)


_CLASS_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")


def validation(rows, style: str = "paper") -> Plot:
    """Predicted vs measured on log axes: `rows` are (class, measured, roofline, calibrated or None), in
    seconds. One marker per class (hollow: the plain roofline; filled: calibrated, leave-one-out), and
    the line predicted = measured, which every roofline point lies on or below (a lower bound)."""
    s = STYLES[style]
    fig = _figure(s)
    ax = fig.add_subplot(1, 1, 1)
    classes = sorted({r[0] for r in rows})
    for i, kind in enumerate(classes):
        mine = [r for r in rows if r[0] == kind]
        marker, color = _CLASS_MARKERS[i % len(_CLASS_MARKERS)], _COLORS[i % len(_COLORS)]
        ax.scatter([float(r[1]) for r in mine], [float(r[2]) for r in mine], marker=marker, s=s.marker * 4,
                   facecolors="none", edgecolors=color, linewidths=1, label=f"{kind}: roofline ({len(mine)})")
        cal = [r for r in mine if r[3] is not None]
        if cal:
            ax.scatter([float(r[1]) for r in cal], [float(r[3]) for r in cal], marker=marker, s=s.marker * 3,
                       color=color, alpha=0.6, label=f"{kind}: calibrated, leave-one-out")
    values = [float(v) for r in rows for v in (r[1], r[2], r[3]) if v is not None and v > 0]
    lo, hi = min(values) / 2, max(values) * 2
    ax.plot([lo, hi], [lo, hi], "-", color="black", linewidth=s.line, label="predicted = measured (lower bound)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_xlabel("measured time (s)", fontsize=s.axis)
    ax.set_ylabel("predicted time (s)", fontsize=s.axis)
    ax.grid(True, which="major", linewidth=0.4, alpha=0.5)
    ax.legend(fontsize=s.legend, loc="upper left")
    fig.tight_layout()
    return Plot(fig)
