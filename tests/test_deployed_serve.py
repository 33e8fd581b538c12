"""smpref serve speaks deployed SMP to a deployed client (DEP-1 to DEP-10, TRANS-11).

The client is tests/deployed_client.py: written from a digest of simplexmq's source alone, it
shares smpref's transport but none of its command layer, so what it expects is deployed's
protocol read independently, not smpref's own definitions.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import struct
from pathlib import Path

import pytest
from deployed_client import (
    DeployedClient,
    Keys,
    Parser,
    ack_command,
    add_notifier,
    key_command,
    large,
    new_command,
    open_msg,
    open_nmsg,
    parse_ids,
    send_command,
    ss,
)
from nacl.public import PrivateKey
from reqs import req
from servers import ServeProcess, run_embedded

from smpref.client import SmpClient
from smpref.client.core import AuthKeyPair
from smpref.model.config import ServerConfig
from smpref.wire.keys import KeyAlgorithm
from smpref.wire.keys import PublicKey as WirePublicKey
from smpref.wire.messages import (
    IDS,
    NEW,
    SEND,
    SUB,
    ConnectionMode,
    MsgFlags,
    QueueRequest,
    SubscriptionMode,
)


async def create(client: DeployedClient, owner: Keys, **options: object) -> tuple[bytes, Keys]:
    reply = await client.request(new_command(owner, **options), key=owner.sign)  # type: ignore[arg-type]
    assert reply.tag == "IDS", reply.command
    return reply.body, owner


async def core_scenario(address: str) -> None:
    """Create, secure, send, receive, suspend, delete, with deployed answers."""
    alice, bob, carol = [await DeployedClient.connect(address) for _ in range(3)]
    assert alice.version == 18
    owner, sender = Keys(), Keys()
    body, _ = await create(alice, owner)
    ids = parse_ids(body)
    assert ids.mode == b"M" and ids.link_id is None and ids.notifier_id is None
    assert len(ids.recipient_id) == len(ids.sender_id) == 24
    rid, sid = ids.recipient_id, ids.sender_id
    # unsecured: SEND unauthenticated; the subscribed creator gets the message
    assert (await bob.request(send_command(b"hello"), sid)).command == b"OK"
    event = await alice.event()
    assert event.tag == "MSG" and event.entity_id == rid and event.corr_id == b""
    got = open_msg(event, owner.dh, ids.server_dh)
    assert (got.body, got.notification, got.quota) == (b"hello", False, False)
    assert (await alice.request(ack_command(got.msg_id), rid, owner.sign)).command == b"OK"
    # secured by the recipient: unsigned SEND is AUTH, signed SEND goes through
    assert (await alice.request(key_command(b"KEY", sender), rid, owner.sign)).command == b"OK"
    assert (await bob.request(send_command(b"x"), sid)).command == b"ERR AUTH"
    assert (await bob.request(send_command(b"two", True), sid, sender.sign)).command == b"OK"
    got = open_msg(await alice.event(), owner.dh, ids.server_dh)
    assert (got.body, got.notification) == (b"two", True)
    # another connection subscribes: SOK without a service ID, the message again, END to alice
    assert (await carol.request(b"SUB", rid, owner.sign)).command == b"SOK 0"
    again = open_msg(await carol.event(), owner.dh, ids.server_dh)
    assert again.body == b"two"
    end = await alice.event()
    assert (end.command, end.entity_id) == (b"END", rid)
    # an empty ID removes nothing: the same message again (Server.hs:1815-1820)
    redelivered = await carol.request(ack_command(b""), rid, owner.sign)
    assert open_msg(redelivered, owner.dh, ids.server_dh).msg_id == again.msg_id
    assert (await carol.request(ack_command(again.msg_id), rid, owner.sign)).command == b"OK"
    # suspend: OFF answers OK (no count), SEND is refused, what is queued can still be read
    assert (await bob.request(send_command(b"three"), sid, sender.sign)).command == b"OK"
    assert open_msg(await carol.event(), owner.dh, ids.server_dh).body == b"three"
    assert (await alice.request(b"OFF", rid, owner.sign)).command == b"OK"
    assert (await bob.request(send_command(b"four"), sid, sender.sign)).command == b"ERR AUTH"
    # delete from alice: carol, still subscribed, gets DELD
    assert (await alice.request(b"DEL", rid, owner.sign)).command == b"OK"
    deld = await carol.event()
    assert (deld.command, deld.entity_id) == (b"DELD", rid)
    assert (await alice.request(b"SUB", rid, owner.sign)).command == b"ERR AUTH"
    for client in (alice, bob, carol):
        await client.close()


@req("DEP-3", "DEP-4", "DEP-7", "TRANS-11")
def test_a_deployed_client_runs_the_core_scenario_against_smpref_serve(tmp_path: Path) -> None:
    """Against the real ``smpref serve`` process, whose trace decodes in deployed SMP."""
    trace = tmp_path / "trace.jsonl"
    with ServeProcess(tmp_path / "srv", "--trace", str(trace)) as server:
        asyncio.run(core_scenario(server.address))
        connected = [e for e in server.events() if e.get("event") == "connected"]
        assert connected and all(e["protocol"] == "deployed" and e["version"] == 18
                                 for e in connected)
    lines = [json.loads(line) for line in trace.read_text().splitlines()]
    assert lines and {line["protocol"] for line in lines} == {"deployed"}
    assert not [line for line in lines if "error" in line]  # everything decoded
    new = next(line for line in lines if line["dir"] == "in"
               and line["message"]["tag"] == "NEW")
    assert new["message"]["fields"]["queueReqData"] == {"tag": "M", "link": None}
    tags = {line["message"]["tag"] for line in lines if line["dir"] == "out"}
    assert {"IDS", "SOK", "DELD", "MSG", "END"} <= tags


@req("DEP-4", "CMD-14")
def test_get_skey_and_the_sender_securing(tmp_path: Path) -> None:
    async def scenario(address: str) -> None:
        alice, bob = await DeployedClient.connect(address), await DeployedClient.connect(address)
        owner, sender, other = Keys(), Keys(), Keys()
        ids = parse_ids((await create(alice, owner, subscribe=False))[0])
        rid, sid = ids.recipient_id, ids.sender_id
        assert (await alice.request(b"GET", rid, owner.sign)).command == b"OK"
        assert (await bob.request(key_command(b"SKEY", sender), sid, sender.sign)).command \
            == b"OK"
        assert (await bob.request(key_command(b"SKEY", sender), sid, sender.sign)).command \
            == b"OK"  # the same key again: an idempotent retry
        assert (await bob.request(key_command(b"SKEY", other), sid, other.sign)).command \
            == b"ERR AUTH"
        assert (await bob.request(send_command(b"m"), sid, sender.sign)).command == b"OK"
        reply = await alice.request(b"GET", rid, owner.sign)
        assert reply.tag == "MSG" and open_msg(reply, owner.dh, ids.server_dh).body == b"m"
        assert (await alice.request(b"SUB", rid, owner.sign)).command == \
            b"ERR CMD PROHIBITED"  # GET and SUB do not mix on one connection
        # a contact queue cannot be secured by its sender
        contact = parse_ids((await create(alice, Keys(), mode=b"C"))[0])
        assert contact.mode == b"C"
        assert (await bob.request(key_command(b"SKEY", sender), contact.sender_id,
                                  sender.sign)).command == b"ERR AUTH"
        # no queueReqData: deployed's legacy queue, without a mode in IDS
        assert parse_ids((await create(alice, Keys(), mode=None))[0]).mode is None
        await alice.close()
        await bob.close()
    run_embedded(tmp_path, scenario)


@req("DEP-6", "DEP-3")
def test_notifications_with_nkey_and_with_new(tmp_path: Path) -> None:
    async def scenario(address: str) -> None:
        alice, bob, ntf = [await DeployedClient.connect(address) for _ in range(3)]
        owner, notifier = Keys(), Keys()
        ids = parse_ids((await create(alice, owner))[0])
        nid, server_ntf = await add_notifier(alice, ids, owner, notifier)
        assert (await ntf.request(b"NSUB", nid, notifier.sign)).command == b"SOK 0"
        assert (await bob.request(send_command(b"n", True), ids.sender_id)).command == b"OK"
        msg = open_msg(await alice.event(), owner.dh, ids.server_dh)
        event = await ntf.event()
        assert event.tag == "NMSG" and event.entity_id == nid
        _, meta = open_nmsg(event, notifier, server_ntf)
        assert meta[:25] == ss(msg.msg_id) and struct.unpack(">q", meta[25:])[0] == msg.timestamp
        # NKEY again replaces the credentials: the old notifier ID is gone, and its subscriber
        # on another connection gets DELD (DEP-6)
        again = await alice.request(b"NKEY " + ss(notifier.auth_spki) + ss(notifier.dh_spki),
                                    ids.recipient_id, owner.sign)
        assert again.tag == "NID" and Parser(again.body).ss() != nid
        ended = await ntf.event()
        assert ended.command == b"DELD" and ended.entity_id == nid
        assert (await ntf.request(b"NSUB", nid, notifier.sign)).command == b"ERR AUTH"
        assert (await alice.request(b"NDEL", ids.recipient_id, owner.sign)).command == b"OK"
        # NEW with notifier credentials: the server chooses the notifier ID and says it in IDS
        with_ntf = parse_ids((await create(alice, Keys(), ntf=notifier))[0])
        assert with_ntf.notifier_id is not None and len(with_ntf.notifier_id) == 24
        assert (await ntf.request(b"NSUB", with_ntf.notifier_id, notifier.sign)).command == \
            b"SOK 0"
        for client in (alice, bob, ntf):
            await client.close()
    run_embedded(tmp_path, scenario)


@req("DEP-2", "DEP-10", "AUTH-4", "DIV-38", "DIV-41")
def test_credential_errors_and_what_is_not_served(tmp_path: Path) -> None:
    async def scenario(address: str) -> None:
        c = await DeployedClient.connect(address)
        owner, stranger = Keys(), Keys()
        ids = parse_ids((await create(c, owner))[0])
        assert (await c.request(new_command(Keys()))).command == b"ERR CMD NO_AUTH"
        assert (await c.request(b"PING", key=owner.sign)).command == b"ERR CMD HAS_AUTH"
        assert (await c.request(send_command(b"x"))).command == b"ERR CMD NO_ENTITY"
        assert (await c.request(b"SUB", ids.recipient_id)).command == b"ERR CMD NO_AUTH"
        assert (await c.request(b"SUB", ids.recipient_id, stranger.sign)).command == b"ERR AUTH"
        assert (await c.request(b"SUB", os.urandom(24), owner.sign)).command == b"ERR AUTH"
        assert (await c.request(b"SEND X", ids.sender_id)).command == b"ERR CMD SYNTAX"
        assert (await c.request(b"PING")).command == b"PONG"
        # a low-order X25519 key has no secret: refused in deployed SMP too (DIV-41)
        weak = Keys()
        low_order = b"NEW " + ss(weak.auth_spki) + ss(bytes.fromhex(
            "302a300506032b656e032100") + bytes(32)) + b"0S1M00"
        assert (await c.request(low_order, key=weak.sign)).command == b"ERR CMD SYNTAX"
        # deployed commands smpref does not serve, and seed-only tags, are unknown here
        for tag in (b"SUBS", b"NSUBS", b"RKEY", b"QUE", b"COUNT", b"LINK"):
            reply = await c.request(tag, ids.recipient_id, owner.sign)
            assert reply.command == b"ERR CMD UNKNOWN", (tag, reply.command)
        # a service signature (v16 service certificates) is refused with ERR SERVICE once
        # the queue is found; an entity ID that names no queue is still ERR AUTH (DEP-10b)
        for entity, answer in ((ids.recipient_id, b"ERR SERVICE"), (os.urandom(24), b"ERR AUTH")):
            corr = os.urandom(24)
            _, data = c.transmission(b"SUB", entity, owner.sign, corr)
            sig = data[1:65]
            served = ss(sig) + b"1" + ss(bytes(64)) + ss(corr) + ss(entity) + b"SUB"
            future = asyncio.get_running_loop().create_future()
            c.replies[corr] = future
            await c.send_raw([served])
            assert (await asyncio.wait_for(future, 5)).command == answer, entity.hex()
        await c.close()
    run_embedded(tmp_path, scenario)


@req("DEP-5", "DEP-3")
def test_links_lset_lget_lkey_ldel(tmp_path: Path) -> None:
    async def scenario(address: str) -> None:
        alice, bob = await DeployedClient.connect(address), await DeployedClient.connect(address)
        owner = Keys()
        # the fixed part starts at 0x80, so that a changed one can sort on either side of it
        fixed, user = b"\x80" + os.urandom(299), os.urandom(500)
        # a contact address with its link in NEW: the client's LinkId, sender ID from corrId
        corr = os.urandom(24)
        sender_id = hashlib.sha3_384(corr).digest()[:24]
        link_id = os.urandom(24)
        data = ss(link_id) + ss(sender_id) + large(fixed) + large(user)
        reply = await alice.request(new_command(owner, mode=b"C", link=data), key=owner.sign,
                                    corr_id=corr)
        ids = parse_ids(reply.body)
        assert (ids.link_id, ids.sender_id, ids.mode) == (link_id, sender_id, b"C")
        lnk = await bob.request(b"LGET", link_id)
        p = Parser(lnk.body)
        assert lnk.tag == "LNK" and (p.ss(), p.large(), p.large()) == (sender_id, fixed, user)
        assert (await bob.request(b"LGET", link_id, owner.sign)).command == b"ERR CMD HAS_AUTH"
        # LSET replaces the user part only
        user2 = os.urandom(40)
        lset = b"LSET " + ss(link_id) + large(fixed) + large(user2)
        assert (await alice.request(lset, ids.recipient_id, owner.sign)).command == b"OK"
        p = Parser((await bob.request(b"LGET", link_id)).body)
        assert (p.ss(), p.large(), p.large()) == (sender_id, fixed, user2)
        # a changed fixed part or another LinkId, both above and below the right one: the
        # check is for any difference, not one direction
        for edge in (b"\x00", b"\xff"):
            for command in (b"LSET " + ss(link_id) + large(edge + fixed[1:]) + large(user2),
                            b"LSET " + ss(edge * 24) + large(fixed) + large(user2)):
                assert (await alice.request(command, ids.recipient_id, owner.sign)).command \
                    == b"ERR AUTH"
        assert (await alice.request(b"LDEL", ids.recipient_id, owner.sign)).command == b"OK"
        assert (await bob.request(b"LGET", link_id)).command == b"ERR AUTH"
        assert (await alice.request(b"LDEL", ids.recipient_id, owner.sign)).command == b"OK"
        # a one-time invitation: the server chooses the LinkId; LKEY secures and reads it
        corr = os.urandom(24)
        sender_id = hashlib.sha3_384(corr).digest()[:24]
        data = ss(sender_id) + large(fixed) + large(user)
        invitation = Keys()
        ids = parse_ids((await alice.request(new_command(invitation, link=data),
                                             key=invitation.sign, corr_id=corr)).body)
        assert ids.link_id is not None and len(ids.link_id) == 24 and ids.mode == b"M"
        assert (await bob.request(b"LGET", ids.link_id)).command == b"ERR AUTH"
        sender, intruder = Keys(), Keys()
        for _ in range(2):  # LKEY again with the same key: the same answer
            lnk = await bob.request(key_command(b"LKEY", sender), ids.link_id, sender.sign)
            assert lnk.tag == "LNK" and Parser(lnk.body).ss() == sender_id
        assert (await bob.request(key_command(b"LKEY", intruder), ids.link_id,
                                  intruder.sign)).command == b"ERR AUTH"
        assert (await bob.request(send_command(b"hi"), sender_id, sender.sign)).command == b"OK"
        # the first SEND after securing removed the link data
        assert (await bob.request(key_command(b"LKEY", sender), ids.link_id,
                                  sender.sign)).command == b"ERR AUTH"
        # a sender ID that is not SHA3-384(corrId)[0:24] is refused, above or below it
        for wrong in (bytes(24), b"\xff" * 24):
            bad = ss(wrong) + large(fixed) + large(user)
            other_owner = Keys()
            assert (await alice.request(new_command(other_owner, link=bad),
                                        key=other_owner.sign)).command == b"ERR CMD PROHIBITED"
        await alice.close()
        await bob.close()
    run_embedded(tmp_path, scenario)


@req("DIV-39", "DEP-5")
def test_a_queue_created_without_a_mode_is_a_contact_queue(tmp_path: Path) -> None:
    """Link data set by LSET stays readable after KEY secures it, where deployed, whose queue
    has no mode, would answer AUTH; SKEY is refused as for a contact queue."""
    async def scenario(address: str) -> None:
        alice, bob = await DeployedClient.connect(address), await DeployedClient.connect(address)
        legacy, sender = Keys(), Keys()
        plain = parse_ids((await create(alice, legacy, mode=None))[0])
        assert plain.mode is None
        link = os.urandom(24)
        lset = b"LSET " + ss(link) + large(b"fixed") + large(b"user")
        assert (await alice.request(lset, plain.recipient_id, legacy.sign)).command == b"OK"
        assert (await bob.request(key_command(b"SKEY", sender), plain.sender_id,
                                  sender.sign)).command == b"ERR AUTH"
        assert (await alice.request(key_command(b"KEY", sender), plain.recipient_id,
                                    legacy.sign)).command == b"OK"
        assert (await bob.request(b"LGET", link)).tag == "LNK"
        await alice.close()
        await bob.close()
    run_embedded(tmp_path, scenario)


@req("DEP-7", "MSG-6")
def test_the_quota_marker_in_deployed_form(tmp_path: Path) -> None:
    async def scenario(address: str) -> None:
        c = await DeployedClient.connect(address)
        owner = Keys()
        ids = parse_ids((await create(c, owner, subscribe=False))[0])
        answers = [(await c.request(send_command(b"%d" % i), ids.sender_id)).command
                   for i in range(3)]
        assert answers == [b"OK", b"OK", b"ERR QUOTA"]
        bodies = []
        for _ in range(3):
            got = open_msg(await c.request(b"GET", ids.recipient_id, owner.sign), owner.dh,
                           ids.server_dh)
            bodies.append(b"QUOTA" if got.quota else got.body)
            assert (await c.request(ack_command(got.msg_id), ids.recipient_id,
                                    owner.sign)).command == b"OK"
        assert bodies == [b"0", b"1", b"QUOTA"]
        assert (await c.request(send_command(b"again"), ids.sender_id)).command == b"OK"
        await c.close()
    run_embedded(tmp_path, scenario, model=ServerConfig(quota=2))


@req("DEP-9", "TRANS-15")
def test_a_bad_batch_gets_err_block_and_the_connection_goes_on(tmp_path: Path) -> None:
    async def scenario(address: str) -> None:
        c = await DeployedClient.connect(address)
        chain = c.stream.framing.send_chain
        assert chain is not None
        c.stream.writer.write(chain.encrypt(b"\x00"))  # a batch of 0 transmissions
        event = await c.event()
        assert (event.corr_id, event.entity_id, event.command) == (b"", b"", b"ERR BLOCK")
        assert (await c.request(b"PING")).command == b"PONG"
        await c.close()
    run_embedded(tmp_path, scenario)


@req("DEP-1", "DIV-40")
def test_a_queue_is_served_only_in_the_protocol_that_created_it(tmp_path: Path) -> None:
    async def scenario(address: str) -> None:
        deployed = await DeployedClient.connect(address)
        owner = Keys()
        ids = parse_ids((await create(deployed, owner, subscribe=False))[0])
        # the same Ed25519 key, from a seed-design client: the deployed queue does not exist
        async with await SmpClient.connect(address) as seed:
            assert seed.extended
            key = AuthKeyPair.ed25519(lambda _n: bytes(owner.sign))
            assert (await seed.request(SUB(), ids.recipient_id, key=key)
                    ).transmission.command == b"ERR AUTH"
            sent = await seed.request(SEND(flags=MsgFlags(notification=False), body=b"x"),
                                      ids.sender_id)
            assert sent.transmission.command == b"ERR AUTH"
            # and a seed queue does not exist for the deployed client
            seed_owner = AuthKeyPair.ed25519(os.urandom)
            dh = PrivateKey.generate()
            new = NEW(rcv_auth_key=seed_owner.public,
                      rcv_dh_key=WirePublicKey(KeyAlgorithm.X25519, bytes(dh.public_key)),
                      basic_auth=None, sub_mode=SubscriptionMode.OnlyCreate,
                      queue_request=QueueRequest(conn_mode=ConnectionMode.Invitation,
                                                 queue_link=None), ntf_request=None)
            seed_ids = (await seed.request(new, key=seed_owner)).message
            assert isinstance(seed_ids, IDS)
        assert (await deployed.request(send_command(b"x"), seed_ids.snd_id)).command == \
            b"ERR AUTH"
        await deployed.close()
    run_embedded(tmp_path, scenario)


def new_v6(owner: Keys, *, subscribe: bool = True, password: bytes | None = None) -> bytes:
    """NEW below version 9: keys, an optional ``'A' ss(password)``, the subscription mode."""
    out = b"NEW " + ss(owner.auth_spki) + ss(owner.dh_spki)
    if password is not None:
        out += b"A" + ss(password)
    return out + (b"S" if subscribe else b"C")


@req("DEP-11", "DIV-37", "TRANS-11")
def test_a_client_without_alpn_is_served_version_6(tmp_path: Path) -> None:
    """The session ID in every transmission, unencrypted blocks, NEW and IDS in their v6
    layouts, OK for SUB, END for a deletion, and v6's larger message limit."""
    async def scenario(address: str) -> None:
        alice, bob, carol = [await DeployedClient.connect_v6(address) for _ in range(3)]
        assert not alice.stream.framing.encrypted
        owner, sender = Keys(), Keys()
        reply = await alice.request(new_v6(owner), key=owner.sign)
        assert reply.tag == "IDS", reply.command
        p = Parser(reply.body)
        rid, sid, dh = p.ss(), p.ss(), p.ss()
        p.done()  # the two IDs and the server's DH key, nothing more below version 9
        server_dh = dh[len(bytes.fromhex("302a300506032b656e032100")):]
        assert (await bob.request(send_command(b"v6"), sid)).command == b"OK"
        got = open_msg(await alice.event(), owner.dh, server_dh)
        assert (got.body, got.notification) == (b"v6", False)
        assert (await alice.request(ack_command(got.msg_id), rid, owner.sign)).command == b"OK"
        assert (await carol.request(b"SUB", rid, owner.sign)).command == b"OK"  # not SOK
        assert (await alice.event()).command == b"END"
        assert (await alice.request(key_command(b"KEY", sender), rid, owner.sign)).command \
            == b"OK"
        largest = b"x" * 16088  # deployed's maxMessageLength below version 8
        assert (await bob.request(send_command(largest), sid, sender.sign)).command == b"OK"
        assert open_msg(await carol.event(), owner.dh, server_dh).body == largest
        assert (await bob.request(send_command(largest + b"x"), sid, sender.sign)).command \
            == b"ERR LARGE_MSG"
        # another session's ID is ERR SESSION, answered with the transmission's corrId
        corr = os.urandom(24)
        future = asyncio.get_running_loop().create_future()
        alice.replies[corr] = future
        await alice.send_raw([ss(b"") + ss(os.urandom(32)) + ss(corr) + ss(b"") + b"PING"])
        assert (await asyncio.wait_for(future, 5)).command == b"ERR SESSION"
        # DEL: the other subscriber is told END below version 10
        assert (await alice.request(b"DEL", rid, owner.sign)).command == b"OK"
        deleted = await carol.event()
        assert (deleted.command, deleted.entity_id) == (b"END", rid)
        for client in (alice, bob, carol):
            await client.close()
    run_embedded(tmp_path, scenario)


