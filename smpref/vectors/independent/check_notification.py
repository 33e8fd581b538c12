"""The independent check of notification.json: every vector recomputed without smpref's code."""

from __future__ import annotations

from typing import Any

from smpref.independent import salsa
from smpref.vectors.independent.shared import (
    confirmed,
    expect,
    ss,
    tests,
    unhex,
    unpad,
    x25519,
    x25519_public,
)


def check_notification(vectors: dict[str, Any]) -> int:
    for _, t in tests(vectors):
        shared = x25519(unhex(t, "recipientNtfPrivateKey"),
                         x25519_public(unhex(t, "serverNtfPrivateKey")))
        opened = salsa.secretbox_open(salsa.hsalsa20(shared, bytes(16)), unhex(t, "nonce"),
                                      unhex(t, "encMetadata"))
        if t["result"] == "invalid":
            expect(opened is None, t, "tampered metadata opens")
            continue
        expect(opened is not None and len(opened) == 128, t, "metadata does not open")
        assert opened is not None
        expected = ss(unhex(t, "msgId")) + t["timestamp"].to_bytes(8, "big")
        expect(unpad(opened) == expected, t, "metadata differs")
    return confirmed(vectors)
