"""Shared test set-up: Hypothesis profiles and the requirement marker.

Profiles (select with SMPREF_HYPOTHESIS_PROFILE, or pytest --hypothesis-profile):
  default  quick runs on a developer machine
  ci       loaded when CI is set: deterministic (derandomize), no example database
  long     a large run: many more examples, still bounded per example
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile("default", max_examples=60, deadline=None)
settings.register_profile(
    "ci",
    max_examples=60,
    deadline=None,
    derandomize=True,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("long", max_examples=2000, deadline=None)
settings.load_profile(
    os.environ.get("SMPREF_HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "default")
)
