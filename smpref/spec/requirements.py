"""Requirement texts from the packaged spec pages, for failure reports."""

from __future__ import annotations

import functools
import re

from smpref.resources import spec_pages, spec_text

_DEFINITION = re.compile(r"^- \*\*([A-Z]+-\d+)\*\* (.*)$")


@functools.cache
def requirement_texts() -> dict[str, str]:
    """Every requirement ID defined in spec/*.md and its text (continuation lines joined)."""
    texts: dict[str, str] = {}
    for page in spec_pages():
        current: str | None = None
        for line in spec_text(page).splitlines():
            match = _DEFINITION.match(line)
            if match:
                current = match.group(1)
                texts[current] = match.group(2).strip()
            elif current and line.startswith("  ") and line.strip():
                texts[current] += " " + line.strip()
            else:
                current = None
    return texts


def requirement_text(requirement: str) -> str:
    return requirement_texts().get(requirement, "(not defined in spec/)")
