"""Transport and versions as a deployed server serves them: hellos, ALPN, version bands,
session IDs, authenticators and the errors of the transport (DEP-9..DEP-13, TRANS-6, TRANS-8,
TRANS-14, AUTH-4).

Every expectation here is written from the spec and simplexmq 6.5.5's source (cited as
``Transport.hs:760``); the hand-made connections, transmissions and authenticators are built
from the wire layouts alone, so that a server is judged by what deployed SMP does, not by
what smpref's own server does.

TRANS-16 (limits) has no case here: a deployed server has no per-connection block rate
(nothing to observe), and its other limits take configuration (the connection limit) or
minutes to hours (the 60 s TLS and 120 s SMP handshake timeouts, 6 h of inactivity).
"""

from __future__ import annotations

import asyncio
import hashlib
import ssl
from collections.abc import Callable

from nacl.public import Box, PrivateKey
from nacl.public import PublicKey as BoxPublicKey

from smpref.client.connection import SmpClient, open_deployed_message
from smpref.client.core import AuthKeyPair, DhKeyPair, OwnedQueue, Reply, deployed_new
from smpref.conform.case_verdicts import Fail, Skip
from smpref.conform.context import Context, Queue, wait_closed
from smpref.conform.registry import CaseGroup
from smpref.errors import (
    BlockError,
    ClientError,
    ConnectionClosedError,
    CryptoError,
    HandshakeFailedError,
    WireError,
)
from smpref.text.addresses import parse_server_address
from smpref.transport.handshake import Connected
from smpref.transport.streams import BlockStream, connect
from smpref.transport.tls import client_context, session_id
from smpref.transport.versions import Negotiated
from smpref.wire.blocks import encode_batch, pad
from smpref.wire.hellos import ClientHello, ServerHello
from smpref.wire.messages import (
    ACK,
    DEL,
    IDS,
    KEY,
    MSG,
    PING,
    SEND,
    SUB,
    ConnectionMode,
    MsgFlags,
    SubscriptionMode,
)
from smpref.wire.structs import Command
from smpref.wire.transmission import authorized_bytes

group = CaseGroup("transport")
case = group.case

#: deployed's range under ALPN smp/1 (Transport.hs:226-228, 252-253; Server/Main.hs:577)
DEPLOYED_RANGE = (6, 18)
#: deployed's version gates (Transport.hs:186-220)
SND_AUTH_KEY = 9  # NEW's sender-secures flag
SHORT_LINKS = 15  # NEW's queueReqData, IDS's mode and link ID
SERVICE_CERTS = 16  # SOK, the service signature, IDS's service ID
#: the tokens deployed lists (Transport.hs:261-262, Server/Main.hs:581, Transport/HTTP2.hs)
SMP_ALPN, HTTP_ALPNS, SEED_ALPN = "smp/1", ("h2", "http/1.1"), "smpref-seed/1"
#: an ALPN token no SMP server has
UNKNOWN_ALPN = "x-smp-conformance/0"


# --- helpers ----------------------------------------------------------------------------------


def _box_authenticator(queue_secret: bytes, server_public: bytes, nonce: bytes,
                       authorized: bytes) -> bytes:
    """TRANS-6's authenticator, made with PyNaCl apart from smpref's own crypto:
    ``crypto_box(X25519(queue key, server session key), nonce = corrId, sha512(authorized
    bytes))``, 16 bytes of tag and 64 of sealed hash (Server.hs:1321-1323, Crypto.hs:1366-1371)."""
    box = Box(PrivateKey(queue_secret), BoxPublicKey(server_public))
    return bytes(box.encrypt(hashlib.sha512(authorized).digest(), nonce).ciphertext)


def _signature(key: AuthKeyPair, session: bytes, corr: bytes, entity: bytes, body: bytes
               ) -> bytes:
    """An Ed25519 signature over TRANS-6's authorized bytes of the given parts."""
    return key.authorize(authorized_bytes(session, corr, entity, body), corr, b"")


