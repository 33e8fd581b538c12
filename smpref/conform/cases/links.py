"""Links and notifications (seed 004): LSET, LGET, LINK and NMSG."""

from __future__ import annotations

from smpref.client.connection import SmpClient
from smpref.client.core import AuthKeyPair, make_link_blob, read_link_blob
from smpref.conform.case_verdicts import Fail
from smpref.conform.context import Context, Queue
from smpref.conform.registry import CaseGroup
from smpref.wire.messages import (
    LGET,
    LINK,
    LSET,
    NSUB,
    LinkData,
)

group = CaseGroup("links")
case = group.case


@case("link.lset-lget", "NEW with a link; LGET reads it, LSET replaces it, LGET sees the change",
      "LINK-2", "LINK-4", "LINK-5", "LINK-6", "LINK-9", "LINK-10", needs="seed")
async def _link_roundtrip(ctx: Context) -> str | None:
    owner, reader = await ctx.connect(), await ctx.connect()
    q = await ctx.create(owner, "C", link=True)
    assert q.link is not None
    if q.ids is None or q.ids.link_id != q.link.link_id:
        raise Fail("IDS does not return the link ID NEW carried")
    data = await _read_link(ctx, reader, q)
    if data.conn_req != b"conformance":
        raise Fail("LGET returned other link data than NEW stored")
    blob = make_link_blob(q.link, ctx.random, LinkData(conn_req=b"changed", user_data=b"v2"))
    ctx.expect(await ctx.request(owner, LSET(enc_link_data=blob), q.rid, q.key), "OK")
    if (await _read_link(ctx, reader, q)).conn_req != b"changed":
        raise Fail("LGET after LSET returned the old link data")
    return None


async def _read_link(ctx: Context, c: SmpClient, q: Queue, key: AuthKeyPair | None = None
                     ) -> LinkData:
    assert q.link is not None
    message = LGET(sender_key=key.public if key else None)
    corr, data = c.session.transmission(message, q.link.k, key)
    reply = (await c.send_transmissions([(corr, data)]))[0]
    link = ctx.message(reply, LINK, "LGET")
    queue_link = c.session.open_link(q.link, corr, link.sealed)
    if queue_link.sender_id != q.sid:
        raise Fail("LINK's sender ID is not the queue's")
    mandatory, _ = read_link_blob(q.link, queue_link.enc_link_data)
    return mandatory


@case("link.lget-secures", "LGET with a key secures an invitation queue and drops its link",
      "LINK-7", "LINK-8", "LINK-11", needs="seed")
async def _link_secure(ctx: Context) -> str | None:
    owner, reader = await ctx.connect(), await ctx.connect()
    q = await ctx.create(owner, "M", link=True)
    k = ctx.key()
    await _read_link(ctx, reader, q, k)
    q.sender_key = k
    ctx.expect(await ctx.send(reader, q, b"hi"), "OK", step="SEND signed by the LGET key")
    assert q.link is not None
    reply = await ctx.request(reader, LGET(sender_key=None), q.link.k)
    ctx.expect(reply, error="AUTH", step="LGET after the queue was secured")
    return None


@case("link.lset-without-link", "LSET on a queue without a link gets ERR CMD PROHIBITED",
      "LINK-5", needs="seed")
async def _lset_no_link(ctx: Context) -> str | None:
    c = await ctx.connect()
    q = await ctx.create(c, "C")
    blob = make_link_blob(ctx.draft(link=True).link,  # type: ignore[arg-type]
                          ctx.random, LinkData(conn_req=b"x", user_data=b""))
    ctx.expect(await ctx.request(c, LSET(enc_link_data=blob), q.rid, q.key),
               error="CMD PROHIBITED")
    return None


@case("ntf.nmsg", "NEW with a notifier; NSUB; a SEND asking for it yields NMSG",
      "CMD-12", "CMD-23", "CMD-34", "MSG-7", needs="seed")
async def _ntf(ctx: Context) -> str | None:
    owner, notifier = await ctx.connect(), await ctx.connect()
    q = await ctx.create(owner, "C", notifier=True)
    ctx.expect(await ctx.request(notifier, NSUB(), q.notifier_id, q.notifier_key), "OK")
    ctx.expect(await ctx.send(owner, q, b"ping me", notify=True), "OK")
    await ctx.event(notifier, "NMSG", q.notifier_id)
    return None
