"""The independent check of hkdf.json: every vector recomputed without smpref's code."""

from __future__ import annotations

from typing import Any

from smpref.vectors.independent.shared import confirmed, expect, hkdf, tests, unhex


def check_hkdf(vectors: dict[str, Any]) -> int:
    for group, t in tests(vectors):
        okm = hkdf(group["hash"], unhex(t, "salt"), unhex(t, "ikm"), unhex(t, "info"), t["size"])
        expect(okm == unhex(t, "okm"), t, "HKDF output differs")
    return confirmed(vectors)
