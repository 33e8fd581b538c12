"""Checks of the fidelity table's rows of other spec pages (spec/deployed-fidelity.md, "Other
spec pages' statements about deployed SMP") that the rows' first cited checks left open: each
was written for a planted deviation (mutation/deviations/other_pages.py) that survived them.
Expected bytes and values are written out here by hand or computed apart from smpref."""

from __future__ import annotations

import asyncio
import hashlib
import ssl
from pathlib import Path

import pytest
from deployed_client import (
    DeployedClient,
    Keys,
    Parser,
    ack_command,
    key_command,
    new_queue,
    open_msg,
    send_command,
)
from reqs import req
from servers import embedded, run_embedded
from test_wire_examples import DH_KEY, RCV_KEY, X25519_PREFIX

from smpref.crypto.deployed_links import contact_link_keys, invitation_sb_key, link_key
from smpref.errors import TrailingBytesError
from smpref.independent.basics import hkdf
from smpref.model.config import ServerConfig
from smpref.wire import decode_message
from smpref.wire.deployed import DeployedMessageBody
from smpref.wire.dialects import Dialect
from smpref.wire.messages import (
    COUNT,
    SEND,
    DeployedNEW,
    DeployedPRXY,
    MsgFlags,
    QueueReqData_M,
    RelayServer,
)

# --- encoding.md § (§1.1)


@req("ENC-1")
def test_word32_and_int64_are_big_endian() -> None:
    """Word32 and Int64 are big-endian (simplexmq Encoding.hs:54-178): COUNT's Word32 and the
    timestamp of a deployed MSG body read as the numbers their bytes spell big-endian."""
    assert decode_message(b"COUNT \x00\x00\x01\x07").remaining == 0x107
    assert COUNT(remaining=0x01020304).encode() == b"COUNT \x01\x02\x03\x04"
    stamp = bytes.fromhex("0000000065a1b2c3")
    body = DeployedMessageBody.decode(stamp + b"T hello")
    assert (body.timestamp, body.notification, body.body) == (0x65A1B2C3, True, b"hello")
    assert DeployedMessageBody(0x65A1B2C3, False, b"x").encode() == stamp + b"F x"


@req("ENC-1")
def test_maybe_is_the_characters_0_and_1() -> None:
    """Maybe is '0' (Nothing) or '1' and the value (Encoding.hs): deployed NEW's basicAuth,
    queueReqData and ntfCreds at version 18 are `0`, `1M0` (a messaging queue, no link) and
    `0`; a password is `1` and ss(password); no queueReqData is `0`."""
    def new(wire: bytes) -> DeployedNEW:
        decoded = decode_message(b"NEW " + RCV_KEY + DH_KEY + wire, dialect=Dialect.DEPLOYED,
                                 version=18)
        assert isinstance(decoded, DeployedNEW)
        assert decoded.encode() == b"NEW " + RCV_KEY + DH_KEY + wire
        return decoded

    plain = new(b"0S1M00")
    assert plain.basic_auth is None and plain.ntf_creds is None
    assert plain.queue_req_data == QueueReqData_M(link=None)
    assert new(b"1\x03pwdS1M00").basic_auth == b"pwd"
    assert new(b"0S00").queue_req_data is None


@req("ENC-1")
def test_a_list_is_a_count_byte_then_its_items() -> None:
    """Lists are a one-byte count and the items (Encoding.hs): PRXY's relay hosts are
    `count ss(host)...`, then ss(port), ss(keyHash), then Maybe basicAuth."""
    key_hash = bytes(range(32))
    wire = (b"PRXY \x02" + b"\x05a.org" + b"\x07b.onion" + b"\x044433" + b"\x20" + key_hash
            + b"0")
    prxy = decode_message(wire, dialect=Dialect.DEPLOYED)
    assert prxy == DeployedPRXY(relay=RelayServer(hosts=(b"a.org", b"b.onion"), port=b"4433",
                                                  key_hash=key_hash), basic_auth=None)
    assert prxy.encode() == wire


@req("ENC-2")
@pytest.mark.parametrize("wire", [b"PING x", b"KEY " + RCV_KEY + b"x", b"ACK \x00x",
                                  b"COUNT \x00\x00\x00\x07\x00"])
