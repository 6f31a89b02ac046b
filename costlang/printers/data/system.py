"""A system's figures as JSON: its axes and links, each collective's message, steps and time, the
parallel layout and the pipeline bubble (the `system` object of `costlang run --json`)."""
from __future__ import annotations

from costlang.analysis.comms import bubble_fraction

__all__ = ["system_dict"]


def system_dict(a, number) -> dict:
    system = a.program.system
    v = a.value
    t = a.totals
    return {
        "name": system.name, "chip": system.chip, "chips": number(v(system.chips)),
        "axes": [{"name": x.name, "size": number(v(x.size)), "link": {
            "kind": x.link.kind, "one_way": number(v(x.link.one_way)), "stated": x.link.stated,
            "latency": number(v(x.link.latency)), "links": number(v(x.link.links)),
            "oversubscription": number(v(x.link.oversubscription)),
            "leaf": number(v(x.link.leaf)) if x.link.leaf is not None else None}} for x in system.axes],
        "collectives": [{"kernel": k.name, "collective": k.comms.comms.collective, "axis": k.comms.comms.axis,
                         "group": number(v(k.comms.comms.group)), "message": number(v(k.comms.comms.message)),
                         "sent": number(v(k.comms.comms.sent)), "steps": number(v(k.comms.comms.steps)),
                         "sent_formula": str(k.comms.comms.sent_formula),
                         "steps_formula": str(k.comms.comms.steps_formula),
                         "one_way": number(v(k.comms.link.one_way)),   # across a fat tree: its share
                         "t_comms": number(v(k.t_comms)),
                         **_bandwidths(k, v, number)} for k in a.kernels if k.comms],
        "t_comms": number(v(t.t_comms)),
        "t_overlap": number(v(t.t_overlap)) if t.t_overlap is not None else None,
        "t_serial": number(v(t.t_serial)) if t.t_serial is not None else None,
        "footprint_system": number(v(system.chips * a.footprint.bytes)),
        "parallel": [{"kind": s.kind, "axis": s.axis, **_options_dict(s, v, number)} for s in a.program.parallels],
        "bubble": number(v(bubble_fraction(a.program))),
    }


def _options_dict(spec, v, number) -> dict:
    """A parallelism's options as JSON: numbers as numbers, names (an algorithm, a dtype) as text."""
    out = {}
    for key, value in spec.options:
        name = getattr(value, "id", None) or getattr(value, "name", None)
        out[key] = name if name is not None else number(v(value))
    return out


def _bandwidths(k, v, number) -> dict:
    """algBW and busBW as nccl-tests reports them (analysis.comms.nccl_bandwidths), where defined."""
    from costlang.analysis.comms import nccl_bandwidths
    bw = nccl_bandwidths(k.comms.comms, k.t_comms, v)
    return {} if bw is None else {"alg_bw": number(v(bw[0])), "bus_bw": number(v(bw[1]))}
