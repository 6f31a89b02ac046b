"""Validation and calibration reports as text, and the calibrated hardware as a `.cost` file.

Input: `analysis.calibrate` data (points grouped by hardware, fits, leave-one-out predictions).
Output: strings, deterministic. Errors are signed, (predicted − measured) / measured.
"""
from __future__ import annotations

from costlang.queries.calibrate import Fit, leave_one_out, leave_source_out, mape, signed_error
from costlang.units import SECOND
from costlang.printers.numbers import human, sig
from costlang.printers.text.report import _table

__all__ = ["validation_text", "calibration_text", "calibrated_hardware"]

_SIGNED = "signed error = (predicted − measured) / measured"


def _pct(e) -> str:
    return "—" if e is None else f"{float(e) * 100:+.1f} %"


def _abs_pct(e) -> str:
    return "—" if e is None else f"{float(e) * 100:.1f} %"


def _t(x) -> str:
    return "—" if x is None else human(x, SECOND)


def validation_text(groups: dict) -> str:
    """`groups`: hardware name → list of Points. Roofline errors, then leave-one-out calibrated ones."""
    lines = [f"validation ({_SIGNED}; the roofline T_kernel is a lower bound: predicted ≤ measured)"]
    every_roof, every_loo, every_lso, flagged = [], [], [], []
    by_class: dict = {}
    for hw, pts in groups.items():
        loo = leave_one_out(pts)
        lso = leave_source_out(pts)
        every_lso += [(c, p.measured) for p, c in lso]
        for (p, c), (_, h) in zip(loo, lso):
            by_class.setdefault(p.kind or "measure block", []).append((p, c, h))
        rows = []
        for p, cal in loo:
            mark = "" if p.holds else "  FLAGGED: predicted > measured"
            if not p.holds:
                flagged.append(p)
            rows.append([p.file, p.kernel, "memory" if p.memory_bound else "compute", _t(p.predicted),
                         _t(p.measured), _pct(signed_error(p.predicted, p.measured)), _t(cal),
                         _pct(None if cal is None else signed_error(cal, p.measured)) + mark])
        roof = [(p.predicted, p.measured) for p in pts]
        cal = [(c, p.measured) for p, c in loo]
        every_roof += roof
        every_loo += cal
        lines += ["", f"{hw} (launch {_t(pts[0].launch)}): {len(pts)} measured kernel{'s' * (len(pts) != 1)}"]
        lines += ["  " + r for r in _table(rows, ["file", "kernel", "bound", "roofline", "measured", "error",
                                                  "calibrated (LOO)", "error"])]
        lines.append(f"  MAPE: roofline {_abs_pct(mape(roof))}; calibrated, leave-one-out {_abs_pct(mape(cal))}"
                     + _count(cal))
    lines += ["", f"all hardware: MAPE roofline {_abs_pct(mape(every_roof))} over {len(every_roof)} kernels; "
                  f"calibrated, leave-one-out {_abs_pct(mape(every_loo))}" + _count(every_loo)]
    lines.append(f"held out by source (fit on the other publications of the same group): MAPE {_abs_pct(mape(every_lso))}"
                 + _count(every_lso))
    lines += ["", "per class:"]
    rows = []
    for kind, trip in sorted(by_class.items()):
        rows.append([kind, str(len(trip)), str(len({p.hardware for p, _, _ in trip})),
                     _abs_pct(mape([(p.predicted, p.measured) for p, _, _ in trip])),
                     _abs_pct(mape([(c, p.measured) for p, c, _ in trip])),
                     _abs_pct(mape([(h, p.measured) for p, _, h in trip]))])
    lines += ["  " + r for r in _table(rows, ["class", "points", "hardware", "roofline MAPE", "LOO MAPE",
                                              "held-out-source MAPE"])]
    lines.append("lower bound: " + ("holds for every kernel" if not flagged else
                                    f"VIOLATED by {len(flagged)}: " + ", ".join(p.kernel for p in flagged)))
    lines += ["", "calibrated (LOO): each kernel predicted by the factors fitted on the OTHER measured kernels of "
                  "its hardware (never on itself); — when the others fit nothing. `costlang calibrate` fits on all."]
    return "\n".join(lines) + "\n"


def _count(pairs) -> str:
    used = sum(1 for c, _ in pairs if c is not None)
    return "" if used == len(pairs) else f" (over {used} of {len(pairs)})"


def calibration_text(fits: dict) -> str:
    """`fits`: hardware name → Fit. The factors, then each kernel's residual."""
    lines = ["calibration (least squares: T = launch + max(T_compute / η_compute, T_memory / η_memory); "
             "each kernel's class is its roofline verdict)"]
    for hw, f in fits.items():
        lines += ["", f"{hw}: {len(f.points)} measured kernel{'s' * (len(f.points) != 1)}; fitted: "
                  + (", ".join(f.fitted) or "nothing")]
        lines += ["  " + _factor_line(f, key) for key in ("memory", "compute", "launch")]
        rows = [[p.file, p.kernel, "memory" if p.memory_bound else "compute", _t(p.measured), _t(cal),
                 human(res, SECOND), _pct(signed_error(cal, p.measured))] for p, cal, res in f.residuals()]
        lines += ["  " + r for r in _table(rows, ["file", "kernel", "bound", "measured", "calibrated",
                                                  "residual", "error"])]
        lines.append(f"  MAPE (in sample): {_abs_pct(mape([(c, p.measured) for p, c, _ in f.residuals()]))}; "
                     "`costlang validate` reports the leave-one-out error")
    return "\n".join(lines) + "\n"


def _factor_line(f: Fit, key: str) -> str:
    if key == "launch":
        state = "fitted" if "launch" in f.fitted else "the hardware's, not fitted"
        return f"launch overhead: {_t(f.launch)} ({state})"
    eff = f.efficiency_memory if key == "memory" else f.efficiency_compute
    state = "fitted" if key in f.fitted else "not fitted: no measured kernel of that class"
    note = "  (above 1: measured faster than the roofline bound)" if eff > 1 else ""
    return f"η_{key}: {sig(float(eff))} ({state}){note}"


def calibrated_hardware(fits: dict, level_of: dict, name_of, sources: str) -> str:
    """A `.cost` file: one hardware per fit, extending the measured hardware with the fitted factors.

    Factors are rounded to 4 significant digits and capped at 1 (an efficiency above 1 means the
    measurements beat the roofline bound; the file keeps the bound, the report says so).
    """
    out = [f"# Calibrated by `costlang calibrate` from: {sources}",
           "# Least squares over the measured kernels; factors rounded to 4 significant digits.", ""]
    for hw, f in fits.items():
        items = []
        for key, eff, label in (("memory", f.efficiency_memory, level_of[hw]),
                                ("compute", f.efficiency_compute, "compute")):
            if key in f.fitted:
                value = min(float(eff), 1.0)
                n = sum(1 for p in f.points if p.memory_bound == (key == "memory"))
                items.append(f'  efficiency {label} = {sig(value)} "costlang calibrate: least squares over '
                             f'{n} {key}-bound kernel{"s" * (n != 1)}"')
        if "launch" in f.fitted:
            items.append(f"  launch = {sig(float(f.launch) * 1e6)} us   # fitted intercept")
        residuals = ", ".join(f"{p.kernel} {_pct(signed_error(c, p.measured))}" for p, c, _ in f.residuals())
        out += [f"# {hw}: {len(f.points)} kernels; in-sample errors: {residuals}",
                f"hardware {name_of(hw)} : {hw} {{"] + items + ["}", ""]
    return "\n".join(out)