def test_decoding_needs_the_end_of_input(wire: bytes) -> None:
    """`parseAll` fails unless the whole input was read (Parsers.hs:62-66)."""
    with pytest.raises(TrailingBytesError):
        decode_message(wire)


# --- links.md § (§4.6)


def test_a_short_links_key_and_ids_are_deployeds_derivations() -> None:
    """Shipped short links (Crypto/ShortLink.hs:47-64): linkKey = SHA3-256(fixedData); a contact
    link's (LinkId, key) = split24(HKDF-SHA512("", linkKey, "SimpleXContactLink", 56)); an
    invitation's key = HKDF-SHA512("", linkKey, "SimpleXInvLink", 32). HKDF from the
    independent verifier (smpref.independent.basics)."""
    fixed = b"fixed data of a link" * 7
    key = link_key(fixed)
    assert key == hashlib.sha3_256(fixed).digest()
    derived = hkdf("SHA-512", b"", key, b"SimpleXContactLink", 56)
    assert contact_link_keys(key) == (derived[:24], derived[24:])
    assert invitation_sb_key(key) == hkdf("SHA-512", b"", key, b"SimpleXInvLink", 32)


# --- messaging.md (deployed answers, read by tests/deployed_client.py)


@req("MSG-1")
def test_a_secured_queue_takes_only_sends_signed_by_its_sender_key(tmp_path: Path) -> None:
    """SEND needs no authorization until the queue is secured, then the sender key's
    (Server.hs:1253; Server.hs:1851-1853): unsigned, or signed by another key, is AUTH."""
    async def scenario(address: str) -> None:
        alice, bob = await DeployedClient.connect(address), await DeployedClient.connect(address)
        owner, sender, other = Keys(), Keys(), Keys()
        ids = await new_queue(alice, owner, subscribe=False)
        assert (await bob.request(send_command(b"a"), ids.sender_id)).command == b"OK"
        assert (await alice.request(key_command(b"KEY", sender), ids.recipient_id,
                                    owner.sign)).command == b"OK"
        assert (await bob.request(send_command(b"b"), ids.sender_id)).command == b"ERR AUTH"
        assert (await bob.request(send_command(b"c"), ids.sender_id, other.sign)).command \
            == b"ERR AUTH"
        assert (await bob.request(send_command(b"d"), ids.sender_id, sender.sign)).command \
            == b"OK"
        await alice.close()
        await bob.close()
    run_embedded(tmp_path, scenario)


# --- transport.md TRANS-10 (§2.4)


def _sb_open(key: bytes, nonce: bytes, boxed: bytes) -> bytes:
    """Deployed sbDecrypt: secretbox keyed with HSalsa20(k, 0^16), HSalsa20 from the
    independent verifier's pure Python and the secretbox from libsodium."""
    from nacl.bindings import crypto_secretbox_open

    from smpref.independent.salsa import hsalsa20

    return crypto_secretbox_open(boxed, nonce, hsalsa20(key, bytes(16)))


@req("TRANS-10")
def test_the_server_sends_with_ck1_and_receives_with_ck2() -> None:
    """(ck1, ck2) = split32(HKDF-SHA512(sessionId, dh, "SimpleXSbChainInit", 64)); per block
    (ck', sbKey, nonce) = split(HKDF-SHA512("", ck, "SimpleXSbChain", 88), 32, 32, 24) and the
    block is sbEncrypt(sbKey, nonce, pad(content, 16368)); the server sends with ck1, receives
    with ck2 (Crypto.hs:1452-1464; Transport.hs:721-743, 844-848). Derived here apart from
    smpref's chain, with the independent verifier's HKDF (smpref.independent.basics)."""
    from smpref.transport.framing import Framing

    session, shared = bytes(range(32)), bytes(range(100, 132))
    okm = hkdf("SHA-512", session, shared, b"SimpleXSbChainInit", 64)
    ck1, ck2 = okm[:32], okm[32:]
    server, client = Framing(), Framing()
    server.encrypt(session, shared, server=True)
    client.encrypt(session, shared, server=False)
    for sender, first_key in ((server, ck1), (client, ck2)):
        chain = first_key
        for content in (b"first", b"second"):
            (block,) = sender.encode([content])
            assert len(block) == 16384
            step = hkdf("SHA-512", b"", chain, b"SimpleXSbChain", 88)
            chain, key, nonce = step[:32], step[32:64], step[64:]
            padded = _sb_open(key, nonce, block)
            assert len(padded) == 16368
            assert padded[:2 + 1 + 2 + len(content)] == (
                (1 + 2 + len(content)).to_bytes(2, "big") + b"\x01"
                + len(content).to_bytes(2, "big") + content)


