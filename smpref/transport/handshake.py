"""The SMP handshake as sans-IO objects, both sides (TRANS-9, TRANS-10, TRANS-11).

The server sends its hello first: its version range, the session ID, its chain and a fresh
X25519 key signed by its TLS key. The client checks the chain against the keyHash of the
address, the signature and the session ID, chooses a version (:mod:`.versions`) and answers
with its own X25519 key. Both then switch to encrypted blocks when the version allows
(TRANS-10). Any failure is a :class:`~smpref.errors.HandshakeFailedError` naming deployed's
error; the caller closes the connection, and nothing else is sent.

Like :class:`~smpref.transport.framing.Framing`, these objects only turn handshake blocks'
contents into other contents and a result: :func:`smpref.transport.streams.accept` and
:func:`~smpref.transport.streams.connect` move them over a connection.

    server = ServerHandshake(credentials, session_id, random)
    client = ClientHandshake(key_hash, session_id, tls_leaf_der, random)
    reply = client.receive(server.hello())   # the client's hello
    accepted = server.receive(reply)         # Accepted; the client has client.connected
"""

from __future__ import annotations

import base64
from dataclasses import dataclass

from smpref.crypto.primitives import box_key, x25519, x25519_public
from smpref.crypto.randomness import Random
from smpref.crypto.session_keys import signed_session_key, verify_signed_session_key
from smpref.errors import CryptoError, HandshakeFailedError, IdentityError, VersionError, WireError
from smpref.transport.credentials import ServerCredentials
from smpref.transport.framing import Framing
from smpref.transport.tls import check_identity
from smpref.transport.versions import (
    BLOCK_ENCRYPTION_VERSION,
    SMPREF_VERSION,
    Negotiated,
    client_choice,
)
from smpref.wire.hellos import ClientHello, ServerHello
from smpref.wire.version_history import PROXY_FLAG


@dataclass(frozen=True)
class Accepted:
    """The server's view of a finished handshake."""

    version: int
    session_secret: bytes  # the server's per-connection X25519 secret (LINK-9, AUTH)
    client_key: bytes | None
    #: the shared secret of encrypted blocks, or None when the connection stays unencrypted
    block_secret: bytes | None


@dataclass(frozen=True)
class Connected:
    """The client's view of a finished handshake."""

    negotiated: Negotiated
    server_range: tuple[int, int]
    server_session_public: bytes
    #: the server hello's chain and signed session key, as a proxy passes them on in PKEY
    certificates: tuple[bytes, ...] = ()
    signed_key: bytes = b""
    #: the box key of the client's hello key and the server's session key: what a proxy's
    #: RFWD and RRES are sealed with (DEP-14)
    hello_key: bytes = b""


class ServerHandshake:
    """The server's side: :meth:`hello` to send, then :meth:`receive` the client's hello."""

    def __init__(self, credentials: ServerCredentials, session_id: bytes, random: Random,
                 versions: tuple[int, int] = (SMPREF_VERSION, SMPREF_VERSION)) -> None:
        self.credentials = credentials
        self.session_id = session_id
        self.versions = versions
        self.secret = random(32)

    def hello(self) -> bytes:
        """The content of the server's hello block."""
        return ServerHello(self.versions[0], self.versions[1], self.session_id,
                           self.credentials.chain,
                           signed_session_key(self.credentials.leaf_key,
                                              x25519_public(self.secret))).encode()

    def receive(self, content: bytes) -> Accepted:
        """Check the client's hello.

        Raises:
            HandshakeFailedError: it does not parse, names another server, or asks for a
                version outside the range.
        """
        low, high = self.versions
        try:
            client = ClientHello.decode(content)
        except WireError as exc:
            named = int.from_bytes(content[:2], "big") if len(content) >= 2 else None
            at = f" at version {named}" if named is not None else ""
            raise HandshakeFailedError(
                "HANDSHAKE PARSE", f"TRANS-9: the client hello{at} does not parse: {exc}"
                + _layout_hint(named)) from None
        if client.key_hash != self.credentials.key_hash:
            raise HandshakeFailedError("HANDSHAKE IDENTITY", identity_reason(
                client.key_hash, self.credentials.key_hash, certificates=high >= 7))
        if not low <= client.version <= high:
            raise HandshakeFailedError("VERSION", version_reason(client.version, low, high))
        block_secret = None
        if (client.version >= BLOCK_ENCRYPTION_VERSION and client.client_key is not None
                and not client.proxy_server):
            block_secret = x25519(self.secret, client.client_key)
        return Accepted(client.version, self.secret, client.client_key, block_secret)


