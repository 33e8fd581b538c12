"""Checks of the fidelity table's rows DEP-10 to DEP-15 (spec/deployed-fidelity.md) that its
cited checks left open: each one kills a planted deviation of mutation/deviations/
dep_10_to_15.py that the row's other checks let through.

The hellos here are written byte by byte from TRANS-9 and DEP-12, as tests/deployed_client.py
writes them; the private-routing ones use the relay's real handshake output.
"""

from __future__ import annotations

import asyncio
import os
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from deployed_client import DeployedClient, Keys, new_command, parse_ids, ss
from reqs import req
from servers import embedded, logged

from smpref.client.core import AuthKeyPair, DhKeyPair, deployed_new
from smpref.client.proxied import ProxiedRelay, accept_pkey
from smpref.crypto.primitives import x25519_public
from smpref.crypto.randomness import SeededRandom
from smpref.errors import ConnectionClosedError
from smpref.testing.loopback import Loopback
from smpref.text.addresses import ServerAddress
from smpref.transport.credentials import load_or_create
from smpref.transport.handshake import ServerHandshake
from smpref.transport.streams import BlockStream
from smpref.transport.tls import client_context, session_id
from smpref.wire.dialects import Dialect
from smpref.wire.hellos import ServerHello
from smpref.wire.messages import (
    ERR,
    IDS,
    OK,
    SUB,
    CertChainPubKey,
    ConnectionMode,
    DeployedPKEY,
    DeployedSOK,
    SubscriptionMode,
)
from smpref.wire.schema import encode_message, parse_error

RANDOM = SeededRandom(b"fidelity kills dep versions")


async def _hello_then_ping(tmp_path: Path, hello: Callable[[bytes], bytes], version: int
                           ) -> tuple[bytes | None, list[dict[str, Any]]]:
    """Under ALPN smp/1, send ``hello`` (it carries no key, so blocks stay unencrypted), then
    a PING in ``version``'s layout. The server's first block back (None when it closed the
    connection instead) and the handshake refusals it logged (it logs one before it closes
    the connection)."""
    with logged("handshake_failed") as refusals:
        async with embedded(tmp_path) as server:
            reader, writer = await asyncio.open_connection(
                "127.0.0.1", server.port, ssl=client_context(["smp/1"]))
            stream = BlockStream(reader, writer)
            session = session_id(writer.get_extra_info("ssl_object"))
            await stream.read_handshake()
            await stream.write_handshake(hello(server.key_hash))
            ping = ss(b"") + (ss(session) if version < 7 else b"") + ss(os.urandom(24)) \
                + ss(b"") + b"PING"
            answer: bytes | None
            try:
                await stream.send([ping])
                answer = stream.framing.open(await asyncio.wait_for(stream.read_block(), 10))
            except TimeoutError:
                raise AssertionError("neither an answer nor the end of the connection") from None
            except (ConnectionClosedError, ConnectionError, OSError):
                answer = None
            await stream.close()
    return answer, refusals


@req("DEP-12", "TRANS-11")
@pytest.mark.parametrize("version", [5, 19])
def test_a_version_outside_6_to_18_is_refused_under_smp_alpn(tmp_path: Path,
                                                            version: int) -> None:
    """DEP-12a: under ``smp/1`` the server advertises 6-18 and accepts a client version only
    inside it (Transport.hs:764-768, compatibleVRange'; Version.hs:72-75, 151-159): 5, below
    the range, and 19, above it, are ``VERSION``, the connection closed."""
    def hello(key_hash: bytes) -> bytes:
        return struct.pack(">H", version) + ss(key_hash) + (b"F0" if version >= 16 else b"")

    answer, refusals = asyncio.run(_hello_then_ping(tmp_path, hello, version))
    assert answer is None, answer
    (event,) = refusals
    assert event["error"] == "VERSION" and f"picked version {version}" in event["detail"]


@req("DEP-11")
def test_an_authenticator_at_version_6_is_verified_and_fails_with_auth(tmp_path: Path) -> None:
    """DEP-11f: at 6-6 the server holds a session key it never sent; an 80-byte authorization
    is still an authenticator, verified against that key (Transport.hs:846; Server.hs:
    1317-1324; Protocol.hs:518-522), so it fails: ``ERR AUTH`` with the corrId, not a
    transmission error."""
    async def main() -> None:
        async with embedded(tmp_path) as server:
            client = await DeployedClient.connect_v6(server.address)
            client.timeout = 5.0
            owner = Keys()
            created = await client.request(new_command(owner, version=6), key=owner.sign)
            assert created.tag == "IDS", created.command
            recipient_id = parse_ids(created.body, 6).recipient_id
            reply = await client.request(b"SUB", recipient_id, signature=os.urandom(80))
            assert (reply.command, reply.entity_id) == (b"ERR AUTH", recipient_id)
            await client.close()
    asyncio.run(main())


@req("DEP-12")
@pytest.mark.parametrize("version", [7, 8, 10, 11, 17])
def test_an_authenticator_is_verified_with_the_session_key_at_every_version(
        version: int) -> None:
    """DEP-12d: an 80-byte authorization is an authenticator, verified with the server's
    session key of the connection at any version from 7, where the hello gave that key
    (Protocol.hs:518-522; Transport.hs:846; Server.hs:1317-1324): a queue whose recipient key
    is X25519 is created and subscribed with authenticators, below block encryption too."""
    loop = Loopback(seed=version)
    conn = loop.connect(Dialect.DEPLOYED, version)
    key, dh = AuthKeyPair.x25519(RANDOM), DhKeyPair.generate(RANDOM)
    (created,) = conn.send(deployed_new(version, rcv_auth_key=key.public,
                                        rcv_dh_key=dh.public, basic_auth=None,
                                        sub_mode=SubscriptionMode.OnlyCreate,
                                        mode=ConnectionMode.Contact if version >= 9 else None),
                           key=key)
    assert isinstance(created.message, IDS), created.error
    (subscribed,) = conn.send(SUB(), created.message.rcv_id, key)
    assert isinstance(subscribed.message, OK if version < 16 else DeployedSOK), subscribed.error


