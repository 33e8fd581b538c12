"""Both protocols of the model side by side: the deployed profile under a state machine, and the
differential property of the core commands (TRANS-11, DEP-1 to DEP-8, DEP-10, AUTH-4).

Two model servers with the same limits run the same random program of core commands, one with
seed-design sessions and one with deployed sessions: create (invitation or contact, with or without
subscribing and notifier credentials), KEY, SKEY, SEND (unsigned, signed, wrongly signed, with the
notification flag), SUB, GET, ACK (of the message in flight, an empty ID, or another ID), OFF, DEL,
NSUB, PING, commands signed with the wrong key, transmissions with a service signature,
reconnecting, and the clock moving across the message TTL. Each side speaks its own dialect on the
wire: deployed NEW with ``queueReqData`` and ``ntfCreds``, seed NEW with ``QueueRequest`` and
``NtfRequest``.

Before every step the oracle (:class:`~smpref.testing.dialect_oracle.CoreOracle`, written from
spec/) predicts what each session receives. After it, each side's transmissions, read in its
own dialect, must equal the prediction rendered in that dialect's tags; and the two sides must
agree with each other once spelling is set aside (:func:`~smpref.testing.dialect_oracle.coarse`):
the differential property. A seed client absorbs its queue's key records (QENC) itself, by
acknowledging them, before anything is compared; so the property says the core commands mean
the same in both protocols wherever the spec says they do.
"""

from __future__ import annotations

from collections.abc import Mapping

from hypothesis import strategies as st
from hypothesis.stateful import (
    initialize,
    precondition,
    rule,
)

from smpref.client.core import AuthKeyPair, DhKeyPair, OwnedQueue, deployed_new
from smpref.crypto.primitives import box_key
from smpref.independent.ratchet_mirror import RatchetMirror
from smpref.model.config import DAY, ServerConfig
from smpref.testing import machine_base
from smpref.testing.dialect_oracle import CoreOracle, Prediction, Seen, coarse, render
from smpref.testing.dialect_sides import Side, SideQueue
from smpref.testing.loopback import Loopback
from smpref.testing.machine_base import CountedMachine, RunResult, counted
from smpref.wire.dialects import Dialect
from smpref.wire.messages import (
    ACK,
    DEL,
    GET,
    IDS,
    KEY,
    NEW,
    NSUB,
    OFF,
    PING,
    SEND,
    SKEY,
    SUB,
    ConnectionMode,
    MsgFlags,
    NewNtfCreds,
    NtfRequest,
    QueueRequest,
    RecordKind,
    SubscriptionMode,
)
from smpref.wire.schema import encode_message
from smpref.wire.structs import Message
from smpref.wire.transmission import Transmission, authorized_bytes, transmission_at
from smpref.wire.version_history import NOTIFIER_CREDENTIALS, SENDER_SECURES, SERVICES

#: small limits so that quotas and message expiry happen in short runs; no queue expires by
#: date within a run and no key update is due (the seed design's alone: DEP-7, DEP-8)
DIALECT_CONFIG = ServerConfig(quota=3, message_ttl_seconds=2 * DAY,
                              unsecured_invitation_days=10_000, contact_days=10_000,
                              ratchet_update_interval=1_000_000)
SESSIONS = 3
#: below this version a transmission names its session (DEP-11)
SESSION_IN_TRANSMISSION = 7
#: commands inside a transmission that decodes, and the error each is (AUTH-2): an unknown
#: tag, and known tags with fields that do not parse
UNDECODABLE = {b"ZZZZ": "CMD UNKNOWN", b"": "CMD UNKNOWN", b"PING extra": "CMD SYNTAX",
               b"SEND": "CMD SYNTAX", b"KEY \x01": "CMD SYNTAX", b"SUB x": "CMD SYNTAX"}
MAX_QUEUES = 4
#: the commands a session that is no service sends with a service signature (AUTH-4, DEP-10):
#: a recipient's SUB, a sender's SEND, and a tag no version knows
SERVICE_SIGNED = ("SUB", "SEND", "ZZZZ")
#: the versions a deployed session is drawn at (DEP-12): every one of deployed SMP's range,
#: and None for the current layouts (the seed sessions' are always the seed design's)
VERSIONS: tuple[int | None, ...] = (*range(6, 19), None)


