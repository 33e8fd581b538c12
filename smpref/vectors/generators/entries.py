"""What every vector generator shares: the layout of one test."""

from __future__ import annotations

from typing import Any

from smpref.vectors.vector_sets import Json


def entry(comment: str, requirements: list[str], result: str = "valid",
          flags: list[str] | None = None, **fields: Any) -> Json:
    """One test: its comment, requirement IDs, Wycheproof result and flags, then its fields,
    bytes as lowercase hex."""
    test = {"comment": comment, "requirements": requirements, "result": result,
            "flags": flags or []}
    test.update({k: v.hex() if isinstance(v, bytes) else v for k, v in fields.items()})
    return test
