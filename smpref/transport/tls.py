"""TLS contexts for SMP, the session ID, and the client's check of the server identity.

Deployed SMP uses TLS 1.3 (and 1.2, DIV-47) with Ed448 or Ed25519 certificates, ALPN ``smp/1``,
the key exchange groups X448 and X25519, and one TLS 1.3 cipher suite, ChaCha20-Poly1305-SHA256
(simplexmq 6.5.5 Transport.hs:389-400); its clients send no SNI (Client.hs:498-503).
smpref's SMP contexts offer that suite alone too (TRANS-8): it fixes the session ID, the
Finished message of a SHA-256 suite, at 32 bytes, which private routing needs (a PFWD names a
relay session by it, and with a 48-byte ID of a SHA-384 suite it no longer fits a block,
DEP-15). Python's ``ssl`` has no call for TLS 1.3 suites, so :func:`_chacha20_only` makes
OpenSSL's through ctypes, and checks that it took. Signature algorithms stay OpenSSL's
defaults, which include Ed25519 and Ed448.
"""

from __future__ import annotations

import _ssl
import contextlib
import ctypes
import datetime
import functools
import hashlib
import itertools
import ssl
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric import ed448, ed25519

from smpref.errors import IdentityError, TlsCredentialError, WireError
from smpref.transport.client_hello import ClientOffer, parse_client_hello
from smpref.transport.credentials import ServerCredentials
from smpref.transport.versions import SEED_ALPN, SMP_ALPN, client_alpn

#: deployed SMP's one TLS 1.3 cipher suite (Transport.hs defaultSupportedParams)
SMP_SUITE = "TLS_CHACHA20_POLY1305_SHA256"


@functools.cache
def _openssl(name: str, restype: type, *argtypes: type
             ) -> ctypes._CFuncPtr:  # type: ignore[name-defined]
    """An OpenSSL function taking an ``SSL_CTX *`` first, from the library Python's ``_ssl``
    uses: ``SSL_CTX_set_ciphersuites`` and ``SSL_CTX_ctrl``, which Python does not expose."""
    function = getattr(ctypes.CDLL(_ssl.__file__), name)
    function.argtypes = [ctypes.c_void_p, *argtypes]
    function.restype = restype
    return function


def _ssl_ctx_pointer(ctx: ssl.SSLContext) -> int | None:
    """CPython's SSLContext object holds its ``SSL_CTX *`` right after the object header."""
    return ctypes.c_void_p.from_address(id(ctx) + 2 * ctypes.sizeof(ctypes.c_void_p)).value


#: OpenSSL ssl.h: ``SSL_CTX_set1_groups_list`` and ``SSL_CTX_set1_sigalgs_list`` are these
#: ``SSL_CTX_ctrl`` commands
SSL_CTRL_SET_GROUPS_LIST = 92
SSL_CTRL_SET_SIGALGS_LIST = 98


def ssl_ctx_ctrl(ctx: ssl.SSLContext, command: int, value: str) -> bool:
    """``SSL_CTX_ctrl(ctx, command, 0, value)``; whether OpenSSL took it."""
    ctrl = _openssl("SSL_CTX_ctrl", ctypes.c_long, ctypes.c_int, ctypes.c_long, ctypes.c_char_p)
    return bool(ctrl(_ssl_ctx_pointer(ctx), command, 0, value.encode()) == 1)


def _set_groups(ctx: ssl.SSLContext, groups: str) -> None:
    """Offer the key exchange ``groups`` alone (OpenSSL names, colon-separated).

    Raises:
        TlsCredentialError: OpenSSL refused the list.
    """
    if not ssl_ctx_ctrl(ctx, SSL_CTRL_SET_GROUPS_LIST, groups):
        raise TlsCredentialError(f"OpenSSL would not restrict the groups to {groups}")


