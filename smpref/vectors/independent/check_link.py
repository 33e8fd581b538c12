"""The independent check of link.json: every vector recomputed without smpref's code."""

from __future__ import annotations

import hashlib
from typing import Any

from smpref.independent import salsa
from smpref.vectors.independent.shared import (
    confirmed,
    expect,
    hkdf,
    tests,
    unhex,
    unpad,
    x25519,
    x25519_public,
)


def _open_part(sb_key: bytes, sealed: bytes) -> bytes | None:
    if len(sealed) < 24 + 16 + 2:
        return None
    opened = salsa.secretbox_open(salsa.hsalsa20(sb_key, bytes(16)), sealed[:24], sealed[24:])
    return None if opened is None else unpad(opened)


def check_link(vectors: dict[str, Any]) -> int:
    for group, t in tests(vectors):
        pk = unhex(t, "linkPrivateKey")
        expect(x25519_public(pk) == unhex(t, "linkPublicKey"), t, "k is not the key of pk")
        if group["type"] == "X25519Test":
            shared = x25519(pk, unhex(t, "peerPublicKey"))
            expect(shared == unhex(t, "sharedSecret"), t, "X25519 shared secret differs")
            continue
        sb_key = hkdf("SHA-512", b"", unhex(t, "decryptKey"), b"SimpleXLinkData", 32)
        opened = _open_part(sb_key, unhex(t, "sealed"))
        if t["result"] == "invalid":
            expect(opened is None, t, "an invalid part opened")
            continue
        k = unhex(t, "linkPublicKey")
        expect(hashlib.sha256(k).digest() == unhex(t, "linkId"), t, "linkId is not SHA-256(k)")
        expect(sb_key == unhex(t, "sbKey"), t, "sbKey differs")
        plaintext = unhex(t, "plaintext")
        expect(opened == plaintext, t, "the part does not open to the plaintext")
        padded_len = -(-(len(plaintext) + 2) // 256) * 256
        padded = len(plaintext).to_bytes(2, "big") + plaintext + b"#" * (padded_len - 2 -
                                                                          len(plaintext))
        nonce = unhex(t, "nonce")
        resealed = nonce + salsa.secretbox(salsa.hsalsa20(sb_key, bytes(16)), nonce, padded)
        expect(resealed == unhex(t, "sealed"), t, "sealing again gives other bytes")
    return confirmed(vectors)
