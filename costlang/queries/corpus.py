"""A validation corpus: published (or profiler) measurements as CSV rows → `Point`s.

Input: a CSV file whose header names at least `name, class, hardware, dtype, flops, bytes,
measured_s, source` (and optionally `bandwidth_Bps` with `bandwidth_source`, for a kernel whose
traffic crosses a link rather than the hardware's main memory, such as a collective). Output: data
only — one `Point` per row: T_compute = flops / peak(dtype), T_memory = bytes / bandwidth, the plain
roofline max(T_compute, T_memory) with launch 0 (a lower bound), and the measured time.

Every number is read exactly (decimal text → Fraction → sympy Rational; nothing is evaluated). A
`hardware` that is a preset takes its peak and main-memory bandwidth from the stdlib (each sourced
there); a row with `bandwidth_Bps` uses that figure, which must carry its own `bandwidth_source`.
A row with no `source` is refused: a measurement without a source is not evidence.
"""
from __future__ import annotations

import csv
from fractions import Fraction
from typing import Optional

import sympy

from costlang.errors import SemanticError, Source, Span
from costlang.queries.calibrate import Point

__all__ = ["REQUIRED", "load_csv"]

REQUIRED = ("name", "class", "hardware", "dtype", "flops", "bytes", "measured_s", "source")


def _span(src: Source, line: int, text: str, column: int = 1) -> Span:
    return Span(src, line, column, line, max(column + 1, len(text) + 1))


def _number(src, line, raw_line, field, text) -> sympy.Rational:
    try:
        f = Fraction(text.strip())
    except (ValueError, ZeroDivisionError):
        col = raw_line.find(text) + 1 if text and text in raw_line else 1
        raise SemanticError(f"column '{field}' holds '{text}', not a number",
                            Span(src, line, col, line, col + max(1, len(text))),
                            "write a decimal such as 1.5e-6 (seconds, bytes, FLOPs or B/s)") from None
    if f < 0:
        raise SemanticError(f"column '{field}' is negative ({text})", _span(src, line, raw_line),
                            "times, bytes and FLOPs are ≥ 0")
    return sympy.Rational(f.numerator, f.denominator)


def load_csv(path: str, hardware: dict, waves: Optional[tuple[int, int]] = None) -> list[Point]:
    """The rows of one corpus CSV as `Point`s. `hardware`: name → Hardware (the stdlib presets).
    `waves` = (bm, bn): GEMM rows with `m`, `n`, `k` columns on a preset that states `sms` take the
    tile- and wave-quantized compute time (`analysis.tiling`) instead of FLOPs / peak."""
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    src = Source(path, text)
    raw = text.split("\n")
    # comment lines (# ...) hold the file's provenance; the CSV proper is the rest
    body = [(i + 1, ln) for i, ln in enumerate(raw) if ln.strip() and not ln.lstrip().startswith("#")]
    if not body:
        raise SemanticError("the corpus file has no header row", _span(src, 1, raw[0] if raw else ""),
                            "start with: " + ",".join(REQUIRED))
    rows = list(csv.reader([ln for _, ln in body]))
    header = [h.strip() for h in rows[0]]
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        n, ln = body[0]
        raise SemanticError(f"the header lacks column{'s' * (len(missing) > 1)} {', '.join(missing)}",
                            _span(src, n, ln), "the header needs: " + ",".join(REQUIRED))
    out = []
    for (n, ln), row in zip(body[1:], rows[1:]):
        if len(row) != len(header):
            raise SemanticError(f"this row has {len(row)} fields; the header has {len(header)}",
                                _span(src, n, ln), "quote a field that holds a comma")
        r = {h: v.strip() for h, v in zip(header, row)}
        if not r["source"]:
            raise SemanticError(f"row '{r['name']}' has no source", _span(src, n, ln),
                                "name the paper, table or page (with its URL) the measurement comes from")
        out.append(_point(src, n, ln, r, hardware, path, waves))
    return out


def _point(src, n, ln, r, hardware, path, waves=None) -> Point:
    num = lambda field: _number(src, n, ln, field, r[field])  # noqa: E731
    flops, nbytes, measured = num("flops"), num("bytes"), num("measured_s")
    if measured == 0:
        raise SemanticError("a measured time of 0", _span(src, n, ln), "measured_s is in seconds, > 0")
    bw_text: Optional[str] = r.get("bandwidth_Bps") or None
    hw = hardware.get(r["hardware"])
    if bw_text:
        if not r.get("bandwidth_source"):
            raise SemanticError(f"row '{r['name']}' states a bandwidth without a source", _span(src, n, ln),
                                "add bandwidth_source: the datasheet or whitepaper the link figure comes from")
        bandwidth = num("bandwidth_Bps")
    elif hw is not None:
        bandwidth = hw.bandwidth
    else:
        col = ln.find(r["hardware"]) + 1 or 1
        raise SemanticError(f"unknown hardware '{r['hardware']}' and no bandwidth_Bps",
                            Span(src, n, col, n, col + max(1, len(r["hardware"]))),
                            "name a preset (`costlang hardware` lists them) or give bandwidth_Bps with its source")
    if flops:
        peak = None if hw is None else hw.peak(r["dtype"])
        if peak is None:
            raise SemanticError(f"no {r['dtype']} peak for hardware '{r['hardware']}'", _span(src, n, ln),
                                "use a preset that states that dtype's peak")
        t_compute = flops / peak
        if waves and hw.sms is not None and all(r.get(c) for c in ("m", "n", "k")):
            from costlang.analysis.tiling import gemm_waves
            m_, n_, k_ = (num(c) for c in ("m", "n", "k"))
            t_compute = gemm_waves(m_, n_, k_, hw.sms, bm=waves[0], bn=waves[1]).time(peak)
    else:
        t_compute = sympy.Integer(0)
    t_memory = nbytes / bandwidth
    zero = sympy.Integer(0)
    return Point(path, r["name"], r["hardware"], t_compute, t_memory, zero, sympy.Max(t_compute, t_memory),
                 measured, r["class"], r["source"])
