"""The live server under fuzzing and load: it never crashes, loses or duplicates (TRANS-2,
TRANS-3, MSG-9).

A bad transmission inside a good block gets ``ERR``; a bad block, a bad handshake or garbage
closes only that connection. The oracle for a mutated batch is TRANS-3 written out here, not
smpref's ``decode_batch`` (which the server itself uses): a batch the spec accepts must keep
the connection open and get one answer per transmission, one it rejects must close the
connection.
"""

from __future__ import annotations

import asyncio
import random
import socket
from collections.abc import Iterator

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from reqs import req
from servers import ThreadedServer

from smpref.client import SmpClient
from smpref.client.core import Reply
from smpref.conform.context import Context
from smpref.errors import SmprefError, WireError
from smpref.testing.strategies import messages
from smpref.transport.tls import client_context
from smpref.wire.blocks import encode_batch
from smpref.wire.messages import PING
from smpref.wire.schema import decode_message
from smpref.wire.structs import Message
from smpref.wire.transmission import Transmission

TIMEOUT = 10.0
#: examples per fuzz test: a share of the profile's (ci 60, long 2000), each one a TLS connection
EXAMPLES = max(10, settings.default.max_examples // 2)


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ThreadedServer]:
    server = ThreadedServer(tmp_path_factory.mktemp("live"), handshake_timeout=5.0)
    yield server
    assert asyncio.run(_ping(server.address)), "the server stopped answering"
    server.stop()
    assert server.errors == [], server.errors


async def _ping(address: str) -> bool:
    async with await SmpClient.connect(address) as client:
        return (await client.request(PING(), timeout=TIMEOUT)).tag == "PONG"


async def _closed(client: SmpClient) -> bool:
    try:
        await client.wait_closed(TIMEOUT)
    except TimeoutError:
        return False
    return True


def _trans3_count(content: bytes) -> int | None:
    """How many transmissions TRANS-3 finds in block content, or None when a receiver must
    reject it: ``count(1) 1*Large(transmission)``, the count 1 to 255, each ``Large`` a
    big-endian 2-byte length and that many bytes, and the transmissions filling the content
    exactly."""
    if not content or content[0] == 0:
        return None
    pos = 1
    for _ in range(content[0]):
        if pos + 2 > len(content):
            return None
        pos += 2 + int.from_bytes(content[pos:pos + 2], "big")
    return content[0] if pos == len(content) else None


def _valid_batch() -> st.SearchStrategy[bytes]:
    ping = Transmission(b"", b"c" * 24, b"", b"PING").encode()
    return st.lists(st.just(ping), min_size=1, max_size=3).map(encode_batch)


def _mutated(data: bytes, draw_ops: list[tuple[int, int, bytes]]) -> bytes:
    out = bytearray(data)
    for kind, where, chunk in draw_ops:
        pos = where % (len(out) + 1)
        if kind == 0:
            out[pos:pos + len(chunk)] = chunk  # overwrite
        elif kind == 1:
            out[pos:pos] = chunk  # insert
        else:
            del out[pos:pos + len(chunk)]  # delete
    return bytes(out[:16366])


ops = st.lists(st.tuples(st.integers(0, 2), st.integers(0, 200),
                         st.binary(min_size=1, max_size=8)), max_size=4)


PING_BATCH = encode_batch([Transmission(b"", b"c" * 24, b"", b"PING").encode()])


@req("TRANS-3", "TRANS-15")
@settings(max_examples=EXAMPLES)
@given(base=_valid_batch(), mutation=ops, extra=st.binary(max_size=64))
@example(base=b"\x00", mutation=[], extra=b"")  # a count of 0
@example(base=PING_BATCH, mutation=[], extra=b"\x00")  # a trailing byte
@example(base=PING_BATCH[:-1], mutation=[], extra=b"")  # a transmission cut short
def test_mutated_batches_close_or_answer(live: ThreadedServer, base: bytes,
                                         mutation: list[tuple[int, int, bytes]],
                                         extra: bytes) -> None:
    content = _mutated(base, mutation) + (extra if not mutation else b"")
    content = content[:16366]
    expected = _trans3_count(content)

    async def main() -> None:
        client = await SmpClient.connect(live.address)
        chain = client.stream.framing.send_chain
        assert chain is not None
        await client.send_block(chain.encrypt(content))
        if expected is None:
            assert await _closed(client), "a bad batch left the connection open"
        else:
            reply = await client.request(PING(), timeout=TIMEOUT)
            assert reply.tag == "PONG"
            # the batch's answers came before PONG, none carries a corrId the client waits for
            assert client.events.qsize() == expected, "not one answer per transmission"
        await client.close()
    asyncio.run(main())


