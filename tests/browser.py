"""Headless Chromium for the browser tests: found, or the test fails in CI and skips elsewhere."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"

# Without the background-networking flags Chromium keeps dialling Google's hosts, which this
# machine's closed network refuses.
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def chromium() -> str:
    """The Chromium binary. CI (.ci/run installs Debian's chromium) must have it."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found
    if os.environ.get("SMPREF_REQUIRE_TOOLS") or os.environ.get("CI"):
        pytest.fail("chromium is required in CI (.ci/run installs Debian's chromium)")
    reason = "chromium is not installed; install Debian's chromium to run the browser test"
    print(f"SKIP: {reason}")
    pytest.skip(reason)
