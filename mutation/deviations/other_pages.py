"""Planted deviations for the fidelity table's rows of other spec pages (spec/deployed-fidelity.md)."""

from __future__ import annotations

from fidelity import Deviation, plant

DEVIATIONS: list[Deviation] = [
]
