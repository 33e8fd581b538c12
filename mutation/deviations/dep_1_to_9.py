"""Planted deviations for the fidelity table's rows DEP-1a to DEP-9b (spec/deployed-fidelity.md)."""

from __future__ import annotations

from fidelity import Deviation, plant

DEVIATIONS: list[Deviation] = [
]
