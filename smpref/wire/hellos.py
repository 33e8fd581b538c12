"""The SMP handshake (smp-wire §2.3, §2.5; TRANS-1, TRANS-9), without I/O.

* ``keyHash`` = SHA-256 of the DER of the identity (CA) certificate, the chain's second one.
* The server's hello: ``Word16 min || Word16 max || ss(sessionId)`` and, from version 7,
  ``count(1) 1*Large(certificate DER) Large(signed session key DER)``.
* The signed session key: ``SEQUENCE { SEQUENCE { SPKI(X25519) }, AlgorithmIdentifier(Ed25519,
  no parameters), BIT STRING(0 unused bits || signature) }``; the signature covers the inner
  ``30 2c || SPKI`` (46 bytes). The whole is 122 bytes for Ed25519.
* The client's hello: ``Word16 version || ss(keyHash)``, then from version 7 ``ss(SPKI(X25519))``
  when the client has a key (no Maybe tag), from version 14 the proxy flag ``'T'``/``'F'``, and
  from version 16 ``'0'`` (no client service).

Decoding is strict: trailing bytes are an error (DIV-23).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric import ed448, ed25519

from smpref.crypto.primitives import ed25519_sign, ed25519_verify
from smpref.errors import BadValueError, CryptoError, WireError
from smpref.wire.buffer import Reader, write_large, write_short_string
from smpref.wire.keys import DH_ALGORITHMS, KeyAlgorithm, PublicKey

ED25519_ALGORITHM_ID = bytes.fromhex("300506032b6570")
ED448_ALGORITHM_ID = bytes.fromhex("300506032b6571")
_SPKI_WRAPPER = bytes.fromhex("302c")
_SIGNED_PREFIX = bytes.fromhex("3078")  # SEQUENCE of 120 bytes
_BIT_STRING = bytes.fromhex("034100")  # 65 bytes: no unused bits, then the signature


def key_hash(identity_certificate_der: bytes) -> bytes:
    """TRANS-1: the server identity, SHA-256 of the identity certificate's DER."""
    return hashlib.sha256(identity_certificate_der).digest()


def signed_session_key(tls_seed: bytes, session_public: bytes) -> bytes:
    """The server's X25519 session key, signed with its Ed25519 TLS key (TRANS-9)."""
    inner = _SPKI_WRAPPER + PublicKey(KeyAlgorithm.X25519, session_public).der
    signature = ed25519_sign(tls_seed, inner)
    return _SIGNED_PREFIX + inner + ED25519_ALGORITHM_ID + _BIT_STRING + signature


#: (algorithm identifier, BIT STRING header, signature length, outer SEQUENCE header) per key
_SIGNED_LAYOUTS = {
    "ed25519": (ED25519_ALGORITHM_ID, bytes.fromhex("034100"), 64, bytes.fromhex("3078")),
    "ed448": (ED448_ALGORITHM_ID, bytes.fromhex("037300"), 114, bytes.fromhex("3081aa")),
}


def verify_signed_session_key(der: bytes, tls_public: bytes | Any) -> bytes:
    """The X25519 session key in ``der`` if the TLS key signed it, else CryptoError.

    ``tls_public`` is a raw Ed25519 key or a ``cryptography`` Ed25519/Ed448 public key (deployed
    servers default to Ed448 certificates, smp-wire §2.3).
    """
    if isinstance(tls_public, bytes):
        name = "ed25519"
    elif isinstance(tls_public, ed448.Ed448PublicKey):
        name = "ed448"
    elif isinstance(tls_public, ed25519.Ed25519PublicKey):
        name = "ed25519"
    else:
        raise CryptoError("the TLS key is neither Ed25519 nor Ed448")
    algorithm, bit_string, sig_len, prefix = _SIGNED_LAYOUTS[name]
    inner_end = len(prefix) + 46
    if (len(der) != inner_end + len(algorithm) + len(bit_string) + sig_len
            or der[: len(prefix)] != prefix or der[len(prefix) : len(prefix) + 2] != _SPKI_WRAPPER
            or der[inner_end : inner_end + len(algorithm)] != algorithm
            or der[inner_end + len(algorithm) : inner_end + len(algorithm) + 3] != bit_string):
        raise CryptoError(f"not an {name}-signed X25519 key in the deployed DER layout")
    inner = der[len(prefix) : inner_end]
    signature = der[inner_end + len(algorithm) + 3 :]
    if isinstance(tls_public, bytes):
        valid = ed25519_verify(tls_public, inner, signature)
    else:
        try:
            tls_public.verify(signature, inner)
            valid = True
        except InvalidSignature:
            valid = False
    if not valid:
        raise CryptoError("the session key's signature does not verify")
    return PublicKey.from_der(inner[2:], DH_ALGORITHMS).raw


@dataclass(frozen=True)
class ServerHello:
    min_version: int
    max_version: int
    session_id: bytes
    certificates: tuple[bytes, ...] = ()
    signed_key: bytes | None = None

    def encode(self) -> bytes:
        out = bytearray(self.min_version.to_bytes(2, "big") + self.max_version.to_bytes(2, "big"))
        write_short_string(out, self.session_id)
        if self.max_version >= 7:
            if not self.certificates or self.signed_key is None:
                raise BadValueError("from version 7 the hello carries the chain and signed key")
            out.append(len(self.certificates))
            for certificate in self.certificates:
                write_large(out, certificate)
            write_large(out, self.signed_key)
        return bytes(out)

    @classmethod
    def decode(cls, data: bytes) -> ServerHello:
        r = Reader(data)
        low, high = r.word16(), r.word16()
        if low > high:
            raise BadValueError("version range min exceeds max", path="versions", offset=0)
        session_id = r.short_string()
        certificates: tuple[bytes, ...] = ()
        signed = None
        if high >= 7:
            count = r.byte()
            if count == 0:
                raise BadValueError("empty certificate chain", path="certificates")
            certificates = tuple(r.large() for _ in range(count))
            signed = r.large()
        r.finish()
        return cls(low, high, session_id, certificates, signed)


@dataclass(frozen=True)
class ClientHello:
    version: int
    key_hash: bytes
    client_key: bytes | None = None  # raw X25519 public key
    proxy_server: bool = False

    def encode(self) -> bytes:
        out = bytearray(self.version.to_bytes(2, "big"))
        write_short_string(out, self.key_hash)
        if self.version >= 7 and self.client_key is not None:
            write_short_string(out, PublicKey(KeyAlgorithm.X25519, self.client_key).der)
        if self.version >= 14:
            out += b"T" if self.proxy_server else b"F"
        if self.version >= 16:
            out += b"0"
        return bytes(out)

    @classmethod
    def decode(cls, data: bytes) -> ClientHello:
        r = Reader(data)
        version = r.word16()
        kh = r.short_string()
        key = None
        if version >= 7 and r.remaining() and r.buf[r.pos] == 44:
            try:
                key = PublicKey.from_der(r.short_string(), DH_ALGORITHMS).raw
            except WireError as exc:
                raise exc.within("client_key") from None
        proxy = False
        if version >= 14:
            proxy = r.boolean()
        if version >= 16 and r.maybe():
            raise BadValueError("smpref does not take client services", path="service")
        r.finish()
        return cls(version, kh, key, proxy)

