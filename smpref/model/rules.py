"""The rule table: every outcome the model gives a command, in one place.

Theory of operation
-------------------
A transmission reaches this table after the generic step
(:meth:`smpref.model.server.Server.receive`) has decoded it and its command and checked the
command's credential rule; the answers the step gives itself are listed under "What the table
does not decide" below. Driven by the command's declared entity and signer (spec/notation.md),
the step then looks up the queue the entity ID names and verifies the authorization with the
signer's key, against a dummy key when there is none (AUTH-3). What it found is the input of
this table:

* ``found``: whether the entity ID names a queue;
* the queue's ``mode`` (ConnectionMode), ``security`` (Security) and ``status`` (QueueStatus);
* the ``credential`` (Credential) the authorization proved;
* named ``guards``: conditions of the command's own fields or of the session that the columns
  above cannot express, each documented on :class:`Guard` and written as a predicate at the
  end of this file (:data:`GUARDS`): the only code of the table.

The rules of a command are tried in order and the first that matches decides (AUTH-2's "answer
the first failure"). A rule either accepts, and the command's effect runs
(:mod:`smpref.model.effects`), or answers one ``ERR``; one rejection also changes state first
(``SEND.queue-full`` stores the quota marker, MSG-6). Each rule names its requirement IDs, and
the model reports every rule it takes to an optional observer, which is what coverage is built
on. ``smpref docs rules`` renders this table as docs/reference/rules.md, including, for every
queue state, what each command gets.

Every other outcome of a command is decided here, as h11's ``_state.py`` owns every transition:
effects only change state and say what to send. The table is total (every input matches a rule)
and has no dead rule (every rule is the first match for some input); tests/test_rule_table.py
checks both.

What the table does not decide
------------------------------
:meth:`smpref.model.server.Server._receive` (smpref/model/server.py) gives these answers itself,
in this order, all but the last before the table is consulted. None is a rule of the table
(three are reported to the observer under names of their own: ``credentials``,
``forwarded.prohibited``, ``store.error``):

* ``ERR BLOCK``: the transmission does not decode in the layout of the session's version
  (TRANS-4, DEP-12);
* ``ERR SESSION``: below version 7, the transmission names a session other than its own
  (DEP-11);
* ``ERR SERVICE``: a service signature on a seed-design session (AUTH-4);
* ``ERR CMD UNKNOWN`` / ``SYNTAX``: the command does not decode in the definitions of the
  protocol and version the session speaks (TRANS-11, DEP-2);
* ``ERR CMD NO_AUTH`` / ``HAS_AUTH`` / ``NO_ENTITY``: the command's credential rule from the
  notation fails (:func:`smpref.wire.transmission.check_credentials`, TRANS-7);
* ``ERR CMD PROHIBITED``: a transmission forwarded inside RFWD is not one a proxy may forward
  (:data:`smpref.model.relay.FORWARDABLE`, DEP-14);
* ``ERR AUTH`` / ``SERVICE``: a service signature on a deployed session, once the queue was
  looked up: ``AUTH`` when the entity ID names no queue, else ``SERVICE`` (``_unserved`` in
  server.py; DEP-10, AUTH-4);
* ``ERR STORE``: the store cannot read or write during the lookup, a guard, an effect or the
  commit; it replaces whatever the table decided, and the transmission's changes are rolled
  back (STORE-11, STORE-12).

Elsewhere, outside this table: :func:`smpref.model.relay.serve_rfwd` answers ``ERR BLOCK`` inside
RRES when the client's forwarded batch does not parse (DEP-14), though the order of RFWD's own
failures is the table's (:class:`Guard`); and what an accepted PRXY or PFWD gets from the relay
is decided by the server's transport (:mod:`smpref.serve.proxy`, DEP-15), not by the model.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass

from smpref.crypto.primitives import sha3_384
from smpref.errors import ErrorCode
from smpref.model.records import QueueRecord
from smpref.model.relay import Failure
from smpref.model.server_state import ID_SIZE, ServerState
from smpref.model.states import (
    Credential,
    QueueColumns,
    QueueStatus,
    Security,
    SessionMode,
)
from smpref.model.step import (
    LINK_ID_SIZE,
    Step,
    blob_limit,
    deployed_link_data,
    new_request,
    queue_mode,
)
from smpref.wire.messages import (
    ACK,
    KEY,
    LGET,
    LSET,
    NEW,
    SEND,
    SKEY,
    ConnectionMode,
    DeployedLKEY,
    DeployedLSET,
    DeployedNEW,
    DeployedPRXY,
    LinkBlob,
    LinkPartPriority,
    QueueLink,
    RecordKind,
)
from smpref.wire.structs import Command
from smpref.wire.version_history import message_limit


class Accept(enum.Enum):
    """The outcome of a rule that lets the command's effect run; every other outcome is the
    :class:`~smpref.errors.ErrorCode` of the one ``ERR`` it answers."""

    ACCEPT = "accept"


ACCEPT = Accept.ACCEPT


class Guard(enum.Enum):
    """A condition a rule may require besides the state columns. The value says what holds."""

    WRONG_PASSWORD = "the server has a password and NEW's (or PRXY's) basicAuth is not it"
    MALFORMED_LINK_IDS = "the QueueLink's link ID is not 32 bytes or its sender ID not 24"
    BLOB_TOO_LARGE = "the encoded link blob is above the limit of the queue's type"
    MALFORMED_BLOB = "the blob's first part is not its one and only mandatory part"
    MALFORMED_NOTIFIER_ID = "the NtfRequest's notifier ID is not 24 bytes"
    CHOSEN_ID_TAKEN = "an ID the client chose is used by any queue, or twice in this NEW"
    LOW_ORDER_KEY = "an X25519 key of NEW is a low-order point (no shared secret exists)"
    OTHER_SENDER_KEY = "the queue is secured already, with another key than the command's"
    NO_LINK = "the queue has no link data (none was set, or securing dropped it)"
    LOW_ORDER_LINK_KEY = "LGET's k is a low-order point: nobody holds its secret"
    SESSION_SUBSCRIBED = "this session subscribed to the queue"
    SESSION_GETS = "this session read the queue with GET"
    NOTHING_DELIVERED = "no message of the queue is in flight on this session"
    OTHER_MESSAGE = "ACK names another message than the one in flight"
    BODY_TOO_LARGE = "the message body is above the configured maximum"
    QUOTA_HELD = "the queue answered QUOTA before and has not been emptied since"
    QUEUE_FULL = "the queue holds `quota` message records (messages and a quota marker)"
    SENDER_ID_NOT_DERIVED = ("a deployed NEW's link carries a sender ID other than the first "
                             "24 bytes of SHA3-384(corrId)")
    OTHER_LINK_ID = ("a deployed LSET names another LinkId than the queue's link, or, on a "
                     "queue without one, a LinkId some ID already uses")
    FIXED_DATA_CHANGED = "a deployed LSET keeps the LinkId but changes the fixed part"
    LOW_ORDER_NTF_KEY = "NKEY's X25519 key is a low-order point (no shared secret exists)"
    NOT_PROXYING = "the server's transport does not proxy (the model alone, or proxying off)"
    NO_PROXY_KEY = Failure.NO_KEY.value
    FORWARD_NOT_OPENED = Failure.NOT_OPENED.value
    NOT_FORWARDED = Failure.NOT_FORWARDED.value
    CLIENT_NOT_OPENED = Failure.CLIENT_NOT_OPENED.value
    FORWARDED_SEVERAL = Failure.SEVERAL.value


@dataclass(frozen=True, slots=True)
class Rule:
    """One row: when it matches, and what follows.

    A column left as None matches anything. ``found`` says whether the entity ID must name a
    queue; the queue columns (``mode``, ``security``, ``status``) can match only a found queue.
    ``effect`` names what runs: the command's effect for an accepting rule, a named effect for a
    rejection that changes state first, or None.
    """

    name: str
    command: str
    outcome: ErrorCode | Accept
    requirements: tuple[str, ...]
    found: bool | None = None
    mode: ConnectionMode | None = None
    security: Security | None = None
    status: QueueStatus | None = None
    credentials: frozenset[Credential] | None = None
    guard: Guard | None = None
    effect: str | None = None

    @property
    def accepts(self) -> bool:
        return self.outcome is ACCEPT

    def matches(self, queue: QueueColumns | None, credential: Credential,
                holds: Callable[[Guard], bool]) -> bool:
        """Whether this rule applies; the guard is evaluated last, and only if needed."""
        # mutant-equivalent[NotEq_Gt]: no rule requires a found queue, and for found=False rules `>`
        #   and `!=` agree
        if self.found is not None and (queue is not None) != self.found:
            return False
        columns = self.mode is not None or self.security is not None or self.status is not None
        if columns and (queue is None or not (
                (self.mode is None or queue.mode is self.mode)
                and (self.security is None or queue.security is self.security)
                and (self.status is None or queue.status is self.status))):
            return False
        if self.credentials is not None and credential not in self.credentials:
            return False
        return self.guard is None or holds(self.guard)


# ---------------------------------------------------------------------------------------------
# The table


NOT_VALID = frozenset({Credential.NONE, Credential.INVALID})
SIGNED = frozenset({Credential.VALID, Credential.INVALID})
VALID = frozenset({Credential.VALID})
ABSENT = False
INVITATION, CONTACT = ConnectionMode.Invitation, ConnectionMode.Contact
SECURED, UNSECURED = Security.SECURED, Security.UNSECURED
SUSPENDED = QueueStatus.SUSPENDED


def _queue_command(command: str, *rules: Rule) -> list[Rule]:
    """A command about an existing queue: an unknown entity ID or an authorization that does
    not verify is ``ERR AUTH``, the same answer for both (AUTH-2, AUTH-3)."""
    return [
        Rule(f"{command}.no-queue", command, ErrorCode.AUTH, ("AUTH-2", "AUTH-3"), found=ABSENT),
        Rule(f"{command}.not-authorized", command, ErrorCode.AUTH, ("AUTH-1", "AUTH-2"),
             credentials=NOT_VALID),
        *rules,
    ]


def _accept(command: str, *requirements: str) -> Rule:
    return Rule(f"{command}.accepted", command, ACCEPT, requirements, effect=command)


RULES: tuple[Rule, ...] = (
    # NEW: authorized by the rcvAuthKey it carries; checked in the order of QUEUE-10.
    Rule("NEW.not-authorized", "NEW", ErrorCode.AUTH, ("AUTH-1", "CMD-10"), credentials=NOT_VALID),
    Rule("NEW.wrong-password", "NEW", ErrorCode.AUTH, ("CMD-10", "QUEUE-10"),
         guard=Guard.WRONG_PASSWORD),
    Rule("NEW.malformed-link-ids", "NEW", ErrorCode.CMD_SYNTAX, ("LINK-2", "QUEUE-3", "QUEUE-10"),
         guard=Guard.MALFORMED_LINK_IDS),
    Rule("NEW.blob-too-large", "NEW", ErrorCode.LARGE_MSG, ("QUEUE-6",),
         guard=Guard.BLOB_TOO_LARGE),
    Rule("NEW.malformed-blob", "NEW", ErrorCode.CMD_SYNTAX, ("QUEUE-8",),
         guard=Guard.MALFORMED_BLOB),
    Rule("NEW.malformed-notifier-id", "NEW", ErrorCode.CMD_SYNTAX, ("CMD-12", "QUEUE-10"),
         guard=Guard.MALFORMED_NOTIFIER_ID),
    Rule("NEW.id-taken", "NEW", ErrorCode.AUTH, ("QUEUE-3", "QUEUE-4"),
         guard=Guard.CHOSEN_ID_TAKEN),
    Rule("NEW.low-order-key", "NEW", ErrorCode.CMD_SYNTAX, ("QUEUE-10",),
         guard=Guard.LOW_ORDER_KEY),
    _accept("NEW", "CMD-10", "CMD-11", "CMD-12", "QUEUE-1", "QUEUE-2", "QENC-1", "QENC-6"),

    *_queue_command(
        "KEY",
        Rule("KEY.other-key", "KEY", ErrorCode.AUTH, ("QUEUE-11",), guard=Guard.OTHER_SENDER_KEY),
        _accept("KEY", "CMD-13", "QUEUE-11", "LINK-11")),

    *_queue_command(
        "SKEY",
        Rule("SKEY.contact", "SKEY", ErrorCode.AUTH, ("CMD-14", "QUEUE-11"), mode=CONTACT),
        Rule("SKEY.other-key", "SKEY", ErrorCode.AUTH, ("QUEUE-11",), guard=Guard.OTHER_SENDER_KEY),
        _accept("SKEY", "CMD-14", "QUEUE-11", "LINK-11")),

    *_queue_command(
        "LSET",
        Rule("LSET.secured-invitation", "LSET", ErrorCode.AUTH, ("LINK-5", "LINK-11"),
             mode=INVITATION,
             security=SECURED),
        Rule("LSET.no-link", "LSET", ErrorCode.CMD_PROHIBITED, ("LINK-5",), guard=Guard.NO_LINK),
        Rule("LSET.blob-too-large", "LSET", ErrorCode.LARGE_MSG, ("QUEUE-6",),
             guard=Guard.BLOB_TOO_LARGE),
        Rule("LSET.malformed-blob", "LSET", ErrorCode.CMD_SYNTAX, ("QUEUE-8",),
             guard=Guard.MALFORMED_BLOB),
        _accept("LSET", "LINK-5")),

    # LGET: k names the link; authorized (by the key it carries) exactly when it carries one.
    Rule("LGET.no-link", "LGET", ErrorCode.AUTH, ("LINK-6", "AUTH-3"), found=ABSENT),
    Rule("LGET.bad-signature", "LGET", ErrorCode.AUTH, ("LINK-8",), credentials=frozenset(
        {Credential.INVALID})),
    Rule("LGET.secures-contact", "LGET", ErrorCode.AUTH, ("LINK-7", "QUEUE-11"), mode=CONTACT,
         credentials=VALID),
    Rule("LGET.other-key", "LGET", ErrorCode.AUTH, ("LINK-7", "QUEUE-11"), credentials=VALID,
         guard=Guard.OTHER_SENDER_KEY),
    Rule("LGET.low-order-k", "LGET", ErrorCode.AUTH, ("LINK-9",), guard=Guard.LOW_ORDER_LINK_KEY),
    _accept("LGET", "LINK-6", "LINK-7", "LINK-9", "LINK-11"),

    *_queue_command("NDEL", _accept("NDEL", "CMD-15")),

    *_queue_command(
        "SUB",
        Rule("SUB.session-gets", "SUB", ErrorCode.CMD_PROHIBITED, ("MSG-3",),
             guard=Guard.SESSION_GETS),
        _accept("SUB", "CMD-16", "MSG-2")),

    # SEND: unsigned while the queue has no sender key, signed by it once it has one (MSG-1).
    Rule("SEND.no-queue", "SEND", ErrorCode.AUTH, ("AUTH-2", "AUTH-3"), found=ABSENT),
    Rule("SEND.signed-to-unsecured", "SEND", ErrorCode.AUTH, ("MSG-1", "AUTH-3"),
         security=UNSECURED,
         credentials=SIGNED),
    Rule("SEND.unsigned-to-secured", "SEND", ErrorCode.AUTH, ("MSG-1",), security=SECURED,
         credentials=NOT_VALID),
    # the size before the status, as deployed checks it (MSG-5; simplexmq Server.hs:1842-1856)
    Rule("SEND.body-too-large", "SEND", ErrorCode.LARGE_MSG, ("MSG-5", "TRANS-12"),
         guard=Guard.BODY_TOO_LARGE),
    Rule("SEND.suspended", "SEND", ErrorCode.AUTH, ("ROT-3",), status=SUSPENDED),
    Rule("SEND.quota-held", "SEND", ErrorCode.QUOTA, ("MSG-6",), guard=Guard.QUOTA_HELD),
    Rule("SEND.queue-full", "SEND", ErrorCode.QUOTA, ("MSG-6", "QENC-6"), guard=Guard.QUEUE_FULL,
         effect="quota-marker"),
    _accept("SEND", "CMD-17", "MSG-1", "MSG-2", "QENC-2", "QENC-4", "LINK-11"),

    *_queue_command(
        "ACK",
        Rule("ACK.nothing-delivered", "ACK", ErrorCode.NO_MSG, ("MSG-4",),
             guard=Guard.NOTHING_DELIVERED),
        Rule("ACK.other-message", "ACK", ErrorCode.NO_MSG, ("MSG-4",), guard=Guard.OTHER_MESSAGE),
        _accept("ACK", "CMD-18", "MSG-4", "MSG-2")),

    *_queue_command(
        "GET",
        Rule("GET.session-subscribed", "GET", ErrorCode.CMD_PROHIBITED, ("MSG-3",),
             guard=Guard.SESSION_SUBSCRIBED),
        _accept("GET", "CMD-19", "MSG-3")),

    *_queue_command("OFF", _accept("OFF", "ROT-3", "ROT-4")),
    *_queue_command("DEL", _accept("DEL", "CMD-21", "MSG-8")),
    *_queue_command("NSUB", _accept("NSUB", "CMD-23")),
    _accept("PING", "CMD-22"),

    # --- deployed SMP only (spec/deployed.md): keyed by class, as the tags NEW, LSET and LGET
    # --- name other commands in the seed design. Deployed's own order (DEP-3 to DEP-6).
    Rule("DeployedNEW.not-authorized", "DeployedNEW", ErrorCode.AUTH, ("AUTH-1", "DEP-3"),
         credentials=NOT_VALID),
    Rule("DeployedNEW.wrong-password", "DeployedNEW", ErrorCode.AUTH, ("DEP-3",),
         guard=Guard.WRONG_PASSWORD),
    Rule("DeployedNEW.sender-id-not-derived", "DeployedNEW", ErrorCode.CMD_PROHIBITED, ("DEP-3",),
         guard=Guard.SENDER_ID_NOT_DERIVED),
    Rule("DeployedNEW.id-taken", "DeployedNEW", ErrorCode.AUTH, ("DEP-3", "QUEUE-4"),
         guard=Guard.CHOSEN_ID_TAKEN),
    Rule("DeployedNEW.low-order-key", "DeployedNEW", ErrorCode.CMD_SYNTAX, ("DEP-3", "QUEUE-10"),
         guard=Guard.LOW_ORDER_KEY),
    _accept("DeployedNEW", "DEP-3", "QUEUE-1", "QUEUE-2"),

    *_queue_command(
        "DeployedLSET",
        Rule("DeployedLSET.secured-invitation", "DeployedLSET", ErrorCode.AUTH, ("DEP-5",),
             mode=INVITATION, security=SECURED),
        Rule("DeployedLSET.other-link-id", "DeployedLSET", ErrorCode.AUTH, ("DEP-5",),
             guard=Guard.OTHER_LINK_ID),
        Rule("DeployedLSET.fixed-data-changed", "DeployedLSET", ErrorCode.AUTH, ("DEP-5",),
             guard=Guard.FIXED_DATA_CHANGED),
        _accept("DeployedLSET", "DEP-5")),

    *_queue_command("DeployedLDEL", _accept("DeployedLDEL", "DEP-5")),

    # LGET and LKEY name the queue by its LinkId: no queue has it -> AUTH, as deployed.
    Rule("DeployedLGET.no-link", "DeployedLGET", ErrorCode.AUTH, ("DEP-5", "AUTH-3"), found=ABSENT),
    Rule("DeployedLGET.invitation", "DeployedLGET", ErrorCode.AUTH, ("DEP-5",), mode=INVITATION),
    _accept("DeployedLGET", "DEP-5"),

    Rule("DeployedLKEY.no-link", "DeployedLKEY", ErrorCode.AUTH, ("DEP-5", "AUTH-3"), found=ABSENT),
    Rule("DeployedLKEY.not-authorized", "DeployedLKEY", ErrorCode.AUTH, ("AUTH-1", "DEP-5"),
         credentials=NOT_VALID),
    Rule("DeployedLKEY.contact", "DeployedLKEY", ErrorCode.AUTH, ("DEP-5",), mode=CONTACT),
    Rule("DeployedLKEY.other-key", "DeployedLKEY", ErrorCode.AUTH, ("DEP-5", "QUEUE-11"),
         guard=Guard.OTHER_SENDER_KEY),
    _accept("DeployedLKEY", "DEP-5"),

    *_queue_command(
        "DeployedNKEY",
        Rule("DeployedNKEY.low-order-key", "DeployedNKEY", ErrorCode.CMD_SYNTAX, ("DEP-6",),
             guard=Guard.LOW_ORDER_NTF_KEY),
        _accept("DeployedNKEY", "DEP-6")),

    # --- private message routing (DEP-14, DEP-15). The model is the relay;
    # --- as a proxy it is a deployed server that allows no proxying (allowSMPProxy off):
    # --- `smpref serve` proxies in its listener, around the model.
    Rule("DeployedPRXY.no-proxy", "DeployedPRXY", ErrorCode.PROXY_BASIC_AUTH, ("DEP-15",),
         guard=Guard.NOT_PROXYING),
    Rule("DeployedPRXY.wrong-password", "DeployedPRXY", ErrorCode.PROXY_BASIC_AUTH, ("DEP-15",),
         guard=Guard.WRONG_PASSWORD),
    _accept("DeployedPRXY", "DEP-15"),
    Rule("DeployedPFWD.no-proxy", "DeployedPFWD", ErrorCode.PROXY_NO_SESSION, ("DEP-15",),
         guard=Guard.NOT_PROXYING),
    _accept("DeployedPFWD", "DEP-15"),
    Rule("DeployedRFWD.no-proxy-key", "DeployedRFWD", ErrorCode.PROXY_BROKER_NO_AUTH,
         ("DEP-14",), guard=Guard.NO_PROXY_KEY),
    Rule("DeployedRFWD.not-opened", "DeployedRFWD", ErrorCode.CRYPTO, ("DEP-14",),
         guard=Guard.FORWARD_NOT_OPENED),
    Rule("DeployedRFWD.not-forwarded", "DeployedRFWD", ErrorCode.CMD_SYNTAX, ("DEP-14",),
         guard=Guard.NOT_FORWARDED),
    Rule("DeployedRFWD.client-not-opened", "DeployedRFWD", ErrorCode.CRYPTO, ("DEP-14",),
         guard=Guard.CLIENT_NOT_OPENED),
    Rule("DeployedRFWD.several", "DeployedRFWD", ErrorCode.BLOCK, ("DEP-14",),
         guard=Guard.FORWARDED_SEVERAL),
    _accept("DeployedRFWD", "DEP-14"),
)

#: the rules of each command, in order
BY_COMMAND: dict[str, tuple[Rule, ...]] = {}
for _rule in RULES:
    BY_COMMAND[_rule.command] = (*BY_COMMAND.get(_rule.command, ()), _rule)


def decide(command: str, queue: QueueColumns | None, credential: Credential,
           holds: Callable[[Guard], bool]) -> Rule:
    """The first rule of ``command`` that matches.

    Raises:
        LookupError: no rule matches (the table is total, so this is a bug in it).
    """
    for rule in BY_COMMAND[command]:
        if rule.matches(queue, credential, holds):
            return rule
    raise LookupError(f"the rule table has no rule for {command} here")


# ---------------------------------------------------------------------------------------------
# The guards' predicates: what each guard reads of a step (the only code of the table)


def _new_link(step: Step[Command]) -> QueueLink | None:
    cmd = step.command
    if isinstance(cmd, NEW) and cmd.queue_request is not None:
        return cmd.queue_request.queue_link
    return None


def _blob(step: Step[Command]) -> tuple[ConnectionMode, LinkBlob] | None:
    """The link blob a NEW or LSET carries, with the mode of the queue it is for."""
    cmd = step.command
    if isinstance(cmd, LSET):
        return step.found().mode, cmd.enc_link_data
    link = _new_link(step)
    if isinstance(cmd, NEW) and link is not None:
        return queue_mode(cmd), link.enc_link_data
    return None


def _blob_too_large(step: Step[Command]) -> bool:
    blob = _blob(step)
    return blob is not None and len(blob[1].encode()) > blob_limit(step.config, blob[0])


def _malformed_blob(step: Step[Command]) -> bool:
    blob = _blob(step)
    if blob is None:
        return False
    priorities = [p.priority for p in blob[1].parts]
    return priorities[0] is not LinkPartPriority.Mandatory or priorities.count(
        # mutant-equivalent[NotEq_Gt]: a blob without a mandatory part already fails the first-part
        #   check before it
        LinkPartPriority.Mandatory) != 1


def _malformed_link_ids(step: Step[Command]) -> bool:
    link = _new_link(step)
    return link is not None and (len(link.link_id) != LINK_ID_SIZE
                                 or len(link.sender_id) != ID_SIZE)


def _malformed_notifier_id(step: Step[Command]) -> bool:
    cmd = step.command
    return isinstance(cmd, NEW) and cmd.ntf_request is not None and len(
        cmd.ntf_request.notifier_id) != ID_SIZE


def _chosen_id_taken(step: Step[Command]) -> bool:
    cmd = step.command
    assert isinstance(cmd, NEW | DeployedNEW)
    request = new_request(cmd)
    chosen = [i for i in (request.link_id, request.sender_id, request.notifier_id)
              if i is not None]
    # mutant-equivalent[NotEq_Lt]: a set is never larger than the list it is made from
    # mutant-equivalent-deployed[NotEq_Gt]: a set is never larger than the list it is made of
    return len(set(chosen)) != len(chosen) or any(step.server.store.id_taken(i) for i in chosen)


def _sender_id_not_derived(step: Step[Command]) -> bool:
    cmd = step.command
    assert isinstance(cmd, DeployedNEW)
    sender_id = new_request(cmd).sender_id
    return sender_id is not None and sender_id != sha3_384(step.tx.corr_id)[:ID_SIZE]


def _other_link_id(step: Step[Command]) -> bool:
    cmd = step.command
    assert isinstance(cmd, DeployedLSET)
    link = step.found().link
    if link is not None:
        return link.link_id != cmd.link_id
    return step.server.store.id_taken(cmd.link_id)


def _fixed_data_changed(step: Step[Command]) -> bool:
    cmd = step.command
    assert isinstance(cmd, DeployedLSET)
    link = step.found().link
    return link is not None and deployed_link_data(link.blob).enc_fixed != \
        cmd.link_data.enc_fixed


def _wrong_password(step: Step[Command]) -> bool:
    cmd = step.command
    assert isinstance(cmd, NEW | DeployedNEW | DeployedPRXY)
    password = step.config.basic_auth
    return password is not None and cmd.basic_auth != password


def _low_order_key(step: Step[Command]) -> bool:
    material = step.material()
    return material.rcv_dh_secret is None or material.ntf_dh_secret is None


def _other_sender_key(step: Step[Command]) -> bool:
    cmd = step.command
    assert isinstance(cmd, KEY | SKEY | LGET | DeployedLKEY)
    queue = step.found()
    return queue.sender_key is not None and queue.sender_key != cmd.sender_key


def _no_link(step: Step[Command]) -> bool:
    return step.found().link is None


def _low_order_link_key(step: Step[Command]) -> bool:
    return step.link_response() is None


def _session_mode(step: Step[Command]) -> SessionMode | None:
    return step.session.modes.get(step.found().recipient_id)


def _nothing_delivered(step: Step[Command]) -> bool:
    return step.found().recipient_id not in step.session.delivered


def _other_message(step: Step[Command]) -> bool:
    cmd = step.command
    assert isinstance(cmd, ACK)
    delivered = step.session.delivered.get(step.found().recipient_id)
    return bool(cmd.msg_id) and cmd.msg_id != delivered


def _body_too_large(step: Step[Command]) -> bool:
    cmd = step.command
    assert isinstance(cmd, SEND)
    return len(cmd.body) > message_limit(step.config.max_message_length, step.session.version)


def _quota_held(step: Step[Command]) -> bool:
    return not step.found().can_write


def _queue_full(step: Step[Command]) -> bool:
    return queue_is_full(step.server, step.found())


def queue_is_full(server: ServerState, queue: QueueRecord) -> bool:
    """``SEND.queue-full``'s guard: the queue holds ``quota`` message records, messages and a
    quota marker (MSG-6)."""
    records = server.store.records(queue.recipient_id)
    counted = sum(r.kind in (RecordKind.Message, RecordKind.Quota) for r in records)
    # mutant-equivalent[GtE_Eq]: a queue never holds more than `quota` counted records: the quota
    #   marker is the last
    return counted >= server.config.quota


#: the predicate of every guard
GUARDS: dict[Guard, Callable[[Step[Command]], bool]] = {
    Guard.WRONG_PASSWORD: _wrong_password,
    Guard.MALFORMED_LINK_IDS: _malformed_link_ids,
    Guard.BLOB_TOO_LARGE: _blob_too_large,
    Guard.MALFORMED_BLOB: _malformed_blob,
    Guard.MALFORMED_NOTIFIER_ID: _malformed_notifier_id,
    Guard.CHOSEN_ID_TAKEN: _chosen_id_taken,
    Guard.LOW_ORDER_KEY: _low_order_key,
    Guard.OTHER_SENDER_KEY: _other_sender_key,
    Guard.NO_LINK: _no_link,
    Guard.LOW_ORDER_LINK_KEY: _low_order_link_key,
    Guard.SESSION_SUBSCRIBED: lambda s: _session_mode(s) is SessionMode.SUBSCRIBED,
    Guard.SESSION_GETS: lambda s: _session_mode(s) is SessionMode.GETTING,
    Guard.NOTHING_DELIVERED: _nothing_delivered,
    Guard.OTHER_MESSAGE: _other_message,
    Guard.BODY_TOO_LARGE: _body_too_large,
    Guard.QUOTA_HELD: _quota_held,
    Guard.QUEUE_FULL: _queue_full,
    Guard.SENDER_ID_NOT_DERIVED: _sender_id_not_derived,
    Guard.OTHER_LINK_ID: _other_link_id,
    Guard.FIXED_DATA_CHANGED: _fixed_data_changed,
    Guard.LOW_ORDER_NTF_KEY: lambda s: s.notifier_material().dh_secret is None,
    Guard.NOT_PROXYING: lambda s: not s.config.proxy,
    Guard.NO_PROXY_KEY: lambda s: s.opened().failure is Failure.NO_KEY,
    Guard.FORWARD_NOT_OPENED: lambda s: s.opened().failure is Failure.NOT_OPENED,
    Guard.NOT_FORWARDED: lambda s: s.opened().failure is Failure.NOT_FORWARDED,
    Guard.CLIENT_NOT_OPENED: lambda s: s.opened().failure is Failure.CLIENT_NOT_OPENED,
    Guard.FORWARDED_SEVERAL: lambda s: s.opened().failure is Failure.SEVERAL,
}


def decide_step(step: Step[Command]) -> Rule:
    """The rule the table takes for a concrete step: its queue, its credential, and the guards
    evaluated on it as the rules ask for them."""
    return decide(step.command.DEF.class_name, step.queue, step.credential,
                  lambda guard: GUARDS[guard](step))
