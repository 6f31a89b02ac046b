"""What bounds a kernel's time, as stable identifiers: `Bound` and the `Word` enums it is one of.

Data only and without sympy, so that a sweep read back from its compiled plan (`queries.compiled`)
marks its rows with the same values an analysis gives; `analysis.bounds` holds the rest of the
verdict data model and re-exports these.
"""
from __future__ import annotations

import enum

__all__ = ["Word", "Bound", "MEMORY", "COMPUTE", "LAUNCH", "COMMS", "BALANCED", "DEPENDS", "UNDECIDED"]


class Word(str, enum.Enum):
    """An enum of stable identifiers (used in JSON), each printed as its value; printers word it."""

    def __str__(self) -> str:
        return self.value


class Bound(Word):
    """What bounds a kernel's time (the value is a stable identifier, used in JSON)."""
    MEMORY = "memory-bound"
    COMPUTE = "compute-bound"
    LAUNCH = "launch-bound"
    COMMS = "comms-bound"
    BALANCED = "balanced"
    DEPENDS = "depends"        # regimes or conditions say which, for which values
    UNDECIDED = "undecided"    # sympy could not decide (the relations say what was compared)


MEMORY, COMPUTE, LAUNCH, COMMS, BALANCED, DEPENDS, UNDECIDED = (
    Bound.MEMORY, Bound.COMPUTE, Bound.LAUNCH, Bound.COMMS, Bound.BALANCED, Bound.DEPENDS, Bound.UNDECIDED)