def _expect_error(reply: Reply, error: str, entity: bytes, step: str) -> None:
    """ERR ``error`` whose entity ID is ``entity``."""
    Context.expect(reply, error=error, step=step)
    if reply.transmission.entity_id != entity:
        raise Fail(f"{step}: ERR {error} came with entity ID "
                   f"{reply.transmission.entity_id.hex() or '(empty)'}, expected "
                   f"{entity.hex() or '(empty)'}")


async def _create(ctx: Context, c: SmpClient, key: AuthKeyPair | None = None) -> Queue:
    """A messaging queue (modeless below 9, where NEW says no mode: DEP-12), created on ``c``
    in the layout of its version, with ``key`` as the recipient key."""
    q = Queue(OwnedQueue(key or ctx.key(), DhKeyPair.generate(ctx.random)), "M")
    version = c.session.version
    message: Command = ctx.new_command(q, subscribe=False) if version is None else \
        deployed_new(version, rcv_auth_key=q.key.public, rcv_dh_key=q.owner.dh_key.public,
                     basic_auth=ctx.password, sub_mode=SubscriptionMode.OnlyCreate,
                     mode=ConnectionMode.Invitation if version >= SND_AUTH_KEY else None)
    q.ids = ctx.message(await ctx.request(c, message, key=q.key), IDS, "NEW")
    q.owner.created(q.ids)
    return q


async def _delete(ctx: Context, c: SmpClient, *queues: Queue) -> None:
    for q in queues:
        ctx.expect(await ctx.request(c, DEL(), q.rid, q.key), "OK", step="DEL")


async def _tls(ctx: Context, alpn: list[str]) -> tuple[BlockStream, ssl.SSLObject]:
    """A TLS connection to the server offering ``alpn`` ([]: no ALPN extension) and no SNI,
    as deployed clients connect (Client.hs:498-500)."""
    server = parse_server_address(ctx.address)
    async with asyncio.timeout(ctx.timeout):
        reader, writer = await asyncio.open_connection(
            server.hosts[0], server.effective_port, ssl=client_context(alpn),
            server_hostname="")
    return BlockStream(reader, writer), writer.get_extra_info("ssl_object")


async def _lifecycle(ctx: Context, c: SmpClient, version: int) -> None:
    """NEW, SUB, SEND, MSG, ACK and DEL on a deployed connection at ``version``, each answer in
    that version's layout and form (DEP-12; the IDS layouts of Protocol.hs:1826-1833)."""
    at = f"at version {version}"
    q = await _create(ctx, c)
    assert q.ids is not None
    flag = True if SND_AUTH_KEY <= version < SHORT_LINKS else None
    mode = ConnectionMode.Invitation if version >= SHORT_LINKS else None
    got = (q.ids.sender_can_secure, q.ids.queue_mode, q.ids.link_id, q.ids.service_id,
           q.ids.server_ntf_creds)
    if got != (flag, mode, None, None, None):
        raise Fail(f"IDS {at}: (sndSecure, mode, linkId, serviceId, ntfCreds) = {got}, "
                   f"expected {(flag, mode, None, None, None)}")
    ctx.expect(await ctx.request(c, SUB(), q.rid, q.key),
               "SOK" if version >= SERVICE_CERTS else "OK", step=f"SUB {at}")
    body = f"at {version}".encode()
    ctx.expect(await ctx.request(c, SEND(flags=MsgFlags(notification=False), body=body),
                                 q.sid), "OK", step=f"SEND {at}")
    msg = ctx.message(await ctx.event(c, "MSG", q.rid), MSG, f"MSG {at}")
    try:
        opened = open_deployed_message(q.owner.rcv_dh_secret, msg)
    except CryptoError as exc:
        raise Fail(f"MSG {at} does not open in deployed's layout (DEP-7): {exc}") from None
    if opened.body != body:
        raise Fail(f"MSG {at} carries {opened.body!r}, expected {body!r}")
    ctx.expect(await ctx.request(c, ACK(msg_id=msg.msg_id), q.rid, q.key), "OK",
               step=f"ACK {at}")
    await _delete(ctx, c, q)


# --- cases ------------------------------------------------------------------------------------


@case("transport.no-alpn", "a client without ALPN is offered version 6 alone, with a hello "
      "of no chain and no key, and served in version 6's layouts", "DEP-11", "TRANS-11",
      "TRANS-8", needs="deployed")
