"""Delivery and subscriptions: SEND pushed to a subscriber, redelivery, END and DELD, GET and
SUB on one session, ACK (MSG-2, MSG-3, MSG-4, MSG-8, MSG-9, CMD-16..CMD-19, CMD-33).

What deployed SMP does comes from simplexmq's Server.hs (6.5.5, commit 92598c2); each case cites
the lines it relies on. Every case starts from an empty queue: in the seed design a new queue
holds its Initial record (DIV-28), which :func:`_empty_queue` reads and acknowledges on a
connection of its own, so that both designs are then in the same state. Queues are contact
queues, which a sender may write to unsigned at every version (MSG-1, DEP-12).
"""

from __future__ import annotations

import asyncio

from smpref.client.connection import SmpClient, at_version, open_deployed_message
from smpref.client.core import AuthKeyPair, Reply
from smpref.conform.case_verdicts import Fail
from smpref.conform.context import Context, Queue
from smpref.conform.registry import CaseGroup
from smpref.errors import ClientError, CryptoError
from smpref.wire.messages import ACK, COUNT, DEL, GET, IDS, KEY, MSG, OFF, SUB
from smpref.wire.structs import Command

group = CaseGroup("delivery")
case = group.case

#: MSG's sealed body: the message padded to 16106 bytes (QENC-7, DEP-7; simplexmq
#: Protocol.hs:310-313, Crypto.hs:1314-1316), and the 16-byte tag of crypto_box
SEALED_BODY = 16106 + 16


# --- helpers -----------------------------------------------------------------------------------


class _PushLog(asyncio.Queue[Reply]):
    """A client's event queue that notes what the server pushed while an answer was awaited:
    the order of an answer and a push in one block is lost once both are read."""

    def __init__(self) -> None:
        super().__init__()
        self.awaiting: asyncio.Future[Reply] | None = None
        self.early: list[str] = []

    def put_nowait(self, item: Reply) -> None:
        if self.awaiting is not None and not self.awaiting.done():
            self.early.append(item.tag)
        super().put_nowait(item)


async def _connect(ctx: Context) -> SmpClient:
    """A connection whose pushes are logged (:class:`_PushLog`)."""
    client = await ctx.connect()
    log = _PushLog()
    while not client.events.empty():
        log.put_nowait(client.events.get_nowait())
    client.events = log
    return client


async def _answer_first(ctx: Context, client: SmpClient, message: Command, entity: bytes,
                        key: AuthKeyPair, *, step: str) -> Reply:
    """Send one command and return its answer; fail if the server pushed anything on this
    connection before that answer (a command's answer precedes what it makes the server push,
    MSG-2: deployed puts the answer first in the block, Server.hs:1189-1191)."""
    log = client.events
    assert isinstance(log, _PushLog), "connect with _connect"
    version = client.session.version  # None: the seed design
    corr, data = client.session.transmission(
        message if version is None else at_version(message, version), entity, key)
    answer = client.answer(corr)
    log.awaiting, log.early = answer, []
    try:
        await client.send_raw([data])
        async with asyncio.timeout(ctx.timeout):
            reply = await answer
    except (TimeoutError, ClientError) as exc:
        raise Fail(f"{step}: no answer ({exc or 'timeout'})") from None
    finally:
        client.forget(corr)
        log.awaiting = None
    if log.early:
        raise Fail(f"{step}: the server pushed {', '.join(log.early)} before the answer; the "
                   "answer comes first (MSG-2)")
    return reply


async def _subscribe(ctx: Context, client: SmpClient, q: Queue, step: str = "SUB") -> None:
    """SUB answered exactly as the version answers it, with nothing pushed before the answer
    (deployed: the answer, then MSG, Server.hs:1634-1644)."""
    reply = await _answer_first(ctx, client, SUB(), q.rid, q.key, step=step)
    ctx.expect(reply, ctx.sub_answer(client), step=step)


def _opened(ctx: Context, q: Queue, reply: Reply, body: bytes, step: str) -> bytes:
    """The ID of the MSG ``reply``, which must deliver the message ``body``."""
    ctx.expect(reply, "MSG", step=step)
    msg = ctx.message(reply, MSG, step)
    if reply.transmission.entity_id != q.rid:
        raise Fail(f"{step}: MSG names entity {reply.transmission.entity_id.hex()}, not the "
                   "queue's recipient ID")
    kind, got = ctx.open(q, msg)
    if (kind, got) != ("message", body):
        raise Fail(f"{step}: delivered {kind} {got!r}, expected the message {body!r}")
    return msg.msg_id


