"""Credentials: every command with no authorization, a wrong key, the right key, an entity ID
that names nothing, and each other party's ID of the same queue (TRANS-7, AUTH-1..AUTH-3).

What a server must answer is written here, from the spec alone, and nothing of smpref's model is
consulted: a case sends one transmission to a queue its set-up made and expects exactly one
answer. The order of the checks is AUTH-2's: the credential rule (TRANS-7: ``ERR CMD NO_AUTH``,
``ERR CMD HAS_AUTH``), then the queue and the authorization (``ERR AUTH``, the same for an entity
ID that names nothing, AUTH-3), then the command's own rules (:data:`ACCEPTED`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from smpref.client.connection import SmpClient
from smpref.client.core import AuthKeyPair, Reply, make_link_blob
from smpref.conform.case_verdicts import Skip
from smpref.conform.context import Context, Queue
from smpref.conform.registry import CaseFunction, CaseGroup
from smpref.notation import load
from smpref.wire.messages import (
    ACK,
    DEL,
    GET,
    IDS,
    KEY,
    LGET,
    LSET,
    NDEL,
    NSUB,
    OFF,
    PING,
    SEND,
    SKEY,
    SUB,
    LinkData,
    MsgFlags,
)
from smpref.wire.structs import Command

group = CaseGroup("authorization")
case = group.case


@dataclass(frozen=True)
class Expected:
    """What one transmission must get: the response ``tag``, or ``ERR error``."""

    tag: str | None = None
    error: str | None = None


#: TRANS-7's credential rule of each command: whether it must carry an authorization
#: ("needed"; the seed LGET's cases carry a key, which it must be signed with, LINK-8) or may
#: ("optional": SEND, MSG-1), and whether its entity ID must be empty ("empty": NEW) or must
#: name something ("needed")
CREDENTIAL_RULES: dict[str, tuple[str, str]] = {
    "NEW": ("needed", "empty"), "SEND": ("optional", "needed"), "LGET": ("needed", "needed"),
    **dict.fromkeys(("KEY", "SKEY", "LSET", "NDEL", "SUB", "ACK", "GET", "OFF", "DEL", "NSUB"),
                    ("needed", "needed")),
}


def accepted(command: str, *, extended: bool, version: int | None) -> Expected:
    """The one answer to ``command`` sent with the right key to the queue its set-up made
    (:data:`SETUPS`): an unsecured messaging queue with nothing stored (a secured one for
    SEND), on a fresh session."""
    deployed = None if extended else version
    if command == "NEW":
        return Expected("IDS")  # CMD-10
    if command == "SKEY" and deployed is not None and deployed < 9:
        # NEW below 9 says no mode: the queue has none and its sender cannot secure it (DEP-12)
        return Expected(error="AUTH")
    if command == "ACK":
        return Expected(error="NO_MSG")  # nothing is in flight on a fresh session (MSG-4)
    if command == "SUB" and deployed is not None and deployed >= 16:
        return Expected("SOK")  # DEP-4, from version 16 (DEP-12); the queue is empty: no MSG
    if command == "OFF" and deployed is None:
        return Expected("COUNT")  # ROT-4: the seed design answers the queue's count
    if command == "LGET":
        return Expected("LINK")  # LINK-9
    if command == "GET" and deployed is None:
        return Expected("MSG")  # the seed queue's first record is its Initial record (QENC-1)
    # KEY, SKEY, LSET, NDEL, SUB (with the seed queue's Initial record pushed after it, MSG-2),
    # SEND, GET (deployed: the queue is empty, MSG-3), OFF, DEL, NSUB
    return Expected("OK")


#: the requirement IDs of each command's accepted answer (as :func:`accepted` states it)
ACCEPTED_REQUIREMENTS: dict[str, tuple[str, ...]] = {
    "NEW": ("CMD-10", "CMD-11", "CMD-12", "QUEUE-1", "QUEUE-2", "QENC-1", "QENC-6"),
    "KEY": ("CMD-13", "QUEUE-11", "LINK-11"), "SKEY": ("CMD-14", "QUEUE-11", "LINK-11"),
    "LSET": ("LINK-5",), "LGET": ("LINK-6", "LINK-7", "LINK-9", "LINK-11"),
    "NDEL": ("CMD-15",), "SUB": ("CMD-16", "MSG-2"),
    "SEND": ("CMD-17", "MSG-1", "MSG-2", "QENC-2", "QENC-4", "LINK-11"),
    "ACK": ("MSG-4",), "GET": ("CMD-19", "MSG-3", "QENC-1"), "OFF": ("ROT-3", "ROT-4"),
    "DEL": ("CMD-21", "MSG-8"), "NSUB": ("CMD-23",),
}


def expected(command: str, variant: str, *, extended: bool = True,
             version: int | None = None) -> tuple[Expected, tuple[str, ...]]:
    """What ``command`` gets in credential ``variant`` (a name of :data:`VARIANTS`, or
    "party": the right key with another party's ID of the same queue), and the requirement IDs
    that say so."""
    authorization, entity = CREDENTIAL_RULES[command]
    if variant == "none":
        if authorization == "needed":
            return Expected(error="CMD NO_AUTH"), ("TRANS-7",) if command != "LGET" \
                else ("LINK-8",)
        return Expected(error="AUTH"), ("MSG-1",)  # SEND to a secured queue must be signed
    if variant == "wrong-key":
        return Expected(error="AUTH"), ("AUTH-1",) if command != "LGET" else ("LINK-8",)
    if variant in ("wrong-entity", "party"):
        if entity == "empty":
            return Expected(error="CMD HAS_AUTH"), ("TRANS-7",)
        return Expected(error="AUTH"), ("AUTH-3",) if command != "LGET" else ("LINK-6", "AUTH-3")
    return accepted(command, extended=extended, version=version), ACCEPTED_REQUIREMENTS[command]


def check(ctx: Context, reply: Reply, want: Expected, step: str = "") -> None:
    """Fail the case unless ``reply`` is the one answer the spec gives."""
    if want.error is not None:
        ctx.expect(reply, error=want.error, step=step)
    else:
        assert want.tag is not None
        ctx.expect(reply, want.tag, step=step)


# ---------------------------------------------------------------------------------------------
# Set-ups: one queue per command, in a state the table can be evaluated on


@dataclass
class Target:
    """One command ready to send, its right key, and every party's ID of its queue."""

    message: Command
    entity: bytes
    key: AuthKeyPair | None
    #: every party's ID for the same queue (recipient, sender, and with the seed extensions
    #: notifier and link key), for the variants that send the command with another party's ID
    parties: dict[str, bytes] = field(default_factory=dict)


SetupFunction = Callable[[Context, SmpClient, bool], Awaitable[Target]]


@dataclass(frozen=True)
class Setup:
    """How a command's cases prepare its queue, and what the set-up needs from the server."""

    make: SetupFunction
    needs: str


async def _queue(ctx: Context, c: SmpClient, full: bool, mode: str = "M", *,
                 link: bool = False, notifier: bool = False) -> tuple[Queue, dict[str, bytes]]:
    """A queue, with a link and a notifier when ``full`` (seed), and its parties' IDs."""
    q = await ctx.create(c, mode, link=link or full, notifier=notifier or full)
    parties = {"recipient": q.rid, "sender": q.sid}
    if q.notifier_id:
        parties["notifier"] = q.notifier_id
    if q.link is not None:
        parties["link"] = q.link.k  # the link reader's entity ID (LINK-6)
    return q, parties


async def _setup_new(ctx: Context, c: SmpClient, full: bool) -> Target:
    draft = ctx.draft()
    return Target(ctx.new_command(draft, subscribe=False), b"", draft.key)


async def _setup_key(ctx: Context, c: SmpClient, full: bool) -> Target:
    q, parties = await _queue(ctx, c, full)
    return Target(KEY(sender_key=ctx.key().public), q.rid, q.key, parties)


async def _setup_skey(ctx: Context, c: SmpClient, full: bool) -> Target:
    q, parties = await _queue(ctx, c, full)
    k = ctx.key()
    return Target(SKEY(sender_key=k.public), q.sid, k, parties)


async def _setup_lset(ctx: Context, c: SmpClient, full: bool) -> Target:
    q, parties = await _queue(ctx, c, full, "C", link=True)
    assert q.link is not None
    blob = make_link_blob(q.link, ctx.random, LinkData(conn_req=b"again", user_data=b"v2"))
    return Target(LSET(enc_link_data=blob), q.rid, q.key, parties)


async def _setup_lget(ctx: Context, c: SmpClient, full: bool) -> Target:
    q, parties = await _queue(ctx, c, full, "M", link=True)
    assert q.link is not None
    k = ctx.key()
    # The owner's link ID names the link too, but LGET must use k (LINK-6).
    parties["link ID"] = q.link.link_id
    return Target(LGET(sender_key=k.public), q.link.k, k, parties)


async def _setup_ndel(ctx: Context, c: SmpClient, full: bool) -> Target:
    q, parties = await _queue(ctx, c, full, notifier=True)
    return Target(NDEL(), q.rid, q.key, parties)


async def _setup_sub(ctx: Context, c: SmpClient, full: bool) -> Target:
    q, parties = await _queue(ctx, c, full)
    return Target(SUB(), q.rid, q.key, parties)


async def _setup_send(ctx: Context, c: SmpClient, full: bool) -> Target:
    q, parties = await _queue(ctx, c, full)
    key = await ctx.secure(c, q)
    return Target(SEND(flags=MsgFlags(notification=False), body=b"hello"), q.sid, key,
                  parties)


async def _setup_ack(ctx: Context, c: SmpClient, full: bool) -> Target:
    q, parties = await _queue(ctx, c, full)
    return Target(ACK(msg_id=b""), q.rid, q.key, parties)


async def _setup_get(ctx: Context, c: SmpClient, full: bool) -> Target:
    q, parties = await _queue(ctx, c, full)
    return Target(GET(), q.rid, q.key, parties)


async def _setup_off(ctx: Context, c: SmpClient, full: bool) -> Target:
    q, parties = await _queue(ctx, c, full)
    return Target(OFF(), q.rid, q.key, parties)


async def _setup_del(ctx: Context, c: SmpClient, full: bool) -> Target:
    q, parties = await _queue(ctx, c, full)
    return Target(DEL(), q.rid, q.key, parties)


async def _setup_nsub(ctx: Context, c: SmpClient, full: bool) -> Target:
    q, parties = await _queue(ctx, c, full, notifier=True)
    assert q.notifier_key is not None
    return Target(NSUB(), q.notifier_id, q.notifier_key, parties)


SETUPS: dict[str, Setup] = {
    "NEW": Setup(_setup_new, "core"),
    "KEY": Setup(_setup_key, "core"),
    "SKEY": Setup(_setup_skey, "core"),
    "LSET": Setup(_setup_lset, "seed"),
    "LGET": Setup(_setup_lget, "seed"),
    "NDEL": Setup(_setup_ndel, "seed"),
    "SUB": Setup(_setup_sub, "core"),
    "SEND": Setup(_setup_send, "core"),
    "ACK": Setup(_setup_ack, "core"),
    "GET": Setup(_setup_get, "core"),
    "OFF": Setup(_setup_off, "core"),
    "DEL": Setup(_setup_del, "core"),
    "NSUB": Setup(_setup_nsub, "seed"),
}

VARIANTS = {
    "none": "without an authorization",
    "wrong-key": "authorized by a key the queue does not have",
    "right-key": "authorized by the right key",
    "wrong-entity": "with the right key and an entity ID that names nothing",
}
#: the parties of the notation by the name the cases give their IDs
PARTY_NAMES = {"recipient": "recipient", "sender": "sender", "notifier": "notifier",
               "link_reader": "link", "creator": "creator"}
#: the other parties whose IDs a command is tried with; notifier and link exist only with the
#: seed extensions (NEW's NtfRequest and QueueLink)
PARTIES = {"recipient": "core", "sender": "core", "notifier": "seed", "link": "seed",
           "link ID": "seed"}


def _requirements(command: str, variant: str) -> tuple[str, ...]:
    """The requirement IDs a case cites: TRANS-7 and AUTH-2 (the credential rule and the order
    of the checks), and those of the answer :func:`expected` gives."""
    _, cited = expected(command, variant)
    return tuple(dict.fromkeys(("TRANS-7", "AUTH-2", *cited)))


def _credential_case(command: str, setup: Setup, variant: str, party: str = "") -> CaseFunction:
    async def run(ctx: Context) -> str | None:
        c = await ctx.connect()
        t = await setup.make(ctx, c, bool(party) and PARTIES[party] == "seed")
        if party:
            entity, step = t.parties[party], f"with the {party}'s ID"
        elif variant == "wrong-entity":
            entity, step = ctx.random(len(t.entity) or 24), ""
        else:
            entity, step = t.entity, ""
        key = {"none": None, "wrong-key": ctx.key()}.get(variant, t.key)
        want, _ = expected(command, "party" if party else variant, extended=ctx.extended,
                           version=ctx.deployed_version)
        reply = await ctx.request(c, t.message, entity, key)
        if isinstance(reply.message, IDS) and key is not None:  # a queue NEW made
            ctx.made_by(c, reply.message.rcv_id, key)
        check(ctx, reply, want, step)
        return None
    return run


def _register() -> None:
    definitions = load()
    for command, setup in SETUPS.items():
        own = PARTY_NAMES[definitions.messages[command].party]
        for name, text in VARIANTS.items():
            case(f"cred.{command.lower()}.{name}", f"{command} {text}",
                 *_requirements(command, name),
                 needs=setup.needs)(_credential_case(command, setup, name))
        if command == "NEW":
            continue  # NEW has no queue yet, so no other party
        for party, party_needs in PARTIES.items():
            if party == own or (party == "link ID" and command != "LGET"):
                continue
            slug = party.replace(" ", "-")
            case(f"cred.{command.lower()}.as-{slug}",
                 f"{command} with the right key and the {party}'s ID of the same queue",
                 *_requirements(command, "party"),
                 needs="seed" if "seed" in (setup.needs, party_needs) else "core")(
                _credential_case(command, setup, "party", party))


_register()


@case("cred.new.password", "NEW without the server password, or with a wrong one, gets AUTH",
      "CMD-10", "QUEUE-10")
async def _new_password(ctx: Context) -> str | None:
    if ctx.password is None:
        raise Skip("the address carries no server password (basicAuth): nothing to check")
    c = await ctx.connect()
    for what, override in (("without", None), ("with a wrong", b"x" + ctx.password)):
        draft = ctx.draft()
        command = ctx.new_command(draft, subscribe=False, password=override,
                                  omit_password=override is None)
        ctx.expect(await ctx.request(c, command, key=draft.key), error="AUTH",
                   step=f"NEW {what} password")
    await ctx.create(c)  # and with it
    return None


def _ping_case(entity: bool, authorized: bool) -> CaseFunction:
    async def run(ctx: Context) -> str | None:
        c = await ctx.connect()
        entity_id = ctx.random(24) if entity else b""
        reply = await ctx.request(c, PING(), entity_id, ctx.key() if authorized else None)
        # PING takes neither an authorization nor an entity ID (TRANS-7)
        if entity or authorized:
            ctx.expect(reply, error="CMD HAS_AUTH")
        else:
            ctx.expect(reply, "PONG")
        return None
    return run


case("cred.ping.none", "PING without credentials gets PONG", "CMD-22", "TRANS-7")(
    _ping_case(entity=False, authorized=False))
case("cred.ping.entity", "PING with an entity ID gets ERR CMD HAS_AUTH", "CMD-22", "TRANS-7")(
    _ping_case(entity=True, authorized=False))
case("cred.ping.key", "PING with an authorization gets ERR CMD HAS_AUTH", "CMD-22", "TRANS-7")(
    _ping_case(entity=False, authorized=True))


@case("cred.send.unsecured-signed", "a signed SEND to a queue without a sender key gets AUTH",
      "MSG-1", "CMD-17")
async def _send_unsecured_signed(ctx: Context) -> str | None:
    c = await ctx.connect()
    q = await ctx.create(c)
    q.sender_key = ctx.key()
    # The key signs correctly, but the queue has no sender key to verify it with (MSG-1).
    ctx.expect(await ctx.send(c, q, b"x"), error="AUTH")
    return None