async def _no_alpn(ctx: Context) -> str | None:
    server = parse_server_address(ctx.address)
    # the range: 6-6 without ALPN (Transport.hs:249-250, 760); below 7 the hello carries no
    # certificate chain and no session key (Transport.hs:631-635, 656-659)
    stream, tls = await _tls(ctx, [])
    if tls.selected_alpn_protocol() is not None:
        await stream.close()
        raise Fail(f"TLS selected ALPN {tls.selected_alpn_protocol()} for a client offering none")
    session = session_id(tls)
    try:
        async with asyncio.timeout(ctx.timeout):
            hello = ServerHello.decode(await stream.read_handshake())
    except (WireError, ConnectionClosedError, TimeoutError) as exc:
        await stream.close()
        raise Fail(f"the server hello without ALPN is not range || sessionId alone: {exc}"
                   ) from None
    if (hello.min_version, hello.max_version) != (6, 6) or hello.session_id != session:
        await stream.close()
        raise Fail(f"without ALPN the hello offers {hello.min_version}-{hello.max_version} "
                   f"(expected 6-6) with session ID {hello.session_id.hex()} "
                   f"(tls-unique: {session.hex()})")
    await stream.write_handshake(ClientHello(6, server.key_hash).encode())
    c = SmpClient(server, stream, Connected(Negotiated(6), (6, 6), b""), session, ctx.random)
    ctx.clients.append(c)
    # version 6's layouts: unencrypted blocks, the session ID in every transmission, NEW
    # without a mode and IDS with two IDs and a key, SUB answered OK (DEP-11)
    ctx.expect(await ctx.request(c, PING()), "PONG", step="PING at version 6")
    await _lifecycle(ctx, c, 6)
    # a transmission made for another session (named and signed for it) is ERR SESSION with
    # its corrId and no entity (Protocol.hs:2243, 2250), and is not executed
    other = await ctx.connect()
    q = await _create(ctx, c)
    corr, body = ctx.random(24), Context.encoded(c, KEY(sender_key=ctx.key().public))
    made = ctx.raw_transmission(c, _signature(q.key, other.session_id, corr, q.rid, body),
                                corr, q.rid, body, named=other.session_id)
    _expect_error(await ctx.raw_request(c, made, corr, "KEY made for another session"), "SESSION",
                  b"", "KEY made for another session")
    ctx.expect(await ctx.request(c, KEY(sender_key=ctx.key().public), q.rid, q.key), "OK",
               step="KEY with another key after the refused one (the queue must be unsecured)")
    await _delete(ctx, c, q)
    # another version than 6 is refused: the connection ends, nothing sent (Transport.hs:768)
    await _refused_hello(ctx, ClientHello(7, server.key_hash),
                         "a client hello picking 7 without ALPN (offered 6 alone)")
    return None


async def _refused_hello(ctx: Context, hello: ClientHello, what: str) -> None:
    """After the server's hello, ``hello`` ends the connection with nothing sent (TRANS-15)."""
    stream, _ = await _tls(ctx, [])
    try:
        async with asyncio.timeout(ctx.timeout):
            await stream.read_handshake()
        await stream.write_handshake(hello.encode())
        try:
            async with asyncio.timeout(ctx.timeout):
                await stream.read_block()
        except ConnectionClosedError:
            return
        except TimeoutError:
            raise Fail(f"{what} neither got an answer nor ended the connection within "
                       f"{ctx.timeout} s") from None
        raise Fail(f"{what} was answered")
    except (ConnectionClosedError, TimeoutError):
        raise Fail("the server sent no hello to a client without ALPN") from None
    finally:
        await stream.close()


