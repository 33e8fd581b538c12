"""Credentials: every command with no authorization, a wrong key, the right key, an entity ID
that names nothing, and each other party's ID of the same queue (TRANS-7, AUTH-1..AUTH-3).

What a server must answer is not written here: it is derived from the reference. A case sends
one transmission; the command's credential rule in the notation (TRANS-7) and then the model's
rule table (:mod:`smpref.model.rules`) say what that transmission gets, given the state of the
queue the case's set-up made and the guards that hold there. Each case cites the requirement
IDs of the rule it exercises.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace

from smpref.client.connection import SmpClient
from smpref.client.core import AuthKeyPair, DhKeyPair, LinkKeys, Reply, make_link_blob
from smpref.conform.context import Context, Queue
from smpref.conform.registry import CaseFunction, CaseGroup
from smpref.crypto.randomness import SeededRandom
from smpref.errors import CredentialError, Skip
from smpref.model.rules import Guard, QueueView, decide
from smpref.model.states import Credential, QueueStatus, Security
from smpref.notation import load
from smpref.wire.messages import (
    ACK,
    DEL,
    GET,
    KEY,
    LGET,
    LSET,
    NDEL,
    NEW,
    NSUB,
    OFF,
    PING,
    SEND,
    SKEY,
    SUB,
    ConnectionMode,
    LinkData,
    MsgFlags,
    SubscriptionMode,
)
from smpref.wire.structs import Command
from smpref.wire.transmission import AUTH_LENGTHS, Transmission, check_credentials

group = CaseGroup("authorization")
case = group.case

#: how a deployed server answers where the seed design answers otherwise (DIV-19, DIV-22)
DEPLOYED_ANSWERS = {"SUB": ("SOK",), "OFF": ("OK",)}
#: a signature's length: what the credential rule sees of any authorization
_SIGNATURE = next(length for length, what in AUTH_LENGTHS.items() if "Ed25519" in what)


@dataclass(frozen=True)
class Expected:
    """What one transmission must get: one of ``tags``, or ``ERR error``; and why."""

    tags: tuple[str, ...] = ()
    error: str | None = None
    requirements: tuple[str, ...] = ()


def expected(message: Command, *, entity: bytes, authorized: bool, queue: QueueView | None,
             credential: Credential, holds: frozenset[Guard] = frozenset(),
             extended: bool = True, version: int | None = None) -> Expected:
    """The reference's answer to ``message`` sent with this entity ID and authorization, to a
    queue in state ``queue`` (None: the entity ID names no queue), on a connection at
    ``version`` (a deployed one, or None)."""
    definition = message.DEF
    if queue is not None and version is not None and version < 9:
        # a queue created below 9 has no mode: the sender cannot secure it (DEP-12)
        queue = replace(queue, mode=ConnectionMode.Contact)
    tx = Transmission(bytes(_SIGNATURE) if authorized else b"", b"", entity, message.encode())
    try:
        check_credentials(definition, tx, message)
    except CredentialError as exc:
        return Expected(error=exc.smp_error, requirements=("TRANS-7",))
    rule = decide(definition.tag, queue, credential, holds.__contains__)
    if not rule.accepts:
        return Expected(error=rule.outcome, requirements=rule.requirements)
    tags = tuple(definition.responds)
    if not extended and definition.tag in DEPLOYED_ANSWERS:
        answers: tuple[str, ...] = DEPLOYED_ANSWERS[definition.tag]
        if version is not None and version < 16:  # SOK from 16 (DEP-12)
            answers = tuple("OK" if t == "SOK" else t for t in answers)
        tags = (*answers, *(t for t in tags if t == "MSG"))
    return Expected(tags=tags, requirements=rule.requirements)


def check(ctx: Context, reply: Reply, want: Expected, step: str = "") -> None:
    """Fail the case unless ``reply`` is what the reference expects."""
    if want.error is not None:
        ctx.expect(reply, error=want.error, step=step)
    else:
        ctx.expect(reply, *want.tags, step=step)


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
    """How a command's cases prepare its queue, and what state that leaves it in.

    ``queue`` is the state of the queue the set-up makes (None: no queue, for NEW); ``holds``
    the guards that hold for the command sent with the right key (a fresh session has nothing
    in flight, so ACK meets NOTHING_DELIVERED); ``needs`` what the set-up needs from the
    server.
    """

    make: SetupFunction
    needs: str
    queue: QueueView | None
    holds: frozenset[Guard] = frozenset()


def _state(mode: ConnectionMode, security: Security) -> QueueView:
    return QueueView(mode, security, QueueStatus.ACTIVE)


UNSECURED_INVITATION = _state(ConnectionMode.Invitation, Security.UNSECURED)
SECURED_INVITATION = _state(ConnectionMode.Invitation, Security.SECURED)
UNSECURED_CONTACT = _state(ConnectionMode.Contact, Security.UNSECURED)


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
    "NEW": Setup(_setup_new, "core", None),
    "KEY": Setup(_setup_key, "core", UNSECURED_INVITATION),
    "SKEY": Setup(_setup_skey, "core", UNSECURED_INVITATION),
    "LSET": Setup(_setup_lset, "seed", UNSECURED_CONTACT),
    "LGET": Setup(_setup_lget, "seed", UNSECURED_INVITATION),
    "NDEL": Setup(_setup_ndel, "seed", UNSECURED_INVITATION),
    "SUB": Setup(_setup_sub, "core", UNSECURED_INVITATION),
    "SEND": Setup(_setup_send, "core", SECURED_INVITATION),
    # Nothing was delivered on the case's session: the right key reaches the queue, which
    # answers NO_MSG (MSG-4).
    "ACK": Setup(_setup_ack, "core", UNSECURED_INVITATION,
                 frozenset({Guard.NOTHING_DELIVERED})),
    "GET": Setup(_setup_get, "core", UNSECURED_INVITATION),
    "OFF": Setup(_setup_off, "core", UNSECURED_INVITATION),
    "DEL": Setup(_setup_del, "core", UNSECURED_INVITATION),
    "NSUB": Setup(_setup_nsub, "seed", UNSECURED_INVITATION),
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


@dataclass(frozen=True)
class Variant:
    """One credential variant: what it sends, and therefore what the reference expects."""

    name: str
    authorized: bool
    credential: Credential
    found: bool
    party: str = ""


VARIANT_INPUTS = {
    "none": Variant("none", False, Credential.NONE, True),
    "wrong-key": Variant("wrong-key", True, Credential.INVALID, True),
    "right-key": Variant("right-key", True, Credential.VALID, True),
    # an entity ID that names nothing, or the ID of another party: the lookup by the command's
    # own entity kind finds no queue
    "wrong-entity": Variant("wrong-entity", True, Credential.VALID, False),
}


def expectation(setup: Setup, variant: Variant, message: Command, entity: bytes, *,
                extended: bool = True, version: int | None = None) -> Expected:
    """What the reference expects for one variant of one command's cases."""
    holds = setup.holds if variant.credential is Credential.VALID and variant.found \
        else frozenset()
    return expected(message, entity=entity, authorized=variant.authorized,
                    queue=setup.queue if variant.found else None,
                    credential=variant.credential, holds=holds, extended=extended,
                    version=version)


