"""Checks for rows DEP-1 to DEP-9 of spec/deployed-fidelity.md that the rows' first citations
did not make: each kills a planted deviation of mutation/deviations/dep_1_to_9.py that they let
through. The client is tests/deployed_client.py (written from a digest of simplexmq's source)
against an embedded ``smpref serve``, except for the sweep, which needs the model's manual
clock."""

from __future__ import annotations

import hashlib
import os
import struct
from pathlib import Path

from deployed_client import (
    DeployedClient,
    Keys,
    Parser,
    ack_command,
    add_notifier,
    key_command,
    large,
    msg_plaintext,
    new_command,
    new_queue,
    open_msg,
    open_nmsg,
    parse_ids,
    send_command,
    ss,
)
from reqs import req
from servers import run_embedded
from test_deployed_fidelity import _queue

from smpref.client.connection import open_deployed_message
from smpref.client.core import DhKeyPair, OwnedQueue
from smpref.model.config import DAY, ServerConfig
from smpref.testing.loopback import Loopback
from smpref.wire.dialects import Dialect
from smpref.wire.messages import GET, MSG, SEND, ConnectionMode, MsgFlags, SubscriptionMode


def contact_link(corr: bytes, link_id: bytes) -> bytes:
    """A contact link in NEW: the client's LinkId, the sender ID SHA3-384(corrId)[0:24], the
    fixed and user parts."""
    sender_id = hashlib.sha3_384(corr).digest()[:24]
    return ss(link_id) + ss(sender_id) + large(b"fixed") + large(b"user")


@req("DEP-1", "DEP-3", "DIV-45", "QUEUE-4")
def test_a_deployed_link_id_equal_to_another_queues_id_in_another_role_is_auth(
        tmp_path: Path) -> None:
    """DEP-1b, DIV-45: deployed checks a client-chosen LinkId only against other LinkIds
    (simplexmq Server/QueueStore/STM.hs:123-133) and would accept one equal to another
    queue's sender or recipient ID; smpref's one ID space refuses it with ERR AUTH."""
    async def scenario(address: str) -> None:
        c = await DeployedClient.connect(address)
        other = await new_queue(c, Keys(), subscribe=False)
        fresh = os.urandom(24)
        for link_id, taken in ((fresh, False), (other.sender_id, True),
                               (other.recipient_id, True)):
            corr, owner = os.urandom(24), Keys()
            reply = await c.request(new_command(owner, mode=b"C",
                                                link=contact_link(corr, link_id)),
                                    key=owner.sign, corr_id=corr)
            if taken:
                assert reply.command == b"ERR AUTH"
            else:  # the same NEW with a LinkId no queue has is served
                assert reply.tag == "IDS", reply.command
                assert parse_ids(reply.body).link_id == fresh
        await c.close()
    run_embedded(tmp_path, scenario)


@req("DEP-3", "QUEUE-4")
def test_a_deployed_new_whose_link_id_is_taken_is_auth_without_a_retry(tmp_path: Path) -> None:
    """DEP-3d: a client-supplied LinkId another queue's link has is ERR AUTH, and the server
    does not retry with an ID of its own (simplexmq Server.hs:1545-1548, 1559;
    Server/QueueStore/STM.hs:123-133); the first queue keeps its link."""
    async def scenario(address: str) -> None:
        alice, bob = await DeployedClient.connect(address), await DeployedClient.connect(address)
        link_id = os.urandom(24)
        corr, owner = os.urandom(24), Keys()
        first = await alice.request(new_command(owner, mode=b"C",
                                                link=contact_link(corr, link_id)),
                                    key=owner.sign, corr_id=corr)
        assert first.tag == "IDS" and parse_ids(first.body).link_id == link_id
        corr, again = os.urandom(24), Keys()
        second = await alice.request(new_command(again, mode=b"C",
                                                 link=contact_link(corr, link_id)),
                                     key=again.sign, corr_id=corr)
        assert second.command == b"ERR AUTH"
        lnk = await bob.request(b"LGET", link_id)
        assert lnk.tag == "LNK" and Parser(lnk.body).ss() == parse_ids(first.body).sender_id
        await alice.close()
        await bob.close()
    run_embedded(tmp_path, scenario)