@req("MSG-6")
def test_the_default_quota_is_128_messages(tmp_path: Path) -> None:
    """msgQueueQuota defaults to 128 (Server/Env/STM.hs:255-256): the 129th SEND to a queue
    nobody reads is ERR QUOTA."""
    async def scenario(address: str) -> None:
        client = await DeployedClient.connect(address)
        ids = await new_queue(client, Keys(), subscribe=False, mode=b"C")
        answers = [(await client.request(send_command(b"%d" % i), ids.sender_id)).command
                   for i in range(129)]
        assert answers == [b"OK"] * 128 + [b"ERR QUOTA"]
        await client.close()
    run_embedded(tmp_path, scenario)


@req("MSG-6")
def test_the_quota_holds_until_the_marker_too_is_acknowledged(tmp_path: Path) -> None:
    """A full queue stores the quota marker and answers QUOTA until it is empty
    (Server/MsgStore/Journal.hs:588-600): with only the marker left, SEND is still QUOTA."""
    async def scenario(address: str) -> None:
        client = await DeployedClient.connect(address)
        owner = Keys()
        ids = await new_queue(client, owner, subscribe=False, mode=b"C")
        for body in (b"0", b"1"):
            assert (await client.request(send_command(body), ids.sender_id)).command == b"OK"
        assert (await client.request(send_command(b"2"), ids.sender_id)).command == \
            b"ERR QUOTA"
        for expected in (b"0", b"1", None):
            got = open_msg(await client.request(b"GET", ids.recipient_id, owner.sign),
                           owner.dh, ids.server_dh)
            assert got.quota if expected is None else got.body == expected
            if expected is None:  # only the marker is left
                assert (await client.request(send_command(b"3"), ids.sender_id)).command \
                    == b"ERR QUOTA"
            assert (await client.request(ack_command(got.msg_id), ids.recipient_id,
                                         owner.sign)).command == b"OK"
        assert (await client.request(send_command(b"4"), ids.sender_id)).command == b"OK"
        await client.close()
    run_embedded(tmp_path, scenario, model=ServerConfig(quota=2))


# --- defaults of `smpref serve` and of an embedded server (messaging.md MSG-8, TRANS-16)

DEPLOYED_PERIODS = {"tls_timeout": 60.0, "handshake_timeout": 120.0, "inactive_ttl": 21600.0,
                    "inactive_check_interval": 3600.0, "pending_events_interval": 15.0}


@req("MSG-8", "TRANS-16", "DIV-41")
def test_the_periods_are_deployeds_by_default() -> None:
    """TLS setup 60 s (Transport/Server.hs:97), SMP handshake 120 s (Server/Main.hs:529),
    inactive clients checked every 3600 s and closed after 21600 s (Server/Main/Init.hs:158-162),
    END and DELD gathered and sent every 15 s (DIV-41; Server.hs:328, 413-436;
    Server/Main.hs:575): as ServeConfig's defaults and as `smpref serve`'s."""
    from smpref.cli.network import serve
    from smpref.serve.listener import ServeConfig

    config = ServeConfig()
    assert {name: getattr(config, name) for name in DEPLOYED_PERIODS} == DEPLOYED_PERIODS
    options = {p.name: p.default for p in serve.params}
    cli = {"tls_timeout": "tls_timeout", "handshake_timeout": "handshake_timeout",
           "inactive_ttl": "inactive_ttl", "inactive_check_interval": "inactive_check_interval",
           "pending_events_interval": "end_interval"}
    assert {name: options[cli[name]] for name in DEPLOYED_PERIODS} == DEPLOYED_PERIODS


