"""The TLS server and the asyncio client, in one process (TRANS-1 to TRANS-11)."""

from __future__ import annotations

import asyncio
import socket
import ssl
from pathlib import Path

import pytest
from reqs import req
from servers import embedded

from smpref.client import SmpClient
from smpref.conform.context import Context
from smpref.crypto.session_keys import key_hash
from smpref.errors import ClientError, UnsupportedError
from smpref.serve.listener import ServeConfig, SmpServer
from smpref.text.addresses import parse_server_address
from smpref.transport import versions
from smpref.transport.credentials import load
from smpref.transport.streams import BlockStream
from smpref.transport.tls import client_context, session_id
from smpref.wire.dialects import Dialect
from smpref.wire.hellos import ServerHello
from smpref.wire.messages import LGET, NSUB, PING, DeployedLGET


@req("TRANS-1", "TRANS-8", "TRANS-9", "TRANS-10")
def test_connect_checks_identity_and_encrypts(tmp_path: Path) -> None:
    async def main() -> None:
        async with embedded(tmp_path) as server:
            async with await SmpClient.connect(server.address) as client:
                assert client.negotiated.version == versions.SMPREF_VERSION
                assert client.stream.framing.encrypted
                # TRANS-8: the session ID is the TLS channel binding, read here apart from
                # smpref's own transport.tls.session_id
                tls = client.stream.writer.get_extra_info("ssl_object")
                assert client.session_id == tls.get_channel_binding("tls-unique")
                assert (await client.request(PING())).tag == "PONG"
            # the same server under another identity is refused before any command
            address = parse_server_address(server.address)
            wrong = address.__class__(bytes(32), address.hosts, address.port)
            with pytest.raises(ClientError, match="keyHash"):
                await SmpClient.connect(wrong)
    asyncio.run(main())


@req("TRANS-1", "TRANS-13")
def test_credentials_are_made_once_and_reused(tmp_path: Path) -> None:
    async def address() -> str:
        async with embedded(tmp_path) as server:
            return server.address.rsplit(":", 1)[0]
    first, second = asyncio.run(address()), asyncio.run(address())
    assert first == second
    creds = load(tmp_path / "credentials")
    assert key_hash(creds.identity_der) == creds.key_hash
    assert first.startswith("smp://") and parse_server_address(first + ":1").key_hash == \
        creds.key_hash
    assert (tmp_path / "credentials" / "ca.key").stat().st_mode & 0o077 == 0


@req("TRANS-8", "TRANS-9")
def test_hello_carries_the_tls_unique_session_id_and_chain(tmp_path: Path) -> None:
    async def main() -> None:
        async with embedded(tmp_path) as server:
            reader, writer = await asyncio.open_connection(
                "127.0.0.1", server.port, ssl=client_context(), server_hostname=None)
            stream = BlockStream(reader, writer)
            hello = ServerHello.decode(await stream.read_handshake())
            assert hello.session_id == session_id(writer.get_extra_info("ssl_object"))
            assert len(hello.session_id) == 32  # TLS 1.3 with ChaCha20-Poly1305-SHA256 only
            assert (hello.min_version, hello.max_version) == (versions.SMPREF_VERSION,) * 2
            assert key_hash(hello.certificates[1]) == server.key_hash
            assert writer.get_extra_info("ssl_object").version() == "TLSv1.3"
            await stream.close()
    asyncio.run(main())