@req("DEP-10", "DEP-12")
@pytest.mark.parametrize("version", range(6, 19))
def test_err_blocked_is_auth_below_12_at_each_version(version: int) -> None:
    """DEP-10f and DEP-12g: a blocked queue's ``ERR BLOCKED`` is encoded ``ERR AUTH`` below
    version 12 and as itself from 12 (Protocol.hs:1853-1859; Server.hs:1714, 1854-1856), at
    each version, not only where a random draw lands (smpref never blocks a queue, so its
    encoding is all there is to check)."""
    blocked = ERR(error=parse_error("BLOCKED reason=spam"))
    expected = b"ERR AUTH" if version < 12 else b"ERR BLOCKED reason=spam"
    assert encode_message(blocked, version) == expected


def _relay_hello(folder: Path) -> tuple[ServerAddress, ServerHello, bytes]:
    """A relay's address, its hello over a 6-18 range, and the X25519 key that hello signed."""
    credentials = load_or_create(folder, "localhost", "ED25519")
    handshake = ServerHandshake(credentials, os.urandom(32), os.urandom, (6, 18))
    hello = ServerHello.decode(handshake.hello())
    return (ServerAddress(credentials.key_hash, ("localhost",)), hello,
            x25519_public(handshake.secret))


def _pkey(hello: ServerHello, signed_key: bytes | None = None) -> DeployedPKEY:
    assert hello.signed_key is not None
    return DeployedPKEY(session_id=hello.session_id, min_version=8, max_version=17,
                        cert_key=CertChainPubKey(cert_chain=hello.certificates,
                                                 signed_key=signed_key or hello.signed_key))


@req("DEP-15")
def test_the_client_checks_pkey_as_the_relays_hello(tmp_path: Path) -> None:
    """DEP-15c: the client takes the highest version of PKEY's range, checks the chain's
    identity certificate against the relay address's keyHash and the session key's signature
    by the chain's leaf, and refuses either failure with ``PROXY BROKER TRANSPORT HANDSHAKE
    IDENTITY`` (Client.hs:1069-1100; Transport/Shared.hs:27-41)."""
    from smpref.errors import ClientError

    address, hello, session_key = _relay_hello(tmp_path / "relay")
    other_address, other_hello, _ = _relay_hello(tmp_path / "other")
    relay = accept_pkey(address, _pkey(hello))
    assert relay == ProxiedRelay(address, hello.session_id, 17, session_key)
    # the chain is not the relay's: its identity does not hash to the address's keyHash
    with pytest.raises(ClientError, match=r"^PROXY BROKER TRANSPORT HANDSHAKE IDENTITY"):
        accept_pkey(address, _pkey(other_hello))
    assert accept_pkey(other_address, _pkey(other_hello)).relay_key != session_key
    # the relay's chain with a session key another server's leaf signed
    with pytest.raises(ClientError, match=r"^PROXY BROKER TRANSPORT HANDSHAKE IDENTITY"):
        accept_pkey(address, _pkey(hello, other_hello.signed_key))


@req("DEP-12", "TRANS-9")
@pytest.mark.parametrize("version", range(6, 19))
def test_a_client_hello_is_read_in_the_layout_of_the_version_it_names(version: int) -> None:
    """DEP-12b: the client hello as deployed writes it at each version (Transport.hs:592-604,
    625-629): ``Word16 version ss(keyHash)``, from 7 the key's ``ss(SPKI)`` (no Maybe tag),
    from 14 the proxy flag, from 16 ``'0'`` (no service). It reads back at its own version,
    the key from 7 on and the flag from 14 on."""
    from smpref.wire.hellos import ClientHello

    key = x25519_public(b"k" * 32)
    data = struct.pack(">H", version) + ss(b"h" * 32)
    if version >= 7:
        data += ss(bytes.fromhex("302a300506032b656e032100") + key)
    if version >= 14:
        data += b"T"
    if version >= 16:
        data += b"0"
    hello = ClientHello.decode(data)
    assert hello == ClientHello(version, b"h" * 32, key if version >= 7 else None,
                                version >= 14)


@req("DEP-14")
@pytest.mark.parametrize("version", [8, 12, 15])
def test_a_forwarded_transmission_is_read_at_the_clients_version(version: int) -> None:
    """DEP-14b: the relay reads a forwarded transmission at the version the client named in
    it, not at the proxy connection's (Server.hs:1992-1995, 2010-2028; Transport.hs:896-901):
    a client below 16 signs without a service signature's Maybe, so its SKEY and SEND,
    forwarded over a proxy connection at 18, are served."""
    from test_private_routing import _queue, _routed

    from smpref.wire.messages import SEND, SKEY, MsgFlags

    loop = Loopback(seed=100 + version)
    recipient = loop.connect(Dialect.DEPLOYED, 18)
    proxy = loop.connect(Dialect.DEPLOYED, 18, hello_key=True)
    _, _, ids = _queue(recipient, ConnectionMode.Invitation)
    sender = AuthKeyPair.ed25519(RANDOM)
    secured = _routed(proxy, SKEY(sender_key=sender.public), ids.snd_id, sender, version)
    assert isinstance(secured.message, OK), secured.error
    sent = _routed(proxy, SEND(flags=MsgFlags(notification=False), body=b"at %d" % version),
                   ids.snd_id, sender, version)
    assert isinstance(sent.message, OK), sent.error
