"""Checks of the fidelity table's rows DIV-26 to DIV-50 that the rows' cited checks left out:
each kills a planted deviation of mutation/deviations/div_26_to_50.py that survived them."""

from __future__ import annotations

import asyncio
import ctypes
import ssl
from pathlib import Path
from typing import Any

import pytest
from reqs import req
from servers import embedded, logged
from test_deployed_fidelity import _notifier, _queue
from test_deployed_ports import free_port, tls_config
from test_model_rules import create, send

from smpref.crypto.primitives import secretbox_open
from smpref.crypto.randomness import SeededRandom
from smpref.errors import ConnectionClosedError
from smpref.model import DAY, ServerConfig
from smpref.serve.listener import SmpServer
from smpref.testing.loopback import Loopback
from smpref.testing.queue_exchanges import error_of
from smpref.transport import tls
from smpref.transport.handshake import ClientHandshake
from smpref.transport.streams import BlockStream
from smpref.transport.tls import session_id
from smpref.wire.blocks import unpad
from smpref.wire.dialects import Dialect
from smpref.wire.messages import ACK, GET, NSUB, SEND, MsgFlags, RecordKind


@req("DIV-29", "MSG-6", "QENC-7")
def test_a_seed_quota_marker_is_a_q_record_in_the_msg_layout() -> None:
    """DIV-29: deployed delivers the quota marker as ``QUOTA ts`` (Server.hs:2030-2038,
    Protocol.hs:794-800); in the seed design it is a ``Q`` record in the layout of every
    record: ``Int64 ts``, the flags ``F F``, a space, ``'Q' Int64 seq``."""
    lb = Loopback(seed=11, config=ServerConfig(quota=2))
    conn, sender = lb.connect(), lb.connect()
    q = create(lb, conn)
    assert [r.tag for r in (send(sender, q, b"0")[0], send(sender, q, b"1")[0])] == ["OK"] * 2
    assert error_of(send(sender, q, b"2")[0]) == "QUOTA"
    msgs = []
    for _ in range(4):  # the Initial record, two messages, the quota marker
        (msg,) = q.cmd(GET())
        msgs.append(msg.message)
        assert q.cmd(ACK(msg_id=msg.message.msg_id))[0].tag == "OK"
    marker = msgs[-1]
    plain = unpad(secretbox_open(q.owner.rcv_dh_secret, marker.msg_id, marker.enc_body))
    # seq 3: the Initial record is 0, the two messages 1 and 2
    assert plain[8:] == b"FF Q" + (3).to_bytes(8, "big"), plain
    assert q.owner.unseal(marker)[0].record.kind is RecordKind.Quota


@req("DIV-30", "RET-5", "MSG-9")
def test_message_expiry_stops_at_the_record_in_flight() -> None:
    """DIV-30: deployed's expiry drops expired messages from the head and does not protect the
    one in flight (Server/MsgStore/Types.hs:194-205); smpref's stops at the record in flight,
    so it and the expired messages after it stay, and its ACK moves on to the next."""
    lb = Loopback(seed=12, config=ServerConfig(message_ttl_seconds=DAY))
    conn, sender = lb.connect(), lb.connect()
    q = create(lb, conn, subscribe=True)
    initial = q.replies[1].message
    q.owner.open_message(initial)
    assert q.cmd(ACK(msg_id=initial.msg_id))[0].tag == "OK"
    for body in (b"one", b"two"):
        assert send(sender, q, body)[0].tag == "OK"
    (pushed,) = conn.inbox  # "one" is in flight to the subscriber
    assert q.owner.open_message(pushed.message)[1].body == b"one"
    lb.clock.advance(2 * DAY)
    assert send(sender, q, b"three")[0].tag == "OK"
    lb.expire()
    stored = lb.store.records(q.rid)
    assert [r.kind for r in stored] == [RecordKind.Message] * 3
    assert stored[0].msg_id == pushed.message.msg_id
    (after,) = q.cmd(ACK(msg_id=pushed.message.msg_id))
    assert after.tag == "MSG" and q.owner.open_message(after.message)[1].body == b"two"