def _static_requirements(command: str, setup: Setup, variant: Variant) -> tuple[str, ...]:
    """The requirement IDs a case cites: those of the rule (or credential rule) it exercises,
    evaluated on a message of the command's kind; the entity shape comes from the notation."""
    definition = load().messages[command]
    entity = b"" if definition.entity == "none" and variant.found else b"e" * 24
    sample = _SAMPLES[command]
    want = expectation(setup, variant, sample, entity)
    return tuple(dict.fromkeys(("TRANS-7", "AUTH-2", *want.requirements)))


def _credential_case(command: str, setup: Setup, variant: Variant) -> CaseFunction:
    async def run(ctx: Context) -> str | None:
        c = await ctx.connect()
        seed_party = bool(variant.party) and PARTIES[variant.party] == "seed"
        t = await setup.make(ctx, c, seed_party)
        if variant.party:
            entity, step = t.parties[variant.party], f"with the {variant.party}'s ID"
        elif not variant.found:
            entity, step = ctx.random(len(t.entity) or 24), ""
        else:
            entity, step = t.entity, ""
        key = (t.key if variant.credential is Credential.VALID else ctx.key()) \
            if variant.authorized else None
        want = expectation(setup, variant, t.message, entity, extended=ctx.extended,
                           version=ctx.deployed_version)
        check(ctx, await ctx.request(c, t.message, entity, key), want, step)
        return None
    return run