def _chacha20_only(ctx: ssl.SSLContext) -> None:
    """Offer :data:`SMP_SUITE` alone in TLS 1.3. The result is checked through the public
    ``get_ciphers``, so a Python that lays its context out otherwise (:func:`_ssl_ctx_pointer`)
    fails here, not on the wire.

    Raises:
        TlsCredentialError: the suite could not be set.
    """
    set_suites = _openssl("SSL_CTX_set_ciphersuites", ctypes.c_int, ctypes.c_char_p)
    if set_suites(_ssl_ctx_pointer(ctx), SMP_SUITE.encode()) != 1 or [
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


#: the HTTP tokens a deployed server lists after ``smp/1`` (Server/Main.hs:581,
#: Transport/HTTP2.hs:95-96); negotiated without SNI, they get SMP 6-18 (Transport.hs:760)
HTTP_ALPNS = ("h2", "http/1.1")
#: key exchange groups of deployed SMP ports (Transport.hs:397) and of a deployed port shared
#: with its web server (Transport.hs:406), as OpenSSL names them
SMP_GROUPS = "X448:X25519"
WEB_PORT_GROUPS = "X25519:X448:ffdhe4096:ffdhe6144:ffdhe8192:P-521"
_NO_APPLICATION_PROTOCOL = 120  # RFC 7301 §3.2


@dataclass(frozen=True)
class TlsRefusal:
    """A TLS handshake that failed: who ended it, the alert, its cause as smpref reads it from
    what the client offered, and that offer (None when the ClientHello did not parse)."""

    by: str  # "server" or "client"
    alert: str
    cause: str
    offer: ClientOffer | None

    def fields(self) -> dict[str, str]:
        return {"by": self.by, "alert": self.alert, "cause": self.cause,
                **(self.offer.describe() if self.offer else {"offer": "unreadable"})}


def _alert_name(code: int) -> str:
    try:
        return ssl.AlertDescription(code).name.removeprefix("ALERT_DESCRIPTION_").lower()
    except ValueError:
        return {_NO_APPLICATION_PROTOCOL: "no_application_protocol"}.get(code, f"alert {code}")


def refusal_cause(offer: ClientOffer | None, algorithm: str, alpn: tuple[str, ...],
                  groups: str = SMP_GROUPS) -> str:
    """Why a server with an identity of ``algorithm``, ALPN tokens ``alpn`` and key exchange
    ``groups`` refuses this offer, checked in the order the TLS handshake meets them."""
    if offer is None:
        return "the ClientHello does not parse"
    if "TLSv1.3" not in offer.versions:
        return f"no shared TLS version: smpref serves TLSv1.3, the client offers " \
               f"{', '.join(offer.versions) or 'none'}"
    if SMP_SUITE not in offer.cipher_suites:
        return f"no shared cipher suite: smpref's SMP ports have {SMP_SUITE} alone (TRANS-8)"
    if offer.alpn is not None and not set(offer.alpn) & set(alpn):
        return f"no shared ALPN token: the server has {', '.join(alpn)} (TRANS-11)"
    if offer.groups and not set(offer.groups) & set(groups.split(":")):
        return f"no shared key exchange group: the server has {groups.replace(':', ', ')}"
    wanted = algorithm.lower()
    if offer.signature_algorithms and wanted not in offer.signature_algorithms:
        return f"no shared signature algorithm: the server's certificate is {algorithm} " \
               f"(TRANS-1) and the client offers none of it"
    return "the TLS library refused the offer (see the alert)"


class _Offers:
    """Reads each ClientHello (the context's message callback) onto its SSL object, and
    reports a handshake ended by a fatal alert in either direction."""

    def __init__(self, algorithm: str, alpn: tuple[str, ...], groups: str,
                 on_refused: Callable[[TlsRefusal], None] | None) -> None:
        self.algorithm, self.alpn, self.groups = algorithm, alpn, groups
        self.on_refused = on_refused

    def __call__(self, conn: object, direction: str, _version: object, content_type: object,
                 message_type: object, data: bytes) -> None:
        # Called by OpenSSL for every TLS message: return at once for the others.
        if content_type == _TLS_HANDSHAKE and message_type == _CLIENT_HELLO and \
                direction == "read":
            try:
                offer: ClientOffer | None = parse_client_hello(data)
            except WireError:
                offer = None
            conn.smpref_offer = offer  # type: ignore[attr-defined]
        elif content_type == _TLS_ALERT and len(data) == 2 and data[0] == 2 and \
                self.on_refused is not None:  # a fatal alert ends the handshake
            if getattr(conn, "smpref_refused", False):  # one line per handshake
                return
            conn.smpref_refused = True  # type: ignore[attr-defined]
            offer = getattr(conn, "smpref_offer", None)
            by = "server" if direction == "write" else "client"
            cause = refusal_cause(offer, self.algorithm, self.alpn, self.groups) \
                if by == "server" else \
                "the client ended the handshake (it may not accept the server's certificate)"
            self.on_refused(TlsRefusal(by, _alert_name(data[1]), cause, offer))

    def unfinished(self, conn: object, exc: BaseException | None) -> None:
        """A handshake on ``conn`` ended with no fatal alert either way (``exc``: how asyncio
        saw it end): reported as ended by the client, unless an alert reported it already."""
        if self.on_refused is None or getattr(conn, "smpref_refused", False):
            return
        conn.smpref_refused = True  # type: ignore[attr-defined]
        offer = getattr(conn, "smpref_offer", None)
        self.on_refused(TlsRefusal("client", "no alert", unfinished_cause(
            hasattr(conn, "smpref_offer"), exc), offer))


def unfinished_cause(hello_read: bool, exc: BaseException | None) -> str:
    """Why a handshake ended with no alert: ``hello_read``, whether a ClientHello came."""
    if isinstance(exc, ConnectionAbortedError):  # asyncio's ssl_handshake_timeout
        return "the TLS handshake did not finish in the server's time"
    if hello_read:
        return "the client closed the connection in the TLS handshake, after its ClientHello, " \
            "with no alert (it may not accept the server's certificate, or gave up)"
    if isinstance(exc, ssl.SSLError):
        return f"the client's first bytes are not a TLS ClientHello ({exc.reason or exc})"
    return "the client closed the connection before its TLS ClientHello"


_TLS_HANDSHAKE = ssl._TLSContentType.HANDSHAKE  # type: ignore[attr-defined]
_TLS_ALERT = ssl._TLSContentType.ALERT  # type: ignore[attr-defined]
_CLIENT_HELLO = ssl._TLSMessageType.CLIENT_HELLO  # type: ignore[attr-defined]


def offer_of(ssl_object: ssl.SSLObject) -> ClientOffer | None:
    """What the client of a finished handshake offered, as the server's context read it."""
    offer = getattr(ssl_object, "smpref_offer", None)
    return offer if isinstance(offer, ClientOffer) else None


def sni_of(ssl_object: ssl.SSLObject) -> str | None:
    """The server name a client sent (SNI), as the server's context saw it; None if none."""
    offer = offer_of(ssl_object)
    return offer.sni if offer is not None else None


def server_context(credentials: ServerCredentials, *, web: bool = False,
                   protocols: tuple[str, ...] = (SEED_ALPN, SMP_ALPN),
                   on_refused: Callable[[TlsRefusal], None] | None = None) -> ssl.SSLContext:
    """A listening port's context, as deployed serves its ports (TRANS-11, TRANS-13).

    * Every connection gets the SMP chain, whatever server name it sends, except on the web
      port (``web``), where a client that sends SNI gets the web certificate and ALPN http/1.1
      for the server pages (Server.hs:210-219, Transport/Server.hs:258-272).
    * ALPN: ``protocols`` (the SMP tokens), then h2 and http/1.1, which also get SMP when
      negotiated without SNI (Transport.hs:760, Server/Main.hs:581). The client's first token
      the server has is chosen, as deployed's ``onALPNClientSuggest`` chooses it
      (Transport/Server.hs:269). A client whose ALPN names none of them is refused with the
      ``no_application_protocol`` alert, as the tls library deployed uses refuses it (tls
      1.9.0 Handshake/Server.hs:1089-1105); a client without ALPN gets SMP 6-6.
    * A handshake that fails is reported to ``on_refused`` with its cause and what the client
      offered, in either direction.
    """
    algorithm = credentials.algorithm
    alpn = (*protocols, *HTTP_ALPNS)
    offers = _Offers(algorithm, alpn, WEB_PORT_GROUPS if web else SMP_GROUPS, on_refused)

    def smp_context(tokens: tuple[str, ...]) -> ssl.SSLContext:
        ctx = _base_server_context(str(credentials.path("server.crt")),
                                   str(credentials.path("server.key")))
        _chacha20_only(ctx)
        _set_groups(ctx, WEB_PORT_GROUPS if web else SMP_GROUPS)
        ctx.set_alpn_protocols(list(tokens))
        ctx._msg_callback = offers  # type: ignore[attr-defined]
        return ctx

    # One context per token: switching to it in the callback makes OpenSSL, which selects in
    # the server's order, select the client's first token, as deployed does.
    chosen = {token: smp_context((token,)) for token in alpn}
    main = smp_context(alpn)
    pages: ssl.SSLContext | None = None
    if web:
        pages = _base_server_context(str(credentials.path("web.crt")),
                                     str(credentials.path("web.key")))
        pages.set_alpn_protocols(["http/1.1"])
        pages._msg_callback = offers  # type: ignore[attr-defined]

    def choose(sock: ssl.SSLObject, server_name: str | None, _ctx: ssl.SSLContext) -> int | None:
        offer = offer_of(sock)
        if pages is not None and server_name:
            sock.context = pages
            return None
        if offer is None or offer.alpn is None:
            return None
        token = next((t for t in offer.alpn if t in chosen), None)
        if token is None:
            return _NO_APPLICATION_PROTOCOL
        sock.context = chosen[token]
        return None

    main.sni_callback = choose
    return main


def send_handshake_alerts() -> None:
    """Make asyncio send the alert a failed TLS handshake ends with (TRANS-14, TRANS-15).

    When OpenSSL refuses a handshake it writes its alert (``no_application_protocol`` for a
    client whose ALPN names no token the server has) into the connection's outgoing buffer;
    asyncio's SSL protocol then closes the transport without writing that buffer (CPython
    3.11-3.13 ``asyncio/sslproto.py``, ``_on_handshake_complete``), so the client sees the
    connection end, not the alert deployed's tls library sends. This writes the buffer first.
    Idempotent; a Python whose asyncio lacks the hook is left as it is."""
    from asyncio import sslproto

    protocol: Any = sslproto.SSLProtocol
    if getattr(protocol, "_smpref_sends_alerts", False) or not hasattr(
            protocol, "_process_outgoing"):
        return
    complete = protocol._on_handshake_complete

    def _on_handshake_complete(self: Any, handshake_exc: BaseException | None) -> None:
        if handshake_exc is not None:
            with contextlib.suppress(Exception):  # the transport may be gone already
                self._process_outgoing()
        complete(self, handshake_exc)

    protocol._on_handshake_complete = _on_handshake_complete
    protocol._smpref_sends_alerts = True


def report_unfinished_handshakes() -> None:
    """Report every server-side TLS handshake that ends with no fatal alert to its context's
    ``on_refused`` (TRANS-17): the client closed the connection in it (as a client that gives
    up on the server's certificate without an alert does), sent bytes that are not TLS, or let
    it time out. OpenSSL's message callback sees no alert then, and asyncio logs such an end
    only in debug mode (CPython 3.11-3.13 ``asyncio/sslproto.py``): without this, a client
    that never reaches SMP leaves no trace. Idempotent; a Python whose asyncio lacks the
    hooks is left as it is."""
    from asyncio import sslproto

    protocol: Any = sslproto.SSLProtocol
    states: Any = getattr(sslproto, "AppProtocolState", None)
    if getattr(protocol, "_smpref_reports_unfinished", False) or states is None:
        return
    lost = protocol.connection_lost

    def connection_lost(self: Any, exc: BaseException | None) -> None:
        sslobj = getattr(self, "_sslobj", None)
        # the application never got the connection: its handshake did not finish
        if getattr(self, "_server_side", False) and sslobj is not None and \
                getattr(self, "_app_state", None) is states.STATE_INIT:
            offers = getattr(sslobj.context, "_msg_callback", None)
            if isinstance(offers, _Offers):
                with contextlib.suppress(Exception):  # a report never costs the close
                    offers.unfinished(sslobj, exc)
        lost(self, exc)

    protocol.connection_lost = connection_lost
    protocol._smpref_reports_unfinished = True


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
