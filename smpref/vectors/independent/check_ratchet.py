"""The independent check of ratchet.json: every vector recomputed without smpref's code."""

from __future__ import annotations

from typing import Any

from smpref.independent import salsa
from smpref.independent.ratchet_mirror import RatchetMirror
from smpref.vectors.independent.shared import (
    confirmed,
    expect,
    tests,
    unhex,
    unpad,
    x25519,
    x25519_public,
)


def _check_msg_body(t: dict[str, Any]) -> None:
    """QENC-7: open encBody with X25519(owner, server queue key) and msgId as nonce."""
    expect(x25519_public(unhex(t, "ownerPrivateKey")) == unhex(t, "ownerPublicKey"), t,
            "owner key pair differs")
    shared = x25519(unhex(t, "ownerPrivateKey"), x25519_public(unhex(t, "serverQueuePrivateKey")))
    padded = salsa.secretbox_open(salsa.hsalsa20(shared, bytes(16)), unhex(t, "msgId"),
                                  unhex(t, "encBody"))
    expect(padded is not None and len(padded) == 16106, t, "encBody does not open")
    assert padded is not None
    body = unpad(padded)
    expect(body is not None, t, "bad padding")
    assert body is not None
    flags = {b"T": True, b"F": False}
    expect(int.from_bytes(body[:8], "big", signed=True) == t["timestamp"], t, "timestamp")
    expect(flags.get(body[8:9]) == t["notification"], t, "notification flag")
    expect(flags.get(body[9:10]) == t["last"], t, "last flag")
    expect(body[10:11] == b" " and body[11:] == unhex(t, "record"), t, "record differs")


def check_ratchet(vectors: dict[str, Any]) -> int:
    for group, t in tests(vectors):
        if group["type"] == "MsgBodyTest":
            _check_msg_body(t)
            continue
        owner = unhex(t, "ownerPrivateKey")
        expect(x25519_public(owner) == unhex(t, "ownerPublicKey"), t, "owner key pair differs")
        mirror = RatchetMirror(owner)
        for i, earlier in enumerate(t["delivered"]):
            verdict, _, reason = mirror.receive(bytes.fromhex(earlier))
            expect(verdict != "invalid", t, f"delivered record {i} is rejected ({reason})")
        verdict, body, reason = mirror.receive(unhex(t, "record"))
        expect(verdict == t["result"], t, f"verdict {verdict}, the vector says {t['result']}")
        if verdict == "invalid":
            expect(reason == t["reason"], t, f"rejected as {reason}, not {t['reason']}")
            continue
        expect(body == unhex(t, "plaintext") if "plaintext" in t else not body, t,
                "plaintext differs")
        expect(mirror.key == unhex(t, "keyAfter"), t, "the ratchet key after it differs")
    return confirmed(vectors)
