"""Transmission authorization (TRANS-5, TRANS-6, AUTH-1..AUTH-3).

An authorization is an Ed25519 (64 bytes) or Ed448 (114 bytes) signature over the authorized
bytes, or an X25519 authenticator (80 bytes): ``crypto_box(X25519(queue key, server session
key), cbNonce(corrId), sha512(authorized bytes))``.
"""

from __future__ import annotations

import hashlib
import hmac

from smpref.crypto.primitives import (
    box_key,
    cb_nonce,
    ed448_public,
    ed448_verify,
    ed25519_public,
    ed25519_sign,
    ed25519_verify,
    secretbox,
    sha256,
    sha512,
    x25519_public,
)
from smpref.errors import CryptoError
from smpref.wire.keys import KeyAlgorithm, PublicKey

# Fixed keys verified against when a queue or its key is missing or of the wrong type, so that
# an unknown queue costs the same work as a known one (AUTH-3). Nobody holds their secrets.
_DUMMY = {
    64: PublicKey(KeyAlgorithm.ED25519, ed25519_public(sha256(b"smpref dummy Ed25519"))),
    80: PublicKey(KeyAlgorithm.X25519, x25519_public(sha256(b"smpref dummy X25519"))),
    114: PublicKey(KeyAlgorithm.ED448, ed448_public(hashlib.shake_256(b"smpref dummy Ed448")
                                                    .digest(57))),
}
_EXPECTED_ALGORITHM = {64: KeyAlgorithm.ED25519, 80: KeyAlgorithm.X25519, 114: KeyAlgorithm.ED448}


def sign(seed: bytes, authorized: bytes) -> bytes:
    """An Ed25519 authorization."""
    return ed25519_sign(seed, authorized)


def authenticator(queue_secret: bytes, server_session_public: bytes, corr_id: bytes,
                  authorized: bytes) -> bytes:
    """An X25519 authenticator (deniable): 16-byte tag and 64-byte sealed SHA-512."""
    key = box_key(server_session_public, queue_secret)
    return secretbox(key, cb_nonce(corr_id), sha512(authorized))


def verify(key: PublicKey | None, authorization: bytes, authorized: bytes, corr_id: bytes,
           server_session_secret: bytes) -> bool:
    """Whether ``authorization`` authorizes ``authorized`` with ``key``.

    With no key, or a key of the wrong type for the authorization's length, a dummy key is
    verified instead (the same work) and the answer is False (AUTH-3).
    """
    expected = _EXPECTED_ALGORITHM.get(len(authorization))
    if expected is None:
        return False
    real = key is not None and key.algorithm is expected
    use = key if real and key is not None else _DUMMY[len(authorization)]
    if expected is KeyAlgorithm.ED25519:
        ok = ed25519_verify(use.raw, authorized, authorization)
    elif expected is KeyAlgorithm.ED448:
        ok = ed448_verify(use.raw, authorized, authorization)
    else:
        try:
            key_material = box_key(use.raw, server_session_secret)
        except CryptoError:  # a low-order point: no one can hold its secret
            key_material, real = box_key(_DUMMY[80].raw, server_session_secret), False
        box = secretbox(key_material, cb_nonce(corr_id), sha512(authorized))
        ok = hmac.compare_digest(box, authorization)
    return ok and real
