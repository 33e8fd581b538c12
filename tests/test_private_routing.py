"""Private message routing (DEP-14, DEP-15): the relay's RFWD in the model,
the proxy's PRXY and PFWD in `smpref serve`, and two servers carrying a privately routed SEND
and LGET from a sender to a recipient."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace

import nacl.public as nacl
import pytest
from reqs import req
from servers import ServeProcess

from smpref.client.connection import SmpClient, open_deployed_message
from smpref.client.core import AuthKeyPair, DhKeyPair, Reply, deployed_new
from smpref.client.proxied import ProxiedRelay, open_pres, proxied_request, relay_server
from smpref.crypto import deployed_links as links
from smpref.crypto.forwarding import (
    PROXIED_PADDED,
    open_answer,
    open_fwd_response,
    seal_forwarded,
    seal_transmission,
)
from smpref.crypto.primitives import box_key, cb_nonce, ed25519_public, secretbox, x25519_public
from smpref.crypto.randomness import SeededRandom
from smpref.errors import ClientError
from smpref.model.config import ServerConfig
from smpref.serve.proxy import Proxy
from smpref.testing.loopback import Loopback, LoopbackConnection
from smpref.text.addresses import ServerAddress, parse_server_address
from smpref.wire.blocks import encode_batch, pad
from smpref.wire.dialects import Dialect
from smpref.wire.keys import KeyAlgorithm, PublicKey
from smpref.wire.messages import (
    ERR,
    IDS,
    KEY,
    MSG,
    OK,
    SEND,
    SKEY,
    ConnectionMode,
    DeployedLGET,
    DeployedLinkData,
    DeployedLKEY,
    DeployedLNK,
    DeployedLSET,
    DeployedPFWD,
    DeployedPKEY,
    DeployedPRES,
    DeployedPRXY,
    DeployedRFWD,
    DeployedRRES,
    FwdTransmission,
    MsgFlags,
    SubscriptionMode,
)
from smpref.wire.schema import parse_error, render_error
from smpref.wire.transmission import Transmission

RANDOM = SeededRandom(b"private routing")
NOWHERE = ServerAddress(bytes(32), ("localhost",))


def _queue(conn: LoopbackConnection, mode: ConnectionMode = ConnectionMode.Contact
           ) -> tuple[AuthKeyPair, DhKeyPair, IDS]:
    key, dh = AuthKeyPair.ed25519(RANDOM), DhKeyPair.generate(RANDOM)
    (reply,) = conn.send(deployed_new(18, rcv_auth_key=key.public, rcv_dh_key=dh.public,
                                      basic_auth=None, sub_mode=SubscriptionMode.Subscribe,
                                      mode=mode), key=key)
    assert isinstance(reply.message, IDS)
    return key, dh, reply.message


def _rfwd(proxy: LoopbackConnection, fwd: FwdTransmission | bytes) -> tuple[bytes, Reply]:
    """Send an RFWD on the proxy's connection; its corrId and the relay's answer."""
    corr = RANDOM(24)
    key = box_key(proxy.client.server_session_public, proxy.hello_secret or bytes(32))
    sealed = seal_forwarded(key, corr, fwd) if isinstance(fwd, FwdTransmission) else fwd
    replies = proxy.send(DeployedRFWD(enc_fwd_transmission=sealed), corr_id=corr)
    return corr, replies[0]


def _routed(proxy: LoopbackConnection, message: object, entity: bytes,
            key: AuthKeyPair | None = None, version: int = 17) -> Reply:
    """A command routed privately to the loopback server, played as client and proxy. Every
    hop is also opened by PyNaCl's crypto_box with nonces written here from DEP-14,
    not by smpref.crypto.forwarding, so that a mistake both of smpref's sides share (a nonce
    not reversed, a wrong key) fails here."""
    relay = ProxiedRelay(NOWHERE, proxy.session_id, version, proxy.client.server_session_public)
    request = proxied_request(relay, message, entity, key, RANDOM)  # type: ignore[arg-type]
    server_secret = nacl.PrivateKey(proxy.loopback.server.sessions[proxy.session_id].secret)
    assert proxy.hello_secret is not None
    proxy_secret = nacl.PrivateKey(proxy.hello_secret)
    client_box = nacl.Box(server_secret, nacl.PublicKey(request.pfwd.key.raw))
    padded = client_box.decrypt(request.pfwd.enc_transmission, request.nonce)
    assert len(padded) == 16226 and padded[2] == 1  # one transmission, padded
    corr, reply = _rfwd(proxy, FwdTransmission(
        corr_id=request.nonce, version=request.version, key=request.pfwd.key,
        enc_transmission=request.pfwd.enc_transmission))
    assert isinstance(reply.message, DeployedRRES), reply.error
    assert reply.transmission.corr_id == corr and reply.transmission.entity_id == b""
    response = open_fwd_response(box_key(proxy.client.server_session_public,
                                         proxy.hello_secret), corr,
                                 reply.message.enc_fwd_response)
    assert response.corr_id == request.nonce
    proxy_box = nacl.Box(proxy_secret, nacl.PublicKey(proxy.client.server_session_public))
    assert proxy_box.decrypt(reply.message.enc_fwd_response, corr[::-1]) == response.encode()
    inner = client_box.decrypt(response.enc_response, request.nonce[::-1])
    answer = open_pres(request, DeployedPRES(enc_response=response.enc_response))
    assert len(inner) == 16226 and answer.transmission.corr_id == request.nonce
    return answer


@req("DEP-14")
def test_a_forwarded_send_reaches_the_subscriber_and_a_forwarded_lget_reads_the_link() -> None:
    loop = Loopback(seed=1)
    recipient = loop.connect(Dialect.DEPLOYED, 18)
    proxy = loop.connect(Dialect.DEPLOYED, 18, hello_key=True)
    key, dh, ids = _queue(recipient)
    answer = _routed(proxy, SEND(flags=MsgFlags(notification=True), body=b"privately"),
                     ids.snd_id)
    assert isinstance(answer.message, OK) and answer.transmission.entity_id == ids.snd_id
    (msg,) = recipient.inbox
    assert isinstance(msg.message, MSG)
    secret = box_key(ids.rcv_public_dh_key.raw, dh.secret)
    assert open_deployed_message(secret, msg.message).body == b"privately"

    # the link of a contact queue, read through the proxy (LGET is unauthenticated)
    link_key = links.link_key(b"fixed")
    link_id, sb_key = links.contact_link_keys(link_key)
    root = RANDOM(32)
    data = DeployedLinkData(
        enc_fixed=links.seal_part(sb_key, RANDOM(24), links.signed(root, b"fixed"),
                                  links.FIXED_PADDED),
        enc_user=links.seal_part(sb_key, RANDOM(24), links.signed(root, b"user"),
                                 links.USER_PADDED))
    (set_reply,) = recipient.send(DeployedLSET(link_id=link_id, link_data=data),
                                  ids.rcv_id, key)
    assert isinstance(set_reply.message, OK)
    lnk = _routed(proxy, DeployedLGET(), link_id)
    assert isinstance(lnk.message, DeployedLNK) and lnk.message.sender_id == ids.snd_id
    assert links.open_part(sb_key, lnk.message.link_data.enc_user,
                           ed25519_public(root)) == b"user"


@req("DEP-14")
def test_what_a_proxy_may_not_forward_and_what_the_client_got_wrong_answer_inside() -> None:
    loop = Loopback(seed=2)
    recipient = loop.connect(Dialect.DEPLOYED, 18)
    proxy = loop.connect(Dialect.DEPLOYED, 18, hello_key=True)
    key, _, ids = _queue(recipient, ConnectionMode.Invitation)
    # a recipient's command is not forwarded: CMD PROHIBITED, sealed for the client
    prohibited = _routed(proxy, KEY(sender_key=AuthKeyPair.ed25519(RANDOM).public),
                         ids.rcv_id, key)
    assert prohibited.error == "CMD PROHIBITED"
    # the sender's SEND on a queue it did not secure, signed: AUTH, as unforwarded
    signer = AuthKeyPair.ed25519(RANDOM)
    assert _routed(proxy, SEND(flags=MsgFlags(notification=False), body=b"x"), ids.snd_id,
                   signer).error == "AUTH"
    # an authenticator of the sender's key over the relay session: accepted after SKEY
    sender = AuthKeyPair.x25519(RANDOM)
    assert isinstance(_routed(proxy, SKEY(sender_key=sender.public), ids.snd_id, sender)
                      .message, OK)
    assert isinstance(_routed(proxy, SEND(flags=MsgFlags(notification=False), body=b"y"),
                              ids.snd_id, sender).message, OK)
    assert any(isinstance(r.message, MSG) for r in recipient.inbox)


@req("DEP-14", "DEP-5")
def test_a_forwarded_lkey_secures_and_reads_and_prohibited_comes_before_verification() -> None:
    loop = Loopback(seed=6)
    recipient = loop.connect(Dialect.DEPLOYED, 18)
    proxy = loop.connect(Dialect.DEPLOYED, 18, hello_key=True)
    key, _, ids = _queue(recipient, ConnectionMode.Invitation)
    link_id = RANDOM(24)
    data = DeployedLinkData(enc_fixed=b"f" * 40, enc_user=b"u" * 40)
    assert recipient.send(DeployedLSET(link_id=link_id, link_data=data), ids.rcv_id,
                          key)[0].error is None
    sender = AuthKeyPair.ed25519(RANDOM)
    lnk = _routed(proxy, DeployedLKEY(sender_key=sender.public), link_id, sender)
    assert isinstance(lnk.message, DeployedLNK) and lnk.message.link_data == data
    # a recipient's command with a signature that does not verify: PROHIBITED, not AUTH,
    # for deployed refuses the command before it verifies anything (Server.hs:2010-2018)
    stranger = AuthKeyPair.ed25519(RANDOM)
    assert _routed(proxy, KEY(sender_key=sender.public), ids.rcv_id,
                   stranger).error == "CMD PROHIBITED"
    assert _routed(proxy, SEND(flags=MsgFlags(notification=False), body=b"z"),
                   ids.snd_id, stranger).error == "AUTH"  # forwardable: verified


@req("DEP-14")
def test_a_forwarded_version_below_7_is_read_with_the_implied_session() -> None:
    """The inner transmission's session ID is implied by the proxy's connection (8 or later),
    whatever version the client names (Server.hs:1992-1995)."""
    loop = Loopback(seed=7)
    recipient = loop.connect(Dialect.DEPLOYED, 18)
    proxy = loop.connect(Dialect.DEPLOYED, 18, hello_key=True)
    _, _, ids = _queue(recipient)
    relay = ProxiedRelay(NOWHERE, proxy.session_id, 7, proxy.client.server_session_public)
    request = proxied_request(relay, SEND(flags=MsgFlags(notification=False), body=b"v6"),
                              ids.snd_id, None, RANDOM)
    corr, reply = _rfwd(proxy, FwdTransmission(
        corr_id=request.nonce, version=6, key=request.pfwd.key,
        enc_transmission=request.pfwd.enc_transmission))
    assert isinstance(reply.message, DeployedRRES) and proxy.hello_secret is not None
    response = open_fwd_response(box_key(proxy.client.server_session_public,
                                         proxy.hello_secret), corr,
                                 reply.message.enc_fwd_response)
    answer = open_pres(request, DeployedPRES(enc_response=response.enc_response))
    assert isinstance(answer.message, OK)


@req("DEP-14")
def test_rfwd_failures_are_answered_in_deployeds_order() -> None:
    loop = Loopback(seed=3)
    keyless = loop.connect(Dialect.DEPLOYED, 18)  # its hello carried no key
    assert _rfwd(keyless, b"\x00" * 40)[1].error == "PROXY BROKER TRANSPORT NO_AUTH"
    proxy = loop.connect(Dialect.DEPLOYED, 18, hello_key=True)
    assert _rfwd(proxy, b"\x00" * 40)[1].error == "CRYPTO"  # does not open
    assert proxy.hello_secret is not None
    session_key = box_key(proxy.client.server_session_public, proxy.hello_secret)
    corr = RANDOM(24)
    not_fwd = secretbox(session_key, cb_nonce(corr), b"not a FwdTransmission")
    replies = proxy.send(DeployedRFWD(enc_fwd_transmission=not_fwd), corr_id=corr)
    assert replies[0].error == "CMD SYNTAX"
    ephemeral = RANDOM(32)
    client_key = box_key(proxy.client.server_session_public, ephemeral)
    nonce = RANDOM(24)

    def forwarded(sealed: bytes, key: bytes = x25519_public(ephemeral)) -> FwdTransmission:
        return FwdTransmission(corr_id=nonce, version=17,
                               key=PublicKey(KeyAlgorithm.X25519, key), enc_transmission=sealed)

    wrong = box_key(proxy.client.server_session_public, RANDOM(32))
    assert _rfwd(proxy, forwarded(seal_transmission(wrong, nonce, b"t")))[1].error == "CRYPTO"
    two = secretbox(client_key, cb_nonce(nonce), pad(encode_batch([b"a", b"b"]), PROXIED_PADDED))
    assert _rfwd(proxy, forwarded(two))[1].error == "BLOCK"
    # a batch that does not parse: ERR BLOCK inside, with an empty corrId
    bad = secretbox(client_key, cb_nonce(nonce), pad(b"\x01\x00\x09ab", PROXIED_PADDED))
    corr, reply = _rfwd(proxy, forwarded(bad))
    assert isinstance(reply.message, DeployedRRES)
    response = open_fwd_response(session_key, corr, reply.message.enc_fwd_response)
    inner = Transmission.decode(open_answer(client_key, nonce, response.enc_response), 17)
    assert inner.corr_id == b"" and inner.command == b"ERR BLOCK"


@req("DEP-15")
def test_the_model_alone_is_a_server_that_does_not_proxy() -> None:
    loop = Loopback(seed=4)
    client = loop.connect(Dialect.DEPLOYED, 18)
    (reply,) = client.send(DeployedPRXY(relay=relay_server(NOWHERE), basic_auth=None))
    assert reply.error == "PROXY BASIC_AUTH"
    pfwd = DeployedPFWD(version=17, key=PublicKey(KeyAlgorithm.X25519, bytes(range(32))),
                        enc_transmission=b"x")
    (reply,) = client.send(pfwd, b"no such session")
    assert reply.error == "PROXY NO_SESSION"
    (reply,) = client.send(pfwd)
    assert reply.error == "CMD NO_ENTITY"
    # a proxying server with a password asks PRXY for it, as NEW
    guarded = Loopback(seed=5, config=ServerConfig(basic_auth=b"pw", proxy=True))
    (reply,) = guarded.connect(Dialect.DEPLOYED, 18).send(
        DeployedPRXY(relay=relay_server(NOWHERE), basic_auth=b"other"))
    assert reply.error == "PROXY BASIC_AUTH"


@pytest.mark.heavy
@req("DEP-14", "DEP-15")
def test_two_smpref_servers_carry_a_privately_routed_send_and_lget(tmp_path: Path) -> None:
    """Two `smpref serve` processes on loopback: the sender's own server proxies to the
    queue's server; the recipient gets the message and the sender reads the link."""
    (tmp_path / "relay").mkdir()
    (tmp_path / "proxy").mkdir()
    # the relay proxies for nobody (--no-proxy), and still relays (DEP-14)
    with ServeProcess(tmp_path / "relay", "--no-proxy") as relay, \
            ServeProcess(tmp_path / "proxy") as proxy:
        asyncio.run(_route_between(relay.address, proxy.address))
        # the proxy's connection to the relay: deployed, its blocks never encrypted (DEP-15)
        assert any(e.get("event") == "connected" and e.get("encrypted") is False
                   and e.get("protocol") == "deployed" for e in relay.events())


