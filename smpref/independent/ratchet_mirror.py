"""The queue ratchet's recipient side and the MSG body, written again from
spec/queue-encryption.md (QENC-5..8) and DEP-7 with the standard library,
pyca/cryptography and this package's XSalsa20: the second implementation the vectors and the
state machines open records with."""

from __future__ import annotations

import hashlib
import hmac

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305

from smpref.independent import salsa
from smpref.independent.basics import hkdf, unpad, x25519, x25519_public

#: the most lost records the mirror steps over (QENC-8)
MAX_SKIP = 1024
#: MSG's encBody is padded to this before it is sealed (QENC-7)
PADDED_BODY = 16106

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


class RatchetMirror:
    """The owner's ratchet mirror, from spec/queue-encryption.md (QENC-8): it takes the
    records of one queue in delivery order and opens them, as a recipient does.

    :meth:`receive` answers ``(verdict, plaintext, reason)``: ``valid``, ``acceptable`` (a
    record after skipped ones) or ``invalid`` (``malformed``, ``replay`` or ``tampered``,
    and the state is unchanged)."""

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
        if skipped > MAX_SKIP:  # QENC-8: a gap of at most 1024 lost records
            return "invalid", b"", "gap"
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


def open_msg_body(owner_secret: bytes, server_public: bytes, msg_id: bytes, enc_body: bytes,
                  *, pure: bool = False) -> bytes | None:
    """MSG's encBody opened (QENC-7): XSalsa20-Poly1305 with X25519(owner, server queue key)
    through HSalsa20, nonce = msgId, padded to 16106; the unpadded body, or None when it does
    not open or its padding is wrong.

    The composition (X25519 by pyca, HSalsa20 by this package, the nonce, the padding) is this
    package's own. The 16 KB of XSalsa20-Poly1305 are libsodium's secretbox (through PyNaCl's
    bindings, not smpref's crypto) unless ``pure``: this package's Salsa20 in Python takes
    about a hundred times longer, which the state machines cannot afford at every delivery;
    the vectors' checks use it."""
    key = salsa.hsalsa20(x25519(owner_secret, server_public), bytes(16))
    padded = salsa.box_open(key, msg_id, enc_body, pure=pure)
    if padded is None or len(padded) != PADDED_BODY:
        return None
    return unpad(padded)
