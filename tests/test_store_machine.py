"""The model's state machine over the journal store, against the memory store (STORE-18)."""

from __future__ import annotations

from reqs import req

from smpref.testing.differential import DifferentialMachine

TestDifferential = req("STORE-18", "STORE-7", "STORE-14")(DifferentialMachine.TestCase)
