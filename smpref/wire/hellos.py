"""The handshake's byte layouts (TRANS-1, TRANS-9), without cryptography.

* The server's hello: ``Word16 min || Word16 max || ss(sessionId)`` and, from version 7,
  ``count(1) 1*Large(certificate DER) Large(signed session key DER)``.
* The signed session key: ``SEQUENCE { SEQUENCE { SPKI(X25519) }, AlgorithmIdentifier(Ed25519
  or Ed448, no parameters), BIT STRING(0 unused bits || signature) }``; the signature covers
  the inner ``30 2c || SPKI`` (46 bytes). The whole is 122 bytes for Ed25519, 175 for Ed448.
  :mod:`smpref.crypto.session_keys` signs and verifies it.
* The client's hello: ``Word16 version || ss(keyHash)``, then from version 7 ``ss(SPKI(X25519))``
  when the client has a key (no Maybe tag), from version 14 the proxy flag ``'T'``/``'F'``, and
  from version 16 ``'0'`` (no client service).

Decoding is strict: trailing bytes are an error (DIV-23).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from smpref.errors import BadValueError, CryptoError, WireError
from smpref.wire import version_history
from smpref.wire.buffer import Reader, Writer, encode
from smpref.wire.keys import DH_ALGORITHMS, KeyAlgorithm, PublicKey

#: versions from which the hello carries more (DEP-12; simplexmq Transport.hs:592-604, 625-629)
CERTIFICATES_VERSION: Final = version_history.IMPLIED_SESSION
PROXY_FLAG_VERSION: Final = version_history.PROXY_FLAG
SERVICE_VERSION: Final = version_history.SERVICES
#: the first byte of an X25519 SPKI's ShortString: its length (44)
_X25519_SPKI_LENGTH: Final = len(KeyAlgorithm.X25519.prefix) + KeyAlgorithm.X25519.raw_length

_INNER_WRAPPER: Final = bytes.fromhex("302c")  # SEQUENCE of the 44-byte SPKI


@dataclass(frozen=True, slots=True)
class SignedKeyLayout:
    """The DER around a signed session key for one signature algorithm."""

    name: str
    outer: bytes  # the outer SEQUENCE header
    algorithm_id: bytes  # AlgorithmIdentifier, no parameters
    bit_string: bytes  # BIT STRING header with 0 unused bits
    signature_length: int

    def encode(self, session_public: bytes, signature: bytes) -> bytes:
        """The DER of ``session_public`` (raw X25519) signed with ``signature``."""
        if len(signature) != self.signature_length:
            raise BadValueError(f"an {self.name} signature is {self.signature_length} bytes")
        return (self.outer + signed_part(session_public) + self.algorithm_id + self.bit_string
                + signature)

    def decode(self, der: bytes) -> tuple[bytes, bytes]:
        """(the signed part, the signature) of a DER in this layout.

        Raises:
            CryptoError: the bytes are not this layout.
        """
        inner_end = len(self.outer) + len(_INNER_WRAPPER) + _X25519_SPKI_LENGTH
        head = inner_end + len(self.algorithm_id) + len(self.bit_string)
        if (len(der) != head + self.signature_length or not der.startswith(self.outer)
                or der[len(self.outer):len(self.outer) + 2] != _INNER_WRAPPER
                or der[inner_end:head] != self.algorithm_id + self.bit_string):
            raise CryptoError(f"not an {self.name}-signed X25519 key in the deployed DER layout")
        return der[len(self.outer):inner_end], der[head:]


ED25519_SIGNED = SignedKeyLayout("ed25519", bytes.fromhex("3078"),
                                 bytes.fromhex("300506032b6570"), bytes.fromhex("034100"), 64)
ED448_SIGNED = SignedKeyLayout("ed448", bytes.fromhex("3081aa"),
                               bytes.fromhex("300506032b6571"), bytes.fromhex("037300"), 114)


def signed_part(session_public: bytes) -> bytes:
    """What the TLS key signs: ``30 2c || SPKI(X25519 session key)``."""
    return _INNER_WRAPPER + PublicKey(KeyAlgorithm.X25519, session_public).der


def session_key_of(signed: bytes) -> bytes:
    """The raw X25519 key inside a signed part."""
    return PublicKey.from_der(signed[len(_INNER_WRAPPER):], DH_ALGORITHMS).raw


@dataclass(frozen=True)
class ServerHello:
    min_version: int
    max_version: int
    session_id: bytes
    certificates: tuple[bytes, ...] = ()
    signed_key: bytes | None = None

    def encode(self) -> bytes:
        if self.max_version >= CERTIFICATES_VERSION and (
                not self.certificates or self.signed_key is None):
            raise BadValueError("from version 7 the hello carries the chain and signed key")
        return encode(self._write)

    def _write(self, w: Writer) -> None:
        w.word16(self.min_version)
        w.word16(self.max_version)
        w.short_string(self.session_id)
        if self.max_version >= CERTIFICATES_VERSION:
            assert self.signed_key is not None
            w.list_count(len(self.certificates))
            for certificate in self.certificates:
                w.large(certificate)
            w.large(self.signed_key)

    @classmethod
    def decode(cls, data: bytes) -> ServerHello:
        r = Reader(data)
        low, high = r.word16(), r.word16()
        if low > high:
            raise BadValueError("version range min exceeds max", path="versions", offset=0)
        session_id = r.short_string()
        certificates: tuple[bytes, ...] = ()
        signed = None
        if high >= CERTIFICATES_VERSION:
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
        return encode(self._write)

    def _write(self, w: Writer) -> None:
        w.word16(self.version)
        w.short_string(self.key_hash)
        if self.version >= CERTIFICATES_VERSION and self.client_key is not None:
            w.short_string(PublicKey(KeyAlgorithm.X25519, self.client_key).der)
        if self.version >= PROXY_FLAG_VERSION:
            w.boolean(self.proxy_server)
        if self.version >= SERVICE_VERSION:
            w.nothing()  # no client service certificate

    @classmethod
    def decode(cls, data: bytes) -> ClientHello:
        r = Reader(data)
        version = r.word16()
        kh = r.short_string()
        key = None
        # The key has no Maybe tag: it is there when the next byte is its ShortString length.
        if version >= CERTIFICATES_VERSION and r.remaining() and \
                r.buf[r.pos] == _X25519_SPKI_LENGTH:
            try:
                key = PublicKey.from_der(r.short_string(), DH_ALGORITHMS).raw
            except WireError as exc:
                raise exc.within("client_key") from None
        proxy = False
        if version >= PROXY_FLAG_VERSION:
            proxy = r.boolean()
        if version >= SERVICE_VERSION and r.maybe():
            raise BadValueError("smpref does not take client services", path="service")
        r.finish()
        return cls(version, kh, key, proxy)
