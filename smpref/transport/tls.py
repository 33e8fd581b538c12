"""TLS contexts for SMP, the session ID, and the client's check of the server identity.

Deployed SMP uses TLS 1.3 with Ed25519/Ed448 certificates, ALPN ``smp/1`` and no SNI from
clients (smp-wire §2.1-2.3), and its one TLS 1.3 cipher suite is ChaCha20-Poly1305-SHA256.
smpref's SMP contexts offer that suite alone too (TRANS-8): it fixes the session ID, the
Finished message of a SHA-256 suite, at 32 bytes, which private routing needs (a PFWD names a
relay session by it, and with a 48-byte ID of a SHA-384 suite it no longer fits a block,
DEP-15). Python's ``ssl`` has no call for TLS 1.3 suites, so :func:`_chacha20_only` makes
OpenSSL's through ctypes, and checks that it took. Signature algorithms stay OpenSSL's
defaults, which include Ed25519 and Ed448.
"""

from __future__ import annotations

import _ssl
import ctypes
import datetime
import functools
import hashlib
import itertools
import ssl
from collections.abc import Callable

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric import ed448, ed25519

from smpref.errors import IdentityError, TlsCredentialError
from smpref.transport.credentials import ServerCredentials
from smpref.transport.versions import SEED_ALPN, SMP_ALPN, client_alpn

HTTP_ALPN = "http/1.1"
#: deployed SMP's one TLS 1.3 cipher suite (Transport.hs defaultSupportedParams)
SMP_SUITE = "TLS_CHACHA20_POLY1305_SHA256"


@functools.cache
def _set_ciphersuites() -> ctypes._CFuncPtr:  # type: ignore[name-defined]
    """OpenSSL's ``SSL_CTX_set_ciphersuites``, from the library Python's ``_ssl`` uses."""
    function = ctypes.CDLL(_ssl.__file__).SSL_CTX_set_ciphersuites
    function.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    function.restype = ctypes.c_int
    return function


def _chacha20_only(ctx: ssl.SSLContext) -> None:
    """Offer :data:`SMP_SUITE` alone in TLS 1.3. CPython's SSLContext object holds its
    ``SSL_CTX *`` right after the object header; the result is checked through the public
    ``get_ciphers``, so a Python that lays it out otherwise fails here, not on the wire.

    Raises:
        TlsCredentialError: the suite could not be set.
    """
    pointer = ctypes.c_void_p.from_address(id(ctx) + 2 * ctypes.sizeof(ctypes.c_void_p))
    if _set_ciphersuites()(pointer.value, SMP_SUITE.encode()) != 1 or [
            c["name"] for c in ctx.get_ciphers() if c["protocol"] == "TLSv1.3"] != [SMP_SUITE]:
        raise TlsCredentialError(f"OpenSSL would not restrict TLS 1.3 to {SMP_SUITE}")



def session_id(ssl_object: ssl.SSLObject | ssl.SSLSocket) -> bytes:
    """The SMP session ID: tls-unique, the client's Finished ``verify_data`` (TRANS-8).

    This is the only place smpref reads it; both ends get the same bytes under TLS 1.3.
    """
    value = ssl_object.get_channel_binding("tls-unique")
    if not value:
        raise ssl.SSLError("the TLS connection has no tls-unique channel binding")
    return value


def sni_of(ssl_object: ssl.SSLObject) -> str | None:
    """The server name a client sent (SNI), as the server's context saw it; None if none."""
    name = getattr(ssl_object, "smpref_sni", None)
    return name if isinstance(name, str) else None


def server_context(credentials: ServerCredentials, *, pages: bool = True,
                   protocols: tuple[str, ...] = (SEED_ALPN, SMP_ALPN)) -> ssl.SSLContext:
    """The server's context: the SMP chain, ALPN smpref-seed/1 and smp/1 (TRANS-11), and
    http/1.1 for server pages.

    A client that sends SNI is a browser (SMP clients send none, smp-wire §2.1): it gets the
    web certificate, as a deployed server gives its HTTPS credential. ``protocols`` are the
    SMP tokens offered, in the server's order of preference.
    """
    smp = _base_server_context(str(credentials.path("server.crt")),
                               str(credentials.path("server.key")))
    _chacha20_only(smp)
    smp.set_alpn_protocols([*protocols, HTTP_ALPN] if pages else list(protocols))
    if pages:
        web = _base_server_context(str(credentials.path("web.crt")),
                                   str(credentials.path("web.key")))
        web.set_alpn_protocols([HTTP_ALPN])

        def choose(sock: ssl.SSLObject, server_name: str | None, _ctx: ssl.SSLContext) -> None:
            if server_name:
                sock.context = web
                # kept for the server's diagnostics: an SMP client sent SNI (TRANS-17)
                sock.smpref_sni = server_name  # type: ignore[attr-defined]

        smp.sni_callback = choose
    return smp