def _flags(ctx: Context, q: Queue, reply: Reply, step: str) -> tuple[bool, bool | None]:
    """The notification and last flags of a delivered message; deployed SMP has no last flag
    (DIV-21), None there."""
    msg = ctx.message(reply, MSG, step)
    try:
        if not ctx.extended:
            return open_deployed_message(q.owner.rcv_dh_secret, msg).notification, None
        body, _ = q.owner.unseal(msg)
    except CryptoError as exc:
        raise Fail(f"{step}: MSG does not open for the queue's owner: {exc}") from None
    return body.flags.notification, body.flags.last


def _last(ctx: Context, q: Queue, reply: Reply, last: bool, step: str) -> None:
    """In the seed design, fail unless the delivered record carries ``last`` as expected: only
    the only record left in a suspended queue is flagged (ROT-4)."""
    flag = _flags(ctx, q, reply, step)[1]
    if ctx.extended and flag is not last:
        raise Fail(f"{step}: the record carries last={flag}, expected {last}: only the only "
                   "record left in a suspended queue is flagged (ROT-4)")


async def _pushed(ctx: Context, client: SmpClient, q: Queue, body: bytes, step: str) -> bytes:
    """The ID of the next MSG pushed for ``q``, which must deliver ``body``."""
    return _opened(ctx, q, await ctx.event(client, "MSG", q.rid), body, step)


def _same(step: str, got: bytes, expected: bytes) -> None:
    if got != expected:
        raise Fail(f"{step}: delivered message ID {got.hex()}, expected the message in flight "
                   f"again, {expected.hex()} (MSG-9: a client recognises it by its ID)")


async def _ack(ctx: Context, client: SmpClient, q: Queue, msg_id: bytes) -> Reply:
    return await ctx.request(client, ACK(msg_id=msg_id), q.rid, q.key)


async def _get(ctx: Context, client: SmpClient, q: Queue) -> Reply:
    return await ctx.request(client, GET(), q.rid, q.key)


async def _send(ctx: Context, sender: SmpClient, q: Queue, *bodies: bytes) -> None:
    for body in bodies:
        ctx.expect(await ctx.send(sender, q, body), "OK", step=f"SEND {body!r}")


async def _empty_queue(ctx: Context, owner: SmpClient) -> Queue:
    """A new contact queue with no record in it. The seed design's Initial record (DIV-28) is
    read and acknowledged with GET on another connection, so that ``owner`` has used neither
    SUB nor GET on the queue (MSG-3)."""
    q = await ctx.create(owner, "C")
    if ctx.extended:
        reader = await ctx.connect()
        reply = ctx.expect(await _get(ctx, reader, q), "MSG", step="GET of the Initial record")
        msg = ctx.message(reply, MSG, "GET of the Initial record")
        if ctx.open(q, msg)[0] != "control":
            raise Fail("a new queue's first record is not its Initial record (DIV-28)")
        ctx.expect(await _ack(ctx, reader, q, msg.msg_id), "OK", step="ACK of the Initial record")
    return q


async def _delete(ctx: Context, owner: SmpClient, q: Queue) -> None:
    ctx.expect(await ctx.request(owner, DEL(), q.rid, q.key), "OK", step="DEL (clean-up)")


async def _quiet(ctx: Context, client: SmpClient, what: str) -> None:
    """Fail, saying ``what`` was expected, if the server pushes anything to ``client`` now."""
    await ctx.no_event(client, 0.5, what)


# --- cases -------------------------------------------------------------------------------------


@case("deliver.push", "a SEND to a subscribed empty queue is pushed at once; SENDs while a "
      "message is in flight wait for its ACK and come as ACK's answer, in order",
      "MSG-2", "MSG-4", "CMD-16", "CMD-17", "CMD-18", "CMD-31")
