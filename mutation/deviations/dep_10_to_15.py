"""Planted deviations for the fidelity table's rows DEP-10a to DEP-15c (spec/deployed-fidelity.md)."""

from __future__ import annotations

from fidelity import Deviation, plant

DEVIATIONS: list[Deviation] = [
    plant("DEP-11a", "a deployed client without ALPN is offered 6-18, not 6-6",
          "smpref/transport/versions.py",
          "    if alpn is None:\n        return LEGACY_VERSION, LEGACY_VERSION\n",
          "    if alpn is None:\n        return DEPLOYED_VERSIONS[0], DEPLOYED_VERSIONS[-1]\n"),
]
