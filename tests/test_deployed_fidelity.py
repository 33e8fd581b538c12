"""Where a reading of simplexmq 6.5.5 found smpref's deployed answers different (issue 28):
each is now deployed's, or a divergence that says why. The source lines each test follows are
in spec/deployed-fidelity.md."""

from __future__ import annotations

import asyncio
from pathlib import Path

from reqs import req
from servers import embedded

from smpref.client.connection import SmpClient
from smpref.client.core import AuthKeyPair, DhKeyPair, deployed_new
from smpref.crypto.randomness import SeededRandom
from smpref.model.config import DAY, ServerConfig
from smpref.testing.loopback import Loopback, LoopbackConnection
from smpref.wire.dialects import Dialect
from smpref.wire.messages import (
    GET,
    IDS,
    NDEL,
    NSUB,
    OFF,
    OK,
    PING,
    SEND,
    ConnectionMode,
    DeployedLinkData,
    DeployedLSET,
    DeployedNID,
    DeployedNKEY,
    MsgFlags,
    SubscriptionMode,
)

RANDOM = SeededRandom(b"deployed fidelity")


def _queue(conn: LoopbackConnection, version: int = 18,
           mode: ConnectionMode = ConnectionMode.Contact,
           sub_mode: SubscriptionMode = SubscriptionMode.Subscribe,
           dh: DhKeyPair | None = None) -> tuple[AuthKeyPair, IDS]:
    """A queue created with deployed NEW at ``version``: its recipient key and IDS. ``dh`` is
    the recipient's DH key pair (a fresh one if None), for a caller that opens messages."""
    key = AuthKeyPair.ed25519(RANDOM)
    dh = DhKeyPair.generate(RANDOM) if dh is None else dh
    (reply,) = conn.send(deployed_new(version, rcv_auth_key=key.public, rcv_dh_key=dh.public,
                                      basic_auth=None, sub_mode=sub_mode, mode=mode), key=key)
    assert isinstance(reply.message, IDS)
    return key, reply.message


def _notifier(owner: LoopbackConnection, key: AuthKeyPair, rid: bytes
              ) -> tuple[AuthKeyPair, bytes]:
    ntf = AuthKeyPair.ed25519(RANDOM)
    (reply,) = owner.send(DeployedNKEY(ntf_auth_key=ntf.public,
                                       rcv_ntf_dh_key=DhKeyPair.generate(RANDOM).public),
                          rid, key)
    assert isinstance(reply.message, DeployedNID)
    return ntf, reply.message.notifier_id


@req("DEP-6", "DEP-12")
def test_replaced_or_deleted_notifier_credentials_send_deld_to_another_subscriber() -> None:
    """Server.hs:1581-1612: NKEY replacing and NDEL removing credentials queue CSDeleted for
    the old notifier ID; the subscriber of another client gets DELD (END below 10,
    Protocol.hs:1848-1850); the client that sent NKEY or NDEL gets nothing (S:321-324)."""
    for version, tag in ((18, "DELD"), (9, "END")):
        loop = Loopback(seed=version)
        owner = loop.connect(Dialect.DEPLOYED, 18)
        notifier = loop.connect(Dialect.DEPLOYED, version)
        key, ids = _queue(owner)
        ntf, nid = _notifier(owner, key, ids.rcv_id)
        (subscribed,) = notifier.send(NSUB(), nid, ntf)
        assert subscribed.error is None
        _, new_nid = _notifier(owner, key, ids.rcv_id)  # replaces the credentials
        (ended,) = notifier.inbox
        assert ended.tag == tag and ended.transmission.entity_id == nid
        assert ended.transmission.corr_id == b"" and new_nid != nid
        notifier.inbox.clear()
        # NDEL: the same for the new subscriber
        ntf2, nid2 = _notifier(owner, key, ids.rcv_id)
        (subscribed,) = notifier.send(NSUB(), nid2, ntf2)
        notifier.inbox.clear()
        (deleted,) = owner.send(NDEL(), ids.rcv_id, key)
        assert isinstance(deleted.message, OK)
        (ended,) = notifier.inbox
        assert ended.tag == tag and ended.transmission.entity_id == nid2
    # the subscriber on the session that sends NKEY or NDEL itself gets nothing
    loop = Loopback(seed=1)
    owner = loop.connect(Dialect.DEPLOYED, 18)
    key, ids = _queue(owner)
    ntf, nid = _notifier(owner, key, ids.rcv_id)
    owner.send(NSUB(), nid, ntf)
    owner.inbox.clear()
    ntf, nid = _notifier(owner, key, ids.rcv_id)
    assert not owner.inbox
    assert owner.send(NSUB(), nid, ntf)[0].error is None
    (deleted,) = owner.send(NDEL(), ids.rcv_id, key)
    assert isinstance(deleted.message, OK) and not owner.inbox