# --- transport.md TRANS-8 (§2.7)


@req("TRANS-8")
def test_the_session_id_is_tls_unique_of_a_chacha20_sha256_session(tmp_path: Path) -> None:
    """sessionId is the client's Finished (tls-unique; Transport.hs:374-381, 917), and the
    server's one TLS 1.3 suite is ChaCha20-Poly1305-SHA256 (Transport.hs:389-400), so it is
    32 bytes, whatever suites the client offers (here OpenSSL's defaults)."""
    async def main() -> None:
        async with embedded(tmp_path) as server:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
            ctx.set_alpn_protocols(["smp/1"])
            reader, writer = await asyncio.open_connection(
                "127.0.0.1", server.port, ssl=ctx, server_hostname=None)
            tls = writer.get_extra_info("ssl_object")
            assert tls.cipher()[0] == "TLS_CHACHA20_POLY1305_SHA256"
            block = await reader.readexactly(16384)
            length = int.from_bytes(block[:2], "big")
            hello = block[2:2 + length]
            assert hello[:4] == bytes.fromhex("00060012")  # versions 6 to 18
            finished = tls.get_channel_binding("tls-unique")
            assert len(finished) == 32
            assert hello[4:5 + 32] == bytes([32]) + finished
            writer.close()
            await writer.wait_closed()
    asyncio.run(main())


# --- transport.md TRANS-9 (§2.5)


@req("TRANS-9")
def test_the_hellos_layouts_by_version() -> None:
    """Server hello: Word16 min, Word16 max, ss(sessionId), and when the range reaches 7 the
    chain (count, Large each) and Large(signed key); client hello: Word16 version, ss(keyHash),
    from 7 ss(X25519 SPKI) with no Maybe tag, from 14 the proxy Bool, from 16 '0'
    (Transport.hs:631-640, 592-604, 758-761). Bytes written out by hand."""
    from smpref.crypto.primitives import x25519_public
    from smpref.wire.hellos import ClientHello, ServerHello

    key = x25519_public(b"c" * 32)
    spki = bytes([44]) + X25519_PREFIX + key
    kh, sid = b"h" * 32, b"s" * 32
    expected_clients = {
        6: b"\x00\x06\x20" + kh,
        7: b"\x00\x07\x20" + kh + spki,
        14: b"\x00\x0e\x20" + kh + spki + b"F",
        18: b"\x00\x12\x20" + kh + spki + b"F0",
    }
    for version, wire in expected_clients.items():
        hello = ClientHello(version, kh, key if version >= 7 else None)
        assert hello.encode() == wire, version
        assert ClientHello.decode(wire) == hello
    chain = b"\x02" + b"\x00\x04leaf" + b"\x00\x02ca" + b"\x00\x7a" + b"k" * 122
    for low, high in ((6, 7), (6, 18)):
        server = ServerHello(low, high, sid, (b"leaf", b"ca"), b"k" * 122)
        wire = bytes([0, low, 0, high, 32]) + sid + chain
        assert server.encode() == wire
        assert ServerHello.decode(wire) == server
    assert ServerHello(6, 6, sid).encode() == b"\x00\x06\x00\x06\x20" + sid


# --- transport.md TRANS-14 (§2.2)


@req("TRANS-14")
@pytest.mark.parametrize("group", ["X448", "X25519"])
def test_a_client_offering_one_of_the_two_groups_gets_smp(tmp_path: Path, group: str) -> None:
    """SMP ports take the key exchange groups X448 and X25519 (Transport.hs:389-400): a client
    that offers either one alone completes TLS 1.3 with it and reads the server hello."""
    from smpref.transport import tls

    async def main() -> None:
        async with embedded(tmp_path) as server:
            ctx = tls.client_context(["smp/1"])
            assert tls.ssl_ctx_ctrl(ctx, tls.SSL_CTRL_SET_GROUPS_LIST, group)
            reader, writer = await asyncio.open_connection(
                "127.0.0.1", server.port, ssl=ctx, server_hostname=None)
            block = await reader.readexactly(16384)
            assert block[2:6] == bytes.fromhex("00060012")  # the hello: versions 6 to 18
            writer.close()
            await writer.wait_closed()
    asyncio.run(main())


