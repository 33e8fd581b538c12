"""What each accepted command does: its effect on the store and the sessions, and its answers.

An effect runs only after the rule table (:mod:`smpref.model.rules`) accepted the command, so
it decides nothing: every check is a rule there. Each effect returns the transmissions to send,
the command's own answer first. :data:`EFFECTS` maps each rule's ``effect`` name to its
function.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any, TypeVar, cast

from smpref.crypto import ratchet
from smpref.crypto.primitives import x25519_public
from smpref.model import delivery
from smpref.model.delivery import deliver_first, enqueue, push_to_subscriber
from smpref.model.records import Link, Notifier, QueueRecord
from smpref.model.server_state import ServerState
from smpref.model.sessions import Outgoing, Session
from smpref.model.states import QueueStatus, SessionMode
from smpref.model.step import NO_RATCHET, Step, new_request
from smpref.wire.dialects import Dialect
from smpref.wire.keys import KeyAlgorithm, PublicKey
from smpref.wire.messages import (
    ACK,
    COUNT,
    DEL,
    GET,
    IDS,
    KEY,
    LGET,
    LINK,
    LSET,
    NDEL,
    NEW,
    NSUB,
    OFF,
    OK,
    PING,
    PONG,
    SEND,
    SKEY,
    SUB,
    ConnectionMode,
    DeployedNEW,
    DeployedSOK,
    LinkBlob,
    RecordKind,
    ServerNtfCreds,
    SubscriptionMode,
)
from smpref.wire.schema import MessageCodec
from smpref.wire.structs import Command, Response

C = TypeVar("C", bound=Command)
Effect = Callable[[Step[Command]], list[Outgoing]]

#: every effect a rule of the table can name
EFFECTS: dict[str, Effect] = {}


def effect(name: str) -> Callable[[Callable[[Step[C]], list[Outgoing]]],
                                  Callable[[Step[C]], list[Outgoing]]]:
    """Register the effect ``name``. The cast is sound: the server runs the effect of a rule
    only with a step of that rule's command."""
    def register(function: Callable[[Step[C]], list[Outgoing]]
                 ) -> Callable[[Step[C]], list[Outgoing]]:
        EFFECTS[name] = cast(Effect, function)
        return function
    return register


def subscribed(session: Session) -> Response:
    """SUB's and NSUB's answer: OK in the seed design, ``SOK`` with no service ID in deployed
    SMP (v16+, DEP-4)."""
    return DeployedSOK(service_id=None) if session.dialect is Dialect.DEPLOYED else OK()


def answer(step: Step[C], message: Response, entity_id: bytes | None = None) -> Outgoing:
    """The answer to the step's command, on its session, with its corrId."""
    entity = step.tx.entity_id if entity_id is None else entity_id
    return Outgoing(step.session.session_id, step.tx.corr_id, entity, message)


def link_of(link_id: bytes, blob: LinkBlob, drop_on_send: bool = False) -> Link:
    return Link(link_id, blob, len(blob.encode()), drop_on_send)


# --- creating and securing -------------------------------------------------------------------