async def _deliver_push(ctx: Context) -> str | None:
    owner, sender = await _connect(ctx), await _connect(ctx)
    q = await _empty_queue(ctx, owner)
    await _subscribe(ctx, owner, q, "SUB on an empty queue")
    await _quiet(ctx, owner, "nothing after SUB on an empty queue")
    # SEND to a queue that was empty pushes to the subscriber (Server.hs:1875, 1903-1931)
    await _send(ctx, sender, q, b"one")
    msg_id = await _pushed(ctx, owner, q, b"one", "MSG pushed after SEND")
    # with a message in flight nothing more is pushed (Server.hs:1926); ACK answers the next
    # message (Server.hs:1805-1812, tryDelPeekMsg: Server/MsgStore/Types.hs:104-110)
    await _send(ctx, sender, q, b"two", b"three")
    await _quiet(ctx, owner, "no MSG while one is in flight, unacknowledged")
    for body in (b"two", b"three"):
        msg_id = _opened(ctx, q, await _ack(ctx, owner, q, msg_id), body,
                         f"ACK's answer: the next message, {body!r}")
    ctx.expect(await _ack(ctx, owner, q, msg_id), "OK", step="ACK of the last message")
    await _quiet(ctx, owner, "nothing after the last ACK")
    # empty again, with nothing in flight: the next SEND is pushed again
    await _send(ctx, sender, q, b"four")
    msg_id = await _pushed(ctx, owner, q, b"four", "MSG pushed after SEND to the emptied queue")
    ctx.expect(await _ack(ctx, owner, q, msg_id), "OK", step="ACK of 'four'")
    await _delete(ctx, owner, q)
    return None


@case("deliver.sub-waiting", "SUB with messages waiting: SOK (v16+) or OK first, then MSG with "
      "the first one only; SUB repeated on the session delivers it again, with no END",
      "MSG-2", "CMD-16", "DIV-22", "DEP-4")
async def _deliver_sub_waiting(ctx: Context) -> str | None:
    owner, sender = await _connect(ctx), await _connect(ctx)
    q = await _empty_queue(ctx, owner)
    await _send(ctx, sender, q, b"a", b"b")
    # the answer, then the first message (Server.hs:1634-1644, 1189-1191)
    await _subscribe(ctx, owner, q, "SUB with two messages waiting")
    first = await _pushed(ctx, owner, q, b"a", "MSG after SUB")
    await _quiet(ctx, owner, "one message in flight at a time")
    # a repeated SUB forgets what is in flight and delivers the first message again; it
    # subscribes no other session, so no END (Server.hs:1619-1631)
    await _subscribe(ctx, owner, q, "SUB repeated on the same session")
    _same("MSG after the repeated SUB",
          await _pushed(ctx, owner, q, b"a", "MSG after the repeated SUB"), first)
    await _quiet(ctx, owner, "no END to the session that repeats SUB, and no other message")
    second = _opened(ctx, q, await _ack(ctx, owner, q, first), b"b", "ACK's answer")
    ctx.expect(await _ack(ctx, owner, q, second), "OK", step="ACK of the last message")
    await _subscribe(ctx, owner, q, "SUB on the drained queue")
    await _quiet(ctx, owner, "nothing after SUB on an empty queue")
    await _delete(ctx, owner, q)
    return None


@case("deliver.takeover", "a second session's SUB: END to the first only; the first's ACK is "
      "ERR NO_MSG, new messages go to the second, and the first may GET",
      "CMD-33", "MSG-2", "MSG-3", "MSG-4", "MSG-9")