@req("MSG-3", "MSG-2")
def test_a_connection_whose_subscription_ended_may_get(tmp_path: Path) -> None:
    """SUB after GET and GET while subscribed are CMD PROHIBITED (Server.hs:1626-1629,
    1664-1699), and a subscription another connection took is removed from the old one
    (Server.hs:342-343): after END it may GET the queue."""
    async def scenario(address: str) -> None:
        alice, carol = await DeployedClient.connect(address), await DeployedClient.connect(address)
        owner = Keys()
        ids = await new_queue(alice, owner, mode=b"C")
        assert (await alice.request(b"GET", ids.recipient_id, owner.sign)).command == \
            b"ERR CMD PROHIBITED"
        assert (await carol.request(b"SUB", ids.recipient_id, owner.sign)).command == b"SOK 0"
        end = await alice.event()
        assert (end.command, end.entity_id) == (b"END", ids.recipient_id)
        assert (await alice.request(b"GET", ids.recipient_id, owner.sign)).command == b"OK"
        assert (await alice.request(b"SUB", ids.recipient_id, owner.sign)).command == \
            b"ERR CMD PROHIBITED"
        await alice.close()
        await carol.close()
    run_embedded(tmp_path, scenario)


@req("MSG-2", "MSG-4")
def test_one_message_in_flight_and_a_repeated_sub_delivers_it_again(tmp_path: Path) -> None:
    """One message in flight per subscription, pushed only when nothing is delivered
    (Server.hs:1903-1957); a repeated SUB forgets it and delivers it again (Server.hs:1619-1644,
    1630-1632); its ACK answers with the next one (Server.hs:1791-1820)."""
    async def scenario(address: str) -> None:
        alice, bob = await DeployedClient.connect(address), await DeployedClient.connect(address)
        owner = Keys()
        ids = await new_queue(alice, owner, mode=b"C")
        for body in (b"one", b"two"):
            assert (await bob.request(send_command(body), ids.sender_id)).command == b"OK"
        # whatever the server pushed to alice for these SENDs comes before this PONG
        assert (await alice.request(b"PING")).command == b"PONG"
        assert alice.events.qsize() == 1  # "one" alone: "two" waits for its ACK
        first = open_msg(await alice.event(), owner.dh, ids.server_dh)
        assert first.body == b"one"
        assert (await alice.request(b"SUB", ids.recipient_id, owner.sign)).command == b"SOK 0"
        again = open_msg(await alice.event(), owner.dh, ids.server_dh)
        assert (again.msg_id, again.body) == (first.msg_id, b"one")
        second = await alice.request(ack_command(first.msg_id), ids.recipient_id, owner.sign)
        assert open_msg(second, owner.dh, ids.server_dh).body == b"two"
        await alice.close()
        await bob.close()
    run_embedded(tmp_path, scenario)


@req("MSG-7", "DEP-6")
def test_an_nsub_elsewhere_ends_the_notifier_subscription(tmp_path: Path) -> None:
    """A notifier subscription another connection takes ends with END to the old one, with
    the notifier ID (Server.hs:284; Server.hs:1959-1972)."""
    async def scenario(address: str) -> None:
        alice, ntf1, ntf2 = [await DeployedClient.connect(address) for _ in range(3)]
        owner, notifier = Keys(), Keys()
        nid = (await new_queue(alice, owner, subscribe=False, mode=b"C", ntf=notifier)
               ).notifier_id
        assert nid is not None
        assert (await ntf1.request(b"NSUB", nid, notifier.sign)).command == b"SOK 0"
        assert (await ntf2.request(b"NSUB", nid, notifier.sign)).command == b"SOK 0"
        end = await ntf1.event()
        assert (end.command, end.entity_id) == (b"END", nid)
        for client in (alice, ntf1, ntf2):
            await client.close()
    run_embedded(tmp_path, scenario)


