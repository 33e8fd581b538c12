"""The server identity and the signed session key of the handshake (TRANS-1, TRANS-9).

``keyHash`` is the SHA-256 of the identity (CA) certificate's DER. The server signs a fresh
X25519 session key with its TLS (leaf) key, Ed25519 or Ed448, as deployed servers do
(``smp-server init --sign-algorithm``, Server/Main.hs:857-866); the layout of what is signed is
:mod:`smpref.wire.hellos`'.
"""

from __future__ import annotations

import hashlib

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric import ed448, ed25519

from smpref.crypto.primitives import ed25519_sign, ed25519_verify
from smpref.errors import CryptoError
from smpref.wire.hellos import ED448_SIGNED, ED25519_SIGNED, session_key_of, signed_part

TlsPublicKey = bytes | ed25519.Ed25519PublicKey | ed448.Ed448PublicKey
#: a leaf's private key: a raw Ed25519 seed, or a ``cryptography`` Ed25519/Ed448 key
TlsPrivateKey = bytes | ed25519.Ed25519PrivateKey | ed448.Ed448PrivateKey


def key_hash(identity_certificate_der: bytes) -> bytes:
    """TRANS-1: the server identity, SHA-256 of the identity certificate's DER."""
    return hashlib.sha256(identity_certificate_der).digest()


def signed_session_key(tls_key: TlsPrivateKey, session_public: bytes) -> bytes:
    """The server's X25519 session key, signed with its TLS key (TRANS-9): the Ed448 layout
    for an Ed448 key, the Ed25519 one for a raw seed or an Ed25519 key."""
    if isinstance(tls_key, ed448.Ed448PrivateKey):
        return ED448_SIGNED.encode(session_public, tls_key.sign(signed_part(session_public)))
    seed = tls_key if isinstance(tls_key, bytes) else tls_key.private_bytes_raw()
    signature = ed25519_sign(seed, signed_part(session_public))
    return ED25519_SIGNED.encode(session_public, signature)


def verify_signed_session_key(der: bytes, tls_public: TlsPublicKey) -> bytes:
    """The X25519 session key in ``der`` if the TLS key signed it.

    ``tls_public`` is a raw Ed25519 key or a ``cryptography`` Ed25519/Ed448 public key
    (deployed servers' certificates are Ed25519 or Ed448, TRANS-13).

    Raises:
        CryptoError: the layout is not the key's, or the signature does not verify.
    """
    if isinstance(tls_public, ed448.Ed448PublicKey):
        signed, signature = ED448_SIGNED.decode(der)
        try:
            tls_public.verify(signature, signed)
            valid = True
        except InvalidSignature:
            valid = False
    else:
        signed, signature = ED25519_SIGNED.decode(der)
        raw = tls_public if isinstance(tls_public, bytes) else tls_public.public_bytes_raw()
        valid = ed25519_verify(raw, signed, signature)
    if not valid:
        raise CryptoError("the session key's signature does not verify")
    return session_key_of(signed)