async def _route_between(relay_address: str, proxy_address: str) -> None:
    async with await SmpClient.connect(relay_address, version=18) as recipient, \
            await SmpClient.connect(proxy_address, version=18) as sender:
        key, dh = AuthKeyPair.ed25519(RANDOM), DhKeyPair.generate(RANDOM)
        corr = RANDOM(24)
        link_key = links.link_key(b"the fixed data")
        link_id, sb_key = links.contact_link_keys(link_key)
        root = RANDOM(32)
        created = await recipient.request(deployed_new(
            18, rcv_auth_key=key.public, rcv_dh_key=dh.public, basic_auth=None,
            sub_mode=SubscriptionMode.Subscribe, mode=ConnectionMode.Contact), key=key,
            corr_id=corr)
        assert isinstance(created.message, IDS)
        ids = created.message
        data = DeployedLinkData(
            enc_fixed=links.seal_part(sb_key, RANDOM(24), links.signed(root, b"fixed"),
                                      links.FIXED_PADDED),
            enc_user=links.seal_part(sb_key, RANDOM(24), links.signed(root, b"user"),
                                     links.USER_PADDED))
        assert isinstance((await recipient.request(
            DeployedLSET(link_id=link_id, link_data=data), ids.rcv_id, key)).message, OK)

        pkey = await sender.request(DeployedPRXY(
            relay=relay_server(parse_server_address(relay_address)), basic_auth=None))
        assert isinstance(pkey.message, DeployedPKEY), pkey.error
        assert (pkey.message.min_version, pkey.message.max_version) == (8, 17)
        relay = await sender.proxy_session(relay_address)
        assert relay.session_id == pkey.message.session_id and relay.version == 17
        assert len(relay.session_id) == len(sender.session_id) == 32  # ChaCha20 only, TRANS-8
        sent = await sender.proxied_request(relay, SEND(flags=MsgFlags(notification=False),
                                                        body=b"through a proxy"), ids.snd_id)
        assert isinstance(sent.message, OK), sent.error
        event = await recipient.next_event()
        assert isinstance(event.message, MSG)
        body = open_deployed_message(box_key(ids.rcv_public_dh_key.raw, dh.secret), event.message)
        assert body.body == b"through a proxy"
        read = await sender.proxied_request(relay, DeployedLGET(), link_id)
        assert isinstance(read.message, DeployedLNK) and read.message.sender_id == ids.snd_id
        assert links.open_part(sb_key, read.message.link_data.enc_fixed,
                               ed25519_public(root)) == b"fixed"

        # a server that does not proxy says so as deployed's does with proxying off
        with pytest.raises(ClientError, match="PROXY BASIC_AUTH"):
            await recipient.proxy_session(proxy_address)
        # the proxy's own answers
        pfwd = DeployedPFWD(version=17, key=PublicKey(KeyAlgorithm.X25519, bytes(range(32))),
                            enc_transmission=b"x")
        assert (await sender.request(pfwd, b"not a session")).error == "PROXY NO_SESSION"
        with pytest.raises(ClientError, match="PROXY BROKER NETWORK"):
            unreachable = parse_server_address(relay_address)
            await sender.proxy_session(ServerAddress(unreachable.key_hash, ("127.0.0.1",), 1))
        wrong = parse_server_address(relay_address)
        with pytest.raises(ClientError, match="HANDSHAKE IDENTITY"):
            await sender.proxy_session(ServerAddress(bytes(32), wrong.hosts, wrong.port))


