"""Planted deviations for the fidelity table's rows DIV-26 to DIV-50 (spec/deployed-fidelity.md)."""

from __future__ import annotations

from fidelity import Deviation, plant

DEVIATIONS: list[Deviation] = [
]