async def _served(ctx: Context, offer: list[str], selected: str, low: int, high: int) -> None:
    """Offering ``offer`` selects ``selected``, whose hello advertises ``low``-``high``, and
    the connection is served: the handshake completes and PING gets PONG."""
    server = parse_server_address(ctx.address)
    stream, tls = await _tls(ctx, offer)
    chosen = tls.selected_alpn_protocol()
    if chosen != selected:
        await stream.close()
        raise Fail(f"offering {', '.join(offer)}: TLS selected {chosen}, expected {selected} "
                   "(the client's first token the server has)")
    session = session_id(tls)
    try:
        async with asyncio.timeout(ctx.timeout):
            connected = await connect(stream, server.key_hash, session,
                                      tls.getpeercert(binary_form=True), ctx.random,
                                      alpn=chosen)
    except (HandshakeFailedError, ConnectionClosedError, BlockError, TimeoutError,
            OSError) as exc:
        await stream.close()
        raise Fail(f"offering {', '.join(offer)}: the handshake failed: {exc}") from None
    c = SmpClient(server, stream, connected, session, ctx.random)
    ctx.clients.append(c)
    if connected.server_range != (low, high):
        raise Fail(f"under ALPN {chosen} the server advertises "
                   f"{connected.server_range[0]}-{connected.server_range[1]}, expected "
                   f"{low}-{high}")
    ctx.expect(await ctx.request(c, PING()), "PONG", step=f"PING under ALPN {chosen}")


@case("transport.alpn", "ALPN: the client's first token the server has is selected; smp/1, "
      "h2 and http/1.1 get SMP 6-18", "TRANS-14", "TRANS-11", "DEP-12")
async def _alpn(ctx: Context) -> str | None:
    low, high = DEPLOYED_RANGE
    # deployed lists smp/1, h2, http/1.1 and picks the client's first it has
    # (Transport/Server.hs:269, Server/Main.hs:581); any of them gets 6-18 (Transport.hs:760)
    await _served(ctx, [UNKNOWN_ALPN, SMP_ALPN], SMP_ALPN, low, high)
    await _served(ctx, [HTTP_ALPNS[0], SMP_ALPN], HTTP_ALPNS[0], low, high)
    await _served(ctx, [HTTP_ALPNS[1]], HTTP_ALPNS[1], low, high)
    await _served(ctx, [SMP_ALPN, SEED_ALPN], SMP_ALPN, low, high)
    if ctx.extended:  # this server has the seed token (TRANS-11): first, it gets the seed
        await _served(ctx, [SEED_ALPN, SMP_ALPN], SEED_ALPN, 1000, 1000)
    return None


@case("transport.alpn-refused", "a client whose ALPN names no token the server has is refused "
      "with the TLS alert no_application_protocol", "TRANS-14")
async def _alpn_refused(ctx: Context) -> str | None:
    # deployed's onALPNClientSuggest answers "" (Transport/Server.hs:269), which the tls
    # library refuses with the alert (tls 1.9.0 Handshake/Server.hs:1089-1105, TRANS-14)
    try:
        stream, _ = await _tls(ctx, [UNKNOWN_ALPN])
    except ssl.SSLError as exc:
        # OpenSSL names the alert "tlsv1 alert no application protocol"
        if "NO APPLICATION PROTOCOL" not in str(exc).upper().replace("_", " "):
            raise Fail(f"offering only {UNKNOWN_ALPN}: TLS failed with {exc}, not with the "
                       "alert no_application_protocol") from None
        return None
    except OSError as exc:
        raise Fail(f"offering only {UNKNOWN_ALPN}: the connection ended without the alert "
                   f"no_application_protocol ({type(exc).__name__}: {exc})") from None
    await stream.close()
    raise Fail(f"a client offering only {UNKNOWN_ALPN} completed TLS (expected the alert "
               "no_application_protocol)")


@case("transport.every-version", "under ALPN smp/1 the server advertises 6-18 and serves "
      "each version, 13 as 12, in its own layouts", "DEP-12", "DEP-13", "TRANS-9", "TRANS-10",
      needs="deployed")
async def _every_version(ctx: Context) -> str | None:
    # each expectation of _lifecycle is a "this version or later" gate (Transport.hs:186-220),
    # so version 13, which deployed does not define, is held to exactly 12's answers (DEP-13)
    for version in range(DEPLOYED_RANGE[0], DEPLOYED_RANGE[1] + 1):
        try:
            c = await SmpClient.connect(ctx.address, timeout=ctx.timeout, version=version)
        except ClientError as exc:
            raise Fail(f"a client picking version {version} under ALPN smp/1: {exc}") from None
        ctx.clients.append(c)
        if c.connected.server_range != DEPLOYED_RANGE:
            raise Fail(f"under ALPN smp/1 the server advertises {c.connected.server_range}, "
                       f"expected {DEPLOYED_RANGE}")
        # the blocks of 11 and later are encrypted (the client's hello carried a key): a
        # server that did not encrypt them, or did below 11, fails the answers below
        try:
            ctx.expect(await ctx.request(c, PING()), "PONG")
            await _lifecycle(ctx, c, version)
        except Fail as exc:
            raise Fail(f"at version {version}: {exc}") from None
        await c.close()
    return None


