"""What several cases of the queues area do the same way: a transmission authorized by hand,
commands pipelined one block each, a queue drained record by record, and the clean-up.

Candidates for :mod:`smpref.conform.context` should another area need them.
"""

from __future__ import annotations

import asyncio

from smpref.client.connection import SmpClient, open_deployed_message
from smpref.client.core import AuthKeyPair, Reply
from smpref.conform.case_verdicts import Fail
from smpref.conform.context import Context, Queue
from smpref.errors import CryptoError
from smpref.wire.messages import ACK, DEL, GET, MSG, RecordKind

#: a MSG body is sealed after padding to 16106 bytes (Protocol.hs:310-313, DEP-7, QENC-7);
#: secretbox adds its 16-byte tag
SEALED_BODY = 16106 + 16
#: the versions at which NEW and IDS change (Protocol.hs:1681-1689, 1825-1833; Transport.hs)
SENDER_SECURES, SHORT_LINKS, SERVICES, NOTIFIER_CREDENTIALS = 9, 15, 16, 17


def signed(c: SmpClient, key: AuthKeyPair | None, corr: bytes, entity: bytes,
           command: bytes, *, service_signature: bytes | None = None) -> bytes:
    """A transmission built by hand, authorized by ``key`` over the client's session (TRANS-6),
    optionally with a service signature after the authorization (v16+ layout)."""
    auth = b"" if key is None else Context.authorization(c, key, corr, entity, command)
    return Context.raw_transmission(c, auth, corr, entity, command,
                                    service=service_signature)


async def pipelined(ctx: Context, c: SmpClient, items: list[tuple[bytes, bytes]]
                    ) -> list[Reply]:
    """Send transmissions without waiting, each in a block of its own, and return their
    answers in order. One block each, because deployed runs the commands of one block last to
    first (Server.hs:1366-1372, DIV-50): blocks it runs in the order they come."""
    futures = [c.answer(corr) for corr, _ in items]
    try:
        for _, data in items:
            await c.send_raw([data])
        async with asyncio.timeout(ctx.timeout + len(items) * 0.1):
            return list(await asyncio.gather(*futures))
    except TimeoutError:
        raise Fail(f"not all of {len(items)} pipelined commands were answered") from None
    finally:
        for corr, _ in items:
            c.forget(corr)


def _open_flags(ctx: Context, q: Queue, msg: MSG) -> tuple[str, bytes, bool]:
    """(kind, body, notification flag) of a MSG: kind "message", "quota" or "control" (the
    seed design's ratchet records)."""
    try:
        if not ctx.extended:
            opened = open_deployed_message(q.owner.rcv_dh_secret, msg)  # DEP-7
            return ("quota" if opened.quota else "message"), opened.body, opened.notification
        rcv, received, _ = q.owner.open_message(msg)  # QENC-7
    except CryptoError as exc:
        raise Fail(f"MSG does not open for the queue's owner: {exc}") from None
    kind = {RecordKind.Message: "message", RecordKind.Quota: "quota"}.get(received.kind,
                                                                          "control")
    return kind, received.body or b"", rcv.flags.notification


async def take_one(ctx: Context, c: SmpClient, q: Queue, reply: Reply
                   ) -> tuple[tuple[str, bytes, bool], Reply]:
    """Open the MSG a GET answered, check its sealed size, and send its ACK and the next GET
    at once: what it was, and that GET's answer."""
    msg = ctx.message(reply, MSG, "GET")
    if len(msg.enc_body) != SEALED_BODY:
        raise Fail(f"MSG's sealed body has {len(msg.enc_body)} bytes: a body padded to "
                   f"16106 bytes and sealed has {SEALED_BODY} (DEP-7, QENC-7)")
    record = _open_flags(ctx, q, msg)
    ack = c.session.transmission(ACK(msg_id=msg.msg_id), q.rid, q.key)
    get = c.session.transmission(GET(), q.rid, q.key)
    ack_reply, following = await pipelined(ctx, c, [ack, get])
    ctx.expect(ack_reply, "OK", step="ACK after GET")
    return record, following


async def drain(ctx: Context, c: SmpClient, q: Queue, first: Reply | None = None
                ) -> list[tuple[str, bytes, bool]]:
    """GET and ACK every record until the queue is empty (``first``: the answer of a GET
    already sent); what they were, in order, without the seed design's ratchet records."""
    got: list[tuple[str, bytes, bool]] = []
    reply = first if first is not None else await ctx.request(c, GET(), q.rid, q.key)
    while reply.tag == "MSG":
        record, reply = await take_one(ctx, c, q, reply)
        if record[0] != "control":
            got.append(record)
    ctx.expect(reply, "OK", step="GET on the drained queue")
    return got


def record_bodies(records: list[tuple[str, bytes, bool]]) -> list[bytes]:
    """The records' bodies in order, the quota marker as ``<quota>``."""
    return [b"<quota>" if kind == "quota" else body for kind, body, _ in records]


async def delete_queues(ctx: Context, c: SmpClient, *queues: tuple[bytes, AuthKeyPair]
                        ) -> None:
    """DEL the queues a case made (recipient ID, recipient key)."""
    for rid, key in queues:
        ctx.expect(await ctx.request(c, DEL(), rid, key), "OK", step="DEL (clean-up)")
