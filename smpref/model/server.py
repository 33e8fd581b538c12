"""The reference model of an SMP server: pure, deterministic, sans-IO.

Theory of operation
-------------------
A :class:`Server` owns a :class:`~smpref.model.queue_store.QueueStore`, an injected clock and
an injected random source, and any number of sessions. A transport hands it the bytes of one
transmission at a time, with the session they arrived on (:meth:`Server.receive`); it returns
the transmissions to send, each addressed to a session (:class:`Outgoing`): the response to the
command, and events pushed to other sessions (MSG to a subscriber, END to a replaced one, NMSG
to a notifier). :meth:`Server.sweep` runs one slice of the retention, message-expiry and
blob-pressure sweep (:mod:`smpref.model.retention`); :meth:`Server.expire` a whole cycle.

Processing one transmission (TRANS-7, AUTH-2) is one generic step for every command:

1. decode the transmission (``ERR BLOCK``) and the command, in the definitions of the protocol
   the session speaks (``ERR CMD UNKNOWN`` / ``SYNTAX``; TRANS-11, DEP-2);
2. the command's credential rule from the notation (``ERR CMD NO_AUTH`` / ``HAS_AUTH`` /
   ``NO_ENTITY``);
3. look up the queue its entity ID names, by the command's declared ``entity`` (a queue another
   protocol created is not found, DEP-1), and verify the authorization with the key its
   declared ``signer`` names: a key of that queue or one the command carries, and a dummy key
   when there is none, at the same cost (AUTH-3);
4. the rule table (:mod:`smpref.model.rules`) decides: an ``ERR``, or the command's effect
   (:mod:`smpref.model.effects`).

The store's changes are committed once per transmission, before the answer is returned
(STORE-7); a store that cannot write makes that one transmission fail with ``ERR STORE``. Every
rule taken and every transition inside an effect is reported, with its requirement IDs, to an
optional observer: what coverage of the spec by a run is built on.

Nothing here touches a socket, the wall clock or ``os.urandom``; the same code runs in tests,
state machines, the TLS server and the conformance oracle.
"""

from __future__ import annotations

from smpref.crypto.auth import verify
from smpref.crypto.primitives import sha256
from smpref.errors import ErrorCode, StoreError, WireError
from smpref.model import (
    deployed_effects,  # noqa: F401 - registers deployed SMP's effects
    retention,
)
from smpref.model.effects import EFFECTS
from smpref.model.records import QueueRecord, Role
from smpref.model.relay import FORWARDABLE
from smpref.model.rules import Accept, decide_step
from smpref.model.server_state import Observer, ServerState, SweepState
from smpref.model.sessions import Outgoing, Session
from smpref.model.states import Credential
from smpref.model.step import LINK_ID_SIZE, Step
from smpref.notation.definitions import EntityKind, MessageDef, Signer
from smpref.wire.dialects import Dialect
from smpref.wire.keys import PublicKey
from smpref.wire.messages import ERR
from smpref.wire.schema import decode_message, error_type, wire_error
from smpref.wire.structs import Command
from smpref.wire.transmission import Transmission, check_credentials

__all__ = ["Observer", "Outgoing", "Server", "Session"]


#: the store role an entity kind of the notation looks the queue up by
#: (deployed LGET and LKEY name a link by its LinkId itself, DEP-5)
_ROLE_OF_ENTITY = {EntityKind.RECIPIENT_ID: Role.RECIPIENT, EntityKind.SENDER_ID: Role.SENDER,
                   EntityKind.NOTIFIER_ID: Role.NOTIFIER, EntityKind.LINK_ID: Role.LINK}