def _damaged(c: SmpClient, content: bytes) -> bytes:
    """A block made on the client's chain and damaged on the way (DEP-9): from 11 a byte of
    its ciphertext flipped (it does not decrypt), below 11 a padding length beyond the
    block (it does not unpad: Crypto.hs:1090-1096)."""
    chain = c.stream.framing.send_chain
    block = bytearray(chain.encrypt(content) if chain is not None else pad(content))
    if chain is not None:
        block[100] ^= 1
    else:
        block[0:2] = b"\xff\xff"
    return bytes(block)


@case("transport.bad-block", "a block that does not decrypt, or whose batch does not parse: "
      "one ERR BLOCK with an empty corrId and entity, and the connection goes on (deployed); "
      "closed with nothing sent (seed)", "DEP-9", "TRANS-15", "TRANS-3", "TRANS-10")
async def _bad_block(ctx: Context) -> str | None:
    def ping(c: SmpClient) -> bytes:
        return c.session.transmission(PING())[1]

    bad: list[tuple[str, Callable[[SmpClient], bytes]]] = [
        ("a damaged block", lambda c: _damaged(c, encode_batch([ping(c)]))),
        ("a batch of 0 transmissions", lambda c: ctx.block(c, b"\x00")),
        ("a batch with bytes after its transmissions",
         lambda c: ctx.block(c, encode_batch([ping(c)]) + b"xx")),
    ]
    if ctx.extended:  # TRANS-15: a bad block closes the connection, nothing is sent
        for what, make in bad:
            c = await ctx.connect()
            await c.send_block(make(c))
            closed = await wait_closed(c, ctx.timeout)
            if not c.events.empty():
                raise Fail(f"after {what} the server sent {c.events.get_nowait().tag}")
            if not closed:
                raise Fail(f"the connection stayed open after {what} (TRANS-15)")
        return None
    # deployed: the block's one error, ERR BLOCK with no corrId and entity, and the receiving
    # chain advanced for the damaged block too (Transport.hs:732-743, Protocol.hs:2211-2217,
    # 2251; Server.hs:1134-1153), so one connection takes all three and goes on
    c = await ctx.connect()
    for what, make in bad:
        await c.send_block(make(c))
        try:
            reply = await c.next_event(ctx.timeout)
        except ClientError:
            raise Fail(f"no ERR BLOCK after {what}: {c.closed_reason or 'nothing came'}"
                       ) from None
        _expect_error(reply, "BLOCK", b"", what)
        if reply.transmission.corr_id:
            raise Fail(f"the ERR BLOCK for {what} carries a corrId")
        await ctx.no_event(c, 0.5)  # one error, and the PING inside was not executed
        try:
            ctx.expect(await ctx.request(c, PING()), "PONG")
        except Fail as exc:
            raise Fail(f"the connection after {what} (DEP-9): {exc}") from None
    return None


@case("transport.authorized-bytes", "a signature over another session ID, corrId, entity ID "
      "or command is ERR AUTH and does nothing; over the transmission's own, it is accepted",
      "TRANS-6", "TRANS-8", "AUTH-1")
