"""Planted deviations for the fidelity table's rows DIV-1 to DIV-25 (spec/deployed-fidelity.md)."""

from __future__ import annotations

from fidelity import Deviation, plant

DEVIATIONS: list[Deviation] = [
]
