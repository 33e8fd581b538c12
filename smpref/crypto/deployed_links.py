"""Deployed SMP's short-link data: the key and ID derivations and the sealed, signed parts
(DIV-8, DIV-13; simplexmq Crypto/ShortLink.hs:41-125).

A link's fixed data (``FixedLinkData``: the agent's version range, the root key, the
connection request) is hashed to the link key, ``SHA3-256(fixedData)``. A contact link derives
its link ID and its secret-box key from it, ``split24(HKDF-SHA512("", linkKey,
"SimpleXContactLink", 56))``; an invitation derives only the key (``"SimpleXInvLink"``, 32
bytes), its link ID being the server's. Each part is signed by the root key, ``ss(Ed25519
signature) || data``, padded (the fixed part to 2008 bytes, the user part to 13784) and sealed
with deployed's ``sbEncrypt`` under a fresh nonce: ``nonce(24) || tag(16) || ciphertext``, 2048
and 13824 bytes.

smpref's server stores these parts as opaque bytes (DEP-5); this module is for clients and for
the vectors (vectors/deployed.json).
"""

from __future__ import annotations

from typing import Final

from smpref.crypto.primitives import (
    ed25519_sign,
    ed25519_verify,
    hkdf_sha512,
    sb_decrypt,
    sb_encrypt,
    sha3_256,
)
from smpref.errors import BlockError, CryptoError
from smpref.wire.blocks import pad, unpad

#: the padded sizes of the fixed and the user part (simplexmq Crypto/ShortLink.hs:41-45)
FIXED_PADDED: Final = 2008
USER_PADDED: Final = 13784
#: the HKDF info strings of the two kinds of link (simplexmq Crypto/ShortLink.hs:47-53)
CONTACT_INFO: Final = b"SimpleXContactLink"
INVITATION_INFO: Final = b"SimpleXInvLink"


def link_key(fixed_data: bytes) -> bytes:
    """``SHA3-256(fixedData)``: what a short link carries, and what its data must hash to."""
    return sha3_256(fixed_data)


def contact_link_keys(key: bytes) -> tuple[bytes, bytes]:
    """(link ID, secret-box key) of a contact link."""
    derived = hkdf_sha512(b"", key, CONTACT_INFO, 56)
    return derived[:24], derived[24:]


def invitation_sb_key(key: bytes) -> bytes:
    """The secret-box key of an invitation link (its link ID is the server's)."""
    return hkdf_sha512(b"", key, INVITATION_INFO, 32)


def signed(root_seed: bytes, data: bytes) -> bytes:
    """``encodeSign``: ``ss(Ed25519 signature over data) || data``."""
    signature = ed25519_sign(root_seed, data)
    return bytes([len(signature)]) + signature + data


def seal_part(sb_key: bytes, nonce: bytes, plaintext: bytes, padded: int) -> bytes:
    """``nonce || sbEncrypt(sbKey, nonce, pad(plaintext, padded))``.

    Raises:
        CryptoError: the plaintext does not fit the padded size.
    """
    try:
        body = pad(plaintext, padded)
    except BlockError:
        raise CryptoError(f"{len(plaintext)} bytes do not fit a link part of {padded}") from None
    return nonce + sb_encrypt(sb_key, nonce, body)


def open_part(sb_key: bytes, sealed: bytes, root_public: bytes) -> bytes:
    """The data of a sealed, signed part, its signature checked with the root key.

    Raises:
        CryptoError: it does not open, or the signature does not verify.
    """
    if len(sealed) < 24 + 16:
        raise CryptoError("a link part is at least a nonce and a tag")
    try:
        plain = unpad(sb_decrypt(sb_key, sealed[:24], sealed[24:]))
    except BlockError as exc:
        raise CryptoError(f"link part padding: {exc}") from None
    if not plain or len(plain) < 1 + plain[0]:
        raise CryptoError("a link part starts with its signature")
    signature, data = plain[1:1 + plain[0]], plain[1 + plain[0]:]
    if not ed25519_verify(root_public, data, signature):
        raise CryptoError("the link part's signature does not verify with the root key")
    return data