async def _deliver_takeover(ctx: Context) -> str | None:
    a, b, sender = await _connect(ctx), await _connect(ctx), await _connect(ctx)
    q = await _empty_queue(ctx, a)
    await _subscribe(ctx, a, q, "SUB from the first session")
    await _send(ctx, sender, q, b"one")
    one = await _pushed(ctx, a, q, b"one", "MSG to the first session")
    # the unacknowledged message is delivered to the new subscriber (MSG-9)
    await _subscribe(ctx, b, q, "SUB from a second session")
    _same("MSG to the second session",
          await _pushed(ctx, b, q, b"one", "MSG to the second session"), one)
    # END to the previous subscriber, whose subscription is removed (Server.hs:283-284,
    # 326-329, 342-343); deployed sends it with the next batch of events
    await ctx.ended(a, q.rid)
    ctx.expect(await _ack(ctx, a, q, one), error="NO_MSG",
               step="ACK on the session whose subscription moved (Server.hs:1794)")
    ctx.expect(await _ack(ctx, b, q, one), "OK", step="ACK on the new subscriber")
    await _send(ctx, sender, q, b"two")
    two = await _pushed(ctx, b, q, b"two", "MSG to the new subscriber")
    await _quiet(ctx, a, "nothing more to the session whose subscription moved")
    ctx.expect(await _ack(ctx, b, q, two), "OK", step="ACK of 'two'")
    # no longer subscribed, the first session may read with GET (Server.hs:1666-1668)
    ctx.expect(await _get(ctx, a, q), "OK", step="GET on the empty queue from the session "
               "whose subscription moved")
    await _quiet(ctx, b, "no END to the new subscriber")  # it would have come with a's
    await _delete(ctx, a, q)
    return None


@case("deliver.del-ends", "DEL: DELD (v10+) or END to another session's subscription, nothing "
      "to the deleting session; every later command on the queue is ERR AUTH",
      "MSG-8", "CMD-21", "DIV-48", "DEP-4", "DEP-12")
async def _deliver_del_ends(ctx: Context) -> str | None:
    a, b, sender = await _connect(ctx), await _connect(ctx), await _connect(ctx)
    q = await _empty_queue(ctx, a)  # b subscribes to it
    own = await _empty_queue(ctx, a)  # a subscribes to it itself
    await _subscribe(ctx, b, q, "SUB from another session")
    await _subscribe(ctx, a, own, "SUB from the deleting session")
    await _send(ctx, sender, q, b"in flight")
    in_flight = await _pushed(ctx, b, q, b"in flight", "MSG to the other session")
    ctx.expect(await ctx.request(a, DEL(), q.rid, q.key), "OK", step="DEL")
    ctx.expect(await ctx.request(a, DEL(), own.rid, own.key), "OK",
               step="DEL of the queue this session subscribed to")
    # DELD (END below 10, Protocol.hs:1848-1850) to the other subscriber; the deleting session
    # drops its own subscription and is not told (Server.hs:2052-2054, 285-289, 320-323)
    await ctx.ended(b, q.rid, deleted=True)
    # deployed sends every connection's gathered events in one pass (Server.hs:413-436): one
    # for the deleting session would have come with b's
    await _quiet(ctx, a, "no END or DELD to the session that deleted")
    await _quiet(ctx, b, "one event for the deleted queue")
    # the queue is gone: its IDs name nothing (AUTH, Server.hs:1229-1237)
    later: list[tuple[str, SmpClient, Command, bytes, AuthKeyPair | None]] = [
        ("SUB", a, SUB(), q.rid, q.key), ("SUB", b, SUB(), q.rid, q.key),
        ("GET", a, GET(), q.rid, q.key), ("ACK", b, ACK(msg_id=in_flight), q.rid, q.key),
        ("KEY", a, KEY(sender_key=ctx.key().public), q.rid, q.key),
        ("OFF", a, OFF(), q.rid, q.key), ("DEL", a, DEL(), q.rid, q.key)]
    for tag, client, command, entity, key in later:
        ctx.expect(await ctx.request(client, command, entity, key), error="AUTH",
                   step=f"{tag} after DEL")
    ctx.expect(await ctx.send(sender, q, b"late"), error="AUTH", step="SEND after DEL")
    return None


@case("deliver.get-sub-exclusive", "one session reads a queue with GET or with SUB: SUB after "
      "GET and GET after SUB are ERR CMD PROHIBITED; GET does not take the pushes", "MSG-3")