class _ScriptedRelay:
    """What the proxy needs of its connection to a relay, answering as told."""

    def __init__(self, answer: Reply | Exception, closed: str | None = None) -> None:
        self.answer, self.closed_reason = answer, closed
        self.session_id = b"s" * 32
        self.connected = SimpleNamespace(hello_key=bytes(32))
        self.sent: list[object] = []

    async def request(self, message: object, entity_id: bytes = b"", key: object = None, *,
                      corr_id: bytes | None = None, timeout: float = 30.0) -> Reply:
        self.sent.append(message)
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


@req("DEP-15")
@pytest.mark.parametrize(("answer", "closed", "expected"), [
    (Reply(Transmission(b"", b"c", b"", b"ERR AUTH"), ERR(error=parse_error("AUTH"))), None,
     "PROXY PROTOCOL AUTH"),
    (Reply(Transmission(b"", b"c", b"", b"RRES x"), DeployedRRES(enc_fwd_response=b"x" * 40)),
     None, "CRYPTO"),
    (Reply(Transmission(b"", b"c", b"", b"OK"), OK()), None, "PROXY BROKER UNEXPECTED \x02OK"),
    (ClientError("no answer within 30 s"), None, "PROXY BROKER TIMEOUT"),
    (ClientError("connection closed"), "closed", "PROXY NO_SESSION"),
])
def test_the_proxy_maps_what_the_relay_answers_as_deployed(
        answer: Reply | Exception, closed: str | None, expected: str) -> None:
    """Server.hs:1415-1432 and Client.hs smpProxyError (791-801): the relay's ERR is wrapped,
    an RRES that does not open is CRYPTO, another answer UNEXPECTED; a relay connection that
    has ended is no session."""
    proxy = Proxy(RANDOM)
    relay = _ScriptedRelay(answer, closed)
    proxy._by_session[relay.session_id] = relay  # type: ignore[assignment]
    pfwd = DeployedPFWD(version=17, key=PublicKey(KeyAlgorithm.X25519, bytes(range(32))),
                        enc_transmission=b"sealed")
    got = asyncio.run(proxy.call(pfwd, relay.session_id, RANDOM(24)))
    assert isinstance(got, ERR) and render_error(got.error) == expected
    assert bool(relay.sent) is (closed is None)  # nothing goes to a relay that has gone
