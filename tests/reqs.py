"""Requirement IDs cited by tests: ``@req("CMD-10")`` marks a test as checking them.

tests/test_spec_pages.py checks that every cited ID is defined in spec/.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import pytest

F = TypeVar("F", bound=Callable[..., Any])

CITED: set[str] = set()


def req(*ids: str) -> Callable[[F], F]:
    """Mark a test with the requirement IDs it checks."""
    CITED.update(ids)
    return pytest.mark.req(*ids)
