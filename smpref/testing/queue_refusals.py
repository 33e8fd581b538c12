"""The model's state machine: what the spec refuses, each answer predicted by the oracle and
each refusal read back where it could have changed something: NEWs with each defect the spec
names, LSETs of bad blobs, badly signed LGETs, SENDs at and over the size limit, a sender's
commands to a deleted queue or to none, two senders racing for one link, LGET of a low-order
k, an ACK of another message than the one in flight, SKEY with another key to a secured
queue, SUB after GET, a queue the store cannot read, blobs at and over each type's limit.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from hypothesis import strategies as st
from hypothesis.stateful import precondition, rule

from smpref.client.core import AuthKeyPair, DhKeyPair, LinkKeys, make_link_blob
from smpref.testing.machine_base import NOTHING_TO_DO, Outcome, counted, some_of
from smpref.testing.queue_defects import NEW_PLANTS, NewDraft, Planting, bad_blob, blob_of
from smpref.testing.queue_exchanges import (
    LOW_ORDER_POINTS,
    MACHINE_CONFIG,
    MAX_QUEUES,
    PICK,
    QueueHandle,
)
from smpref.testing.queue_oracle import BLOB_DEFECTS, NEW_DEFECTS, Expected, SpecQueue
from smpref.testing.queue_retention import QueueRetention
from smpref.wire.keys import KeyAlgorithm, PublicKey
from smpref.wire.messages import (
    ACK,
    DEL,
    GET,
    IDS,
    LGET,
    LSET,
    NEW,
    SEND,
    SKEY,
    SUB,
    ConnectionMode,
    LinkBlob,
    LinkData,
    MsgFlags,
    NtfRequest,
    QueueLink,
    QueueRequest,
    SubscriptionMode,
)


@dataclass(frozen=True)
class Draw:
    """What a refusal is drawn with: a live queue and a session (``q``, ``s``, taken modulo),
    a second session (``t``), ``at``, which picks among the rest, and whether a NEW asks for a
    contact queue."""

    q: int
    s: int
    t: int
    at: int
    contact: bool


#: a refusal as :attr:`QueueRefusals.REFUSALS` holds it: what the machine sends for it, or
#: NOTHING_TO_DO when the state it needs is not there
Refusal = Callable[["QueueRefusals", Draw], Outcome | None]


def new_with(defect: str) -> Refusal:
    """The refusal of a NEW with ``defect``."""
    return lambda machine, draw: machine._create_refused(draw.s, defect, draw.at, draw.contact)


class QueueRefusals(QueueRetention):
    """The rule of what the spec refuses, above time and the sweep."""

    def _create_refused(self, s: int, defect: str, at: int, contact: bool) -> None:
        """NEW with one defect the spec names (:data:`NEW_DEFECTS`, planted as
        :data:`NEW_PLANTS` says): refused, nothing created, nobody subscribed; the sender ID it
        chose names no queue afterwards."""
        session, rnd = self._session(s), self.lb.client_random
        auth = AuthKeyPair.ed25519(rnd)
        link = LinkKeys.generate(rnd)
        blob = make_link_blob(link, rnd, LinkData(conn_req=b"refused", user_data=b""), [])
        link_id, sender_id, notifier_id = link.link_id, rnd(24), rnd(24)
        rcv_dh, ntf_dh = DhKeyPair.generate(rnd).public, DhKeyPair.generate(rnd).public
        good = NewDraft(None, MACHINE_CONFIG.basic_auth, link_id, sender_id, notifier_id, blob,
                        rcv_dh, ntf_dh)
        live = self._live()
        # the IDs in use, as the oracle knows them (NDEL frees the notifier ID, CMD-15)
        taken = [i for h in live for i in (h.rid, h.owner.sender_id, h.spec.notifier_id)
                 if i]
        linked = [h.link.link_id for h in live if h.link is not None and h.link_data is not None]
        if defect == "taken link ID" and not linked:
            defect = "one ID twice"
        draft = NEW_PLANTS[defect](good, Planting(
            rnd, taken, linked, at,
            PublicKey(KeyAlgorithm.X25519, LOW_ORDER_POINTS[at % len(LOW_ORDER_POINTS)]),
            lambda blob_defect: self._bad_blob(link, blob_defect, contact=contact)))
        self.stats["NEW refused: " + defect] += 1
        new = NEW(
            rcv_auth_key=auth.public,
            rcv_dh_key=draft.rcv_dh,
            basic_auth=draft.password,
            sub_mode=SubscriptionMode.Subscribe,
            queue_request=QueueRequest(
                conn_mode=ConnectionMode.Contact if contact else ConnectionMode.Invitation,
                queue_link=QueueLink(link_id=draft.link_id, sender_id=draft.sender_id,
                                     enc_link_data=draft.blob)),
            ntf_request=NtfRequest(notifier_id=draft.notifier_id,
                                   ntf_auth_key=AuthKeyPair.ed25519(rnd).public,
                                   rcv_ntf_dh_key=draft.ntf_dh),
        )
        replies = session.send(new, key=draft.signer or auth)
        self._check(f"NEW! {defect}", self._collect(session, replies),
                    self.spec.refused_new(session.session_id, defect))
        sender_id = draft.sender_id
        if len(sender_id) == 24 and sender_id not in taken:  # nothing was created (QUEUE-10)
            self._exchange("SEND to a refused NEW", session,
                           SEND(flags=MsgFlags(notification=False), body=self._body()),
                           sender_id, None,
                           expected=Expected.one(session.session_id, "ERR AUTH", "AUTH-3")
                           .note("QUEUE-10"))
            self.stats["read back NEW refused"] += 1

    def _bad_blob(self, link: LinkKeys, defect: str, *, contact: bool) -> LinkBlob:
        """A link blob with one of :data:`BLOB_DEFECTS` (QUEUE-6, QUEUE-8), for a queue of
        the type ``contact`` says."""
        return bad_blob(link, defect, contact=contact, config=MACHINE_CONFIG,
                        random=self.lb.client_random, conn_req=b"refused %d" % self.counter)

    def _lset_refused(self, q: int, defect: str,
                      among: list[QueueHandle] | None = None) -> None:
        """LSET of a blob the spec refuses (QUEUE-6, QUEUE-8), after the queue's own reasons
        (LINK-5), to the ``q``-th live queue or of ``among``; the link reads back as it was."""
        handle = among[q % len(among)] if among else self._queue(q)
        blob = self._bad_blob(handle.link or LinkKeys.generate(self.lb.client_random), defect,
                              contact=handle.contact)
        sid = handle.owner_session.session_id
        expected = self.spec.lset(handle.spec, sid, has_link=handle.link is not None,
                                  defect=defect)
        self._as_owner("LSET!", handle, LSET(enc_link_data=blob), expected)
        self._read_link_back(handle, "LSET refused")

    def _lget_badly_signed(self, q: int, s: int) -> Outcome | None:
        """LGET with a key, signed by another: ``ERR AUTH`` (LINK-8), and nothing secured."""
        linked = [h for h in self.handles if h.link is not None]
        if not linked:
            return NOTHING_TO_DO
        handle, session = linked[q % len(linked)], self._session(s)
        assert handle.link is not None
        rnd = self.lb.client_random
        # LINK-8 when the link's queue is found; else no queue has the link (LINK-6)
        found = not handle.spec.deleted and handle.link_data is not None
        self._exchange("LGET*", session, LGET(sender_key=AuthKeyPair.ed25519(rnd).public),
                       handle.link.k, AuthKeyPair.ed25519(rnd),
                       expected=Expected.one(session.session_id, "ERR AUTH",
                                             "LINK-8" if found else "LINK-6"))
        return None

    def _send_too_large(self, q: int, s: int, *, signed: bool, extra: int) -> None:
        """SEND of a body above the limit (MSG-5): ``ERR LARGE_MSG``, nothing stored; with
        ``extra`` 0, a body of exactly the limit, which is a message like any other."""
        handle, session = self._queue(q), self._session(s)
        key = handle.sender_key if signed else None
        if not extra:
            self._send(handle, session, key, notify=False, label="SEND (at the limit)",
                       size=MACHINE_CONFIG.max_message_length)
            return
        expected = self.spec.send_too_large(handle.spec, session.session_id,
                                            key.public.raw if key else None)
        body = b"x" * (MACHINE_CONFIG.max_message_length + extra)
        self._exchange("SEND!", session, SEND(flags=MsgFlags(notification=False), body=body),
                       handle.owner.sender_id, key, expected=expected)

    def _to_a_deleted_queue(self, q: int, s: int, command: str) -> Outcome | None:
        """A sender's command to a queue that is gone: ``ERR AUTH``, as for an ID never used
        (MSG-8, AUTH-3)."""
        gone = [h for h in self.handles if h.spec.deleted]
        if not gone:
            return NOTHING_TO_DO
        handle, session = gone[q % len(gone)], self._session(s)
        key = AuthKeyPair.ed25519(self.lb.client_random)
        if command == "SEND":
            self._send(handle, session, None, notify=False, label="SEND (deleted)")
        else:
            expected = self.spec.secure(handle.spec, session.session_id, key.public.raw,
                                        self.now, allowed=True)
            self._exchange("SKEY (deleted)", session, SKEY(sender_key=key.public),
                           handle.owner.sender_id, key, expected=expected)
        return None

    def _skey_to_no_queue(self, s: int) -> None:
        """SKEY to a sender ID no queue ever had: ``ERR AUTH`` (AUTH-3), as to a deleted one."""
        session, key = self._session(s), AuthKeyPair.ed25519(self.lb.client_random)
        nobody = SpecQueue(mode="invitation", updated_day=0, deleted=True)
        expected = self.spec.secure(nobody, session.session_id, key.public.raw, self.now,
                                    allowed=True)
        self._exchange("SKEY (no queue)", session, SKEY(sender_key=key.public),
                       self.lb.client_random(24), key, expected=expected)

    def _sub_after_get(self, q: int) -> Outcome | None:
        """A session of a queue's owner that is not its subscriber GETs from it and then
        SUBscribes to it: ``ERR CMD PROHIBITED``, a session that GETs does not subscribe
        (MSG-3)."""
        handle = self._queue(q)
        others = [c for c in self.sessions if c.session_id != handle.spec.subscriber]
        if not others:
            return NOTHING_TO_DO
        owner = others[q % len(others)]
        self._exchange("GET", owner, GET(), handle.rid, handle.owner.auth_key,
                       expected=self.spec.get(handle.spec, owner.session_id))
        self._exchange("SUB (after GET)", owner, SUB(), handle.rid, handle.owner.auth_key,
                       expected=self.spec.sub(handle.spec, owner.session_id, handle.rid,
                                              self.now))
        return None

    def _race_for_the_link(self, q: int, s: int, t: int) -> Outcome | None:
        """Two would-be senders read a link with their own keys, one after the other: the
        first secures an invitation and reads it, the second is refused (LINK-7, QUEUE-11);
        on a contact queue both are refused (LINK-7). An open invitation races first, when
        there is one: the second reader's refusal is the rarer answer."""
        linked = [h for h in self._live() if h.link and h.link_data]
        if not linked and len(self._live()) >= MAX_QUEUES:  # no link, and no room for one
            return NOTHING_TO_DO
        open_invitations = [h for h in linked if not h.contact and not h.spec.secured]
        if not open_invitations and len(self._live()) < MAX_QUEUES:  # one to race for
            self.create(s=s, contact=False, with_link=True, optional_parts=0, with_ntf=False,
                        subscribe=False, x25519_auth=False)
            linked = [h for h in self._live() if h.link and h.link_data]
            open_invitations = [h for h in linked if not h.contact and not h.spec.secured]
        handle = (open_invitations or linked)[q % len(open_invitations or linked)]
        self._lget(handle, self._session(s), with_key=True, other_key=True)
        self._lget(handle, self._session(t), with_key=True, other_key=True)
        return None

    def _lget_low_order_k(self, s: int, point: bytes) -> Outcome | None:
        """A creator may choose any link ID, SHA-256 of a low-order point too (the server
        cannot know k from it); LGET with that k finds the queue and answers ``ERR AUTH``:
        nobody holds its secret, so no LINK can be sealed to it (LINK-9). Once a run: no rule
        picks that queue, and every sweep walks it."""
        if self.strays:
            return NOTHING_TO_DO
        self.stats["low-order links"] += 1
        session, rnd = self._session(s), self.lb.client_random
        auth = AuthKeyPair.ed25519(rnd)
        link = LinkKeys.generate(rnd)
        new = NEW(
            rcv_auth_key=auth.public,
            rcv_dh_key=DhKeyPair.generate(rnd).public,
            basic_auth=MACHINE_CONFIG.basic_auth,
            sub_mode=SubscriptionMode.OnlyCreate,
            queue_request=QueueRequest(conn_mode=ConnectionMode.Invitation, queue_link=QueueLink(
                link_id=hashlib.sha256(point).digest(), sender_id=rnd(24),
                enc_link_data=make_link_blob(link, rnd, LinkData(conn_req=b"k", user_data=b"")))),
            ntf_request=None,
        )
        # no rule picks the queue, nothing is pushed for it; the sweep walks it (RET-7)
        stray, expected = self.spec.new(session.session_id, "invitation", self.now, False, None)
        replies = self._exchange("NEW (low-order link)", session, new, b"", auth,
                                 expected=expected)
        stray.rid = replies[0].expect(IDS).rcv_id
        assert new.queue_request is not None and new.queue_request.queue_link is not None
        self._stored_blob(stray, new.queue_request.queue_link.enc_link_data)
        self.strays.append(stray)
        self._exchange("LGET (low-order k)", session, LGET(sender_key=None), point, None,
                       expected=Expected.one(session.session_id, "ERR AUTH", "LINK-9"))
        return None

    def _ack_another(self, q: int, at: int) -> Outcome | None:
        """ACK, from a session with a record in flight, of an ID that is not that record's:
        ``ERR NO_MSG``, and the record stays in flight (MSG-4)."""
        pending = [(h, c) for h in self._live() for c in self.sessions
                   if c.session_id in h.spec.in_flight]
        if not pending:
            return NOTHING_TO_DO
        handle, session = pending[q % len(pending)]
        msg_id = (b"\x00" if at % 2 else b"\xff") * 24
        expected = self.spec.ack(handle.spec, session.session_id, msg_id)
        self._exchange("ACK (another)", session, ACK(msg_id=msg_id), handle.rid,
                       handle.owner.auth_key, expected=expected)
        return None

    def _blob_limits(self, s: int) -> None:
        """QUEUE-6 at each queue type's limit: a blob of exactly the limit is taken and one
        byte more is not; the queue taken is deleted at once, so that it leaves no blob."""
        session, rnd = self._session(s), self.lb.client_random
        sid = session.session_id
        for mode, limit in ((ConnectionMode.Invitation, MACHINE_CONFIG.invitation_blob_limit),
                            (ConnectionMode.Contact, MACHINE_CONFIG.contact_blob_limit)):
            for size in (limit, limit + 1):
                auth = AuthKeyPair.ed25519(rnd)
                new = NEW(rcv_auth_key=auth.public, rcv_dh_key=DhKeyPair.generate(rnd).public,
                          basic_auth=MACHINE_CONFIG.basic_auth,
                          sub_mode=SubscriptionMode.OnlyCreate,
                          queue_request=QueueRequest(conn_mode=mode, queue_link=QueueLink(
                              link_id=rnd(32), sender_id=rnd(24),
                              enc_link_data=blob_of(size))),
                          ntf_request=None)
                label = f"NEW ({mode.name} blob of {size})"
                if size > limit:
                    self._exchange(label, session, new, b"", auth,
                                   expected=Expected.one(sid, "ERR LARGE_MSG", "QUEUE-6"))
                    continue
                queue, expected = self.spec.new(
                    sid, "contact" if mode is ConnectionMode.Contact else "invitation",
                    self.now, False, None)
                replies = self._exchange(label, session, new, b"", auth, expected=expected)
                rid = replies[0].expect(IDS).rcv_id
                self._exchange("DEL", session, DEL(), rid, auth,
                               expected=self.spec.delete(queue, sid, rid))
                self.stats["blobs at the limit"] += 1

    def _lset_refused_to_a_settable_link(self, q: int, defect: str) -> Outcome | None:
        """LSET of a bad blob to a queue whose link can be set: the blob's own defect is what
        refuses it (QUEUE-6, QUEUE-8), not the queue's reasons (LINK-5)."""
        settable = self._settable()
        if not settable:
            return NOTHING_TO_DO
        self._lset_refused(q, defect, settable)
        return None

    def _new_without_a_queue_request(self, s: int) -> Outcome | None:
        """The rarer form of NEW, without its request: a contact queue (DIV-5)."""
        if len(self._live()) >= MAX_QUEUES:
            return NOTHING_TO_DO
        self.create(s=s, contact=True, with_link=False, optional_parts=0, with_ntf=False,
                    subscribe=False, x25519_auth=False)
        return None

    def _skey_to_a_secured_invitation(self, q: int, s: int) -> Outcome | None:
        """SKEY with another key to a secured invitation: refused, its key stays (QUEUE-11)."""
        secured = [h for h in self._live() if h.sender_key is not None and not h.contact]
        if not secured:
            return NOTHING_TO_DO
        self._skey(secured[q % len(secured)], self._session(s), own_key=False,
                   signed_by_other=False)
        return None

    #: every refusal the refusals rule draws from, in the order it sends them, each answer
    #: predicted by the oracle and each refusal read back where it could have changed
    #: something: a NEW with each defect the spec names (planted as queue_defects.NEW_PLANTS
    #: says), then the others; ``at`` picks a blob's defect, a size over the limit, a
    #: low-order point
    REFUSALS: ClassVar[dict[str, Refusal]] = {
        **{f"NEW: {defect}": new_with(defect) for defect in sorted(NEW_DEFECTS)},
        "LSET of a bad blob": lambda m, d: m._lset_refused(d.q, BLOB_DEFECTS[
            d.at % len(BLOB_DEFECTS)]),
        "LSET of a bad blob to a link that can be set":
            lambda m, d: m._lset_refused_to_a_settable_link(d.q, BLOB_DEFECTS[
                d.at % len(BLOB_DEFECTS)]),
        "LGET signed by another key": lambda m, d: m._lget_badly_signed(d.q, d.s),
        "SEND at the size limit": lambda m, d: m._send_too_large(d.q, d.s,
                                                                 signed=d.at % 2 == 0, extra=0),
        "SEND over the size limit": lambda m, d: m._send_too_large(
            d.q, d.s, signed=d.at % 2 == 0, extra=1 + d.at % 64),
        "SEND to a deleted queue": lambda m, d: m._to_a_deleted_queue(d.q, d.s, "SEND"),
        "SKEY to a deleted queue": lambda m, d: m._to_a_deleted_queue(d.q, d.s, "SKEY"),
        "SKEY to no queue": lambda m, d: m._skey_to_no_queue(d.s),
        "SUB after GET": lambda m, d: m._sub_after_get(d.q),
        "NEW without a queue request": lambda m, d: m._new_without_a_queue_request(d.s),
        "a queue the store cannot read": lambda m, d: m._unreadable_queue(d.q, d.s, d.at % 7),
        "two senders race for a link": lambda m, d: m._race_for_the_link(d.q, d.s, d.t),
        "LGET of a low-order k": lambda m, d: m._lget_low_order_k(
            d.s, LOW_ORDER_POINTS[d.at % len(LOW_ORDER_POINTS)]),
        "ACK of another message": lambda m, d: m._ack_another(d.q, d.at),
        "blobs at each type's limit": lambda m, d: m._blob_limits(d.s),
        "SKEY with another key to a secured invitation":
            lambda m, d: m._skey_to_a_secured_invitation(d.q, d.s),
    }

    # at most twice a run, each drawing about three in four of REFUSALS: about as many
    # refusals as one round of all of them once a run sent, and the runs keep their steps for
    # the conversations the other floors need
    @precondition(lambda self: self._live() and self.fired["refusals"] < 2)
    @rule(which=some_of(list(REFUSALS)), q=PICK, s=PICK, t=PICK, at=PICK,
          contact=st.booleans())
    @counted
    def refusals(self, which: tuple[str | None, ...], q: int, s: int, t: int,  # noqa: PLR0917
                 at: int, contact: bool) -> Outcome | None:
        """Most of the refusals of :attr:`REFUSALS`, in its order, each drawn or not
        (:func:`~smpref.testing.machine_base.some_of`): a failing run shrinks to the refusal
        that failed. One whose state is not there (no deleted queue to send to) does nothing;
        each one done is counted ("refusal <name>"), and a step that did none is not."""
        done = [name for name in which if name is not None
                and self.REFUSALS[name](self, Draw(q, s, t, at, contact)) is not NOTHING_TO_DO]
        self.stats.update("refusal " + name for name in done)
        return None if done else NOTHING_TO_DO