@effect("NEW")
@effect("DeployedNEW")
def _new(step: Step[NEW | DeployedNEW]) -> list[Outgoing]:
    """NEW of either dialect (CMD-10, DEP-3): a deployed queue has no ratchet, so it stores no
    Initial record (DEP-7)."""
    server, cmd = step.server, step.command
    request = new_request(cmd)
    material = step.material()
    # mutant-equivalent[ReplaceAndWithOr]: an internal assertion that the LOW_ORDER_KEY guard has
    #   already made true
    assert material.rcv_dh_secret is not None and material.ntf_dh_secret is not None
    owner_key = cmd.rcv_dh_key.raw
    deployed = request.dialect is Dialect.DEPLOYED
    # mutant-equivalent-deployed[AddNot]: {seed-ratchet}
    if deployed:
        state, initial = NO_RATCHET, b""
    else:
        state, initial = ratchet.start(owner_key, server.random)
    notifier, ntf_creds = None, None
    if request.ntf_key is not None:
        assert material.notifier_id is not None
        notifier = Notifier(material.notifier_id, request.ntf_key, material.ntf_dh_secret)
        ntf_creds = ServerNtfCreds(
            notifier_id=material.notifier_id,
            srv_ntf_dh_key=PublicKey(KeyAlgorithm.X25519, x25519_public(material.ntf_secret)))
    link_id = material.link_id
    queue = QueueRecord(
        recipient_id=material.recipient_id,
        recipient_key=cmd.rcv_auth_key,
        rcv_dh_secret=material.rcv_dh_secret,
        owner_key=owner_key,
        server_dh_public=x25519_public(material.server_secret),
        sender_id=material.sender_id,
        mode=request.mode,
        ratchet=state,
        updated_at=server.today(),
        # mutant-equivalent[ReplaceAndWithOr]: a NEW's LinkId and link data are None together: a
        #   link carries both, and the server chooses a LinkId only for a deployed link, which has
        #   data (step._draw_material)
        link=link_of(link_id, request.blob) if link_id is not None and request.blob else None,
        notifier=notifier,
        dialect=request.dialect,
    )
    server.store.put(queue)
    if not deployed:
        # mutant-equivalent-deployed[*]: the Initial record, which only a seed queue stores (the
        #   line is under `if not deployed`)
        enqueue(server, queue, RecordKind.Initial, initial, notification=False)
    ids = ids_at(step.session.version, IDS(
        rcv_id=queue.recipient_id, snd_id=queue.sender_id,
        rcv_public_dh_key=PublicKey(KeyAlgorithm.X25519, queue.server_dh_public),
        queue_mode=request.queue_mode, link_id=link_id, service_id=None,
        server_ntf_creds=ntf_creds))
    out = [answer(step, ids, entity_id=b"")]
    if cmd.sub_mode is SubscriptionMode.Subscribe:
        out += subscribe(server, step.session, queue, corr_id=None)
    return out


def ids_at(version: int | None, ids: IDS) -> IDS:
    """IDS as a session at ``version`` is told it (None: the current layout), as deployed's
    server reports it (DEP-12): below 15 no mode and no link ID, but from 9 to
    14 whether the sender can secure the queue (a messaging queue); below 16 no service ID,
    below 17 no notifier credentials (a NEW below 17 cannot ask for them)."""
    if version is None:
        return ids
    layout = cast(MessageCodec, IDS.CODEC).at(version)  # which fields are in spec/commands
    told: dict[str, Any] = {f.attr: None for f in layout.fields
                            if f.attr not in layout.version_items}
    if "sender_can_secure" in layout.version_items:
        told["sender_can_secure"] = ids.queue_mode is ConnectionMode.Invitation
    return replace(ids, **told)


def _link_rule(queue: QueueRecord) -> tuple[str, ...]:
    """Which requirement drops an invitation's link data when it is secured."""
    return ("DEP-5",) if queue.dialect is Dialect.DEPLOYED else ("LINK-11",)


def secure(server: ServerState, queue: QueueRecord, key: PublicKey, *, by_lget: bool
           ) -> QueueRecord:
    """KEY, SKEY and LGET with a key (CMD-13, CMD-14, LINK-7). The same key again changes
    nothing; securing drops an invitation's link data at once, or at the first SEND when LGET
    secured it (LINK-11)."""
    if queue.sender_key is not None:
        return queue
    link = queue.link
    # a deployed queue keeps an invitation's link data until the first SEND, however it was
    # secured (DEP-5; simplexmq Server.hs:1861-1862)
    pending = by_lget or queue.dialect is Dialect.DEPLOYED
    if link is not None and queue.mode is ConnectionMode.Invitation:
        # mutant-equivalent[AddNot]: {observer}
        # mutant-equivalent-deployed[*]: what securing reports to the coverage observer, which no
        #   client receives
        server.observe("link.drop-pending" if pending else "link.dropped", _link_rule(queue))
        link = replace(link, drop_on_send=True) if pending else None
    secured = replace(server.touch(queue), sender_key=key, link=link)
    server.store.put(secured)
    return secured


@effect("KEY")
def _key(step: Step[KEY]) -> list[Outgoing]:
    # mutant-equivalent-deployed[ReplaceFalseWithTrue]: {by-lget}
    secure(step.server, step.found(), step.command.sender_key, by_lget=False)
    return [answer(step, OK())]