@req("TRANS-11")
def test_version_choice_reads_the_range_in_the_namespace_of_the_selected_alpn() -> None:
    seed, smp = versions.SEED_ALPN, versions.SMP_ALPN
    assert versions.client_choice(6, 18, smp).version == 18
    assert not versions.client_choice(6, 18, smp).extended
    assert versions.client_choice(6, 18, None).version == 18  # no ALPN: deployed SMP
    # every deployed version can be forced, and a range below 18 gives its own newest
    assert [versions.client_choice(6, 18, smp, version=v).version
            for v in range(6, 19)] == list(range(6, 19))
    assert versions.client_choice(6, 16, smp).version == 16
    assert versions.client_choice(6, 6, None).version == 6
    assert versions.client_choice(1000, 1000, seed).extended
    # the seed version means nothing under smp/1, a deployed range nothing under the seed token
    for low, high, alpn, forced in ((1000, 1000, smp, None), (1000, 1000, None, None),
                                    (6, 18, seed, None), (1, 5, smp, None), (19, 20, smp, None),
                                    (6, 18, smp, 5), (6, 18, smp, 19), (6, 16, smp, 17),
                                    (1000, 1000, seed, 18)):
        with pytest.raises(versions.VersionError):
            versions.client_choice(low, high, alpn, forced)
    # a server advertises deployed's whole range under smp/1, the seed's elsewhere (DEP-12)
    assert versions.advertised(Dialect.DEPLOYED) == (6, 18)
    assert versions.advertised(Dialect.DEPLOYED, None) == (6, 6)
    assert versions.advertised(Dialect.SEED) == (1000, 1000)
    assert versions.dialect_of_alpn(seed) is Dialect.SEED
    assert versions.dialect_of_alpn(smp) is versions.dialect_of_alpn(None) is Dialect.DEPLOYED
    assert versions.client_alpn(None) == [seed, smp]
    assert versions.client_alpn(Dialect.DEPLOYED) == [smp]


@req("TRANS-11", "TRANS-14", "DIV-37", "DEP-11", "DEP-12")
@pytest.mark.parametrize(("alpn", "expected"), [
    ([versions.SEED_ALPN, versions.SMP_ALPN], (1000, 1000)),
    # the client's first token the server has decides, as deployed's onALPNClientSuggest
    # (Transport/Server.hs:269)
    ([versions.SMP_ALPN, versions.SEED_ALPN], (6, 18)),
    (["x-unknown", versions.SEED_ALPN], (1000, 1000)),
    ([versions.SMP_ALPN], (6, 18)),
    (["http/1.1"], (6, 18)),  # any negotiated ALPN without SNI is SMP 6-18 (Transport.hs:760)
    (["h2", "http/1.1"], (6, 18)),
    ([], (6, 6)),  # no ALPN: deployed SMP at version 6 alone, as deployed (DEP-11)
])
def test_the_alpn_chooses_the_advertised_range(tmp_path: Path, alpn: list[str],
                                               expected: tuple[int, int]) -> None:
    async def main() -> None:
        async with embedded(tmp_path) as server:
            context = client_context(alpn)
            reader, writer = await asyncio.open_connection(
                "127.0.0.1", server.port, ssl=context, server_hostname=None)
            stream = BlockStream(reader, writer)
            hello = ServerHello.decode(await stream.read_handshake())
            assert (hello.min_version, hello.max_version) == expected
            await stream.close()
    asyncio.run(main())


@req("TRANS-11")
def test_client_refuses_seed_commands_at_a_deployed_version(tmp_path: Path) -> None:
    async def main() -> None:
        async with embedded(tmp_path) as server, await SmpClient.connect(
                server.address) as client:
            ctx = Context(server.address, True, 1000)
            queue = ctx.draft("C", link=True)
            client.connected = client.connected.__class__(
                versions.Negotiated(18), (6, 18), client.connected.server_session_public)
            with pytest.raises(UnsupportedError):
                await client.request(ctx.new_command(queue, subscribe=False), key=queue.key)
            with pytest.raises(UnsupportedError):
                await client.request(LGET(sender_key=None), b"k" * 32)
            # a core NEW goes through
            plain = ctx.draft("C")
            reply = await client.request(ctx.new_command(plain, subscribe=False),
                                         key=plain.key)
            assert reply.tag == "IDS"
    asyncio.run(main())


@req("TRANS-11", "DEP-2")
def test_each_protocol_refuses_the_other_ones_commands_before_sending(tmp_path: Path) -> None:
    async def main() -> None:
        async with embedded(tmp_path) as server:
            async with await SmpClient.connect(server.address, version=18) as deployed:
                assert deployed.negotiated.version == 18 and not deployed.extended
                with pytest.raises(UnsupportedError):
                    await deployed.request(LGET(sender_key=None), b"k" * 32)
                assert (await deployed.request(PING())).tag == "PONG"
            async with await SmpClient.connect(server.address) as seed:
                assert seed.extended
                with pytest.raises(UnsupportedError):
                    await seed.request(DeployedLGET(), b"l" * 24)
    asyncio.run(main())