async def _authorized_bytes(ctx: Context) -> str | None:
    c, other = await ctx.connect(), await ctx.connect()
    q = await _create(ctx, c)
    twin = await _create(ctx, c, q.key)  # another queue with the same recipient key
    sender = ctx.key()
    body = Context.encoded(c, KEY(sender_key=sender.public))
    other_body = Context.encoded(c, KEY(sender_key=ctx.key().public))
    # what each signature covers instead of the transmission's own part (TRANS-6: ss(sessionId)
    # ss(corrId) ss(entityId) command, Protocol.hs:1636-1638); the session ID is tls-unique,
    # so another session's is that of another connection (TRANS-8)
    variants = {"another session's ID": "session", "another corrId": "corr",
                "another queue's ID (same recipient key)": "entity", "another command": "body"}
    for what, part in variants.items():
        corr = ctx.random(24)
        signed = _signature(q.key, other.session_id if part == "session" else c.session_id,
                            ctx.random(24) if part == "corr" else corr,
                            twin.rid if part == "entity" else q.rid,
                            other_body if part == "body" else body)
        reply = await ctx.raw_request(c, ctx.raw_transmission(c, signed, corr, q.rid, body),
                                      corr, f"KEY signed over {what}")
        _expect_error(reply, "AUTH", q.rid, f"KEY signed over {what}")
    # none of them secured the queue: it still takes a SEND without a signature (MSG-1)
    unsigned = SEND(flags=MsgFlags(notification=False), body=b"unsigned")
    ctx.expect(await ctx.request(c, unsigned, q.sid), "OK",
               step="unsigned SEND after the refused KEYs (the queue must be unsecured)")
    corr = ctx.random(24)
    signed = _signature(q.key, c.session_id, corr, q.rid, body)
    ctx.expect(await ctx.raw_request(c, ctx.raw_transmission(c, signed, corr, q.rid, body),
                                     corr, "KEY signed over its own bytes"), "OK",
               step="KEY signed over its own bytes")
    ctx.expect(await ctx.request(c, unsigned, q.sid), error="AUTH",
               step="unsigned SEND to the secured queue")
    await _delete(ctx, c, q, twin)
    return None


@case("transport.authenticator", "X25519 keys: an authenticator made as TRANS-6 says is "
      "accepted for NEW, KEY, SEND and GET; one with another key, another session's server "
      "key or another nonce is ERR AUTH", "TRANS-5", "TRANS-6", "AUTH-1", "DEP-12")
async def _authenticator(ctx: Context) -> str | None:
    c, other = await ctx.connect(), await ctx.connect()
    server_key, others_key = c.session.server_session_public, other.session.server_session_public
    recipient = AuthKeyPair.x25519(ctx.random)
    q = Queue(OwnedQueue(recipient, DhKeyPair.generate(ctx.random)), "M")
    version = c.session.version
    new = ctx.new_command(q, subscribe=False) if version is None else deployed_new(
        version, rcv_auth_key=recipient.public, rcv_dh_key=q.owner.dh_key.public,
        basic_auth=ctx.password, sub_mode=SubscriptionMode.OnlyCreate,
        mode=ConnectionMode.Invitation if version >= SND_AUTH_KEY else None)

    async def authorized(body: bytes, entity: bytes, secret: bytes, step: str, *,
                         key: bytes = server_key, nonce: bytes | None = None) -> Reply:
        corr = ctx.random(24)
        box = _box_authenticator(secret, key, corr if nonce is None else nonce,
                                 authorized_bytes(c.session_id, corr, entity, body))
        return await ctx.raw_request(c, ctx.raw_transmission(c, box, corr, entity, body),
                                     corr, step)

    # an authenticator is verified at every version of smp/1, whose hello carried the
    # session key (DEP-12; Server.hs:1309-1323)
    new_body = Context.encoded(c, new)
    _expect_error(await authorized(new_body, b"", ctx.random(32), "NEW with another key's "
                                   "authenticator"), "AUTH", b"", "NEW with another key's "
                  "authenticator")
    reply = await authorized(new_body, b"", recipient.secret, "NEW with its key's authenticator")
    q.ids = ctx.message(reply, IDS, "NEW with its key's authenticator")
    q.owner.created(q.ids)
    sender = AuthKeyPair.x25519(ctx.random)
    ctx.expect(await authorized(Context.encoded(c, KEY(sender_key=sender.public)), q.rid,
                                recipient.secret, "KEY"), "OK", step="KEY with an authenticator")
    send = Context.encoded(c, SEND(flags=MsgFlags(notification=False), body=b"refused"))
    for what, secret, key, nonce in (
            ("another key", ctx.random(32), server_key, None),
            ("another session's server key", sender.secret, others_key, None),
            ("another nonce than the corrId", sender.secret, server_key, ctx.random(24))):
        step = f"SEND with an authenticator made with {what}"
        _expect_error(await authorized(send, q.sid, secret, step, key=key, nonce=nonce),
                      "AUTH", q.sid, step)
    send = Context.encoded(c, SEND(flags=MsgFlags(notification=False), body=b"accepted"))
    ctx.expect(await authorized(send, q.sid, sender.secret, "SEND"), "OK",
               step="SEND with the sender key's authenticator")
    # GET, authorized by the X25519 recipient key, finds only the accepted SEND
    ctx.expect_bodies(await ctx.receive(c, q, 1, via_get=True), [b"accepted"],
                      "GET with an authenticator")
    await _delete(ctx, c, q)
    return None


