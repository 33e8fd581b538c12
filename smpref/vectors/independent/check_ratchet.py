"""The independent check of ratchet.json: every vector recomputed without smpref's code."""

from __future__ import annotations

import hashlib
import hmac
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305

from smpref.vectors.independent import salsa
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

_LABEL = b"SimpleXQueueRatchet "


def _expand(prk: bytes, label: bytes) -> bytes:
    return hmac.digest(prk, label + b"\x01", "sha512")[:32]  # one SHA-512 block is enough


def _sealed_open(owner: bytes, payload: bytes) -> bytes | None:
    """libsodium crypto_box_seal_open, from its construction."""
    if len(payload) < 48:
        return None
    epk = payload[:32]
    nonce = hashlib.blake2b(epk + x25519_public(owner), digest_size=24).digest()
    key = salsa.hsalsa20(x25519(owner, epk), bytes(16))
    return salsa.secretbox_open(key, nonce, payload[32:])


class _Mirror:
    """The owner's ratchet mirror, from spec/queue-encryption.md (QENC-8)."""

    def __init__(self, owner: bytes) -> None:
        self.owner, self.next, self.key = owner, 0, b""

    def receive(self, data: bytes) -> tuple[str, bytes, str]:
        """(verdict, plaintext, reason); the state changes only when not invalid."""
        if len(data) < 9 or data[:1] not in (b"I", b"M", b"U", b"Q"):
            return "invalid", b"", "malformed"
        kind, seq, payload = data[:1], int.from_bytes(data[1:9], "big", signed=True), data[9:]
        if kind == b"Q":
            return ("valid", b"", "") if seq >= self.next else ("invalid", b"", "replay")
        if seq < self.next:
            return "invalid", b"", "replay"
        if kind == b"I":
            secret = self._secret(seq, payload) if seq == 0 else None
            if secret is None:
                return "invalid", b"", "tampered"
            self.key, self.next = secret, 1
            return "valid", b"", ""
        skipped, key = seq - self.next, self.key
        for _ in range(skipped):
            key = _expand(hmac.digest(bytes(64), key, "sha512"), _LABEL + b"next")
        prk = hmac.digest(bytes(64), key, "sha512")
        verdict = "acceptable" if skipped else "valid"
        if kind == b"U":
            randomness = self._secret(seq, payload)
            if randomness is None:
                return "invalid", b"", "tampered"
            rotation = _expand(prk, _LABEL + b"rotation")
            self.key = hkdf("SHA-512", randomness, rotation, _LABEL + b"update", 32)
            self.next = seq + 1
            return verdict, b"", ""
        aad = b"SimpleXQueueRatchet" + kind + data[1:9]
        try:
            body = ChaCha20Poly1305(_expand(prk, _LABEL + b"message")).decrypt(bytes(12),
                                                                               payload, aad)
        except InvalidTag:
            return "invalid", b"", "tampered"
        self.key, self.next = _expand(prk, _LABEL + b"next"), seq + 1
        return verdict, body, ""

    def _secret(self, seq: int, payload: bytes) -> bytes | None:
        plaintext = _sealed_open(self.owner, payload)
        if plaintext is None or len(plaintext) != 40:
            return None
        if int.from_bytes(plaintext[:8], "big", signed=True) != seq:
            return None
        return plaintext[8:]


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
        mirror = _Mirror(owner)
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