async def _deliver_get_sub_exclusive(ctx: Context) -> str | None:
    getter, subscriber = await _connect(ctx), await _connect(ctx)
    q = await _empty_queue(ctx, getter)
    # GET marks the session even on an empty queue (Server.hs:1666-1668, 1680-1687)
    ctx.expect(await _get(ctx, getter, q), "OK", step="GET on an empty queue")
    ctx.expect(await ctx.request(getter, SUB(), q.rid, q.key), error="CMD PROHIBITED",
               step="SUB after GET on the same session (Server.hs:1625-1629)")
    await _subscribe(ctx, subscriber, q, "SUB from another session")
    ctx.expect(await _get(ctx, subscriber, q), error="CMD PROHIBITED",
               step="GET on a subscribed session (Server.hs:1675-1678)")
    # a reader with GET is no subscriber: the message is pushed to the subscriber only
    await _send(ctx, subscriber, q, b"m")
    msg_id = await _pushed(ctx, subscriber, q, b"m", "MSG to the subscriber")
    await _quiet(ctx, getter, "no MSG pushed to a session that used GET")
    _same("GET of the message in flight on the subscriber",
          _opened(ctx, q, await _get(ctx, getter, q), b"m", "GET from the other session"),
          msg_id)
    ctx.expect(await ctx.request(getter, SUB(), q.rid, q.key), error="CMD PROHIBITED",
               step="SUB after GET, again")
    ctx.expect(await _get(ctx, subscriber, q), error="CMD PROHIBITED",
               step="GET on a subscribed session, with a message in flight")
    ctx.expect(await _ack(ctx, subscriber, q, msg_id), "OK", step="the subscriber's ACK")
    await _delete(ctx, getter, q)
    return None


@case("deliver.get-in-flight", "GET: the first message, again on a repeated GET; ACK answers OK "
      "with more waiting; an unacknowledged message is read again on another connection",
      "MSG-3", "MSG-4", "MSG-9", "CMD-19")
async def _deliver_get_in_flight(ctx: Context) -> str | None:
    c, other = await _connect(ctx), await _connect(ctx)
    q = await _empty_queue(ctx, c)
    ctx.expect(await _get(ctx, c, q), "OK", step="GET on an empty queue")
    await _send(ctx, c, q, b"a", b"b")
    a = _opened(ctx, q, await _get(ctx, c, q), b"a", "GET")
    # a repeated GET forgets what is in flight and reads the first message (Server.hs:1670-1673)
    _same("GET repeated before ACK", _opened(ctx, q, await _get(ctx, c, q), b"a",
                                             "GET repeated before ACK"), a)
    _same("GET on another connection", _opened(ctx, q, await _get(ctx, other, q), b"a",
                                               "GET on another connection"), a)
    # after GET, ACK is answered OK even when more messages wait (Server.hs:1800-1804)
    ctx.expect(await _ack(ctx, c, q, a), "OK", step="ACK after GET, with 'b' waiting")
    ctx.expect(await _ack(ctx, c, q, a), error="NO_MSG", step="ACK of the same ID again")
    # the other connection's ACK of 'a', already removed, removes nothing (Server/MsgStore/
    # Types.hs:94-101)
    ctx.expect(await _ack(ctx, other, q, a), "OK", step="ACK of a message another session "
               "removed")
    b = _opened(ctx, q, await _get(ctx, c, q), b"b", "GET of the second message")
    await c.close()
    later = await _connect(ctx)
    _same("GET on a new connection after the reader closed",
          _opened(ctx, q, await _get(ctx, later, q), b"b", "GET on a new connection"), b)
    ctx.expect(await _ack(ctx, later, q, b), "OK", step="ACK of 'b'")
    ctx.expect(await _get(ctx, later, q), "OK", step="GET on the drained queue")
    await _delete(ctx, later, q)
    return None


@case("deliver.ack-no-msg", "ACK with nothing in flight, with an ID not in flight, or twice: "
      "ERR NO_MSG, and the message in flight stays", "MSG-4", "CMD-18", "MSG-9")
