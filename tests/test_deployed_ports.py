"""What a listening port serves, as deployed serves it (simplexmq 6.5.5): SMP whatever the SNI
on the SMP port; the pages to SNI on the web port and SMP to everyone else there; ALPN http/1.1
and h2 without SNI get SMP 6-18; a client with no shared ALPN token, signature algorithm or
key exchange group is refused, and the server's log says why and what the client offered.
The identity is Ed25519 or Ed448, as ``smp-server init --sign-algorithm`` makes it."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import ssl
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519
from deployed_client import DeployedClient
from reqs import req
from servers import embedded, logged

from smpref.client.connection import SmpClient
from smpref.errors import ClientError
from smpref.serve.listener import SmpServer
from smpref.transport import tls
from smpref.transport.streams import BlockStream
from smpref.wire.hellos import ServerHello


async def server_hello(port: int, alpn: list[str], sni: str | None
                       ) -> tuple[tuple[int, int], bytes]:
    """Connect, read the SMP server hello: its version range and the TLS certificate."""
    reader, writer = await asyncio.open_connection(
        "127.0.0.1", port, ssl=tls.client_context(alpn), server_hostname=sni)
    stream = BlockStream(reader, writer)
    cert = writer.get_extra_info("ssl_object").getpeercert(binary_form=True)
    hello = ServerHello.decode(await stream.read_handshake())
    await stream.close()
    return (hello.min_version, hello.max_version), cert


async def page(port: int, sni: str | None) -> tuple[bytes, bytes]:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
    ctx.set_alpn_protocols(["h2", "http/1.1"])
    reader, writer = await asyncio.open_connection("127.0.0.1", port, ssl=ctx,
                                                   server_hostname=sni)
    cert = writer.get_extra_info("ssl_object").getpeercert(binary_form=True)
    writer.write(b"GET /c HTTP/1.1\r\nHost: localhost\r\n\r\n")
    await writer.drain()
    body = await reader.read()
    writer.close()
    return body, cert


def key_of(cert: bytes) -> object:
    return x509.load_der_x509_certificate(cert).public_key()


@req("TRANS-13", "CLNT-2", "DIV-42")
def test_the_smp_port_serves_smp_whatever_the_sni(tmp_path: Path) -> None:
    """Server.hs:219: a port without web credentials runs SMP on every connection."""
    async def main() -> None:
        async with embedded(tmp_path) as server:
            assert server.web_port is None
            for alpn, sni in ((["smp/1"], "smp.example"), (["http/1.1"], "localhost"),
                              (["smp/1"], None)):
                versions, cert = await server_hello(server.port, alpn, sni)
                assert versions == (6, 18), (alpn, sni)
                assert cert == server.credentials.leaf_der
            # and a whole client with SNI runs its commands
            client = await DeployedClient.connect(server.address, sni="smp.example")
            assert client.version == 18
            await client.close()
    asyncio.run(main())


@req("TRANS-13", "TRANS-14", "SLINK-11")
@pytest.mark.parametrize("shared", [False, True])
def test_the_web_port_gives_sni_the_pages_and_everyone_else_smp(tmp_path: Path,
                                                                 shared: bool) -> None:
    """Server.hs:210-219, Transport/Server.hs:258-272: on the port the [WEB] https setting
    names, SNI gets the web credential and HTTPS; no SNI gets SMP, whatever the ALPN."""
    async def main() -> None:
        # equal ports are one shared port (0 and 0: one free port); else a free one apart
        server = SmpServer(tmp_path, tls_config(web_port=0 if shared else free_port()))
        await server.start()
        try:
            web = server.web_port
            assert web is not None and (web == server.port) is shared
            body, cert = await page(web, "localhost")
            assert body.startswith(b"HTTP/1.1 200 OK")
            assert isinstance(key_of(cert), ec.EllipticCurvePublicKey)
            for alpn in (["http/1.1"], ["h2"], ["smp/1"]):
                versions, cert = await server_hello(web, alpn, None)
                assert versions == (6, 18), alpn
                assert not isinstance(key_of(cert), ec.EllipticCurvePublicKey)
            if not shared:  # the SMP port gives SNI the SMP chain, never the pages
                versions, _ = await server_hello(server.port, ["http/1.1"], "localhost")
                assert versions == (6, 18)
        finally:
            await server.stop()
    asyncio.run(main())


@req("TRANS-1", "DIV-42")
def test_smprefs_client_sends_no_sni_even_to_a_host_name(tmp_path: Path) -> None:
    """Client.hs:498-503: deployed clients send no SNI, so a client that reaches a server by
    name on its shared web port still gets SMP, not the web certificate."""
    async def main() -> None:
        server = SmpServer(tmp_path, tls_config(web_port=0))
        await server.start()
        try:
            assert server.web_port == server.port
            client = await SmpClient.connect(server.address, host="localhost")
            assert client.negotiated.version == 1000
            await client.close()
        finally:
            await server.stop()
    asyncio.run(main())


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def tls_config(**changes: Any) -> Any:
    from smpref.serve.listener import ServeConfig
    return ServeConfig(**{"port": 0, "pending_events_interval": 0.0, **changes})


def _restrict(ctx: ssl.SSLContext, sigalgs: str | None = None,
              groups: str | None = None) -> ssl.SSLContext:
    """A client that offers only these signature algorithms or groups (OpenSSL's controls,
    which Python's ssl does not expose)."""
    for control, value in ((tls.SSL_CTRL_SET_SIGALGS_LIST, sigalgs),
                           (tls.SSL_CTRL_SET_GROUPS_LIST, groups)):
        if value is not None:
            assert tls.ssl_ctx_ctrl(ctx, control, value)
    return ctx


@req("TRANS-1", "TRANS-17", "CLNT-29")
@pytest.mark.parametrize(("client", "alert", "cause", "shown"), [
    (lambda: tls.client_context(["x-unknown"]), "no_application_protocol",
     "no shared ALPN token", ("offered_alpn", "x-unknown")),
    (lambda: _restrict(tls.client_context(["smp/1"]),
                       sigalgs="ECDSA+SHA256:RSA-PSS+SHA256:rsa_pss_pss_sha256"),
     "handshake_failure", "no shared signature algorithm",
     ("offered_sigalgs", "ecdsa_secp256r1_sha256")),
    (lambda: _restrict(tls.client_context(["smp/1"]), groups="P-256:P-384"),
     "handshake_failure", "no shared key exchange group", ("offered_groups", "P-256,P-384")),
])
def test_a_refused_tls_handshake_is_logged_with_its_cause_and_the_offer(
        tmp_path: Path, client: Any, alert: str, cause: str, shown: tuple[str, str]) -> None:
    """A client deployed refuses (tls 1.9.0 Handshake/Server.hs:1089-1105 for ALPN;
    Transport.hs:389-400 for the signature algorithms and groups) is refused here too, and the
    log line says why, where OpenSSL and asyncio would say nothing."""
    async def main() -> list[dict[str, Any]]:
        with logged("tls_refused") as seen:
            async with embedded(tmp_path) as server:
                with pytest.raises((ssl.SSLError, ConnectionError)):
                    await asyncio.open_connection("127.0.0.1", server.port, ssl=client(),
                                                  server_hostname=None)
                for _ in range(100):
                    if seen:
                        break
                    await asyncio.sleep(0.01)
        return seen
    (event,) = asyncio.run(main())
    assert event["by"] == "server" and event["alert"] == alert, event
    assert cause in event["cause"], event
    assert shown[1] in event[shown[0]], event


@req("TRANS-1", "TRANS-9", "TRANS-13")
@pytest.mark.parametrize(("algorithm", "key_type"), [("ED25519", ed25519.Ed25519PublicKey),
                                                    ("ED448", ed448.Ed448PublicKey)])
def test_the_identity_is_ed25519_by_default_or_ed448(tmp_path: Path, algorithm: str,
                                                     key_type: type) -> None:
    """smp-server init --sign-algorithm ED25519 (its default, Server/Main.hs:857-866) or ED448:
    both certificates of the chain, and the session key's signature, in that algorithm; an
    independent client (tests/deployed_client.py) checks the chain and the signature."""
    async def main() -> None:
        config = {} if algorithm == "ED25519" else {"sign_algorithm": algorithm}
        async with embedded(tmp_path, **config) as server:
            assert server.credentials.algorithm == algorithm
            _, cert = await server_hello(server.port, ["smp/1"], None)
            assert isinstance(key_of(cert), key_type)
            identity = x509.load_der_x509_certificate(server.credentials.identity_der)
            assert isinstance(identity.public_key(), key_type)
            client = await DeployedClient.connect(server.address)
            await client.close()
    asyncio.run(main())


def test_the_cli_offers_the_algorithms_the_credentials_make() -> None:
    """``--sign-algorithm`` names its choices without importing the credentials module (it
    loads cryptography); they must stay the same, the default first."""
    from smpref.cli.client_check_commands import client_check
    from smpref.cli.network import serve
    from smpref.transport.credentials import SIGN_ALGORITHMS

    for command in (serve, client_check):
        (option,) = [p for p in command.params if p.name == "sign_algorithm"]
        assert tuple(option.type.choices) == SIGN_ALGORITHMS  # type: ignore[attr-defined]
        assert option.default == SIGN_ALGORITHMS[0]


@req("MSG-2", "MSG-8", "TRANS-16")
def test_end_and_deld_wait_for_the_pending_events_tick_and_come_newest_first(
        tmp_path: Path) -> None:
    """Deployed keeps END and DELD for a connection in pendingEvents, newest first, and sends
    them all every pendingENDInterval (Server.hs:328, 413-436): nothing at once, then both
    together. The subscription itself moves at once."""
    from smpref.conform.context import Context
    from smpref.wire.messages import DEL

    async def main() -> tuple[list[tuple[str, bytes]], bytes, bytes]:
        async with embedded(tmp_path, pending_events_interval=1.5) as server:
            ctx = Context(server.address, True, 1000)
            a, b = await ctx.connect(), await ctx.connect()
            first = await ctx.create(a, subscribe=True)
            second = await ctx.create(a, subscribe=True)
            await ctx.subscribe(b, first)  # a's subscription to the first moves to b
            ctx.expect(await ctx.request(b, DEL(), second.rid, second.key), "OK")
            # gathered, not sent with the answers (the seed design's NEW pushes its first
            # record as MSG: only END counts)
            with contextlib.suppress(ClientError):
                while True:
                    assert (await a.next_event(0.3)).tag != "END"
            got = []
            while len(got) < 2:
                event = await a.next_event(5.0)
                if event.tag == "END":
                    got.append((event.tag, bytes(event.transmission.entity_id)))
            await ctx.close()
            return got, first.rid, second.rid
    got, first, second = asyncio.run(main())
    # newest first: the deleted queue's END (the seed design's DEL sends END), then the moved
    assert got == [("END", second), ("END", first)], got


@req("DIV-49")
def test_the_server_asks_no_client_certificate(tmp_path: Path) -> None:
    """Deployed asks every client for a certificate, for client services
    (Transport/Server.hs:146-150, 274-301); smpref serves no services (DIV-38) and asks none
    (DIV-49): its handshake carries no CertificateRequest."""
    seen: list[object] = []

    def record(_conn: object, direction: str, _version: object, content_type: object,
               message_type: object, _data: bytes) -> None:
        if direction == "read" and content_type == ssl._TLSContentType.HANDSHAKE:  # type: ignore[attr-defined]
            seen.append(message_type)

    async def main() -> None:
        async with embedded(tmp_path) as server:
            ctx = tls.client_context(["smp/1"])
            ctx._msg_callback = record  # type: ignore[attr-defined]
            await server_hello_with(ctx, server.port)
    asyncio.run(main())
    assert ssl._TLSMessageType.FINISHED in seen, seen  # type: ignore[attr-defined]
    assert ssl._TLSMessageType.CERTIFICATE_REQUEST not in seen  # type: ignore[attr-defined]


async def server_hello_with(ctx: ssl.SSLContext, port: int) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port, ssl=ctx,
                                                   server_hostname=None)
    stream = BlockStream(reader, writer)
    await stream.read_handshake()
    await stream.close()