class DialectMachine(CountedMachine):
    """The same core program on a seed and a deployed server, checked against one oracle."""

    def __init__(self) -> None:
        super().__init__()
        self.sides = [Side(d, self.make_loopback(d), self.stats)
                      for d in (Dialect.SEED, Dialect.DEPLOYED)]
        for side in self.sides:
            side.connections = [side.loopback.connect(side.dialect) for _ in range(SESSIONS)]
        self.oracle = CoreOracle(SESSIONS, DIALECT_CONFIG.quota,
                                 DIALECT_CONFIG.message_ttl_seconds)
        self.keys = {"sender": AuthKeyPair.ed25519(self.random), "other":
                     AuthKeyPair.ed25519(self.random)}
        self.bodies = 0
        #: the version each deployed session speaks (None: the newest layouts)
        self.versions: list[int | None] = [None] * SESSIONS

    def make_loopback(self, dialect: Dialect) -> Loopback:
        """Both servers draw the same seeded randomness (a hook for campaign observers)."""
        return Loopback(seed=7, config=DIALECT_CONFIG)

    def random(self, n: int) -> bytes:
        return self.sides[0].loopback.client_random(n)

    # one argument per session (SESSIONS is 3): the seeded engine translates sampled_from
    @initialize(v0=st.sampled_from(VERSIONS), v1=st.sampled_from(VERSIONS),
                v2=st.sampled_from(VERSIONS))
    def start(self, v0: int | None, v1: int | None, v2: int | None) -> None:
        """Each deployed session at a version of its own (DEP-12)."""
        versions = [v0, v1, v2]
        assert len(versions) == SESSIONS
        self.stats["programs"] += 1
        self.trace.append(f"start(versions={versions})")
        for s, version in enumerate(versions):
            self.connect(s, version)

    def connect(self, s: int, version: int | None) -> None:
        """(Re)connect session ``s`` on both sides, the deployed one at ``version``."""
        self.versions[s] = version
        self.stats[f"version {version or 'newest'}"] += 1
        for side in self.sides:
            side.connections[s].close()
            side.connections[s] = side.loopback.connect(
                side.dialect, version if side.dialect is Dialect.DEPLOYED else None)

    def version_of(self, side: Side, s: int) -> int | None:
        return self.versions[s] if side.dialect is Dialect.DEPLOYED else None

    # --- running one step on both sides ---------------------------------------------------

    def step(self, name: str, expected: Prediction,
             build: Mapping[Dialect, tuple[int, Message, bytes, AuthKeyPair | None]]) -> None:
        """Send the step's command on each side; compare with the prediction and each other."""
        self.trace.append(name)
        self.stats["steps"] += 1
        self.sync_modes()
        seen: dict[Dialect, dict[int, list[Seen]]] = {}
        for side in self.sides:
            s, message, entity, key = build[side.dialect]
            own = side.connections[s].send(message, entity, key)
            received = {s: own}
            for index, connection in enumerate(side.connections):
                if index != s:
                    received[index] = list(connection.inbox)
                    connection.inbox.clear()
            seen[side.dialect] = {i: side.read(i, replies)
                                  for i, replies in received.items()}
        for side in self.sides:
            for s in range(SESSIONS):
                want = [render(x, side.dialect, self.version_of(side, s))
                        for x in expected.get(s, [])]
                got = seen[side.dialect].get(s, [])
                assert got == want, (f"{name}: {side.dialect.value} session {s} received "
                                     f"{got}, the spec says {want}")
        for s in range(SESSIONS):  # the differential property, stated on its own
            assert [coarse(x) for x in seen[Dialect.SEED].get(s, [])] == \
                [coarse(x) for x in seen[Dialect.DEPLOYED].get(s, [])], name
        self.checked |= self.requirements_of(expected)

    def requirements_of(self, expected: Prediction) -> set[str]:
        """What comparing a step's transmissions with ``expected`` checked: the differential
        property always (TRANS-11); deployed's own answers where the protocols differ
        (DEP-4); MSG in deployed's layout (DEP-7), pushed to or after SUB (MSG-2); the quota
        (MSG-6); and AUTH, for a wrong key or a deleted queue (AUTH-2)."""
        out = {"TRANS-11"}
        for s, seen in expected.items():
            for x in seen:
                if x.tag in ("SUBSCRIBED", "SUSPENDED", "GONE"):
                    out.add("DEP-4")
                elif x.tag == "MSG":
                    out.add("DEP-7")
                    if self.oracle.sessions[s].modes.get(x.queue) == "SUB":
                        out.add("MSG-2")
                if x.quota or x.tag == "ERR QUOTA":
                    out.add("MSG-6")
                elif x.tag == "ERR AUTH":
                    out.add("AUTH-2")
        return out

    def sync_modes(self) -> None:
        """How each session reads each queue, as its client knows from what it sent."""
        modes = {(s, q): mode for s, session in enumerate(self.oracle.sessions)
                 for q, mode in session.modes.items()}
        for side in self.sides:
            side.modes = dict(modes)

    # --- rules ----------------------------------------------------------------------------

    def has_queue(self) -> bool:
        return bool(self.oracle.queues)

    @precondition(lambda self: len(self.oracle.queues) < MAX_QUEUES)
    @rule(s=st.integers(0, SESSIONS - 1), contact=st.booleans(), subscribe=st.booleans(),
          notifier=st.booleans())
    @counted
    def create(self, s: int, contact: bool, subscribe: bool, notifier: bool) -> None:
        version = self.versions[s]
        # what the deployed session's NEW cannot say, neither side asks for: below 9 a queue
        # has no mode, served as a contact queue (DEP-3); below 17 no notifier credentials
        if version is not None:
            contact = contact or version < SENDER_SECURES
            notifier = notifier and version >= NOTIFIER_CREDENTIALS
        auth, dh = AuthKeyPair.ed25519(self.random), DhKeyPair.generate(self.random)
        ntf = AuthKeyPair.ed25519(self.random) if notifier else None
        ntf_dh = DhKeyPair.generate(self.random)
        sub = SubscriptionMode.Subscribe if subscribe else SubscriptionMode.OnlyCreate
        mode = ConnectionMode.Contact if contact else ConnectionMode.Invitation
        seed_new = NEW(rcv_auth_key=auth.public, rcv_dh_key=dh.public, basic_auth=None,
                       sub_mode=sub, queue_request=QueueRequest(conn_mode=mode, queue_link=None),
                       ntf_request=NtfRequest(notifier_id=self.random(24),
                                              ntf_auth_key=ntf.public,
                                              rcv_ntf_dh_key=ntf_dh.public) if ntf else None)
        at = 18 if version is None else version  # None: the newest layouts
        deployed = deployed_new(
            at, rcv_auth_key=auth.public, rcv_dh_key=dh.public, basic_auth=None, sub_mode=sub,
            mode=mode if at >= SENDER_SECURES else None,
            ntf_creds=NewNtfCreds(ntf_auth_key=ntf.public, rcv_ntf_dh_key=ntf_dh.public)
            if ntf else None)
        for side in self.sides:
            side.queues.append(SideQueue(OwnedQueue(auth, dh), ntf_key=ntf))
        expected = self.oracle.new(s, contact=contact, subscribe=subscribe, notifier=notifier)
        self.sync_modes()
        q = len(self.oracle.queues) - 1
        for side, message in zip(self.sides, (seed_new, deployed), strict=True):
            replies = side.connections[s].send(message, b"", auth)
            ids = replies[0].message
            assert isinstance(ids, IDS), (side.dialect, replies[0].tag)
            side.queues[q].owned.created(ids)
            side.queues[q].server_dh = ids.rcv_public_dh_key.raw
            if side.dialect is Dialect.SEED:
                side.queues[q].mirror = RatchetMirror(dh.secret)
            if ids.server_ntf_creds is not None:
                side.queues[q].notifier_id = ids.server_ntf_creds.notifier_id
            got = [Seen("IDS", q), *side.read(s, replies[1:])]
            v = self.version_of(side, s)
            want = [render(x, side.dialect, v) for x in expected[s]]
            assert got == want, (side.dialect, got, want)
            # IDS says the mode as the version can: from 15 the mode, from 9 to 14 whether
            # the sender can secure the queue, below 9 nothing (DEP-12)
            said = (ids.queue_mode, ids.sender_can_secure)
            assert said == ((mode, None) if v is None or v >= 15 else
                            (None, not contact) if v >= 9 else (None, None)), (v, said)
            assert (ids.server_ntf_creds is not None) == notifier
            if side.dialect is Dialect.DEPLOYED:  # no ratchet, the secret is deployed's
                assert side.queues[q].owned.rcv_dh_secret == box_key(
                    ids.rcv_public_dh_key.raw, dh.secret)
        self.trace.append(f"create(s={s}, contact={contact}, subscribe={subscribe}, "
                          f"notifier={notifier})")
        self.stats["steps"] += 1

    def recipient(self, name: str, q: int, s: int, *, right_key: bool, message: Message,
                  expected: Prediction) -> None:
        build = {}
        for side in self.sides:
            owned = side.queues[q].owned
            key = owned.auth_key if right_key else self.keys["other"]
            build[side.dialect] = (s, message, owned.recipient_id, key)
        self.step(name, expected, build)

    @precondition(has_queue)
    @rule(data=st.data(), s=st.integers(0, SESSIONS - 1), right=st.booleans(),
          key=st.sampled_from(["sender", "other"]))
    @counted
    def key(self, data: st.DataObject, s: int, right: bool, key: str) -> None:
        q = data.draw(st.integers(0, len(self.oracle.queues) - 1))
        self.recipient(f"key(q={q}, s={s}, right={right}, key={key})", q, s, right_key=right,
                       message=KEY(sender_key=self.keys[key].public),
                       expected=self.oracle.key(s, q, right, key))

    @precondition(has_queue)
    @rule(data=st.data(), s=st.integers(0, SESSIONS - 1), key=st.sampled_from(["sender",
                                                                              "other"]))
    @counted
    def skey(self, data: st.DataObject, s: int, key: str) -> None:
        q = data.draw(st.integers(0, len(self.oracle.queues) - 1))
        expected = self.oracle.skey(s, q, key)
        self.step(f"skey(q={q}, s={s}, key={key})", expected, {
            side.dialect: (s, SKEY(sender_key=self.keys[key].public),
                           side.queues[q].owned.sender_id, self.keys[key])
            for side in self.sides})

    @precondition(has_queue)
    @rule(data=st.data(), s=st.integers(0, SESSIONS - 1),
          signer=st.sampled_from([None, "sender", "other"]), notify=st.booleans())
    @counted
    def send(self, data: st.DataObject, s: int, signer: str | None, notify: bool) -> None:
        self.send_one(data.draw(st.integers(0, len(self.oracle.queues) - 1)), s, signer, notify)

    @precondition(has_queue)
    @rule(data=st.data(), s=st.integers(0, SESSIONS - 1),
          signer=st.sampled_from([None, "sender"]), count=st.integers(2, 5))
    @counted
    def send_burst(self, data: st.DataObject, s: int, signer: str | None, count: int) -> None:
        """Several messages to one queue: quotas fill within a short program."""
        q = data.draw(st.integers(0, len(self.oracle.queues) - 1))
        for _ in range(count):
            self.send_one(q, s, signer, notify=False)

    def notifiable(self) -> list[int]:
        """Queues with notifier credentials that still take messages, by the oracle's
        account."""
        return [q for q, queue in enumerate(self.oracle.queues)
                if queue.notifier and queue.can_write and not queue.deleted]

    @precondition(lambda self: bool(self.notifiable()))
    @rule(data=st.data(), s=st.integers(0, SESSIONS - 1))
    @counted
    def send_notified(self, data: st.DataObject, s: int) -> None:
        """A SEND asking for a notification to a queue whose notifier is subscribed (MSG-7),
        NSUB first when nobody is: random steps reach that rarely, since most queues fill to
        their quota first."""
        q = data.draw(st.sampled_from(self.notifiable()))
        if self.oracle.queues[q].ntf_subscriber is None:
            self.nsub_one(s, q)
        self.send_one(q, s, self.oracle.queues[q].sender_key, notify=True)

    def send_one(self, q: int, s: int, signer: str | None, notify: bool) -> None:
        self.bodies += 1
        body = b"message %d" % self.bodies
        now = self.sides[0].loopback.clock.now()
        expected = self.oracle.send(s, q, signer, body, notify=notify, now=now)
        self.step(f"send(q={q}, s={s}, signer={signer}, notify={notify})", expected, {
            side.dialect: (s, SEND(flags=MsgFlags(notification=notify), body=body),
                           side.queues[q].owned.sender_id,
                           self.keys[signer] if signer else None) for side in self.sides})

    @precondition(has_queue)
    @rule(data=st.data(), s=st.integers(0, SESSIONS - 1), right=st.booleans())
    @counted
    def subscribe(self, data: st.DataObject, s: int, right: bool) -> None:
        q = data.draw(st.integers(0, len(self.oracle.queues) - 1))
        expected = self.oracle.sub(s, q, right)
        self.recipient(f"sub(q={q}, s={s}, right={right})", q, s, right_key=right,
                       message=SUB(), expected=expected)

    @precondition(has_queue)
    @rule(data=st.data(), s=st.integers(0, SESSIONS - 1), right=st.booleans())
    @counted
    def get(self, data: st.DataObject, s: int, right: bool) -> None:
        q = data.draw(st.integers(0, len(self.oracle.queues) - 1))
        expected = self.oracle.get(s, q, right)
        self.recipient(f"get(q={q}, s={s}, right={right})", q, s, right_key=right,
                       message=GET(), expected=expected)

    @precondition(has_queue)
    @rule(data=st.data(), s=st.integers(0, SESSIONS - 1), right=st.booleans(),
          which=st.sampled_from(["delivered", "empty", "other"]))
    @counted
    def ack(self, data: st.DataObject, s: int, right: bool, which: str) -> None:
        self.ack_one(s, data.draw(st.integers(0, len(self.oracle.queues) - 1)), right, which)

    def in_flight(self) -> list[tuple[int, int]]:
        """The (session, queue) pairs with a message in flight, by the oracle's account."""
        return [(s, q) for s, session in enumerate(self.oracle.sessions)
                for q in session.delivered]

    @precondition(lambda self: bool(self.in_flight()))
    @rule(data=st.data(), which=st.sampled_from(["delivered", "empty", "other"]))
    @counted
    def ack_in_flight(self, data: st.DataObject, which: str) -> None:
        """ACK where a message is in flight: the case random (session, queue) pairs hit
        rarely."""
        s, q = data.draw(st.sampled_from(self.in_flight()))
        self.ack_one(s, q, True, which)

    def ack_one(self, s: int, q: int, right: bool, which: str) -> None:
        expected = self.oracle.ack(s, q, right, which != "other", empty=which == "empty")
        build = {}
        for side in self.sides:
            owned = side.queues[q].owned
            msg_id = {"delivered": side.delivered.get((s, q), b""), "empty": b"",
                      "other": b"\x01" * 24}[which]
            build[side.dialect] = (s, ACK(msg_id=msg_id), owned.recipient_id,
                                   owned.auth_key if right else self.keys["other"])
        self.step(f"ack(q={q}, s={s}, right={right}, which={which})", expected, build)

    @precondition(has_queue)
    @rule(data=st.data(), s=st.integers(0, SESSIONS - 1), right=st.booleans())
    @counted
    def suspend(self, data: st.DataObject, s: int, right: bool) -> None:
        q = data.draw(st.integers(0, len(self.oracle.queues) - 1))
        self.recipient(f"off(q={q}, s={s}, right={right})", q, s, right_key=right,
                       message=OFF(), expected=self.oracle.off(s, q, right))

    @precondition(has_queue)
    @rule(data=st.data(), s=st.integers(0, SESSIONS - 1), right=st.booleans())
    @counted
    def delete(self, data: st.DataObject, s: int, right: bool) -> None:
        q = data.draw(st.integers(0, len(self.oracle.queues) - 1))
        self.recipient(f"del(q={q}, s={s}, right={right})", q, s, right_key=right,
                       message=DEL(), expected=self.oracle.delete(s, q, right))

    @precondition(has_queue)
    @rule(data=st.data(), s=st.integers(0, SESSIONS - 1))
    @counted
    def notifier_subscribe(self, data: st.DataObject, s: int) -> None:
        self.nsub_one(s, data.draw(st.integers(0, len(self.oracle.queues) - 1)))

    def nsub_one(self, s: int, q: int) -> None:
        expected = self.oracle.nsub(s, q)
        build = {}
        for side in self.sides:
            queue = side.queues[q]
            entity = queue.notifier_id or self.random(24)
            build[side.dialect] = (s, NSUB(), entity, queue.ntf_key or self.keys["other"])
        self.step(f"nsub(q={q}, s={s})", expected, build)

    @rule(s=st.integers(0, SESSIONS - 1))
    @counted
    def ping(self, s: int) -> None:
        self.step(f"ping(s={s})", {s: [Seen("PONG")]},
                  {side.dialect: (s, PING(), b"", None) for side in self.sides})

    def raw_refusals(self) -> int:
        """Raw transmissions refused so far: a few per program, so that the programs keep
        their steps for the conversations."""
        return self.fired["undecodable"] + self.fired["another_session"]

    @precondition(lambda self: self.raw_refusals() < 2)
    @rule(s=st.integers(0, SESSIONS - 1), command=st.sampled_from(sorted(UNDECODABLE)))
    @counted
    def undecodable(self, s: int, command: bytes) -> None:
        """A transmission that decodes around a command that does not (AUTH-2): an unknown
        tag is ``ERR CMD UNKNOWN``, a known tag with bad fields ``ERR CMD SYNTAX``, on both
        sides and at every version; nothing else happens."""
        self.trace.append(f"undecodable(s={s}, command={command!r})")
        for side in self.sides:
            connection = side.connections[s]
            tx = Transmission(b"", connection.client.next_corr_id(), b"", command)
            self.raw_step(side, s, transmission_at(self.version_of(side, s),
                                                   connection.session_id, tx),
                          f"ERR {UNDECODABLE[command]}")

    @precondition(lambda self: self.raw_refusals() < 2 and any(
        v is not None and v < SESSION_IN_TRANSMISSION for v in self.versions))
    @rule(data=st.data(), lower=st.booleans())
    @counted
    def another_session(self, data: st.DataObject, lower: bool) -> None:
        """Below version 7 a transmission names its session (spec/deployed.md, DEP-11): a
        deployed session receiving one that names another, sorting below or above
        its own, answers ``ERR SESSION`` and does nothing else."""
        s = data.draw(st.sampled_from([i for i, v in enumerate(self.versions)
                                       if v is not None and v < SESSION_IN_TRANSMISSION]))
        self.trace.append(f"another_session(s={s}, lower={lower})")
        self.stats["another session " + ("below" if lower else "above")] += 1
        side = self.sides[1]
        assert side.dialect is Dialect.DEPLOYED
        connection = side.connections[s]
        other = bytes(32) if lower else b"\xff" * 32  # a session ID is 32 random bytes
        assert other != connection.session_id
        tx = Transmission(b"", connection.client.next_corr_id(), b"", encode_message(PING()))
        self.raw_step(side, s, tx.encode(self.versions[s], other), "ERR SESSION")

    def service_capable(self) -> list[int]:
        """The sessions whose deployed side can carry a service signature: from version 16
        (a seed session always can)."""
        return [s for s, v in enumerate(self.versions) if v is None or v >= SERVICES]

    # twice a program at most, as the raw refusals
    @precondition(lambda self: self.fired["service_signature"] < 2 and
                  bool(self.service_capable()))
    @rule(data=st.data(), command=st.sampled_from(SERVICE_SIGNED), known=st.booleans(),
          right=st.booleans())
    @counted
    def service_signature(self, data: st.DataObject, command: str, known: bool,
                          right: bool) -> None:
        """A session that is no service sends a transmission with a service signature, about
        a queue of the program (maybe deleted) or an entity ID that names none, signed with
        the queue's key or another: the seed design refuses it whatever it says (AUTH-4),
        deployed SMP only once the command decoded and the queue was found (DEP-10)."""
        s = data.draw(st.sampled_from(self.service_capable()))
        q = (data.draw(st.integers(0, len(self.oracle.queues) - 1))
             if known and self.oracle.queues else None)
        self.trace.append(f"service_signature(s={s}, command={command}, q={q}, right={right})")
        self.stats["service-signed " + ("unknown" if q is None else
                                         "deleted" if self.oracle.queues[q].deleted else
                                         "queue")] += 1
        answers = self.oracle.service_signed(q, decodes=command in ("SUB", "SEND"))
        unknown = self.random(24)
        for side in self.sides:
            owned = None if q is None else side.queues[q].owned
            version = self.version_of(side, s)
            if command == "SEND":
                entity = unknown if owned is None else owned.sender_id
                key = self.keys["sender"]
                body = encode_message(SEND(flags=MsgFlags(notification=False), body=b"x"),
                                      version)
            else:
                entity = unknown if owned is None else owned.recipient_id
                key = owned.auth_key if owned is not None and right else self.keys["other"]
                body = encode_message(SUB(), version) if command == "SUB" else b"ZZZZ"
            client = side.connections[s].client
            corr = client.next_corr_id()
            authorization = key.authorize(authorized_bytes(client.session_id, corr, entity, body),
                                          corr, client.server_session_public)
            tx = Transmission(authorization, corr, entity, body, service_signature=bytes(64))
            self.raw_step(side, s, transmission_at(version, client.session_id, tx),
                          answers[side.dialect], checks=("AUTH-4", "DEP-10"))

    def raw_step(self, side: Side, s: int, data: bytes, answer: str,
                 checks: tuple[str, ...] = ("AUTH-2",)) -> None:
        """Send raw bytes on one side's session ``s``: its one answer is ``answer``, and no
        other session receives anything; that checked the requirements ``checks``."""
        self.stats["steps"] += 1
        self.stats["raw steps"] += 1
        self.stats[f"answered {answer}"] += 1
        got = side.read(s, side.connections[s].send_raw(data))
        assert got == [Seen(answer)], f"{side.dialect.value} session {s}: {got}, not {answer}"
        pushed = [c.inbox for c in side.connections if c.inbox]
        assert not pushed, f"{side.dialect.value}: raw bytes made the server push {pushed}"
        self.checked.update(checks)

    @rule(s=st.integers(0, SESSIONS - 1), version=st.sampled_from(VERSIONS))
    @counted
    def reconnect(self, s: int, version: int | None) -> None:
        self.trace.append(f"reconnect(s={s}, version={version})")
        self.oracle.close(s)
        self.connect(s, version)
        for side in self.sides:
            for key in [k for k in (*side.delivered, *side.modes) if k[0] == s]:
                side.delivered.pop(key, None)
                side.modes.pop(key, None)

    @rule(days=st.integers(0, 3))
    @counted
    def tick(self, days: int) -> None:
        self.trace.append(f"tick(days={days})")
        for side in self.sides:
            side.loopback.clock.advance(days * DAY)
            side.loopback.expire()
        kept = sum(len(queue.messages) for queue in self.oracle.queues)
        self.oracle.expire(self.sides[0].loopback.clock.now())
        for side in self.sides:  # expiry sends nothing here (no queue expires by date)
            assert all(not c.inbox for c in side.connections), side.dialect
            self.stored_as_the_oracle_says(side)
        if sum(len(queue.messages) for queue in self.oracle.queues) < kept:
            self.checked |= {"RET-5", "DEP-8"}  # messages expired, on both sides alike

    def stored_as_the_oracle_says(self, side: Side) -> None:
        """Every queue the oracle holds is on the side's server, with as many messages and
        quota markers as the oracle's (key records aside): after expiry, RET-5's messages
        are gone, and a deployed queue is still there (DEP-8)."""
        store = side.loopback.server.store
        for q, queue in enumerate(self.oracle.queues):
            if queue.deleted:
                continue
            rid = side.queues[q].owned.recipient_id
            assert store.get(rid) is not None, f"{side.dialect.value} queue {q} is gone"
            stored = sum(r.kind in (RecordKind.Message, RecordKind.Quota)
                         for r in store.records(rid))
            assert stored == len(queue.messages), (
                f"{side.dialect.value} queue {q} keeps {stored} messages, the spec says "
                f"{len(queue.messages)}")


def run_seed(seed: int, examples: int = 20, steps: int = 40) -> RunResult:
    """Run the machine under one Hypothesis seed, as ``smpref model fuzz --machine dialects``
    does; the same seed gives the same programs in any process."""
    return machine_base.run_seed(DialectMachine, seed, examples=examples, steps=steps,
                                 count_steps=lambda _traces, totals: totals["steps"])
