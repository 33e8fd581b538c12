"""The suite's own layout on pytest-xdist's workers (docs/testing.md, "Speed").

With ``--dist loadgroup`` (pyproject.toml), xdist sends every test of an ``xdist_group`` to one
worker. It knows the group from the name each worker appends to the test's ID; when that name
is missing, the group's tests spread over both workers, and each worker starts its own
SparkSession for the "spark" group (a JVM and its Python workers: about 15 CPU seconds and
several seconds of wall time). pytest 9.2 stopped reading the attribute xdist 3.8 renames, and
nothing else failed: the suite just became slower.
"""

from __future__ import annotations

import pytest


@pytest.mark.xdist_group("spark")
def test_a_grouped_test_carries_its_group_to_the_scheduler(request: pytest.FixtureRequest
                                                           ) -> None:
    config = request.config
    if not hasattr(config, "workerinput"):  # one process (-n 0): every test shares it
        assert config.getvalue("numprocesses") in (None, 0)
        return
    assert config.getvalue("loadgroup"), "the suite is meant to run with --dist loadgroup"
    assert request.node.nodeid.endswith("@spark"), (
        f"{request.node.nodeid}: xdist did not tag the test with its group, so the group's "
        "tests are not kept on one worker (see the pytest pin in pyproject.toml)")