@req("DEP-3", "DEP-6", "QUEUE-3")
def test_the_server_chooses_a_distinct_id_for_each_role(tmp_path: Path) -> None:
    """DEP-3f: the server draws the recipient ID, the sender ID (no link), a messaging link's
    LinkId and the notifier ID each on its own (simplexmq Server.hs:1511, 1516-1519,
    1526-1530): no two of a queue's IDs are equal."""
    async def scenario(address: str) -> None:
        c = await DeployedClient.connect(address)
        plain = await new_queue(c, Keys(), ntf=Keys(), subscribe=False)
        assert plain.notifier_id is not None
        ids = [plain.recipient_id, plain.sender_id, plain.notifier_id]
        assert all(len(i) == 24 for i in ids) and len(set(ids)) == 3
        corr, owner = os.urandom(24), Keys()
        sender_id = hashlib.sha3_384(corr).digest()[:24]
        reply = await c.request(new_command(owner, link=ss(sender_id) + large(b"f")
                                            + large(b"u")), key=owner.sign, corr_id=corr)
        linked = parse_ids(reply.body)
        assert linked.link_id is not None and linked.sender_id == sender_id
        assert len({linked.recipient_id, linked.sender_id, linked.link_id}) == 3
        await c.close()
    run_embedded(tmp_path, scenario)


@req("DEP-4", "DEP-7")
def test_a_deployed_msg_body_has_exactly_one_flag(tmp_path: Path) -> None:
    """DEP-4d: deployed's message flags are one Bool, and MSG's body is ``ts flag ' ' body``
    with nothing between the flag and the space (simplexmq Protocol.hs:884-892, 794-800): no
    last-message flag, which a lenient parser would skip."""
    async def scenario(address: str) -> None:
        alice, bob = await DeployedClient.connect(address), await DeployedClient.connect(address)
        owner = Keys()
        ids = await new_queue(alice, owner)
        for notify, flag in ((True, b"T"), (False, b"F")):
            assert (await bob.request(send_command(b"hello", notify), ids.sender_id)
                    ).command == b"OK"
            msg_id, plain = msg_plaintext(await alice.event(), owner.dh, ids.server_dh)
            assert plain[8:] == flag + b" hello"
            assert (await alice.request(ack_command(msg_id), ids.recipient_id, owner.sign)
                    ).command == b"OK"
        await alice.close()
        await bob.close()
    run_embedded(tmp_path, scenario)


@req("DEP-4", "QUEUE-11", "MSG-4")
def test_deployed_key_with_another_key_and_ack_of_another_message(tmp_path: Path) -> None:
    """DEP-4e: KEY with the queue's key again is OK, with another key ERR AUTH, in either
    mode (simplexmq Server.hs:1457-1460, Server/QueueStore/STM.hs:202-212); ACK naming
    another message than the one delivered is ERR NO_MSG and leaves it in flight
    (Server.hs:1791-1820)."""
    async def scenario(address: str) -> None:
        alice, bob = await DeployedClient.connect(address), await DeployedClient.connect(address)
        for mode in (b"M", b"C"):
            owner, sender, other = Keys(), Keys(), Keys()
            ids = await new_queue(alice, owner, mode=mode)
            rid = ids.recipient_id
            assert (await alice.request(key_command(b"KEY", sender), rid, owner.sign)
                    ).command == b"OK"
            assert (await alice.request(key_command(b"KEY", sender), rid, owner.sign)
                    ).command == b"OK"
            assert (await alice.request(key_command(b"KEY", other), rid, owner.sign)
                    ).command == b"ERR AUTH"
            assert (await bob.request(send_command(b"m"), ids.sender_id, other.sign)
                    ).command == b"ERR AUTH"
            assert (await bob.request(send_command(b"m"), ids.sender_id, sender.sign)
                    ).command == b"OK"
            event = await alice.event()
            msg_id = Parser(event.body).ss()
            assert (await alice.request(ack_command(os.urandom(24)), rid, owner.sign)
                    ).command == b"ERR NO_MSG"
            assert (await alice.request(ack_command(msg_id), rid, owner.sign)).command == b"OK"
        await alice.close()
        await bob.close()
    run_embedded(tmp_path, scenario)


@req("DEP-5")
def test_deployed_lset_on_a_secured_messaging_queue_is_auth(tmp_path: Path) -> None:
    """DEP-5b: LSET on a messaging queue is ERR AUTH once it is secured, even with its own
    LinkId and fixed part (simplexmq Server.hs:1484-1486, isSecuredMsgQueue)."""
    async def scenario(address: str) -> None:
        c = await DeployedClient.connect(address)
        corr, owner, sender = os.urandom(24), Keys(), Keys()
        sender_id = hashlib.sha3_384(corr).digest()[:24]
        reply = await c.request(new_command(owner, link=ss(sender_id) + large(b"fixed")
                                            + large(b"user")), key=owner.sign, corr_id=corr)
        ids = parse_ids(reply.body)
        assert ids.link_id is not None
        lset = b"LSET " + ss(ids.link_id) + large(b"fixed") + large(b"user2")
        assert (await c.request(lset, ids.recipient_id, owner.sign)).command == b"OK"
        assert (await c.request(key_command(b"KEY", sender), ids.recipient_id, owner.sign)
                ).command == b"OK"
        assert (await c.request(lset, ids.recipient_id, owner.sign)).command == b"ERR AUTH"
        await c.close()
    run_embedded(tmp_path, scenario)