def _register() -> None:
    definitions = load()
    for command, setup in SETUPS.items():
        own = PARTY_NAMES[definitions.messages[command].party]
        for name, text in VARIANTS.items():
            variant = VARIANT_INPUTS[name]
            case(f"cred.{command.lower()}.{name}", f"{command} {text}",
                 *_static_requirements(command, setup, variant),
                 needs=setup.needs)(_credential_case(command, setup, variant))
        if setup.queue is None:
            continue  # NEW has no queue yet, so no other party
        for party, party_needs in PARTIES.items():
            if party == own or (party == "link ID" and command != "LGET"):
                continue
            variant = Variant("party", True, Credential.VALID, False, party)
            slug = party.replace(" ", "-")
            case(f"cred.{command.lower()}.as-{slug}",
                 f"{command} with the right key and the {party}'s ID of the same queue",
                 *_static_requirements(command, setup, variant),
                 needs="seed" if "seed" in (setup.needs, party_needs) else "core")(
                _credential_case(command, setup, variant))


def _sample_messages() -> dict[str, Command]:
    """One message of each command, for evaluating the credential rule statically (only the
    presence of LGET's key matters to it)."""
    random = SeededRandom(b"credential cases")
    key = AuthKeyPair.ed25519(random).public
    owner = DhKeyPair.generate(random).public
    return {
        "NEW": NEW(rcv_auth_key=key, rcv_dh_key=owner, basic_auth=None,
                   sub_mode=SubscriptionMode.OnlyCreate, queue_request=None, ntf_request=None),
        "KEY": KEY(sender_key=key), "SKEY": SKEY(sender_key=key),
        "LSET": LSET(enc_link_data=make_link_blob(LinkKeys.generate(random), random,
                                                  LinkData(conn_req=b"", user_data=b""))),
        "LGET": LGET(sender_key=key), "NDEL": NDEL(), "SUB": SUB(),
        "SEND": SEND(flags=MsgFlags(notification=False), body=b""), "ACK": ACK(msg_id=b""),
        "GET": GET(), "OFF": OFF(), "DEL": DEL(), "NSUB": NSUB(),
    }


_SAMPLES = _sample_messages()
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
        want = expected(command, entity=b"", authorized=True, queue=None,
                        credential=Credential.VALID, holds=frozenset({Guard.WRONG_PASSWORD}))
        check(ctx, await ctx.request(c, command, key=draft.key), want, f"NEW {what} password")
    await ctx.create(c)  # and with it
    return None


def _ping_case(entity: bool, authorized: bool) -> CaseFunction:
    async def run(ctx: Context) -> str | None:
        c = await ctx.connect()
        entity_id = ctx.random(24) if entity else b""
        want = expected(PING(), entity=entity_id, authorized=authorized, queue=None,
                        credential=Credential.VALID if authorized else Credential.NONE)
        check(ctx, await ctx.request(c, PING(), entity_id, ctx.key() if authorized else None),
              want)
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
    message = SEND(flags=MsgFlags(notification=False), body=b"x")
    # The key signs correctly, but the queue has no sender key to verify it with (AUTH-3).
    want = expected(message, entity=q.sid, authorized=True, queue=UNSECURED_INVITATION,
                    credential=Credential.INVALID)
    check(ctx, await ctx.send(c, q, b"x"), want)
    return None
