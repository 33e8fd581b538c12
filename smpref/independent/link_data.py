"""A link's keys and its encrypted link data, written again from LINK-1..LINK-4: the reader's
side, with the standard library, pyca's X25519 and this package's XSalsa20."""

from __future__ import annotations

import hashlib

from smpref.independent import salsa
from smpref.independent.basics import hkdf, unpad, x25519_public

#: LINK-3's HKDF info
LINK_DATA_INFO = b"SimpleXLinkData"
#: LINK-4: a part is the nonce, then the secretbox (tag and ciphertext)
NONCE_SIZE = 24


def link_key(pk: bytes) -> bytes:
    """``k``, the raw X25519 public key of the link's private key ``pk`` (LINK-1)."""
    return x25519_public(pk)


def link_id(pk: bytes) -> bytes:
    """``linkId = SHA-256(k)`` (LINK-2)."""
    return hashlib.sha256(link_key(pk)).digest()


def open_part(pk: bytes, sealed: bytes, *, pure: bool = False) -> bytes | None:
    """One part of a ``LinkBlob`` opened (LINK-3, LINK-4): ``sbKey = HKDF-SHA512("", pk,
    "SimpleXLinkData", 32)``, XSalsa20-Poly1305 through ``HSalsa20(sbKey, 0^16)`` with the
    part's own nonce, then the padding removed. The plaintext, or None when the part does not
    open or its padding is wrong.

    The key, its HSalsa20 and the layout are this package's own; the bulk XSalsa20-Poly1305
    is libsodium's secretbox (PyNaCl's bindings, not smpref's crypto) unless ``pure``, as in
    :func:`smpref.independent.ratchet_mirror.open_msg_body`: the state machines read links
    thousands of times per run."""
    if len(sealed) < NONCE_SIZE + 16:
        return None
    key = salsa.hsalsa20(hkdf("SHA-512", b"", pk, LINK_DATA_INFO, 32), bytes(16))
    nonce, boxed = sealed[:NONCE_SIZE], sealed[NONCE_SIZE:]
    padded = salsa.box_open(key, nonce, boxed, pure=pure)
    return None if padded is None else unpad(padded)
