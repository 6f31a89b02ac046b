"""The text of `costlang explore`: what was searched, the best configuration per objective, the
Pareto front of the first two objectives, and what rejected the rest (an `Exploration`, data only,
from `queries.explore`). Words come from the phrase table; numbers are SI-prefixed like a sweep's."""
from __future__ import annotations

from typing import Optional

from costlang.printers.numbers import human
from costlang.printers.floats import float_cell as _sweep_cell, float_text as _float_text
from costlang.printers.words.phrases import phrase

__all__ = ["exploration_lines", "rejection_text", "settings_text", "best_program", "FRONT_ROWS"]

#: the front is printed up to this many rows (all of them are in --csv and --json)
FRONT_ROWS = 20


def settings_text(config) -> str:
    parts = [f"{n} = {v}" for n, v in config.settings]
    parts += [f"{n} = {_float_text(v)}" for n, v in config.values]
    return ", ".join(parts) or phrase("en", "explore_as_written")


def rejection_text(r, lang: str = "en") -> str:
    if r.kind == "constraint":
        return phrase(lang, "explore_constraint").format(constraint=r.constraint.text)
    if r.kind == "weights":
        return phrase(lang, "explore_weights").format(weights=human(r.weights, _byte()),
                                                      capacity=human(r.capacity, _byte()), hardware=r.hardware)
    if r.kind == "file":
        return phrase(lang, "explore_file").format(message=r.message, where=r.where or "?")
    return phrase(lang, "explore_error").format(message=r.message)


def _byte():
    from costlang.units import BYTE
    return BYTE


def exploration_lines(x, lang: str = "en") -> list[str]:
    s = x.search
    structures = len(x.results)
    lines = [phrase(lang, "explore_title").format(
        structures=structures, configurations=x.evaluated,
        where=phrase(lang, "explore_serial") if x.workers <= 1 else
        phrase(lang, "explore_workers").format(workers=x.workers))]
    for c in s.choices:
        lines.append(f"  {phrase(lang, 'explore_choice')}: {c.name} ∈ {{{', '.join(c.values)}}}")
    for a in s.axes:
        lines.append(f"  {phrase(lang, 'explore_axis')}: {a}")
    for c in s.constraints:
        lines.append(f"  {phrase(lang, 'explore_require')}: {c.text}")
    lines.append("")
    for b in x.best:
        head = phrase(lang, "explore_best").format(objective=b.objective.text,
                                                   sense=phrase(lang, "explore_" + b.objective.sense))
        if b.config is None:
            lines += [head, f"  {phrase(lang, 'explore_none')}", ""]
            continue
        lines += [f"{head} {human(b.exact, b.unit)}", f"  {settings_text(b.config)}", ""]
    if x.front:
        o0, o1 = s.objectives[:2]
        lines.append(phrase(lang, "explore_front_title").format(
            count=len(x.front), first=o0.text, second=o1.text))
        lines += _front_table(x)
        lines.append("")
    if x.rejected:
        lines.append(phrase(lang, "explore_rejected"))
        for r, n in x.rejected:
            lines.append(f"  {n:>7}  {rejection_text(r, lang)}")
    return lines


def _front_table(x) -> list[str]:
    s = x.search
    units = _units(x)
    header = [phrase("en", "explore_configuration"), s.objectives[0].text, s.objectives[1].text]
    rows = [[settings_text(c), _sweep_cell(c.objectives[0], units[0]), _sweep_cell(c.objectives[1], units[1])]
            for c in x.front[:FRONT_ROWS]]
    widths = [max(len(r[i]) for r in rows + [header]) for i in range(3)]
    fmt = lambda r: "  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip()  # noqa: E731
    out = [fmt(header), fmt(["-" * w for w in widths])] + [fmt(r) for r in rows]
    if len(x.front) > FRONT_ROWS:
        out.append("  " + phrase("en", "explore_more").format(count=len(x.front) - FRONT_ROWS))
    return out


def _units(x) -> list:
    """Each objective's unit (from the first structure that was analysed)."""
    for r in x.results:
        if r.status == "ok":
            return list(r.units)
    return [None] * len(x.search.objectives)


def best_program(x) -> Optional[str]:
    """The file with the first objective's best configuration as a scenario it uses: a `.cost` file
    that runs that configuration (None when no configuration is feasible)."""
    b = x.best[0] if x.best else None
    if b is None or b.config is None:
        return None
    c = b.config
    settings = [f"{n} = {v}" for n, v in c.settings] + [f"{n} = {_whole(v)}" for n, v in c.values]
    settings = [*x.search.settings, *settings]
    head = phrase("en", "explore_written").format(objective=b.objective.text, sense=b.objective.sense,
                                                  value=human(b.exact, b.unit))
    source = x.search.source if x.search.source.endswith("\n") else x.search.source + "\n"
    return (f"{source}\n# {head}\nscenario explored {{ {'; '.join(settings)} }}\nuse scenario explored\n")


def _whole(v: float) -> str:
    return str(int(v)) if v == int(v) else repr(v)