@req("MSG-8", "DEP-4", "DEP-12")
def test_del_sends_deld_from_version_10_and_end_below(tmp_path: Path) -> None:
    """DEL's other subscriber gets DELD, END below version 10 (Server.hs:2045-2064;
    Protocol.hs:1848-1850)."""
    async def scenario(address: str) -> None:
        alice = await DeployedClient.connect(address)
        for version, event in ((9, b"END"), (10, b"DELD"), (18, b"DELD")):
            owner = Keys()
            ids = await new_queue(alice, owner, subscribe=False)
            carol = await DeployedClient.connect(address, version=version)
            answer = b"SOK 0" if version >= 16 else b"OK"
            assert (await carol.request(b"SUB", ids.recipient_id, owner.sign)).command == \
                answer
            assert (await alice.request(b"DEL", ids.recipient_id, owner.sign)).command == \
                b"OK"
            ended = await carol.event()
            assert (ended.command, ended.entity_id) == (event, ids.recipient_id), version
            await carol.close()
        await alice.close()
    run_embedded(tmp_path, scenario)


@req("MSG-5", "MSG-1")
def test_a_sends_size_is_checked_after_its_auth_and_before_the_queues_status(
        tmp_path: Path) -> None:
    """SEND's size is checked after the queue and the authorization (Server.hs:1253) and
    before the queue's status (Server.hs:1842-1856): too large to no queue or unsigned to a
    secured one is AUTH; too large to a suspended queue is LARGE_MSG, a fitting one AUTH."""
    async def scenario(address: str) -> None:
        alice, bob = await DeployedClient.connect(address), await DeployedClient.connect(address)
        owner, sender = Keys(), Keys()
        ids = await new_queue(alice, owner, subscribe=False)
        large = send_command(b"m" * 16049)
        assert (await bob.request(large, b"x" * 24)).command == b"ERR AUTH"
        assert (await alice.request(key_command(b"KEY", sender), ids.recipient_id,
                                    owner.sign)).command == b"OK"
        assert (await bob.request(large, ids.sender_id)).command == b"ERR AUTH"
        assert (await bob.request(large, ids.sender_id, sender.sign)).command == \
            b"ERR LARGE_MSG"
        assert (await alice.request(b"OFF", ids.recipient_id, owner.sign)).command == b"OK"
        assert (await bob.request(large, ids.sender_id, sender.sign)).command == \
            b"ERR LARGE_MSG"
        assert (await bob.request(send_command(b"m"), ids.sender_id, sender.sign)).command \
            == b"ERR AUTH"
        await alice.close()
        await bob.close()
    run_embedded(tmp_path, scenario)


# --- notation.md example (§3.6 SEND)


@req("CMD-17", "ENC-6")
def test_send_is_flags_a_space_and_the_body() -> None:
    """`SEND flags ' ' Tail body` (Protocol.hs:1704, 1802): the space is not the body's."""
    send = decode_message(b"SEND T hello")
    assert (send.flags.notification, send.body) == (True, b"hello")
    assert decode_message(b"SEND F  x").body == b" x"
    assert SEND(flags=MsgFlags(notification=False), body=b"hi").encode() == b"SEND F hi"


# --- queue-encryption.md QENC-7 (§3.10)


@req("QENC-7", "DEP-7")
def test_msg_is_a_box_with_the_msg_id_as_nonce_over_16106_padded_bytes(tmp_path: Path) -> None:
    """MSG's body is crypto_box(rcvDhSecret, nonce = msgId, pad(ts flags ' ' body, 16106))
    (Server.hs:2030-2038; Protocol.hs:794-800; Crypto.hs:1314-1316): opened here with PyNaCl,
    16106 bytes inside a 16-byte tag."""
    async def scenario(address: str) -> None:
        client = await DeployedClient.connect(address)
        owner = Keys()
        ids = await new_queue(client, owner, subscribe=False, mode=b"C")
        assert (await client.request(send_command(b"boxed", True), ids.sender_id)).command \
            == b"OK"
        reply = await client.request(b"GET", ids.recipient_id, owner.sign)
        assert reply.tag == "MSG"
        p = Parser(reply.body)
        msg_id, sealed = p.ss(), p.rest()
        assert len(sealed) == 16 + 16106
        got = open_msg(reply, owner.dh, ids.server_dh)  # opens with nonce = msgId
        assert (got.msg_id, got.body, got.notification) == (msg_id, b"boxed", True)
        await client.close()
    run_embedded(tmp_path, scenario)
