"""`costlang validate --json`: every measured point with its roofline and leave-one-out calibrated
predictions and signed errors, per hardware, and the MAPEs (exact numbers as JSON numbers)."""
from __future__ import annotations

from costlang.printers.numbers import json_number
from costlang.queries.calibrate import leave_one_out, mape, signed_error

__all__ = ["validation_dict"]


def validation_dict(groups: dict) -> dict:
    out, roof_all, loo_all = {}, [], []
    for hw, pts in groups.items():
        rows = []
        for p, cal in leave_one_out(pts):
            rows.append({"file": p.file, "kernel": p.kernel, "kind": p.kind or None, "source": p.source or None,
                         "bound": "memory" if p.memory_bound else "compute",
                         "measured_s": json_number(p.measured), "roofline_s": json_number(p.predicted),
                         "roofline_error": json_number(signed_error(p.predicted, p.measured)),
                         "lower_bound_holds": bool(p.holds),
                         "calibrated_s": None if cal is None else json_number(cal),
                         "calibrated_error": None if cal is None else json_number(signed_error(cal, p.measured))})
            roof_all.append((p.predicted, p.measured))
            if cal is not None:
                loo_all.append((cal, p.measured))
        out[hw] = rows
    m_roof, m_loo = mape(roof_all), mape(loo_all)
    return {"hardware": out,
            "mape_roofline": None if m_roof is None else json_number(m_roof),
            "mape_leave_one_out": None if m_loo is None else json_number(m_loo),
            "points": len(roof_all), "lower_bound_violations": sum(not r["lower_bound_holds"]
                                                                  for rows in out.values() for r in rows)}
