"""The independent check of encoding.json: every vector recomputed without smpref's code."""

from __future__ import annotations

from typing import Any

from smpref.errors import MalformedError
from smpref.vectors.independent import decoder
from smpref.vectors.independent.shared import confirmed, expect, tests, unhex


def check_encoding(vectors: dict[str, Any]) -> int:
    for _, t in tests(vectors):
        try:
            decoded = decoder.decode(unhex(t, "encoded"))
        except MalformedError as exc:
            expect(t["result"] == "invalid", t, f"a valid body is rejected: {exc}")
            expect(exc.unknown == (t["error"] == "UNKNOWN"), t, "the error kind differs")
            continue
        expect(t["result"] == "valid", t, "an invalid body decodes")
        expect(decoded == {"tag": t["tag"], "fields": t["fields"]}, t, "decoded fields differ")
    return confirmed(vectors)