@req("DEP-6")
def test_deployed_ndel_removes_the_notifier_credentials(tmp_path: Path) -> None:
    """DEP-6c: NSUB is SOK; NDEL sends DELD to the notifier's subscriber on another connection
    and removes the credentials, so the notifier ID names no queue and NSUB with it is
    ERR AUTH (simplexmq Server.hs:1257, 1601-1613, deleteQueueNotifier)."""
    async def scenario(address: str) -> None:
        alice, ntf = await DeployedClient.connect(address), await DeployedClient.connect(address)
        owner, notifier = Keys(), Keys()
        ids = await new_queue(alice, owner, subscribe=False)
        nid, _ = await add_notifier(alice, ids, owner, notifier)
        assert (await ntf.request(b"NSUB", nid, notifier.sign)).command == b"SOK 0"
        assert (await alice.request(b"NDEL", ids.recipient_id, owner.sign)).command == b"OK"
        deleted = await ntf.event()
        assert (deleted.corr_id, deleted.entity_id, deleted.command) == (b"", nid, b"DELD")
        assert (await ntf.request(b"NSUB", nid, notifier.sign)).command == b"ERR AUTH"
        await alice.close()
        await ntf.close()
    run_embedded(tmp_path, scenario)


@req("DEP-8", "RET-5", "MSG-6")
def test_deployed_message_expiry_stops_at_the_quota_marker() -> None:
    """DEP-8b: expiry deletes messages from the head while they are older than the TTL and
    stops at the quota marker, which is no ``Message`` (simplexmq
    Server/MsgStore/Types.hs:194-205): the marker stays, so the queue still refuses writes and
    delivers ``QUOTA``."""
    lb = Loopback(seed=9, config=ServerConfig(message_ttl_seconds=DAY, quota=2))
    conn = lb.connect(Dialect.DEPLOYED, 18)
    dh = DhKeyPair.generate(lb.client_random)
    key, ids = _queue(conn, mode=ConnectionMode.Invitation,
                      sub_mode=SubscriptionMode.OnlyCreate, dh=dh)
    owner = OwnedQueue(key, dh)
    owner.created(ids)
    flags = MsgFlags(notification=False)
    answers = [conn.send(SEND(flags=flags, body=b"%d" % i), owner.sender_id)[0].error
               for i in range(3)]
    assert answers == [None, None, "QUOTA"]
    lb.clock.advance(2 * DAY)
    lb.expire()
    reply = conn.send(GET(), owner.recipient_id, owner.auth_key)[0].expect(MSG)
    assert open_deployed_message(owner.rcv_dh_secret, reply).quota
    assert conn.send(SEND(flags=flags, body=b"x"), owner.sender_id)[0].error == "QUOTA"


@req("DEP-6", "MSG-7")
def test_deployed_nmsg_metadata_is_padded_to_128_bytes(tmp_path: Path) -> None:
    """DEP-6c: NMSG = ``nonce crypto_box(rcvNtfDhSecret, nonce, pad(ss(msgId) Int64 ts,
    128))`` (simplexmq Server.hs:1959-1972): the sealed metadata is 128 bytes and the 16 of
    the authenticator, and opens to the message's ID and timestamp."""
    async def scenario(address: str) -> None:
        alice, bob, ntf = [await DeployedClient.connect(address) for _ in range(3)]
        owner, notifier = Keys(), Keys()
        ids = await new_queue(alice, owner)
        nid, server_ntf = await add_notifier(alice, ids, owner, notifier)
        assert (await ntf.request(b"NSUB", nid, notifier.sign)).command == b"SOK 0"
        assert (await bob.request(send_command(b"n", True), ids.sender_id)).command == b"OK"
        msg = open_msg(await alice.event(), owner.dh, ids.server_dh)
        event = await ntf.event()
        assert event.tag == "NMSG" and event.entity_id == nid
        sealed, meta = open_nmsg(event, notifier, server_ntf)
        assert len(sealed) == 128 + 16
        assert meta == ss(msg.msg_id) + struct.pack(">q", msg.timestamp)
        for client in (alice, bob, ntf):
            await client.close()
    run_embedded(tmp_path, scenario)
