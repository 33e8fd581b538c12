"""What a TLS client offered: the parts of its ClientHello a server's refusal depends on.

A TLS handshake that fails tells the server only an OpenSSL reason code, and Python's asyncio
logs nothing at all for it. To say *why* a client was refused, and what it offered, the server
reads the ClientHello (RFC 8446 §4.1.2) as its TLS library receives it (the context's message
callback, :func:`smpref.transport.tls.server_context`) and keeps the fields below. Parsing is
strict about lengths and lenient about content: an extension smpref does not read is skipped.
"""

from __future__ import annotations

from dataclasses import dataclass

from smpref.errors import WireError
from smpref.wire.buffer import Reader

#: RFC 8446 §4.2 extension types read here
_SERVER_NAME, _GROUPS, _SIGNATURE_ALGORITHMS, _ALPN, _VERSIONS = 0, 10, 13, 16, 43
_HANDSHAKE_CLIENT_HELLO = 1

#: IANA names of the signature schemes a report shows (RFC 8446 §4.2.3)
SIGNATURE_SCHEMES = {
    0x0201: "rsa_pkcs1_sha1", 0x0203: "ecdsa_sha1",
    0x0401: "rsa_pkcs1_sha256", 0x0501: "rsa_pkcs1_sha384", 0x0601: "rsa_pkcs1_sha512",
    0x0403: "ecdsa_secp256r1_sha256", 0x0503: "ecdsa_secp384r1_sha384",
    0x0603: "ecdsa_secp521r1_sha512",
    0x0804: "rsa_pss_rsae_sha256", 0x0805: "rsa_pss_rsae_sha384", 0x0806: "rsa_pss_rsae_sha512",
    0x0807: "ed25519", 0x0808: "ed448",
    0x0809: "rsa_pss_pss_sha256", 0x080A: "rsa_pss_pss_sha384", 0x080B: "rsa_pss_pss_sha512",
}
VERSIONS = {0x0304: "TLSv1.3", 0x0303: "TLSv1.2", 0x0302: "TLSv1.1", 0x0301: "TLSv1"}
GROUPS = {0x0017: "P-256", 0x0018: "P-384", 0x0019: "P-521", 0x001D: "X25519", 0x001E: "X448",
          0x0100: "ffdhe2048", 0x0101: "ffdhe3072", 0x0102: "ffdhe4096", 0x0103: "ffdhe6144",
          0x0104: "ffdhe8192"}
CIPHER_SUITES = {0x1301: "TLS_AES_128_GCM_SHA256", 0x1302: "TLS_AES_256_GCM_SHA384",
                 0x1303: "TLS_CHACHA20_POLY1305_SHA256", 0x1304: "TLS_AES_128_CCM_SHA256",
                 0x1305: "TLS_AES_128_CCM_8_SHA256"}


def _name(table: dict[int, str], code: int) -> str:
    return table.get(code, f"0x{code:04x}")


@dataclass(frozen=True)
class ClientOffer:
    """The ClientHello's offer, as names (IANA's where smpref knows them, else ``0x....``)."""

    versions: tuple[str, ...]
    cipher_suites: tuple[str, ...]
    signature_algorithms: tuple[str, ...]
    groups: tuple[str, ...]
    alpn: tuple[str, ...] | None  # None: no ALPN extension
    sni: str | None

    def describe(self) -> dict[str, str]:
        """Flat fields for a log line."""
        return {"offered_versions": ",".join(self.versions),
                "offered_suites": ",".join(self.cipher_suites),
                "offered_sigalgs": ",".join(self.signature_algorithms),
                "offered_groups": ",".join(self.groups),
                "offered_alpn": "(none)" if self.alpn is None else ",".join(self.alpn),
                "sni": self.sni or ""}


def _list16(reader: Reader) -> Reader:
    """A ``<2>``-length-prefixed vector, as a reader bounded to it."""
    length = reader.word16()
    start = reader.pos
    reader.take(length)
    return Reader(reader.buf, start, start + length)


def _codes(reader: Reader) -> list[int]:
    codes = []
    while reader.remaining():
        codes.append(reader.word16())
    return codes


def parse_client_hello(message: bytes) -> ClientOffer:
    """Read a ClientHello handshake message (type byte and 3-byte length included).

    Raises:
        WireError: the message is not a ClientHello, or a length runs past its end.
    """
    reader = Reader(message)
    if reader.byte() != _HANDSHAKE_CLIENT_HELLO:
        raise WireError("not a ClientHello", offset=0)
    length = int.from_bytes(reader.take(3), "big")
    body = Reader(message, reader.pos, reader.pos + length)
    reader.take(length)
    legacy_version = body.word16()
    body.take(32)  # random
    body.take(body.byte())  # legacy_session_id
    suites = _codes(_list16(body))
    body.take(body.byte())  # legacy_compression_methods
    versions, sigalgs, groups, alpn, sni = [legacy_version], [], [], None, None
    extensions = _list16(body) if body.remaining() else Reader(b"")
    while extensions.remaining():
        kind = extensions.word16()
        data = _list16(extensions)
        if kind == _VERSIONS:
            count = data.byte()
            versions = _codes(Reader(data.buf, data.pos, data.pos + count))
        elif kind == _SIGNATURE_ALGORITHMS:
            sigalgs = _codes(_list16(data))
        elif kind == _GROUPS:
            groups = _codes(_list16(data))
        elif kind == _ALPN:
            names = _list16(data)
            alpn = []
            while names.remaining():
                alpn.append(names.take(names.byte()).decode("ascii", "replace"))
        elif kind == _SERVER_NAME:
            names = _list16(data)
            if names.remaining() and names.byte() == 0:  # host_name
                sni = names.take(names.word16()).decode("ascii", "replace")
    return ClientOffer(
        versions=tuple(_name(VERSIONS, v) for v in versions if v & 0x0F0F != 0x0A0A),  # GREASE
        cipher_suites=tuple(_name(CIPHER_SUITES, s) for s in suites if s & 0x0F0F != 0x0A0A),
        signature_algorithms=tuple(_name(SIGNATURE_SCHEMES, s) for s in sigalgs),
        groups=tuple(_name(GROUPS, g) for g in groups if g & 0x0F0F != 0x0A0A),
        alpn=None if alpn is None else tuple(alpn), sni=sni)
