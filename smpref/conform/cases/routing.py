"""Private message routing: the server under test as the relay (DEP-14) and as the proxy
(DEP-15).

As a relay: the runner plays the proxy: it connects as a proxy connects (ALPN ``smp/1``, a hello
key, the proxy flag, no encrypted blocks), and forwards a client's sealed transmission as
``RFWD``, as a deployed proxy does for a client that routes privately. It plays that client too,
so that it can open the relay's answer. As a proxy: the runner is a client that asks the server
for a session with a relay (``PRXY``), the server itself, and sends its commands through it
(``PFWD``). Every case runs in deployed SMP, whatever version the run forces: private routing
exists only there.
"""

from __future__ import annotations

from smpref.client.connection import SmpClient, open_deployed_message
from smpref.client.core import AuthKeyPair, DhKeyPair, Reply, deployed_new
from smpref.client.proxied import (
    ProxiedRelay,
    accept_pkey,
    open_pres,
    pres_for,
    proxied_request,
    relay_server,
    rfwd_for,
)
from smpref.conform.case_verdicts import Fail, Skip
from smpref.conform.context import Context
from smpref.conform.registry import CaseGroup
from smpref.crypto import deployed_links as links
from smpref.crypto.forwarding import (
    PROXIED_PADDED,
    open_answer,
    open_fwd_response,
    seal_forwarded,
)
from smpref.crypto.primitives import box_key, cb_nonce, ed25519_public, secretbox, x25519_public
from smpref.errors import ClientError, CryptoError
from smpref.text.addresses import parse_server_address
from smpref.wire.blocks import encode_batch, pad
from smpref.wire.keys import KeyAlgorithm, PublicKey
from smpref.wire.messages import (
    IDS,
    KEY,
    MSG,
    PING,
    SEND,
    ConnectionMode,
    DeployedLGET,
    DeployedLinkData,
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
from smpref.wire.structs import Message
from smpref.wire.transmission import Transmission
from smpref.wire.version_history import PROXIED_NEWEST

group = CaseGroup("routing")
case = group.case


class Routed:
    """The runner as a proxy connected to the server under test, and a recipient there."""

    def __init__(self, ctx: Context, proxy: SmpClient, recipient: SmpClient) -> None:
        self.ctx, self.proxy, self.recipient = ctx, proxy, recipient
        self.relay = ProxiedRelay(parse_server_address(ctx.address), proxy.session_id,
                                  min(proxy.negotiated.version, PROXIED_NEWEST),
                                  proxy.connected.server_session_public)

    @classmethod
    async def connect(cls, ctx: Context) -> Routed:
        try:
            proxy = await SmpClient.connect(ctx.address, timeout=ctx.timeout, proxy=True)
        except ClientError as exc:
            raise Fail(f"a proxy's connection (ALPN smp/1, proxy flag) failed: {exc}") from None
        ctx.clients.append(proxy)
        if proxy.negotiated.version < 8:
            await proxy.close()
            raise Fail(f"the server offers deployed SMP up to {proxy.negotiated.version}; a "
                       "relay needs 8 or later (DEP-15)")
        recipient = await SmpClient.connect(ctx.address, timeout=ctx.timeout,
                                            version=proxy.negotiated.version)
        ctx.clients.append(recipient)
        return cls(ctx, proxy, recipient)

    async def queue(self, mode: ConnectionMode) -> tuple[AuthKeyPair, DhKeyPair, IDS]:
        key, dh = self.ctx.key(), DhKeyPair.generate(self.ctx.random)
        new = deployed_new(self.recipient.negotiated.version, rcv_auth_key=key.public,
                           rcv_dh_key=dh.public, basic_auth=self.ctx.password,
                           sub_mode=SubscriptionMode.Subscribe, mode=mode)
        reply = await self.ctx.request(self.recipient, new, key=key)
        ids = self.ctx.message(reply, IDS, "NEW")
        self.ctx.made_by(self.recipient, ids.rcv_id, key)
        return key, dh, ids

    async def routed(self, message: Message, entity: bytes, key: AuthKeyPair | None = None
                     ) -> Reply:
        """``message`` as a privately routing client sends it, forwarded as RFWD; the relay's
        answer for the client."""
        request = proxied_request(self.relay, message, entity, key, self.ctx.random)
        nonce = self.ctx.random(24)
        rfwd = rfwd_for(self.proxy.connected.hello_key, nonce, request.pfwd, request.nonce)
        reply = await self.ctx.request(self.proxy, rfwd, corr_id=nonce)
        rres = self.ctx.message(reply, DeployedRRES, "RFWD")
        try:
            answer = open_pres(request, pres_for(self.proxy.connected.hello_key, nonce, rres))
        except (CryptoError, ClientError) as exc:
            raise Fail(f"RRES does not open to the client's answer: {exc}") from None
        if answer.transmission.corr_id != request.nonce:
            raise Fail("the answer inside RRES does not carry the client's corrId")
        return answer


@case("route.send", "a SEND forwarded by a proxy (RFWD) reaches the queue's subscriber",
      "DEP-14")
async def _route_send(ctx: Context) -> str | None:
    routed = await Routed.connect(ctx)
    _, dh, ids = await routed.queue(ConnectionMode.Contact)
    flags = MsgFlags(notification=False)
    ctx.expect(await routed.routed(SEND(flags=flags, body=b"privately routed"), ids.snd_id),
               "OK", step="the forwarded SEND")
    event = await ctx.event(routed.recipient, "MSG", ids.rcv_id)
    msg = ctx.message(event, MSG, "the recipient's MSG")
    body = open_deployed_message(box_key(ids.rcv_public_dh_key.raw, dh.secret), msg)
    if body.body != b"privately routed":
        raise Fail("the recipient got another body than the forwarded SEND's")
    return f"relay session at version {routed.relay.version}"


@case("route.lget", "a forwarded LGET reads a contact queue's short link data", "DEP-14",
      "DEP-5")
async def _route_lget(ctx: Context) -> str | None:
    routed = await Routed.connect(ctx)
    key, _, ids = await routed.queue(ConnectionMode.Contact)
    fixed = b"fixed data of a contact link " + ctx.random(16).hex().encode()
    link_id, sb_key = links.contact_link_keys(links.link_key(fixed))
    root = ctx.random(32)
    data = DeployedLinkData(
        enc_fixed=links.seal_part(sb_key, ctx.random(24), links.signed(root, fixed),
                                  links.FIXED_PADDED),
        enc_user=links.seal_part(sb_key, ctx.random(24), links.signed(root, b"user"),
                                 links.USER_PADDED))
    ctx.expect(await ctx.request(routed.recipient, DeployedLSET(link_id=link_id, link_data=data),
                                 ids.rcv_id, key), "OK", step="LSET")
    lnk = ctx.message(await routed.routed(DeployedLGET(), link_id), DeployedLNK,
                      "the forwarded LGET")
    if lnk.sender_id != ids.snd_id:
        raise Fail("LNK's sender ID is not the queue's")
    try:
        opened = links.open_part(sb_key, lnk.link_data.enc_fixed, ed25519_public(root))
    except CryptoError as exc:
        raise Fail(f"the link's fixed data does not open: {exc}") from None
    if opened != fixed:
        raise Fail("the forwarded LGET returned other fixed data than LSET set")
    return None


@case("route.prohibited", "a recipient's command forwarded by a proxy is CMD PROHIBITED",
      "DEP-14")
async def _route_prohibited(ctx: Context) -> str | None:
    routed = await Routed.connect(ctx)
    key, _, ids = await routed.queue(ConnectionMode.Invitation)
    answer = await routed.routed(KEY(sender_key=ctx.key().public), ids.rcv_id, key)
    ctx.expect(answer, error="CMD PROHIBITED", step="a forwarded KEY")
    return None


async def _proxy_session(ctx: Context, client: SmpClient) -> ProxiedRelay:
    """PRXY to the server under test for a session with itself as the relay, with its password;
    the session PKEY describes, checked as deployed's client checks it (the chain against the
    address's key hash, the signed session key). Skip when the server does not proxy."""
    address = parse_server_address(ctx.address)
    reply = await ctx.request(client, DeployedPRXY(relay=relay_server(address),
                                                   basic_auth=ctx.password))
    if reply.error == "PROXY BASIC_AUTH":
        # the answer of a server whose proxying is off (allowSMPProxy, Server.hs:1376-1380)
        raise Skip("the server does not proxy: PRXY with its password gets ERR PROXY "
                   "BASIC_AUTH (allowSMPProxy off)")
    pkey = ctx.message(reply, DeployedPKEY, "PRXY")
    try:
        return accept_pkey(address, pkey)
    except ClientError as exc:
        raise Fail(f"PKEY: {exc}") from None


async def _proxied(ctx: Context, client: SmpClient, relay: ProxiedRelay, message: Message,
                   entity: bytes, *, key: AuthKeyPair | None = None) -> Reply:
    """``message`` sent through the server as a proxy (PFWD); the relay's answer in PRES."""
    request = proxied_request(relay, message, entity, key, ctx.random)
    reply = await ctx.request(client, request.pfwd, relay.session_id, corr_id=request.nonce)
    pres = ctx.message(reply, DeployedPRES, "PFWD")
    try:
        answer = open_pres(request, pres)
    except ClientError as exc:
        raise Fail(f"PRES: {exc}") from None
    if reply.transmission.entity_id != relay.session_id:  # (corrId, sessId) Server.hs:1374
        raise Fail("PRES does not carry the PFWD's entity ID (DEP-15)")
    return answer


def relay_pfwd(relay: ProxiedRelay, ctx: Context) -> DeployedPFWD:
    """A PFWD whose sealed transmission is well formed, for sending with another entity."""
    return proxied_request(relay, SEND(flags=MsgFlags(notification=False), body=b"x"),
                           ctx.random(24), None, ctx.random).pfwd


@case("route.proxy", "the server proxies a SEND to a relay (PRXY, PFWD) and it is delivered",
      "DEP-15", needs="deployed")
async def _route_proxy(ctx: Context) -> str | None:
    sender = await ctx.connect()
    relay = await _proxy_session(ctx, sender)
    if not 8 <= relay.version <= 17:  # the versions a proxied session speaks (DEP-15)
        raise Fail(f"PKEY's range gives version {relay.version}, outside 8-17")
    if sender.negotiated.version < 7:
        # PFWD carries a transmission padded to a forwarded block's size, which fits a block
        # only without the session ID that transmissions below 7 carry (TRANS-4)
        return f"PKEY checked; at version {sender.negotiated.version} no PFWD fits a block"
    recipient = await ctx.connect()
    q = await ctx.create(recipient, "C", subscribe=True)
    flags = MsgFlags(notification=False)
    answer = await _proxied(ctx, sender, relay, SEND(flags=flags, body=b"through a proxy"),
                            q.sid)
    ctx.expect(answer, "OK", step="the proxied SEND's answer inside PRES")
    Context.expect_bodies(await ctx.receive(recipient, q, 1), [b"through a proxy"])
    # PRXY in one block with other commands: each is answered (a proxied command is answered
    # later, when the relay has answered, Server.hs:1433-1439; the others at once)
    items = [sender.session.transmission(message, b"", None, ctx.random(24))
             for message in (PING(), DeployedPRXY(relay=relay_server(parse_server_address(
                 ctx.address)), basic_auth=ctx.password), PING())]
    try:
        answers = await sender.send_transmissions(items, timeout=ctx.timeout)
    except ClientError as exc:
        raise Fail(f"PING, PRXY and PING in one block: {exc}") from None
    if [a.tag for a in answers] != ["PONG", "PKEY", "PONG"]:
        raise Fail(f"PING, PRXY and PING in one block answered {[a.tag for a in answers]}")
    # an unknown session: the proxy has no relay for it
    ctx.expect(await ctx.request(sender, relay_pfwd(relay, ctx), ctx.random(32)),
               error="PROXY NO_SESSION", step="PFWD naming no session")
    return f"proxied session at version {relay.version}"


@case("route.proxy-password", "PRXY without the server's password gets ERR PROXY BASIC_AUTH",
      "DEP-15", needs="deployed")
async def _route_proxy_password(ctx: Context) -> str | None:
    if ctx.password is None:
        raise Skip("the address carries no server password (basicAuth): nothing to check")
    client = await ctx.connect()
    await _proxy_session(ctx, client)  # with it: PKEY (or skip: the server does not proxy)
    relay = relay_server(parse_server_address(ctx.address))
    for what, password in (("without", None), ("with a wrong", b"x" + ctx.password)):
        ctx.expect(await ctx.request(client, DeployedPRXY(relay=relay, basic_auth=password)),
                   error="PROXY BASIC_AUTH", step=f"PRXY {what} password")
    return None


@case("route.rfwd-errors", "RFWD's failures, each answered as deployed answers it: a "
      "FwdTransmission that does not parse, a client's transmission that does not open, two "
      "transmissions, a batch that does not parse", "DEP-14")
async def _route_rfwd_errors(ctx: Context) -> str | None:
    routed = await Routed.connect(ctx)
    proxy, hello_key = routed.proxy, routed.proxy.connected.hello_key

    async def rfwd(payload: bytes | FwdTransmission) -> tuple[bytes, Reply]:
        corr = ctx.random(24)
        sealed = seal_forwarded(hello_key, corr, payload) if isinstance(
            payload, FwdTransmission) else secretbox(hello_key, cb_nonce(corr), payload)
        return corr, await ctx.request(proxy, DeployedRFWD(enc_fwd_transmission=sealed),
                                       corr_id=corr)

    # Server.hs:1976-1989: a FwdTransmission that does not parse is CMD SYNTAX; a client's
    # transmission that does not open is CRYPTO; a batch of more than one is BLOCK
    _, reply = await rfwd(b"not a FwdTransmission")
    ctx.expect(reply, error="CMD SYNTAX", step="RFWD whose payload is no FwdTransmission")
    ephemeral, nonce = ctx.random(32), ctx.random(24)
    client_key = box_key(proxy.connected.server_session_public, ephemeral)

    def forwarded(content: bytes, key: bytes = client_key) -> FwdTransmission:
        return FwdTransmission(corr_id=nonce, version=routed.relay.version,
                               key=PublicKey(KeyAlgorithm.X25519, x25519_public(ephemeral)),
                               enc_transmission=secretbox(key, cb_nonce(nonce),
                                                          pad(content, PROXIED_PADDED)))

    ping = Transmission(b"", ctx.random(24), b"", b"PING").encode()
    _, reply = await rfwd(forwarded(encode_batch([ping]), key=ctx.random(32)))
    ctx.expect(reply, error="CRYPTO", step="RFWD whose client transmission does not open")
    _, reply = await rfwd(forwarded(encode_batch([ping, ping])))
    ctx.expect(reply, error="BLOCK", step="RFWD carrying two transmissions")
    # a batch that does not parse is answered inside RRES: ERR BLOCK with an empty corrId
    corr, reply = await rfwd(forwarded(b"\x01\x00\x09ab"))
    rres = ctx.message(reply, DeployedRRES, "RFWD whose batch does not parse")
    try:
        response = open_fwd_response(hello_key, corr, rres.enc_fwd_response)
        inner = Transmission.decode(open_answer(client_key, nonce, response.enc_response),
                                    routed.relay.version)
    except (CryptoError, ClientError, ValueError) as exc:
        raise Fail(f"RRES for a batch that does not parse does not open: {exc}") from None
    if (inner.corr_id, inner.command) != (b"", b"ERR BLOCK"):
        raise Fail(f"inside RRES: {inner.command!r} with corrId {inner.corr_id!r}, expected "
                   "ERR BLOCK with an empty corrId")
    # and one transmission is served: the relay answers PING inside RRES
    corr, reply = await rfwd(forwarded(encode_batch([ping])))
    rres = ctx.message(reply, DeployedRRES, "RFWD carrying one PING")
    return None
