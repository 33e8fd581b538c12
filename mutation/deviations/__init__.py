"""The planted deviations of `make mutate-fidelity` (mutation/fidelity.py), one module per part
of spec/deployed-fidelity.md. Each is the smallest edit to smpref's source that makes it behave
otherwise than its row says; its row's cited checks must fail with it planted."""

from __future__ import annotations

from deviations import dep_1_to_9, dep_10_to_15, div_1_to_25, div_26_to_50, other_pages

DEVIATIONS = (*dep_1_to_9.DEVIATIONS, *dep_10_to_15.DEVIATIONS, *div_1_to_25.DEVIATIONS,
              *div_26_to_50.DEVIATIONS, *other_pages.DEVIATIONS)