async def _deliver_ack_no_msg(ctx: Context) -> str | None:
    owner, sender = await _connect(ctx), await _connect(ctx)
    q = await _empty_queue(ctx, owner)
    # no subscription on the session, then one with nothing delivered (Server.hs:1794, 1813)
    ctx.expect(await _ack(ctx, owner, q, ctx.random(24)), error="NO_MSG",
               step="ACK on a session that never read the queue")
    await _subscribe(ctx, owner, q)
    ctx.expect(await _ack(ctx, owner, q, ctx.random(24)), error="NO_MSG",
               step="ACK on a subscription with nothing in flight")
    await _send(ctx, sender, q, b"a")
    a = await _pushed(ctx, owner, q, b"a", "MSG after SEND")
    # another ID leaves the message in flight (Server.hs:1815-1820)
    for wrong in (bytes(24), b"\xff" * 24, ctx.random(24)):
        ctx.expect(await _ack(ctx, owner, q, wrong), error="NO_MSG",
                   step=f"ACK of {wrong.hex()}, not the message in flight")
    await _quiet(ctx, owner, "nothing after an ACK answered NO_MSG")
    ctx.expect(await _ack(ctx, owner, q, a), "OK", step="ACK of the message in flight, after "
               "wrong ACKs (it must still be in flight)")
    ctx.expect(await _ack(ctx, owner, q, a), error="NO_MSG", step="ACK of the same ID again")
    await _send(ctx, sender, q, b"b")
    b = await _pushed(ctx, owner, q, b"b", "MSG after the queue emptied")
    ctx.expect(await _ack(ctx, owner, q, a), error="NO_MSG",
               step="ACK of an earlier message's ID")
    ctx.expect(await _ack(ctx, owner, q, b), "OK", step="ACK of 'b'")
    await _delete(ctx, owner, q)
    return None


@case("deliver.ack-empty-id", "ACK with an empty ID: on a subscription the message comes again "
      "as the answer; after GET it is OK, removes nothing, and ACK of the ID is then ERR NO_MSG",
      "MSG-4", "CMD-18")
async def _deliver_ack_empty_id(ctx: Context) -> str | None:
    subscriber, getter = await _connect(ctx), await _connect(ctx)
    q = await _empty_queue(ctx, subscriber)
    ctx.expect(await _ack(ctx, subscriber, q, b""), error="NO_MSG",
               step="ACK with an empty ID and nothing in flight")
    await _send(ctx, getter, q, b"a")
    await _subscribe(ctx, subscriber, q)
    a = await _pushed(ctx, subscriber, q, b"a", "MSG after SUB")
    # an empty ID matches what is in flight (Server.hs:1817-1819), and tryDelPeekMsg removes
    # nothing for it and returns the first message (Server/MsgStore/Types.hs:104-110)
    _same("ACK with an empty ID on a subscription", _opened(
        ctx, q, await _ack(ctx, subscriber, q, b""), b"a",
        "ACK with an empty ID on a subscription"), a)
    ctx.expect(await _ack(ctx, subscriber, q, a), "OK", step="ACK of the message delivered "
               "again")
    await _send(ctx, getter, q, b"b")
    b = await _pushed(ctx, subscriber, q, b"b", "MSG after SEND")
    _same("GET", _opened(ctx, q, await _get(ctx, getter, q), b"b", "GET"), b)
    # after GET, tryDelMsg with an empty ID removes nothing (Server.hs:1800-1804)
    ctx.expect(await _ack(ctx, getter, q, b""), "OK", step="ACK with an empty ID after GET")
    ctx.expect(await _ack(ctx, getter, q, b), error="NO_MSG",
               step="ACK of the ID after the empty ACK cleared it")
    _same("GET after the empty ACK", _opened(ctx, q, await _get(ctx, getter, q), b"b",
                                             "GET after the empty ACK"), b)
    ctx.expect(await _ack(ctx, getter, q, b), "OK", step="ACK after GET")
    ctx.expect(await _get(ctx, getter, q), "OK", step="GET on the drained queue")
    await _delete(ctx, subscriber, q)
    return None


@case("deliver.redelivery", "an unacknowledged message is delivered again, with its ID, on a "
      "new connection after the first closed; acknowledged ones are not; order is kept",
      "MSG-2", "MSG-9")
async def _deliver_redelivery(ctx: Context) -> str | None:
    first, sender = await _connect(ctx), await _connect(ctx)
    q = await _empty_queue(ctx, first)
    await _send(ctx, sender, q, b"1", b"2", b"3")
    await _subscribe(ctx, first, q)
    one = await _pushed(ctx, first, q, b"1", "MSG after SUB")
    two = _opened(ctx, q, await _ack(ctx, first, q, one), b"2", "ACK's answer")
    await first.close()  # '2' was never acknowledged
    again = await _connect(ctx)
    await _subscribe(ctx, again, q, "SUB on a new connection")
    _same("MSG on the new connection",
          await _pushed(ctx, again, q, b"2", "MSG on the new connection"), two)
    three = _opened(ctx, q, await _ack(ctx, again, q, two), b"3", "ACK's answer")
    ctx.expect(await _ack(ctx, again, q, three), "OK", step="ACK of the last message")
    await _quiet(ctx, again, "nothing delivered after the last message")
    await _delete(ctx, again, q)
    return None


