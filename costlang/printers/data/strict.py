"""Strict JSON text: every JSON document costlang prints goes through `dumps` (no sympy here, so a
sweep read back from its compiled plan prints its JSON as a first run does)."""
from __future__ import annotations

import json

__all__ = ["dumps", "json_safe"]


def json_safe(obj):
    """`obj` with every float that JSON cannot hold replaced: ±inf by "inf"/"-inf", NaN by null.

    >>> json_safe({"a": [float("inf"), float("nan"), 1.5]})
    {'a': ['inf', None, 1.5]}
    """
    if isinstance(obj, float):
        return obj if obj == obj and abs(obj) != float("inf") else (None if obj != obj else
                                                                       "inf" if obj > 0 else "-inf")
    if isinstance(obj, dict):
        return {k: json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_safe(v) for v in obj]
    return obj


def dumps(obj) -> str:
    """Every JSON document costlang prints: strict JSON (never NaN or Infinity), UTF-8, indented."""
    return json.dumps(json_safe(obj), indent=2, ensure_ascii=False, allow_nan=False) + "\n"