#: what one random transmission carries: raw bytes (sent as they are), or a command, as random
#: bytes or a well-formed one, in a well-formed transmission with its own corrId
_SENT = st.one_of(st.binary(max_size=300), st.tuples(st.binary(max_size=32),
                                                    st.binary(max_size=300) | messages("command")))


def _corr_id(index: int) -> bytes:
    return b"random transmission #%03d" % index  # 24 bytes, as a client's


def _answers_command(reply: Reply, command: bytes) -> bool:
    """CMD-2: ERR, or one of the responses the command's definition lists."""
    if reply.tag == "ERR":
        return True
    try:
        message = decode_message(command, kind="command")
    except WireError:
        return False  # only ERR answers a command that does not decode
    return reply.tag in message.DEF.responds


@req("TRANS-4", "CMD-2", "TRANS-15")
@settings(max_examples=EXAMPLES)
@given(sent=st.lists(_SENT, min_size=1, max_size=5))
def test_random_transmissions_get_answers_not_crashes(
        live: ThreadedServer, sent: list[bytes | tuple[bytes, bytes | Message]]) -> None:
    """Every transmission gets one answer and the connection goes on: a well-formed one with
    its corrId, ERR or a response its command lists (CMD-2); raw bytes ERR (TRANS-4)."""
    transmissions: list[bytes] = []
    commands: dict[bytes, bytes] = {}  # by corrId
    for index, item in enumerate(sent):
        if isinstance(item, bytes):
            transmissions.append(item)
            continue
        entity_id, body = item
        command = body if isinstance(body, bytes) else body.encode()
        commands[_corr_id(index)] = command
        transmissions.append(Transmission(b"", _corr_id(index), entity_id, command).encode())

    async def main() -> None:
        client = await SmpClient.connect(live.address)
        answers = {corr_id: client.answer(corr_id) for corr_id in commands}
        await client.send_raw(transmissions)
        reply = await client.request(PING(), timeout=TIMEOUT)
        assert reply.tag == "PONG", "the connection must survive bad transmissions"
        # answers come in order: all of them came before PONG
        for corr_id, answer in answers.items():
            assert answer.done(), f"no answer with corrId {corr_id!r}"
            assert _answers_command(answer.result(), commands[corr_id]), answer.result()
        raw = len(transmissions) - len(commands)
        assert client.events.qsize() == raw, "not one answer per raw transmission"
        for _ in range(raw):  # arbitrary bytes hardly ever make a whole PING
            assert (await client.next_event()).tag in ("ERR", "PONG")
        await client.close()
    asyncio.run(main())