class Server(ServerState):
    """The model server. See the module docstring for the theory of operation."""

    # --- the entry point -------------------------------------------------------------------

    def receive(self, session_id: bytes, data: bytes) -> list[Outgoing]:
        """Process one transmission received on a session (see the module docstring)."""
        return self._receive(self.sessions[session_id], data)

    def serve_forwarded(self, session: Session, transmission: bytes) -> list[Outgoing]:
        """Serve a transmission RFWD carried (DEP-14) on its own ``session``
        (:func:`smpref.model.relay.forwarded_session`), within RFWD's commit."""
        return self._receive(session, transmission, forwarded=True)

    def _receive(self, session: Session, data: bytes, *, forwarded: bool = False
                 ) -> list[Outgoing]:
        session_id = session.session_id
        try:  # in the layout of the session's version (DEP-12)
            tx, sent_session = Transmission.decode_sent(data, session.version)
        except WireError:  # a transmission that does not decode is ERR BLOCK (TRANS-4)
            return [self._error(session_id, b"", b"", ErrorCode.BLOCK)]
        if sent_session is not None and sent_session != session_id:
            # below version 7 the transmission names its session (DEP-11)
            return [self._error(session_id, tx.corr_id, b"", ErrorCode.SESSION)]
        # mutant-equivalent-deployed[*]: below version 16 no transmission carries a service
        #   signature (Protocol.hs:1632), so at 10 and 6 only the seed design's answer (AUTH-4)
        #   depends on this line; at 16 and later queue.err.service-order and
        #   transport.service-signature judge it
        if tx.service_signature is not None and session.dialect is Dialect.SEED:  # AUTH-4
            return [self._error(session_id, tx.corr_id, tx.entity_id, ErrorCode.SERVICE)]
        try:
            message = decode_message(tx.command, kind="command", dialect=session.dialect,
                                     version=session.version)
        except WireError as exc:  # CMD UNKNOWN, CMD SYNTAX
            return [Outgoing(session_id, tx.corr_id, tx.entity_id,
                             ERR(error=wire_error(exc)))]
        try:
            check_credentials(message.DEF, tx, message)
        except WireError as exc:  # the credential rule's error
            self.observe("credentials", ("TRANS-7",))
            return [Outgoing(session_id, tx.corr_id, tx.entity_id,
                             ERR(error=wire_error(exc)))]
        assert isinstance(message, Command)
        if forwarded and message.DEF.class_name not in FORWARDABLE:
            # a proxy forwards a sender's and a link reader's commands only (DEP-14)
            self.observe("forwarded.prohibited", ("DEP-14",))
            return [self._error(session_id, tx.corr_id, tx.entity_id, ErrorCode.CMD_PROHIBITED)]
        try:  # the lookup, a guard or an effect may meet a store that cannot read or write
            step = self._step(session, tx, message)
            if tx.service_signature is not None:  # deployed SMP: a client that is no service
                return [self._error(session_id, tx.corr_id, tx.entity_id, _unserved(step))]
            rule = decide_step(step)
            self.observe(rule.name, reported(rule.requirements, session.dialect))
            out = EFFECTS[rule.effect](step) if rule.effect is not None else []
            if not rule.accepts:
                out = [self._error(session_id, tx.corr_id, tx.entity_id, rule.outcome)]
            # mutant-equivalent-deployed[AddNot]: commit() is the savepoint a command's changes are
            #   rolled back to: the mutant shows only when a store fails or the model raises, which
            #   no client can cause (flush() writes)
            if not forwarded:  # a forwarded one is committed with its RFWD
                self.store.commit()
            return out
        # mutant-equivalent-deployed[*]: {store-failure}
        except StoreError as exc:
            # mutant-equivalent-deployed[AddNot]: {store-failure}
            if forwarded:
                raise
            self.store.rollback()
            self.store_errors.append(str(exc))
            self.observe("store.error", ("STORE-11", "STORE-12"))
            return [Outgoing(session_id, tx.corr_id, tx.entity_id, ERR(error=wire_error(exc)))]

    def _step(self, session: Session, tx: Transmission, message: Command) -> Step[Command]:
        """Steps 3 of the module docstring: the queue and the credential."""
        definition: MessageDef = message.DEF
        queue = self.lookup(definition.entity, tx.entity_id)
        if queue is not None and queue.dialect is not session.dialect:
            # a queue is served only in the protocol that created it (DEP-1): to the other,
            # it does not exist
            self.observe("dialect.other", ("DEP-1",))
            queue = None
        credential = Credential.NONE
        if tx.authorization:
            key = signer_key(message, queue)
            valid = verify(key, tx.authorization, tx.authorized_bytes(session.signing_id),
                           tx.corr_id, session.secret)
            credential = Credential.VALID if valid else Credential.INVALID
        return Step(self, session, tx, message, queue, credential)

    def lookup(self, entity: EntityKind, entity_id: bytes) -> QueueRecord | None:
        """The queue an entity ID names, by the notation's entity kind of the command."""
        if entity is EntityKind.LINK_KEY:  # LGET's k: the link ID is SHA-256(k) (LINK-6)
            # mutant-equivalent-deployed[*]: {seed-lget}
            return self.store.find(Role.LINK, sha256(entity_id)) if len(
                # mutant-equivalent[ReplaceComparisonOperator]: a k of another length names no link
                #   either way: its SHA-256 is no queue's link ID
                # mutant-equivalent-deployed[*]: {seed-lget}
                entity_id) == LINK_ID_SIZE else None
        role = _ROLE_OF_ENTITY.get(entity)
        return self.store.find(role, entity_id) if role is not None else None

    def _error(self, session_id: bytes, corr_id: bytes, entity_id: bytes,
               error: ErrorCode | Accept) -> Outgoing:
        """``ERR error``; an accepting outcome here is a bug in the caller."""
        if not isinstance(error, ErrorCode):
            raise TypeError(f"{error} is not an error")
        return Outgoing(session_id, corr_id, entity_id, ERR(error=error_type(error)))

    # --- sweeps ----------------------------------------------------------------------------

    def expire(self) -> list[Outgoing]:
        """One whole sweep cycle: every slice, from a fresh start (RET-7)."""
        self.sweep_state = SweepState()
        out: list[Outgoing] = []
        done = False
        while not done:
            more, done = self.sweep()
            out += more
        return out

    def sweep(self, limit: int = 256) -> tuple[list[Outgoing], bool]:
        """One slice of the sweep over at most ``limit`` queues (RET-7); whether the cycle
        ended (:func:`smpref.model.retention.sweep`)."""
        return retention.sweep(self, limit)