@req("DIV-38", "DEP-10", "TRANS-9")
@pytest.mark.parametrize("version", [16, 18])
def test_a_client_hello_that_announces_a_service_is_refused(tmp_path: Path,
                                                             version: int) -> None:
    """DEP-10a, DIV-38: deployed takes a client service in the hello from v16
    (Transport.hs:762-787); smpref refuses the hello (the handshake fails, HANDSHAKE PARSE in
    its log) and closes the connection before any command is served."""
    async def main() -> list[dict[str, Any]]:
        with logged("handshake_failed") as seen:
            async with embedded(tmp_path) as server:
                reader, writer = await asyncio.open_connection(
                    "127.0.0.1", server.port, ssl=tls.client_context(["smp/1"]),
                    server_hostname=None)
                stream = BlockStream(reader, writer)
                ssl_object = writer.get_extra_info("ssl_object")
                client = ClientHandshake(server.credentials.key_hash, session_id(ssl_object),
                                         ssl_object.getpeercert(binary_form=True),
                                         SeededRandom(b"service"), alpn="smp/1",
                                         version=version)
                hello = client.receive(await stream.read_handshake())
                assert hello[:2] == version.to_bytes(2, "big")
                assert hello.endswith(b"0")  # no service: what smpref's own client sends
                # '1' and a service as a v16 client lays it out (Transport.hs:606-654): the
                # role 'M', a chain of one certificate and the signed key (placeholders)
                await stream.write_handshake(hello[:-1] + b"1M\x01\x00\x04cert\x00\x03key")
                try:
                    await asyncio.wait_for(stream.read_block(), 10)
                except ConnectionClosedError:
                    closed = True
                else:
                    closed = False
                assert closed, "the server went on after a hello with a service"
                await stream.close()
        return seen
    (event,) = asyncio.run(main())
    assert event["error"] == "HANDSHAKE PARSE" and "service" in event["detail"], event


@req("DIV-42", "TRANS-8")
def test_smp_on_the_web_port_keeps_the_one_tls13_suite(tmp_path: Path) -> None:
    """DIV-42: deployed's web port serves SMP to a connection without SNI (Server.hs:210-219,
    Server/CLI.hs:414-427, Transport/Server.hs:258-272) with wider TLS parameters
    (Transport.hs:402-421); smpref's keeps the SMP port's one TLS 1.3 suite for it, so the
    session ID stays 32 bytes, even for a client that offers all three TLS 1.3 suites, the
    two AES ones first."""
    offer = ["TLS_AES_256_GCM_SHA384", "TLS_AES_128_GCM_SHA256", "TLS_CHACHA20_POLY1305_SHA256"]

    async def suite(port: int) -> tuple[str, int]:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
        ctx.minimum_version = ssl.TLSVersion.TLSv1_3
        ctx.set_alpn_protocols(["smp/1"])
        # this order whatever OpenSSL's default (Python's ssl cannot set TLS 1.3 suites)
        set_suites = tls._openssl("SSL_CTX_set_ciphersuites", ctypes.c_int, ctypes.c_char_p)
        assert set_suites(tls._ssl_ctx_pointer(ctx), ":".join(offer).encode()) == 1
        assert [c["name"] for c in ctx.get_ciphers() if c["protocol"] == "TLSv1.3"] == offer
        reader, writer = await asyncio.open_connection("127.0.0.1", port, ssl=ctx,
                                                       server_hostname=None)
        ssl_object = writer.get_extra_info("ssl_object")
        chosen = (ssl_object.cipher()[0], len(session_id(ssl_object)))
        await BlockStream(reader, writer).close()
        return chosen

    async def main() -> None:
        server = SmpServer(tmp_path, tls_config(web_port=free_port()))
        await server.start()
        try:
            assert server.web_port is not None and server.web_port != server.port
            for port in (server.port, server.web_port):
                assert await suite(port) == ("TLS_CHACHA20_POLY1305_SHA256", 32), port
        finally:
            await server.stop()
    asyncio.run(main())


@req("DIV-46", "MSG-7")
def test_nsub_brings_no_notification_of_a_message_sent_before_it() -> None:
    """DIV-46: deployed stores the notifications of a queue with notifier credentials and
    sends them to a notifier that subscribes later, for 24 h (Server.hs:356-403, 1876-1877,
    1959-1965; Server/Env/STM.hs:226-234); smpref answers NSUB with SOK alone, neither with
    the answer nor after it, and notifies only the messages that arrive once the notifier is
    subscribed."""
    loop = Loopback(seed=13)
    owner, sender = loop.connect(Dialect.DEPLOYED, 18), loop.connect(Dialect.DEPLOYED, 18)
    notifier = loop.connect(Dialect.DEPLOYED, 18)
    key, ids = _queue(owner)
    ntf, nid = _notifier(owner, key, ids.rcv_id)
    notify = MsgFlags(notification=True)
    assert sender.send(SEND(flags=notify, body=b"before"), ids.snd_id)[0].error is None
    assert [r.tag for r in notifier.send(NSUB(), nid, ntf)] == ["SOK"]
    assert not notifier.inbox
    assert sender.send(SEND(flags=notify, body=b"after"), ids.snd_id)[0].error is None
    assert [r.tag for r in notifier.inbox] == ["NMSG"]
