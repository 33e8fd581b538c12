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
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest
from hypothesis import HealthCheck, Phase, settings

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

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


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: one worker more than there are cores. Many tests wait on a server, a
    subprocess or a timer for part of their time, and a third worker on two cores runs while
    they wait: the whole suite took 478 s with three workers, 529 s with two and 510 s with
    four on the 2-core machine (docs/testing.md, "Speed")."""
    return (os.cpu_count() or 1) + 1


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Heavy tests first (a stable sort): the workers start the longest tests at once and fill
    in with the short ones, instead of one worker finishing alone with the last long test."""
    items.sort(key=lambda item: item.get_closest_marker("heavy") is None)


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkSession]:
    """One SparkSession on local[2] for every in-process campaign of a test session (a session
    takes seconds to start). Tests that use it are in the xdist group "spark", so that one
    worker starts it; it is stopped once, at the end."""
    from smpref.campaign.spark_job import CampaignConfig, session

    config = CampaignConfig(runs=1, first_seed=0, target="model", steps=1, master="local[2]",
                            out=tmp_path_factory.mktemp("spark"))
    started = session(config)
    yield started
    started.stop()