@effect("SKEY")
def _skey(step: Step[SKEY]) -> list[Outgoing]:
    # mutant-equivalent-deployed[ReplaceFalseWithTrue]: {by-lget}
    secure(step.server, step.found(), step.command.sender_key, by_lget=False)
    return [answer(step, OK())]


@effect("LSET")
def _lset(step: Step[LSET]) -> list[Outgoing]:
    queue = step.found()
    assert queue.link is not None
    step.server.store.put(replace(queue, link=link_of(queue.link.link_id,
                                                      step.command.enc_link_data)))
    return [answer(step, OK())]


@effect("LGET")
def _lget(step: Step[LGET]) -> list[Outgoing]:
    if step.command.sender_key is not None:
        secure(step.server, step.found(), step.command.sender_key, by_lget=True)
    sealed = step.link_response()
    assert sealed is not None
    return [answer(step, LINK(sealed=sealed))]


@effect("NDEL")
def _ndel(step: Step[NDEL]) -> list[Outgoing]:
    server, queue = step.server, step.found()
    out: list[Outgoing] = []
    if queue.notifier is not None:
        out = server.notifier_gone(queue, step.session.session_id)
        server.store.put(replace(queue, notifier=None))
    return [*out, answer(step, OK())]


# --- reading -----------------------------------------------------------------------------------


def subscribe(server: ServerState, session: Session, queue: QueueRecord, corr_id: bytes | None
              ) -> list[Outgoing]:
    """Subscribe a session (MSG-2); corr_id None: no OK (NEW with Subscribe). A previous
    subscriber on another session gets END (CMD-33); the first record is delivered, again if it
    was in flight on this session."""
    rid = queue.recipient_id
    out: list[Outgoing] = []
    previous = server.subscribers.get(rid)
    if previous is not None and previous != session.session_id:
        old = server.sessions.get(previous)
        if old is not None:
            old.modes.pop(rid, None)
            old.delivered.pop(rid, None)
            out.append(server.end(previous, rid, "CMD-33"))
    server.subscribers[rid] = session.session_id
    session.modes[rid] = SessionMode.SUBSCRIBED
    session.delivered.pop(rid, None)  # a repeated SUB delivers the pending message again
    queue = server.touch(queue)
    server.store.put(queue)
    if corr_id is not None:
        out.append(Outgoing(session.session_id, corr_id, rid, subscribed(session)))
    msg = deliver_first(server, session, queue, b"")
    return out + ([msg] if msg else [])


@effect("SUB")
def _sub(step: Step[SUB]) -> list[Outgoing]:
    return subscribe(step.server, step.session, step.found(), step.tx.corr_id)


@effect("GET")
def _get(step: Step[GET]) -> list[Outgoing]:
    queue = step.found()
    step.session.modes[queue.recipient_id] = SessionMode.GETTING
    msg = deliver_first(step.server, step.session, queue, step.tx.corr_id)
    return [msg] if msg else [answer(step, OK())]


@effect("ACK")
def _ack(step: Step[ACK]) -> list[Outgoing]:
    server, session, queue = step.server, step.session, step.found()
    rid = queue.recipient_id
    delivered = session.delivered.pop(rid)
    if step.command.msg_id:
        server.store.remove(rid, delivered)
        queue = server.reopen_if_empty(queue)
    # An empty ID clears what is in flight and removes nothing (MSG-4): deployed removes the
    # queue's first message only when its ID equals the one given, here "" (Server.hs:1815-1820,
    # Server/MsgStore/Types.hs:94-110), so a subscriber gets that message again.
    if session.modes.get(rid) is SessionMode.SUBSCRIBED:
        msg = deliver_first(server, session, queue, step.tx.corr_id)
        if msg is not None:
            return [msg]
    return [answer(step, OK())]


# --- sending -----------------------------------------------------------------------------------


@effect("SEND")
def _send(step: Step[SEND]) -> list[Outgoing]:
    cmd = step.command
    return [answer(step, OK()),
            *store_message(step.server, step.found(), cmd.body, cmd.flags.notification)]