def test_the_client_checks_its_own_parsers() -> None:
    """The test client's parsers fail on what they must refuse (a check that can fail)."""
    with pytest.raises(ValueError, match="trailing"):
        p = Parser(b"\x01ab")
        p.ss()
        p.done()
    with pytest.raises(ValueError, match="Maybe"):
        Parser(b"x").maybe()


@req("DIV-50")
def test_a_batchs_commands_run_in_the_order_sent(tmp_path: Path) -> None:
    """Two SENDs to one queue in one block: smpref stores them in the order sent, where a
    deployed server runs a batch last to first (foldrM, Server.hs:1366-1372) and would store
    the second first (DIV-50)."""
    async def scenario(address: str) -> None:
        alice, bob = [await DeployedClient.connect(address) for _ in range(2)]
        owner = Keys()
        body, _ = await create(alice, owner)
        ids = parse_ids(body)
        await bob.send_raw([bob.transmission(send_command(b"first"), ids.sender_id)[1],
                            bob.transmission(send_command(b"second"), ids.sender_id)[1]])
        got = open_msg(await alice.event(), owner.dh, ids.server_dh)
        assert got.body == b"first"
        after = await alice.request(ack_command(got.msg_id), ids.recipient_id, owner.sign)
        assert open_msg(after, owner.dh, ids.server_dh).body == b"second"
        for client in (alice, bob):
            await client.close()

    run_embedded(tmp_path, scenario)