@case("deliver.two-readers", "a message another session's ACK removed: the subscriber's ACK of "
      "it answers the next; SUB repeated on the emptied queue leaves nothing in flight",
      "MSG-2", "MSG-4", "MSG-9")
async def _deliver_two_readers(ctx: Context) -> str | None:
    subscriber, getter = await _connect(ctx), await _connect(ctx)
    q = await _empty_queue(ctx, subscriber)
    await _send(ctx, getter, q, b"one", b"two")
    await _subscribe(ctx, subscriber, q)
    one = await _pushed(ctx, subscriber, q, b"one", "MSG after SUB")
    _same("GET from another session",
          _opened(ctx, q, await _get(ctx, getter, q), b"one", "GET from another session"), one)
    ctx.expect(await _ack(ctx, getter, q, one), "OK", step="the other session's ACK")
    await _quiet(ctx, subscriber, "nothing pushed when another session removes a message")
    # the ID matches what is in flight; 'one' is gone, so tryDelPeekMsg removes nothing and
    # returns the first message, 'two' (Server.hs:1805-1812, Server/MsgStore/Types.hs:104-110)
    two = _opened(ctx, q, await _ack(ctx, subscriber, q, one), b"two",
                  "the subscriber's ACK of the removed message")
    _same("GET of 'two'", _opened(ctx, q, await _get(ctx, getter, q), b"two", "GET"), two)
    ctx.expect(await _ack(ctx, getter, q, two), "OK", step="the other session's ACK of 'two'")
    # a repeated SUB forgets what was in flight; the queue is empty (Server.hs:1630-1631)
    await _subscribe(ctx, subscriber, q, "SUB repeated on the emptied queue")
    await _quiet(ctx, subscriber, "nothing after SUB on an empty queue")
    ctx.expect(await _ack(ctx, subscriber, q, two), error="NO_MSG",
               step="ACK of the forgotten message after the repeated SUB")
    await _delete(ctx, subscriber, q)
    return None


@case("deliver.suspended", "after OFF, SEND is ERR AUTH but the stored messages are still "
      "delivered by SUB, ACK and GET; OFF answers OK (deployed) or COUNT (seed), when repeated "
      "too; in the seed design only the only record left is flagged last",
      "ROT-3", "ROT-4", "MSG-1", "DIV-19", "DIV-21", "DEP-4")
async def _deliver_suspended(ctx: Context) -> str | None:
    owner, sender, reader = await _connect(ctx), await _connect(ctx), await _connect(ctx)
    q = await _empty_queue(ctx, owner)
    await _send(ctx, sender, q, b"1", b"2", b"3")
    await _subscribe(ctx, owner, q)

    def delivered(reply: Reply, body: bytes, last: bool, step: str) -> bytes:
        msg_id = _opened(ctx, q, reply, body, step)
        _last(ctx, q, reply, last, step)
        return msg_id

    async def off(step: str, remaining: int) -> None:
        reply = await ctx.request(owner, OFF(), q.rid, q.key)
        if not ctx.extended:  # OK (Server.hs:1615-1616)
            ctx.expect(reply, "OK", step=step)
        elif (count := ctx.message(reply, COUNT, step).remaining) != remaining:
            raise Fail(f"{step}: COUNT {count}, expected {remaining} (the one in flight "
                       "included, ROT-3)")

    one = delivered(await ctx.event(owner, "MSG", q.rid), b"1", False, "MSG after SUB")
    await off("OFF", 3)
    await off("OFF repeated", 3)
    # a suspended queue refuses SEND (Server.hs:1850-1853) and serves its recipient: only
    # blocking stops recipient commands (Server.hs:1710-1714)
    ctx.expect(await ctx.send(sender, q, b"late"), error="AUTH", step="SEND after OFF")
    await _subscribe(ctx, owner, q, "SUB on the suspended queue")
    _same("MSG after SUB on the suspended queue", delivered(
        await ctx.event(owner, "MSG", q.rid), b"1", False,
        "MSG after SUB on the suspended queue, three records left"), one)
    two = delivered(await _ack(ctx, owner, q, one), b"2", False,
                    "ACK's answer after OFF, two records left")
    _same("GET from another session", delivered(
        await _get(ctx, reader, q), b"2", False, "GET on the suspended queue"), two)
    three = delivered(await _ack(ctx, owner, q, two), b"3", True,
                      "ACK's answer after OFF, the only record left")
    ctx.expect(await _ack(ctx, owner, q, three), "OK", step="ACK of the last message")
    await off("OFF on the drained queue", 0)
    ctx.expect(await ctx.send(sender, q, b"later"), error="AUTH", step="SEND to the drained "
               "suspended queue")
    await _delete(ctx, owner, q)
    return None


