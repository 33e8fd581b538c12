"""The SMP handshake over a block stream, both sides (smp-wire §2.5; TRANS-9, TRANS-11).

The server sends its hello first: its version range, the session ID, its chain and a fresh
X25519 key signed by its TLS key. The client checks the chain against the keyHash of the
address, the signature and the session ID, chooses a version (:mod:`.versions`) and answers
with its own X25519 key. Both then switch to encrypted blocks when the version allows
(TRANS-10). Any failure is a :class:`HandshakeFailedError` naming deployed's error and closes the
connection; nothing else is sent.
"""

from __future__ import annotations

from dataclasses import dataclass

from smpref.crypto.primitives import x25519, x25519_public
from smpref.crypto.randomness import Random
from smpref.errors import CryptoError, HandshakeFailedError, IdentityError, VersionError, WireError
from smpref.transport.credentials import ServerCredentials
from smpref.transport.framing import BlockStream
from smpref.transport.tls import check_identity
from smpref.transport.versions import (
    BLOCK_ENCRYPTION_VERSION,
    SMPREF_VERSION,
    Negotiated,
    client_choice,
)
from smpref.wire.hellos import (
    ClientHello,
    ServerHello,
    signed_session_key,
    verify_signed_session_key,
)


@dataclass(frozen=True)
class Accepted:
    """The server's view of a finished handshake."""

    version: int
    session_secret: bytes  # the server's per-connection X25519 secret (LINK-9, AUTH)
    client_key: bytes | None


@dataclass(frozen=True)
class Connected:
    """The client's view of a finished handshake."""

    negotiated: Negotiated
    server_range: tuple[int, int]
    server_session_public: bytes


async def accept(stream: BlockStream, credentials: ServerCredentials, session_id: bytes,
                 random: Random, versions: tuple[int, int] = (SMPREF_VERSION, SMPREF_VERSION)
                 ) -> Accepted:
    """Run the server's side of the handshake on ``stream``."""
    secret = random(32)
    hello = ServerHello(versions[0], versions[1], session_id, credentials.chain,
                        signed_session_key(credentials.leaf_seed, x25519_public(secret)))
    await stream.write_handshake(hello.encode())
    try:
        client = ClientHello.decode(await stream.read_handshake())
    except WireError as exc:
        raise HandshakeFailedError("HANDSHAKE PARSE", str(exc)) from None
    if client.key_hash != credentials.key_hash:
        raise HandshakeFailedError("HANDSHAKE IDENTITY", "the client expects another server")
    if not versions[0] <= client.version <= versions[1]:
        raise HandshakeFailedError("VERSION", f"client version {client.version} is outside "
                               f"{versions[0]}-{versions[1]}")
    if (client.version >= BLOCK_ENCRYPTION_VERSION and client.client_key is not None
            and not client.proxy_server):
        stream.framing.encrypt(session_id, x25519(secret, client.client_key), server=True)
    return Accepted(client.version, secret, client.client_key)


async def connect(stream: BlockStream, key_hash: bytes, session_id: bytes,
                  tls_leaf_der: bytes | None, random: Random) -> Connected:
    """Run the client's side of the handshake on ``stream``."""
    try:
        hello = ServerHello.decode(await stream.read_handshake())
    except WireError as exc:
        raise HandshakeFailedError("HANDSHAKE PARSE", f"server hello: {exc}") from None
    if hello.session_id != session_id:
        raise HandshakeFailedError("SESSION", "the hello's session ID is not this TLS session's")
    if hello.signed_key is None:
        raise HandshakeFailedError("NO_AUTH", "the server sent no session key (version below 7)")
    try:
        leaf_key = check_identity(hello.certificates, tls_leaf_der, key_hash)
        server_public = verify_signed_session_key(hello.signed_key, leaf_key)
    except (IdentityError, CryptoError) as exc:
        error = "HANDSHAKE IDENTITY" if isinstance(exc, IdentityError) else "HANDSHAKE BAD_AUTH"
        raise HandshakeFailedError(error, str(exc)) from None
    try:
        negotiated = client_choice(hello.min_version, hello.max_version)
    except VersionError as exc:
        raise HandshakeFailedError("VERSION", str(exc)) from None
    secret = random(32)
    reply = ClientHello(negotiated.version, key_hash, x25519_public(secret), False)
    await stream.write_handshake(reply.encode())
    stream.framing.encrypt(session_id, x25519(secret, server_public), server=False)
    return Connected(negotiated, (hello.min_version, hello.max_version), server_public)