@req("DEP-12", "MSG-5")
def test_an_oversized_send_to_a_suspended_queue_is_large_msg() -> None:
    """Server.hs:1843-1853: sendMessage checks the body's length before the queue's status."""
    loop = Loopback(seed=2)
    owner, sender = loop.connect(Dialect.DEPLOYED, 18), loop.connect(Dialect.DEPLOYED, 18)
    key, ids = _queue(owner)
    assert owner.send(OFF(), ids.rcv_id, key)[0].error is None
    flags = MsgFlags(notification=False)
    assert sender.send(SEND(flags=flags, body=b"x" * 16049), ids.snd_id)[0].error == \
        "LARGE_MSG"
    assert sender.send(SEND(flags=flags, body=b"x"), ids.snd_id)[0].error == "AUTH"


@req("DEP-5", "DIV-43")
def test_lset_naming_another_queues_link_id_is_auth() -> None:
    """DIV-43: deployed's default store re-points the LinkId, its Postgres store answers
    ERR STORE; smpref refuses with AUTH and keeps both links."""
    loop = Loopback(seed=3)
    owner = loop.connect(Dialect.DEPLOYED, 18)
    data = DeployedLinkData(enc_fixed=b"f" * 40, enc_user=b"u" * 40)
    key1, ids1 = _queue(owner)
    key2, ids2 = _queue(owner)
    link_id = RANDOM(24)
    assert owner.send(DeployedLSET(link_id=link_id, link_data=data), ids1.rcv_id,
                      key1)[0].error is None
    assert owner.send(DeployedLSET(link_id=link_id, link_data=data), ids2.rcv_id,
                      key2)[0].error == "AUTH"


@req("RET-5", "DIV-44")
def test_messages_of_a_long_idle_queue_expire_too() -> None:
    """DIV-44: deployed's sweep skips queues whose updated_at is 2 TTLs and a day old
    (Journal.hs:421-443); smpref's expires their messages too."""
    ttl = DAY
    loop = Loopback(seed=4, config=ServerConfig(message_ttl_seconds=ttl))
    owner, sender = loop.connect(Dialect.DEPLOYED, 18), loop.connect(Dialect.DEPLOYED, 18)
    key, ids = _queue(owner)
    owner.close()  # nobody subscribed: nothing is in flight
    for body in (b"old", b"older"):
        assert sender.send(SEND(flags=MsgFlags(notification=False), body=body),
                           ids.snd_id)[0].error is None
    loop.clock.advance(3 * ttl + DAY)  # beyond deployed's "very old": 2 TTLs and a day
    reader = loop.connect(Dialect.DEPLOYED, 18)
    assert reader.send(GET(), ids.rcv_id, key)[0].tag == "MSG"  # kept until the sweep
    reader.close()
    loop.expire()
    again = loop.connect(Dialect.DEPLOYED, 18)
    assert again.send(GET(), ids.rcv_id, key)[0].tag == "OK"  # an empty queue (deployed GET)


@req("DEP-9", "TRANS-15")
def test_a_block_that_does_not_decrypt_is_err_block_on_a_deployed_connection(
        tmp_path: Path) -> None:
    """Transport.hs:732-743 and Protocol.hs:2207-2251: the receive chain advances first, the
    failure is ERR BLOCK with an empty corrId and entity, and the connection goes on."""
    async def main() -> None:
        async with embedded(tmp_path / "server") as server:
            client = await SmpClient.connect(server.address, version=18)
            seed = await SmpClient.connect(server.address)  # the seed design closes
            try:
                assert client.stream.framing.encrypted
                _, ping = client.session.transmission(PING())
                (block,) = client.stream.framing.encode([ping])  # advances the send chain
                await client.send_block(block[:-1] + bytes([block[-1] ^ 1]))
                reply = await client.next_event()
                assert reply.error == "BLOCK" and reply.transmission.corr_id == b""
                assert reply.transmission.entity_id == b""
                assert (await client.request(PING())).tag == "PONG"  # the chains agree
                _, ping = seed.session.transmission(PING())
                (block,) = seed.stream.framing.encode([ping])
                await seed.send_block(block[:-1] + bytes([block[-1] ^ 1]))
                assert "closed" in await seed.wait_closed()
            finally:
                await client.close()
                await seed.close()

    asyncio.run(main())
