"""The LINK response opened again, from LINK-9 and LINK-10 and deployed's ``cbNonce``
(simplexmq Crypto.hs:1395-1401): the link reader's side, written with this package's
XSalsa20 and pyca's X25519."""

from __future__ import annotations

import hashlib

from smpref.independent import salsa
from smpref.independent.basics import x25519, x25519_public


def cb_nonce(data: bytes) -> bytes:
    """Deployed's ``cbNonce``: 24 bytes as they are, longer cut, shorter padded with zeros."""
    return data[:24] if len(data) >= 24 else data.ljust(24, b"\x00")


def open_link_response(link_secret: bytes, server_session_public: bytes, corr_id: bytes,
                       sealed: bytes) -> bytes | None:
    """LINK's QueueLink (LINK-9): XSalsa20-Poly1305 with X25519(pk, server session key)
    through HSalsa20, nonce cbNonce(corrId of the LGET). None when it does not open, or when
    it does not start with ``ss(SHA-256(k))``, the link's own ID (LINK-10)."""
    key = salsa.hsalsa20(x25519(link_secret, server_session_public), bytes(16))
    opened = salsa.secretbox_open(key, cb_nonce(corr_id), sealed)
    link_id = hashlib.sha256(x25519_public(link_secret)).digest()
    if opened is None or opened[:1] != b"\x20" or opened[1:33] != link_id:
        return None
    return opened