@case("deliver.msg-body", "MSG: a 24-byte ID new for each message, the body sealed with the "
      "ID as nonce and padded to 16106 bytes, the body and notification flag as sent",
      "CMD-31", "QENC-7", "DEP-7", "MSG-2")
async def _deliver_msg_body(ctx: Context) -> str | None:
    owner, sender = await _connect(ctx), await _connect(ctx)
    q = await _empty_queue(ctx, owner)
    await _subscribe(ctx, owner, q)
    seen: set[bytes] = set()
    # msgIdBytes = 24 (Server/Main.hs:535); the sealed body is padded to 16106 whatever its
    # size (Server.hs:2030-2038, Protocol.hs:794-800, Crypto.hs:1314-1316); the flag is SEND's
    # (Server.hs:1886-1888)
    for body, notify in ((b"short", False), (b"flagged", True), (ctx.random(10000), False)):
        step = f"MSG of a {len(body)}-byte body{' with notification' if notify else ''}"
        ctx.expect(await ctx.send(sender, q, body, notify=notify), "OK", step="SEND")
        reply = await ctx.event(owner, "MSG", q.rid)
        msg_id = _opened(ctx, q, reply, body, step)
        sealed = len(ctx.message(reply, MSG, step).enc_body)
        if len(msg_id) != 24 or msg_id in seen:
            raise Fail(f"{step}: message ID {msg_id.hex()} is not a new 24-byte ID")
        if sealed != SEALED_BODY:
            raise Fail(f"{step}: sealed body of {sealed} bytes, expected {SEALED_BODY} "
                       "(padded to 16106, QENC-7)")
        if (flag := _flags(ctx, q, reply, step)[0]) is not notify:
            raise Fail(f"{step}: the notification flag is {flag}, SEND's was {notify}")
        seen.add(msg_id)
        ctx.expect(await _ack(ctx, owner, q, msg_id), "OK", step="ACK")
    await _delete(ctx, owner, q)
    return None


@case("deliver.new-subscribed", "NEW with subscribe mode subscribes the creating session: a SEND "
      "is pushed to it", "MSG-2", "CMD-10", "CMD-16")
async def _deliver_new_subscribed(ctx: Context) -> str | None:
    owner, sender = await _connect(ctx), await _connect(ctx)
    q = ctx.draft("C")
    reply = await _answer_first(ctx, owner, ctx.new_command(q, subscribe=True), b"", q.key,
                                step="NEW with subscribe mode")
    ctx.expect(reply, "IDS", step="NEW with subscribe mode")
    q.ids = ctx.message(reply, IDS, "NEW")
    q.owner.created(q.ids)
    if ctx.extended:  # the session is subscribed: the Initial record follows (DIV-28)
        initial = ctx.message(await ctx.event(owner, "MSG", q.rid), MSG, "Initial record")
        if ctx.open(q, initial)[0] != "control":
            raise Fail("the MSG after NEW with subscribe mode is not the Initial record")
        ctx.expect(await _ack(ctx, owner, q, initial.msg_id), "OK", step="ACK of the Initial")
    # deployed subscribes the session without a SUB (Server.hs:1654-1661); the queue is empty
    await _quiet(ctx, owner, "nothing more after NEW")
    await _send(ctx, sender, q, b"hello")
    msg_id = await _pushed(ctx, owner, q, b"hello", "MSG pushed to the creating session")
    ctx.expect(await _ack(ctx, owner, q, msg_id), "OK", step="ACK")
    await _delete(ctx, owner, q)
    return None