@req("TRANS-2")
@settings(max_examples=max(5, EXAMPLES // 2))
@given(size=st.integers(1, 3 * 16384), seed=st.binary(min_size=8, max_size=8))
def test_wrong_block_sizes_and_cuts(live: ThreadedServer, size: int, seed: bytes) -> None:
    junk = random.Random(seed).randbytes(size)  # from Hypothesis's seed: replayable

    async def main() -> None:
        client = await SmpClient.connect(live.address)
        await client.send_block(junk)
        if size >= 16384:  # at least one whole block that does not decrypt
            assert await _closed(client)
        await client.close()  # otherwise: cut in the middle of a block
        assert await _ping(live.address)
    asyncio.run(main())


@req("TRANS-1")
def test_garbage_before_and_instead_of_the_handshakes(live: ThreadedServer) -> None:
    host, port = "127.0.0.1", live.server.port
    fixed = random.Random(1)  # fixed junk: a failure replays exactly
    for junk in (b"GET / HTTP/1.1\r\n\r\n", fixed.randbytes(5000),
                 b"\x16\x03\x01" + fixed.randbytes(300)):
        with socket.create_connection((host, port), timeout=TIMEOUT) as raw:
            raw.sendall(junk)
            raw.settimeout(TIMEOUT)
            closed = False
            try:
                while raw.recv(4096):
                    pass
                closed = True  # the server closed it
            except ConnectionResetError:
                closed = True
            except TimeoutError:
                closed = False
            assert closed, f"the server kept a connection open after {junk[:20]!r}"

    async def after_tls(junk: bytes) -> None:
        reader, writer = await asyncio.open_connection(host, port, ssl=client_context(),
                                                       server_hostname=None)
        await reader.readexactly(16384)  # the server's hello
        writer.write(junk)
        await writer.drain()
        if len(junk) >= 16384:
            assert await asyncio.wait_for(reader.read(), TIMEOUT) == b""
        writer.close()

    for junk in (fixed.randbytes(16384), fixed.randbytes(100),
                 b"\x00\x02\x03\xe8" + bytes(16380)):
        asyncio.run(after_tls(junk))
    assert asyncio.run(_ping(live.address))


@req("TRANS-2")
def test_slow_client_is_served(live: ThreadedServer) -> None:
    async def main() -> None:
        client = await SmpClient.connect(live.address)
        corr, data = client.session.transmission(PING())
        block = client.stream.framing.encode([data])[0]
        future = client.answer(corr)
        for i in range(0, len(block), 1024):  # a block dribbled in 16 pieces
            client.stream.writer.write(block[i:i + 1024])
            await client.stream.writer.drain()
            await asyncio.sleep(0.02)
        assert (await asyncio.wait_for(future, TIMEOUT)).tag == "PONG"
        await client.close()
    asyncio.run(main())


@req("QUEUE-3", "QUEUE-4")
def test_flood_of_new(live: ThreadedServer) -> None:
    async def main() -> None:
        ctx = Context(live.address, True, 1000)
        client = await ctx.connect()
        ids: set[bytes] = set()
        for _ in range(10):  # 500 NEW, 50 per block
            drafts = [ctx.draft("C") for _ in range(50)]
            items = [client.session.transmission(ctx.new_command(d, subscribe=False), b"",
                                                 d.key) for d in drafts]
            for reply in await client.send_transmissions(items):
                assert reply.tag == "IDS"
                ids.update((reply.message.rcv_id, reply.message.snd_id))
        assert len(ids) == 1000
        await ctx.close()
    asyncio.run(main())


@pytest.mark.heavy
@req("MSG-9", "MSG-2")
def test_load_200_clients_50_messages_each(live: ThreadedServer) -> None:
    """100 senders and 100 subscribed receivers, 50 messages per pair: all arrive, once."""
    pairs, per_pair = 100, 50

    async def main() -> None:
        ctx = Context(live.address, True, 1000, timeout=60.0)
        receivers = [await ctx.connect() for _ in range(pairs)]
        senders = [await ctx.connect() for _ in range(pairs)]
        queues = await asyncio.gather(*(ctx.create(r, "C", subscribe=True) for r in receivers))

        async def send_all(i: int) -> None:
            for n in range(per_pair):
                ctx.expect(await ctx.send(senders[i], queues[i], b"%d:%d" % (i, n)), "OK")

        async def receive_all(i: int) -> list[bytes]:
            return await ctx.receive(receivers[i], queues[i], per_pair)

        received, _ = await asyncio.gather(
            asyncio.gather(*(receive_all(i) for i in range(pairs))),
            asyncio.gather(*(send_all(i) for i in range(pairs))))
        for i, bodies in enumerate(received):
            assert bodies == [b"%d:%d" % (i, n) for n in range(per_pair)]
        await asyncio.sleep(0.3)  # a duplicate would be pushed after the last ACK
        for receiver in receivers:
            assert receiver.events.empty(), "a message was pushed again after it was acked"
        await ctx.close()
    asyncio.run(main())


def test_tls_alert_mid_session_does_not_hurt_others(live: ThreadedServer) -> None:
    async def main() -> None:
        keep = await SmpClient.connect(live.address)
        victim = await SmpClient.connect(live.address)
        victim.stream.writer.transport.abort()  # RST without a TLS close_notify
        assert (await keep.request(PING(), timeout=TIMEOUT)).tag == "PONG"
        await keep.close()
    asyncio.run(main())


@req("TRANS-9", "TRANS-15")
@settings(max_examples=EXAMPLES)
@given(mutation=ops, version=st.sampled_from([6, 17, 18, 999, 1000, 1001, 65535]),
       secret=st.binary(min_size=32, max_size=32))
def test_mutated_client_hellos_close_or_connect(live: ThreadedServer, version: int,
                                                mutation: list[tuple[int, int, bytes]],
                                                secret: bytes) -> None:
    """A client hello is accepted only when it decodes, names this server and its version;
    anything else closes that connection and nothing else."""
    from smpref.crypto.primitives import x25519_public
    from smpref.transport.streams import BlockStream
    from smpref.wire.hellos import ClientHello

    hello = ClientHello(version, live.server.key_hash, x25519_public(secret)).encode()
    mutated = _mutated(hello, mutation)
    try:
        decoded = ClientHello.decode(mutated)
        acceptable = decoded.version == 1000 and decoded.key_hash == live.server.key_hash
    except SmprefError:  # the mutated hello does not decode
        acceptable = False

    async def main() -> None:
        reader, writer = await asyncio.open_connection(
            "127.0.0.1", live.server.port, ssl=client_context(), server_hostname=None)
        stream = BlockStream(reader, writer)
        await stream.read_handshake()
        await stream.write_handshake(mutated)
        try:
            await asyncio.wait_for(reader.readexactly(16384), 1.0)
            closed = False
        except asyncio.IncompleteReadError:
            closed = True
        except TimeoutError:
            closed = False  # still open: the server waits for blocks
        if not acceptable:
            assert closed, "a bad client hello did not close the connection"
        await stream.close()
    asyncio.run(main())
