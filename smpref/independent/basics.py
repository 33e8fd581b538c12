"""Primitives of the second implementation: HKDF, X25519 and padding, from their RFCs and
ENC-1, over the standard library and pyca/cryptography."""

from __future__ import annotations

import hashlib
import hmac

from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat


def hkdf(hash_name: str, salt: bytes, ikm: bytes, info: bytes, size: int) -> bytes:
    """HKDF (RFC 5869) with SHA-512 or SHA-256: ``size`` bytes of output."""
    algorithm = {"SHA-512": "sha512", "SHA-256": "sha256"}[hash_name]
    prk = hmac.digest(salt or bytes(hashlib.new(algorithm).digest_size), ikm, algorithm)
    out, block, counter = b"", b"", 1
    while len(out) < size:
        block = hmac.digest(prk, block + info + bytes([counter]), algorithm)
        out, counter = out + block, counter + 1
    return out[:size]


def x25519_public(secret: bytes) -> bytes:
    """The raw X25519 public key of a raw secret."""
    return X25519PrivateKey.from_private_bytes(secret).public_key().public_bytes(
        Encoding.Raw, PublicFormat.Raw)


def x25519(secret: bytes, public: bytes) -> bytes:
    """The raw X25519 shared secret."""
    return X25519PrivateKey.from_private_bytes(secret).exchange(
        X25519PublicKey.from_public_bytes(public))


def unpad(padded: bytes) -> bytes | None:
    """``Word16 len || content || padding`` (ENC-1): the content, or None when the
    length does not fit."""
    if len(padded) < 2 or int.from_bytes(padded[:2], "big") > len(padded) - 2:
        return None
    return padded[2 : 2 + int.from_bytes(padded[:2], "big")]
