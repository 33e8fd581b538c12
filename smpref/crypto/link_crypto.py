"""Seed 004 link crypto, as spec/links.md makes it exact (LINK-3, LINK-4, LINK-9).

* ``sbKey = HKDF-SHA512(salt = "", ikm = pk, info = "SimpleXLinkData", 32)``;
* each blob part is ``nonce || sbEncrypt(sbKey, nonce, pad(plaintext, n * 256))``;
* the LINK response is ``crypto_box(X25519(server session key, k), cbNonce(corrId), QueueLink)``.
"""

from __future__ import annotations

from smpref.crypto.primitives import (
    box_key,
    cb_nonce,
    hkdf_sha512,
    sb_decrypt,
    sb_encrypt,
    secretbox,
    secretbox_open,
)
from smpref.errors import BlockError, CryptoError
from smpref.wire.blocks import pad, unpad

LINK_DATA_INFO = b"SimpleXLinkData"
#: part plaintexts are padded to a multiple of this, so sizes leak only coarsely (LINK-4)
PART_PAD_UNIT = 256
NONCE_SIZE = 24
TAG_SIZE = 16


def link_data_key(pk: bytes) -> bytes:
    """LINK-3: the secretbox key of the link data, from the link's private key ``pk``."""
    return hkdf_sha512(b"", pk, LINK_DATA_INFO, 32)


def padded_size(length: int) -> int:
    """The padded size of a part plaintext of ``length`` bytes (2 length bytes included)."""
    return -(-(length + 2) // PART_PAD_UNIT) * PART_PAD_UNIT


def seal_part(sb_key: bytes, nonce: bytes, plaintext: bytes) -> bytes:
    """LINK-4: ``nonce || sbEncrypt(sbKey, nonce, pad(plaintext))``."""
    if len(nonce) != NONCE_SIZE:
        raise CryptoError("a link part nonce is 24 bytes")
    return nonce + sb_encrypt(sb_key, nonce, pad(plaintext, padded_size(len(plaintext))))


def open_part(sb_key: bytes, sealed: bytes) -> bytes:
    """Open one link part; raises CryptoError on any failure (LINK-4)."""
    if len(sealed) < NONCE_SIZE + TAG_SIZE + 2:
        raise CryptoError(f"a link part is at least {NONCE_SIZE + TAG_SIZE + 2} bytes")
    padded = sb_decrypt(sb_key, sealed[:NONCE_SIZE], sealed[NONCE_SIZE:])
    try:
        return unpad(padded)
    except BlockError:
        raise CryptoError("link part padding is malformed") from None


def seal_link_response(server_session_secret: bytes, link_public_key: bytes, corr_id: bytes,
                       queue_link: bytes) -> bytes:
    """LINK-9: the server seals the encoded QueueLink for the reader of ``k``."""
    return secretbox(box_key(link_public_key, server_session_secret), cb_nonce(corr_id),
                     queue_link)


def open_link_response(link_private_key: bytes, server_session_public: bytes, corr_id: bytes,
                       sealed: bytes) -> bytes:
    """LINK-9: the reader opens LINK with ``X25519(pk, server session public key)``."""
    return secretbox_open(box_key(server_session_public, link_private_key), cb_nonce(corr_id),
                          sealed)