def _service_signed(ctx: Context, c: SmpClient, key: AuthKeyPair, entity: bytes, body: bytes
                    ) -> tuple[bytes, bytes]:
    """(corrId, a transmission signed with ``key`` and carrying a service signature)."""
    corr = ctx.random(24)
    signed = _signature(key, c.session_id, corr, entity, body)
    return corr, Context.raw_transmission(c, signed, corr, entity, body, service=ctx.random(64))


def _require_service_layout(c: SmpClient) -> None:
    version = c.session.version
    if version is not None and version < SERVICE_CERTS:
        raise Skip(f"a transmission has no service signature below version {SERVICE_CERTS} "
                   f"(Protocol.hs:1632); this connection is at {version}")


@case("transport.service-signature", "a service signature is ERR SERVICE before the key is "
      "verified, for SUB too, with the entity ID, doing nothing; deployed parses the command "
      "and applies its credential rule first", "AUTH-4", "DEP-10", "DEP-2", "AUTH-2")
async def _service_signature(ctx: Context) -> str | None:
    # queue.err.service and queue.err.service-order check NEW, KEY with the right key, an
    # unknown queue, PING and an unknown tag; this case checks the rest of deployed's order
    c = await ctx.connect()
    _require_service_layout(c)
    q = await _create(ctx, c)
    version = c.session.version
    new = ctx.new_command(ctx.draft(), subscribe=False) if version is None else deployed_new(
        version, rcv_auth_key=q.key.public, rcv_dh_key=q.owner.dh_key.public,
        basic_auth=ctx.password, sub_mode=SubscriptionMode.OnlyCreate,
        mode=ConnectionMode.Invitation)
    # deployed: with no service on the connection any service signature fails
    # verifyServiceSig, which comes before the key's verification (Server.hs:1243,
    # 1271-1277), but after the command is parsed and its credential rule applied
    # (Protocol.hs:2243-2246, 1722-1757); each answer keeps the transmission's entity ID
    # (Protocol.hs:2244, Server.hs:1167). The seed design answers SERVICE to any
    # transmission with one (AUTH-4).
    steps = (("KEY with another key's signature", ctx.key(), Context.encoded(c, KEY(
                 sender_key=ctx.key().public)), "SERVICE"),
             ("SUB", q.key, Context.encoded(c, SUB()), "SERVICE"),
             ("KEY whose key does not parse", q.key, b"KEY \x05abc", "CMD SYNTAX"),
             ("NEW with an entity ID", q.key, Context.encoded(c, new), "CMD HAS_AUTH"))
    wrong: list[str] = []  # every step is checked, so that one report names them all
    for what, key, body, error in steps:
        corr, data = _service_signed(ctx, c, key, q.rid, body)
        try:
            _expect_error(await ctx.raw_request(c, data, corr, what),
                          "SERVICE" if ctx.extended else error, q.rid,
                          f"{what} with a service signature")
        except Fail as exc:
            wrong.append(str(exc))
    if wrong:
        raise Fail("; ".join(wrong))
    # the KEYs did not secure the queue and the SUB did not subscribe: an unsigned SEND is
    # accepted and nothing is pushed
    ctx.expect(await ctx.request(c, SEND(flags=MsgFlags(notification=False), body=b"x"),
                                 q.sid), "OK", step="unsigned SEND after the refused KEYs")
    await ctx.no_event(c, 0.5)
    await _delete(ctx, c, q)
    return None