def identity_reason(sent: bytes, expected: bytes, *, certificates: bool) -> str:
    """Why a client hello's key hash is refused, in words an implementer can act on."""
    reason = (f"TRANS-9: the client's key hash {_b64(sent)} is not this server's "
              f"{_b64(expected)}, the SHA-256 of its identity certificate (the second of the "
              "chain, TRANS-1)")
    if len(sent) != len(expected):
        reason += f"; it has {len(sent)} bytes, not 32"
    if not certificates:
        reason += ("; this connection offered no ALPN, so the server hello (version 6) "
                   "carried no certificate: the key hash must come from the server's address")
    return reason


def version_reason(version: int, low: int, high: int) -> str:
    """Why a client hello's version is refused."""
    reason = f"TRANS-11: the client picked version {version}; this connection offers {low}-{high}"
    if (low, high) == (6, 6):
        return reason + " (no ALPN: offer ALPN smp/1 for deployed's 6-18, DEP-11, DEP-12)"
    return reason + " (a client sends the highest version both ends support, CLNT-3)"


def _layout_hint(version: int | None) -> str:
    """What the client hello holds at a version (CLNT-4)."""
    if version is None:
        return ""
    parts = ["Word16 version", "ss(keyHash)"]
    if version >= 7:
        parts.append("an optional ss(X25519 key)")
    if version >= 14:
        parts.append("the proxy flag 'T'/'F'")
    if version >= 16:
        parts.append("'0' (no service)")
    return f"; at {version} it is {', '.join(parts)}, and nothing after (DIV-23)"


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii")


class ClientHandshake:
    """The client's side: :meth:`receive` the server's hello; the answer is the client's."""

    def __init__(self, key_hash: bytes, session_id: bytes, tls_leaf_der: bytes | None,
                 random: Random, *, alpn: str | None = None, version: int | None = None,
                 proxy: bool = False) -> None:
        self.key_hash = key_hash
        #: a proxy's connection to a relay (DEP-15): the proxy flag from 14, never encrypted
        #: blocks, and 10 at most with a relay below 14 (whose blocks would be encrypted)
        self.proxy = proxy
        #: the ALPN TLS selected: the namespace of the server's versions (TRANS-11)
        self.alpn = alpn
        #: a version the caller forces, or None for the highest both support
        self.version = version
        self.session_id = session_id
        self.tls_leaf_der = tls_leaf_der
        self.random = random
        self.connected: Connected | None = None
        #: the shared secret of the encrypted blocks that follow the handshake
        self.block_secret: bytes | None = None

    def receive(self, content: bytes) -> bytes:
        """Check the server's hello and choose a version; return the client's hello.

        Raises:
            HandshakeFailedError: naming deployed's error (PARSE, SESSION, NO_AUTH, IDENTITY,
                BAD_AUTH, VERSION).
        """
        try:
            hello = ServerHello.decode(content)
        except WireError as exc:
            raise HandshakeFailedError("HANDSHAKE PARSE", f"server hello: {exc}") from None
        if hello.session_id != self.session_id:
            raise HandshakeFailedError("SESSION",
                                       "the hello's session ID is not this TLS session's")
        if hello.signed_key is None:
            raise HandshakeFailedError("NO_AUTH",
                                       "the server sent no session key (version below 7)")
        try:
            leaf_key = check_identity(hello.certificates, self.tls_leaf_der, self.key_hash)
            server_public = verify_signed_session_key(hello.signed_key, leaf_key)
        except (IdentityError, CryptoError) as exc:
            error = "HANDSHAKE IDENTITY" if isinstance(exc, IdentityError) else \
                "HANDSHAKE BAD_AUTH"
            raise HandshakeFailedError(error, str(exc)) from None
        try:
            negotiated = client_choice(hello.min_version, hello.max_version, self.alpn,
                                       self.version)
        except VersionError as exc:
            raise HandshakeFailedError("VERSION", str(exc)) from None
        if self.proxy and hello.max_version < PROXY_FLAG and \
                negotiated.version >= BLOCK_ENCRYPTION_VERSION:
            # deployed's proxy keeps an old relay at 10, where no block is encrypted
            # (Transport.hs smpClientHandshake)
            negotiated = Negotiated(max(BLOCK_ENCRYPTION_VERSION - 1, hello.min_version))
        secret = self.random(32)
        self.connected = Connected(negotiated, (hello.min_version, hello.max_version),
                                   server_public, hello.certificates, hello.signed_key,
                                   box_key(server_public, secret))
        # the key goes in the hello from version 7, and encrypts blocks from 11 (TRANS-10)
        if negotiated.version >= BLOCK_ENCRYPTION_VERSION and not self.proxy:
            self.block_secret = x25519(secret, server_public)
        return ClientHello(negotiated.version, self.key_hash, x25519_public(secret),
                           self.proxy).encode()


def start_encryption(framing: Framing, session_id: bytes, block_secret: bytes | None, *,
                     server: bool) -> None:
    """Switch a connection's framing to encrypted blocks once the handshake agreed on it."""
    if block_secret is not None:
        framing.encrypt(session_id, block_secret, server=server)