#: what a deployed session never exercises, though the rules it shares cite it: the ratchet,
#: the last-message flag and the seed design's links (DEP-4, DEP-5, DEP-7)
_SEED_ONLY_PREFIXES = ("QENC-", "ROT-4", "LINK-")


def reported(requirements: tuple[str, ...], dialect: Dialect) -> tuple[str, ...]:
    """The requirement IDs a rule taken on a session of ``dialect`` really exercised: all of
    them in the seed design; in deployed SMP those its profile shares, and DEP-2 (the generic
    step serves it too)."""
    if dialect is Dialect.SEED:
        return requirements
    kept = tuple(r for r in requirements if not r.startswith(_SEED_ONLY_PREFIXES))
    return kept if "DEP-2" in kept else (*kept, "DEP-2")


def _unserved(step: Step[Command]) -> ErrorCode:
    """A deployed session's answer to a service signature (DEP-10, AUTH-4): deployed checks
    it once the command decoded, its credential rule held and its queue was found, so an
    entity ID that names no queue is still ``AUTH`` (simplexmq Server.hs:1230-1243, 1271-1277)."""
    names_queue = step.command.DEF.entity in _ROLE_OF_ENTITY
    return ErrorCode.AUTH if names_queue and step.queue is None else ErrorCode.SERVICE


def signer_key(message: Command, queue: QueueRecord | None) -> PublicKey | None:
    """The key a command's authorization is verified with: the key the command carries when
    its signer is one of its own fields, else the queue's key its signer names (None without a
    queue, or when the queue has no such key)."""
    definition = message.DEF
    if definition.signer is Signer.FIELD:
        carried = getattr(message, definition.signer_attr)
        return carried if isinstance(carried, PublicKey) else None
    return queue_key(definition.signer, queue) if queue is not None else None


def queue_key(signer: Signer, queue: QueueRecord) -> PublicKey | None:
    """The queue's key a command's signer names (None when the queue has none)."""
    if signer is Signer.RECIPIENT_KEY:
        return queue.recipient_key
    if signer is Signer.SENDER_KEY:
        return queue.sender_key
    if signer is Signer.NOTIFIER_KEY:
        return queue.notifier.key if queue.notifier is not None else None
    return None
