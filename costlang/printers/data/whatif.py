"""Solves, scenario comparisons, sweeps' crossings and explorations as JSON-ready dicts (numbers as JSON numbers, exact
values beside them as text)."""
from __future__ import annotations

from costlang.analysis.verdict import Verdict
from costlang.printers.numbers import json_number as number
from costlang.printers.words.comparisons import settings_words
from costlang.queries.solve import RegimeMap, SolveResult

__all__ = ["solve_dict", "comparison_dict", "crossing_dict", "exploration_dict"]


def _num(e):
    if e is None or isinstance(e, str):
        return e
    if isinstance(e, Verdict):
        from costlang.printers.words.verdicts import to_dict
        return to_dict(e, number)
    return number(e)


def solve_dict(r) -> dict:
    if isinstance(r, RegimeMap):
        return {"name": r.name, "symbol": str(r.symbol), "regimes": {
            k: solve_dict(v) if isinstance(v, SolveResult) else _num(v) for k, v in r.kernels}}
    return {
        "name": r.name, "symbol": str(r.symbol), "unit": str(r.unit), "relation": r.relation,
        "lhs": r.lhs_text, "rhs": r.rhs_text, "closed_forms": [str(e) for e in r.roots],
        "general_forms": [None if g is None else str(g) for g in r.general],
        "legend": [{"symbol": str(i.symbol), "meaning": i.meaning, "value": _num(i.value)} for i in r.legend],
        "values": [_num(v) for v in r.values], "cases": [_case_dict(c) for c in r.cases],
        "exact_values": [None if v is None else str(v) for v in r.values],
        "regimes": [{"from": _num(g.lower), "to": _num(g.upper), "side": g.side.value} for g in r.regimes],
        "whole": [{"largest": w.largest, "side": w.side.value, "crossing": _num(w.crossing), "rounding": w.rounding,
                   "value": None if w.value is None else int(w.value),
                   "rejected": [{"value": int(v), "reason": why} for v, why in w.rejected]} for w in r.whole],
        "no_crossing": None if r.no_crossing is None else {
            "side": r.no_crossing.side, r.no_crossing.extremum: _num(r.no_crossing.value),
            "at": _num(r.no_crossing.at), "approached": r.no_crossing.approached, "other": r.no_crossing.other,
            "other_value": _num(r.no_crossing.other_value)},
        "limits": [{"side": lim.side, "closed": str(lim.closed), "value": _num(lim.value)} for lim in r.limits],
        "approximations": [{"when": f"{', '.join(str(s) for s in ap.growing)} -> oo", "expr": str(ap.expr), "value": _num(ap.value),
                            "error": _num(ap.error)} for ap in r.approximations],
        "steps": [{"kind": st.kind.value, "expr": str(st.expr)} for st in r.steps],
        "undecided": [u.value for u in r.undecided],
        "ties": [{"symbol": name, "value": str(v)} for name, v in r.ties],
        "validity": [[str(c) for c in conds] for conds in r.validity],
        "numeric": list(r.numeric),
        "scan": None if r.scan is None else {
            "from": _num(r.scan.low), "to": _num(r.scan.high), "points": r.scan.points,
            "changes": [{"between": [_num(c.lower), _num(c.upper)], "value": float(c.value)} for c in r.scan.changes]},
    }


def _case_dict(case):
    """A root's max()/min() branch: each argument it takes (a kernel's bound, or a term)."""
    if case is None:
        return None
    return {"certain": case.certain, "taken": [
        {"kernel": t.kernel, "bound": t.bound.value} if t.kernel else
        {"term": str(t.term), "larger": t.larger} for t in case.taken]}


def comparison_dict(c) -> dict:
    return {"scenarios": list(c.scenarios), "settings": list(map(settings_words, c.settings)),
            "applied": [{"settings": list(s.applied), "as_written": s.as_written} for s in c.settings],
            "hardware": list(c.hardware),
            "rows": [{"label": row.label, "unit": None if row.unit is None else str(row.unit),
                      "values": [_num(v) for v in row.values], "ratios": [_num(q) for q in row.ratios]}
                     for row in c.rows],
            "speedups": [_num(s) for s in c.speedups]}


def crossing_dict(c) -> dict:
    """A sweep's exact crossing as JSON-ready data (`printers.data.sweep.json_text` writes the rest)."""
    return {"kernel": c.kernel, "symbol": c.symbol, "value": _num(c.value), "below": c.below.value,
            "above": c.above.value}


def exploration_dict(x) -> dict:
    """An exploration as JSON: the search, the best per objective (exact values), the front and every
    configuration (floats in SI base units; null where not evaluated)."""
    from costlang.printers.text.explore import rejection_text
    s = x.search

    def config(c):
        return {"structure": c.structure, "settings": dict(c.settings), "values": dict(c.values),
                "objectives": [None if v != v else v for v in c.objectives], "feasible": c.feasible,
                "rejected_by": None if c.reason is None else rejection_text(c.reason)}
    return {"choices": {c.name: list(c.values) for c in s.choices}, "over": list(s.axes),
            "constraints": [c.text for c in s.constraints],
            "objectives": [{"text": o.text, "sense": o.sense} for o in s.objectives],
            "workers": x.workers, "structures": len(x.results), "configurations": x.evaluated,
            "best": [{"objective": b.objective.text, "value": None if b.exact is None else _num(b.exact),
                      "unit": None if b.unit is None else str(b.unit),
                      "configuration": None if b.config is None else config(b.config)} for b in x.best],
            "front": [config(c) for c in x.front],
            "rejected": [{"reason": rejection_text(r), "configurations": n} for r, n in x.rejected],
            "all": [config(c) for c in x.configs()]}