@req("TRANS-1", "DIV-47")
def test_a_client_without_smp_alpn_or_tls13_is_refused(tmp_path: Path) -> None:
    async def main() -> None:
        async with embedded(tmp_path) as server:
            old = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            old.check_hostname, old.verify_mode = False, ssl.CERT_NONE
            old.maximum_version = ssl.TLSVersion.TLSv1_2
            with pytest.raises((ssl.SSLError, ConnectionError)):
                await asyncio.open_connection("127.0.0.1", server.port, ssl=old)
    asyncio.run(main())


@req("MSG-9")
def test_sigterm_style_stop_flushes_answers_and_keeps_messages(tmp_path: Path) -> None:
    async def main() -> None:
        async with embedded(tmp_path) as server:
            ctx = Context(server.address, True, 1000)
            c = await ctx.connect()
            q = await ctx.create(c, "C")
            for i in range(10):
                ctx.expect(await ctx.send(c, q, b"m%d" % i), "OK")
            await ctx.close()
        async with embedded(tmp_path) as server:
            ctx = Context(server.address, True, 1000)
            c = await ctx.connect()
            assert await ctx.receive(c, q, 10, via_get=True) == [b"m%d" % i for i in range(10)]
            await ctx.close()
    asyncio.run(main())


@req("TRANS-16")
def test_max_connections_refuses_the_extra_one(tmp_path: Path) -> None:
    async def main() -> None:
        async with embedded(tmp_path, max_connections=2) as server:
            a = await SmpClient.connect(server.address)
            b = await SmpClient.connect(server.address)
            with pytest.raises(ClientError):
                await SmpClient.connect(server.address, timeout=5)
            await a.close()
            await asyncio.sleep(0.1)
            c = await SmpClient.connect(server.address)
            assert (await c.request(PING())).tag == "PONG"
            await b.close()
            await c.close()
    asyncio.run(main())


@req("TRANS-16")
def test_handshake_and_inactive_timeouts_close_the_connection(tmp_path: Path) -> None:
    """A client that sends no hello is closed after the handshake timeout; a connection
    without subscriptions quiet both ways for the inactive ttl is closed, and a subscribed
    one never is (Server.hs:1064-1071, 1208-1219)."""
    async def main() -> None:
        async with embedded(tmp_path, handshake_timeout=0.5, inactive_ttl=0.6,
                            inactive_check_interval=0.2) as server:
            reader, writer = await asyncio.open_connection(
                "127.0.0.1", server.port, ssl=client_context(), server_hostname=None)
            await reader.readexactly(16384)  # the hello; no answer follows
            assert await asyncio.wait_for(reader.read(), 10) == b""
            writer.close()
            idle = await SmpClient.connect(server.address)
            ctx = Context(server.address, True, 1000)
            subscribed = await ctx.connect()
            await ctx.create(subscribed, subscribe=True)
            assert await idle.wait_closed(10)
            with pytest.raises(TimeoutError):  # quiet, but subscribed: kept open
                await subscribed.wait_closed(1.5)
            await idle.close()
            await ctx.close()
    asyncio.run(main())


@req("TRANS-16")
def test_token_bucket_delays_instead_of_dropping(monkeypatch: pytest.MonkeyPatch) -> None:
    from smpref.serve import block_reading as server_module

    now = [100.0]
    slept: list[float] = []

    async def fake_sleep(seconds: float) -> None:
        slept.append(seconds)
        now[0] += seconds

    monkeypatch.setattr(server_module.time, "monotonic", lambda: now[0])
    monkeypatch.setattr(server_module.asyncio, "sleep", fake_sleep)
    bucket = server_module.TokenBucket(rate=10.0, burst=3)

    async def take(n: int) -> None:
        for _ in range(n):
            await bucket.take()
    asyncio.run(take(3))
    assert slept == []  # the burst is free
    asyncio.run(take(5))
    assert len(slept) == 5 and all(abs(s - 0.1) < 1e-9 for s in slept)  # then 10 per second
    now[0] += 10  # a long pause refills only up to the burst
    slept.clear()
    asyncio.run(take(4))
    assert len(slept) == 1


