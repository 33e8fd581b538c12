"""The server side of rotation: suspension with a count, a repeated OFF, the last flag, and the
sender refused once the queue is deleted (ROT-3, ROT-4, spec/rotation.md)."""

from __future__ import annotations

from smpref.conform.case_verdicts import Fail
from smpref.conform.context import Context
from smpref.conform.registry import CaseGroup
from smpref.errors import CryptoError
from smpref.wire.messages import ACK, COUNT, DEL, GET, MSG, OFF

group = CaseGroup("rotation")
case = group.case


@case("rot.drain", "OFF answers the count, again when repeated; the last record is flagged; "
      "after DEL the sender gets ERR AUTH", "ROT-3", "ROT-4", "ROT-9", "CMD-21", needs="seed")
async def _rot_drain(ctx: Context) -> str | None:
    ctx.require_extensions("OFF's COUNT and the last flag")
    owner, sender = await ctx.connect(), await ctx.connect()
    q = await ctx.create(owner)
    await ctx.secure(owner, q)
    for body in (b"one", b"two", b"three"):
        ctx.expect(await ctx.send(sender, q, body), "OK", step="SEND before OFF")
    # the Initial record and "one": what is left is "two" and "three"
    Context.expect_bodies(await ctx.receive(owner, q, 1, via_get=True), [b"one"])
    for step in ("OFF", "OFF repeated"):
        off = await ctx.request(owner, OFF(), q.rid, q.key)
        remaining = ctx.message(off, COUNT, step).remaining
        if remaining != 2:
            raise Fail(f"{step} answered COUNT {remaining}; two messages are left")
    ctx.expect(await ctx.send(sender, q, b"late"), error="AUTH", step="SEND after OFF")
    for body, last in ((b"two", False), (b"three", True)):
        reply = await ctx.request(owner, GET(), q.rid, q.key)
        msg = ctx.message(reply, MSG, f"GET of {body.decode()}")
        try:
            delivered, _ = q.owner.unseal(msg)
        except CryptoError as exc:
            raise Fail(f"MSG does not open for the queue's owner: {exc}") from None
        kind, opened = ctx.open(q, msg)
        if (kind, opened) != ("message", body):
            raise Fail(f"GET delivered {kind} {opened!r}, expected {body!r}")
        if delivered.flags.last is not last:
            raise Fail(f"{body.decode()!r} carries last={delivered.flags.last}; only the only "
                       "record left in a suspended queue is flagged (ROT-4)")
        ctx.expect(await ctx.request(owner, ACK(msg_id=msg.msg_id), q.rid, q.key), "OK",
                   step="ACK")
    off = await ctx.request(owner, OFF(), q.rid, q.key)
    if ctx.message(off, COUNT, "OFF after draining").remaining != 0:
        raise Fail("OFF on a drained queue did not answer COUNT 0")
    ctx.expect(await ctx.request(owner, DEL(), q.rid, q.key), "OK", step="DEL")
    ctx.expect(await ctx.send(sender, q, b"after"), error="AUTH", step="SEND after DEL")
    return None