def store_message(server: ServerState, queue: QueueRecord, body: bytes, notification: bool
                  ) -> list[Outgoing]:
    """Store a message at the end of a queue, as an accepted SEND does, and return what it
    pushes: MSG to a subscriber with nothing in flight (MSG-2), NMSG to a notifier (MSG-7).
    A seed queue's record is the ratchet's (QENC-4), a deployed queue's the body as sent
    (DEP-7); a link dropped on send goes."""
    state = queue.ratchet
    if queue.dialect is Dialect.DEPLOYED:  # the body as received: no ratchet (DEP-7)
        record_bytes = body
    else:
        # mutant-equivalent[GtE_Eq]: since_update never passes the interval: it is reset to 0 when
        #   it reaches it (QENC-4)
        # mutant-equivalent-deployed[*]: {seed-ratchet}
        if state.since_update >= server.config.ratchet_update_interval:
            server.observe("ratchet.update", ("QENC-4",))
            state, update = ratchet.update(state, queue.owner_key, server.random)
            # mutant-equivalent-deployed[*]: {seed-ratchet}
            enqueue(server, queue, RecordKind.Update, update, notification=False)
        state, record_bytes = ratchet.encrypt(state, body)
    stored = enqueue(server, queue, RecordKind.Message, record_bytes, notification)
    link = queue.link
    if link is not None and link.drop_on_send:
        server.observe("link.dropped", _link_rule(queue))
        link = None
    queue = replace(server.touch(queue), ratchet=state, link=link)
    server.store.put(queue)
    out = push_to_subscriber(server, queue)
    if notification and queue.notifier is not None:
        out += delivery.notify(server, queue, stored)
    return out


@effect("quota-marker")
def _quota_marker(step: Step[SEND]) -> list[Outgoing]:
    """The queue just became full: store the quota marker and hold QUOTA until it is empty
    (MSG-6). The rule answers ``ERR QUOTA`` after this."""
    store_quota_marker(step.server, step.found())
    return []


def store_quota_marker(server: ServerState, queue: QueueRecord) -> None:
    """Store the quota marker at the end of a full queue and hold it full until it is empty
    (MSG-6). Nothing is pushed: a full queue's first record is already in flight to a
    subscriber."""
    # mutant-equivalent-deployed[*]: a deployed quota marker's data is never sent: seal_record seals
    #   a quota record's body empty (DEP-7)
    marker = b"" if queue.dialect is Dialect.DEPLOYED else ratchet.quota_marker(queue.ratchet)
    # mutant-equivalent-deployed[ReplaceFalseWithTrue]: seal_record clears a deployed quota record's
    #   notification flag (`record.notification and not quota`, DEP-7)
    enqueue(server, queue, RecordKind.Quota, marker, False)
    server.store.put(replace(queue, can_write=False))


# --- notifications, suspension, deletion, keep-alive -------------------------------------------


@effect("NSUB")
def _nsub(step: Step[NSUB]) -> list[Outgoing]:
    server, session, queue = step.server, step.session, step.found()
    rid = queue.recipient_id
    out = []
    previous = server.notifier_subscribers.get(rid)
    if previous is not None and previous != session.session_id and previous in server.sessions:
        server.sessions[previous].notifications.discard(rid)
        out.append(server.end(previous, step.tx.entity_id, "CMD-33"))
    server.notifier_subscribers[rid] = session.session_id
    session.notifications.add(rid)
    return [*out, answer(step, subscribed(session))]


@effect("OFF")
def _off(step: Step[OFF]) -> list[Outgoing]:
    server, queue = step.server, step.found()
    if queue.status is not QueueStatus.SUSPENDED:
        server.store.put(replace(queue, status=QueueStatus.SUSPENDED))
    if queue.dialect is Dialect.DEPLOYED:  # deployed OFF answers OK (DEP-4)
        return [answer(step, OK())]
    count = len(server.store.records(queue.recipient_id))
    return [answer(step, COUNT(remaining=count))]


@effect("DEL")
def _del(step: Step[DEL]) -> list[Outgoing]:
    out = step.server.delete_queue(step.found(), except_session=step.session.session_id)
    return [*out, answer(step, OK())]


@effect("PING")
def _ping(step: Step[PING]) -> list[Outgoing]:
    return [answer(step, PONG(), entity_id=b"")]