@req("TRANS-16")
def test_a_subscriber_that_does_not_read_is_cut_and_loses_nothing(tmp_path: Path) -> None:
    """Events pushed to a session that stopped reading back up until its outbox passes
    max_pending; then that session is closed. The messages stay queued (MSG-9)."""
    async def main() -> None:
        async with embedded(tmp_path, max_pending=8, store_sync=False) as server:
            ctx = Context(server.address, True, 1000, timeout=30.0)
            owner = await ctx.connect()
            queues = [await ctx.create(owner, "C", notifier=True) for _ in range(40)]
            # The notification subscriber, with a small receive buffer (no autotuning).
            sock = socket.socket()
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8192)
            sock.connect(("127.0.0.1", server.port))
            slow = await SmpClient.connect(server.address, sock=sock)
            for q in queues:
                reply = await slow.request(NSUB(), q.notifier_id, q.notifier_key)
                assert reply.tag == "OK"
            slow.stop_reading()  # it stops reading: every NMSG pushed to it piles up
            sent = dict.fromkeys(range(len(queues)), 0)
            for n in range(100 * len(queues)):
                if slow.session_id not in server.connections:
                    break
                i = n % len(queues)
                ctx.expect(await ctx.send(owner, queues[i], b"kept", notify=True), "OK")
                sent[i] += 1
            assert slow.session_id not in server.connections, "the server kept a stuck reader"
            for i in (0, 1):  # nothing was lost: every message is still queued
                bodies = await ctx.receive(owner, queues[i], sent[i], via_get=True)
                assert bodies == [b"kept"] * sent[i]
            await ctx.close()
            await slow.close()
    asyncio.run(main())


def test_the_client_example_in_the_docs_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                             ) -> None:
    import re

    page = (Path(__file__).resolve().parent.parent / "docs" / "server.md").read_text()
    code = re.search(r"```python\n(.*?)```", page, re.DOTALL)
    assert code is not None
    namespace: dict[str, object] = {}
    exec(compile(code.group(1), "docs/server.md", "exec"), namespace)

    async def outer() -> None:
        async with embedded(tmp_path) as server:
            await namespace["main"](server.address)  # type: ignore[operator]
    asyncio.run(outer())
    assert capsys.readouterr().out.splitlines() == ["PONG", "[b'hello']"]


@req("DEP-14", "DEP-15")
def test_the_private_routing_example_in_the_docs_runs(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    import re

    page = (Path(__file__).resolve().parent.parent / "docs" / "server.md").read_text()
    section = page[page.index("## Private message routing"):]
    code = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert code is not None
    namespace: dict[str, object] = {}
    exec(compile(code.group(1), "docs/server.md", "exec"), namespace)

    async def outer() -> None:
        async with embedded(tmp_path / "own") as own, embedded(tmp_path / "queue") as queue:
            await namespace["route"](own.address, queue.address)  # type: ignore[operator]
    asyncio.run(outer())
    assert capsys.readouterr().out.splitlines() == ["OK MSG"]


def test_a_model_exception_ends_one_connection_only(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    async def main() -> None:
        async with embedded(tmp_path) as server:
            real = server.model.receive

            def explode(session: bytes, data: bytes) -> list[object]:
                if b"PING" in data:
                    raise RuntimeError("planted model bug")
                return real(session, data)

            monkeypatch.setattr(server.model, "receive", explode)
            victim = await SmpClient.connect(server.address)
            with pytest.raises(ClientError):
                await victim.request(PING(), timeout=10)
            ctx = Context(server.address, True, 1000)
            other = await ctx.connect()
            await ctx.create(other, "C")  # the server still serves everything else
            await ctx.close()
            await victim.close()
    asyncio.run(main())


def test_stopping_with_a_connection_mid_handshake_reports_no_loop_error(tmp_path: Path) -> None:
    """A flaky teardown error of the fuzz fixture: a connection cancelled by stop() while it
    waited in the handshake made asyncio report "Exception in callback" on the loop."""
    async def main() -> list[str]:
        errors: list[str] = []
        asyncio.get_running_loop().set_exception_handler(
            lambda _loop, context: errors.append(str(context.get("message"))))
        server = SmpServer(tmp_path, ServeConfig(port=0))
        await server.start()
        reader, writer = await asyncio.open_connection(
            "127.0.0.1", server.port, ssl=client_context(), server_hostname=None)
        await reader.readexactly(16384)  # the server's hello; ours never comes
        await server.stop()
        await asyncio.sleep(0.1)  # let the done-callbacks run
        writer.close()
        return errors
    assert asyncio.run(main()) == []
