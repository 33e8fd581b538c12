"""Shared test set-up: Hypothesis profiles and the requirement marker.

Profiles (select with HYPOTHESIS_PROFILE=name, or pytest --hypothesis-profile=name):
  default  quick runs on a developer machine
  ci       the fast CI profile: deterministic (derandomize), no example database
  long     a large run: many more examples and longer state-machine runs
  mutation the ci profile without shrinking: `make mutate` needs only to know that a test
           fails, and a minimal example of a mutant's failure costs minutes

The choice is explicit: Hypothesis has a built-in "ci" profile that it loads by itself when
the CI variable is set; this file registers its own "ci" profile under that name and loads
it, or the one HYPOTHESIS_PROFILE names, so the settings in force are always the ones here.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, Phase, settings

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
settings.register_profile(
    "mutation",
    settings.get_profile("ci"),
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
)
settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE")
    or os.environ.get("SMPREF_HYPOTHESIS_PROFILE")
    or ("ci" if os.environ.get("CI") else "default")
)