def _base_server_context(certfile: str, keyfile: str) -> ssl.SSLContext:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_3
    ctx.load_cert_chain(certfile, keyfile)
    ctx.options |= ssl.OP_NO_TICKET  # no session resumption (TRANS-1)
    ctx.num_tickets = 0
    return ctx


def client_context(alpn: list[str] | None = None) -> ssl.SSLContext:
    """A client context that lets any chain through TLS: :func:`check_identity` decides.

    ``alpn`` defaults to both protocols, the seed design first (TRANS-11).

    The server's certificate is checked against the keyHash of its address, not against a
    public CA (TRANS-1), so OpenSSL's own verification is off and the check happens after the
    handshake, before any command is sent.
    """
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_3
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    ctx.set_alpn_protocols(alpn if alpn is not None else client_alpn(None))
    _chacha20_only(ctx)
    return ctx


def _verify_signed_by(cert: x509.Certificate, issuer: x509.Certificate) -> None:
    key = issuer.public_key()
    if not isinstance(key, (ed25519.Ed25519PublicKey, ed448.Ed448PublicKey)):
        raise IdentityError("the identity certificate's key is neither Ed25519 nor Ed448")
    try:
        key.verify(cert.signature, cert.tbs_certificate_bytes)
    except InvalidSignature:
        raise IdentityError("the leaf is not signed by the identity certificate") from None


def check_identity(chain: tuple[bytes, ...], tls_leaf_der: bytes | None, key_hash: bytes,
                   *, now: Callable[[], datetime.datetime] | None = None
                   ) -> ed25519.Ed25519PublicKey | ed448.Ed448PublicKey:
    """Check the server's chain from its hello against the address's keyHash (TRANS-1).

    ``chain`` is the hello's chain (leaf first); ``tls_leaf_der`` the certificate TLS
    presented. Returns the leaf's public key (it signs the session key, TRANS-9).

    Raises:
        IdentityError: naming the check that failed.
    """
    if len(chain) < 2:
        raise IdentityError(f"the chain has {len(chain)} certificate(s); the identity is the 2nd")
    if len(chain) > 4:
        raise IdentityError("the certificate chain is too deep")
    if tls_leaf_der is not None and tls_leaf_der != chain[0]:
        raise IdentityError("the hello's leaf is not the certificate TLS presented")
    if hashlib.sha256(chain[1]).digest() != key_hash:
        raise IdentityError("the identity certificate does not match the address's keyHash")
    try:
        certs = [x509.load_der_x509_certificate(der) for der in chain]
    except ValueError as exc:
        raise IdentityError(f"a certificate does not parse: {exc}") from None
    moment = (now or (lambda: datetime.datetime.now(datetime.UTC)))()
    for index, cert in enumerate(certs):
        if not cert.not_valid_before_utc <= moment <= cert.not_valid_after_utc:
            raise IdentityError(f"certificate {index} is outside its validity period")
    for cert, issuer in itertools.pairwise(certs):
        try:
            constraints = issuer.extensions.get_extension_for_class(x509.BasicConstraints)
        except x509.ExtensionNotFound:
            raise IdentityError("an issuing certificate lacks basicConstraints CA:true") from None
        if not constraints.value.ca:
            raise IdentityError("an issuing certificate is not a CA")
        _verify_signed_by(cert, issuer)
    leaf_key = certs[0].public_key()
    if not isinstance(leaf_key, (ed25519.Ed25519PublicKey, ed448.Ed448PublicKey)):
        raise IdentityError("the leaf's key is neither Ed25519 nor Ed448")
    return leaf_key
