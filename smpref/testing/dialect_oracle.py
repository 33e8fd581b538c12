"""What the spec says the core commands do, in either protocol: the dialect machine's oracle.

Written from spec/messaging.md, spec/authorization.md, spec/retention.md (RET-5) and
spec/deployed.md (DEP-4, DEP-7, DEP-10), never from the model: :class:`CoreOracle` keeps the queues
and sessions of a program of core commands and predicts, for each command, every transmission each
session receives, as :class:`Seen` values. :func:`render` turns a prediction into the tags one
protocol uses: the seed design answers SUB and NSUB with ``OK``, OFF with ``COUNT`` and tells the
other subscribers of a deleted queue ``END``; deployed SMP says ``SOK``, ``OK`` and ``DELD``
(DEP-4). Message records are predicted by their body, notification flag and whether they are the
quota marker; the seed design's key records (its ratchet, QENC) are the client's business and are
absorbed before comparing (see :mod:`smpref.testing.dialect_machine`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from smpref.wire.dialects import Dialect


@dataclass(frozen=True, slots=True)
class Seen:
    """One transmission a session receives, abstractly.

    ``tag``: an answer or error (``IDS``, ``OK``, ``PONG``, ``ERR AUTH``...), ``SUBSCRIBED``
    (SUB's and NSUB's success), ``SUSPENDED`` (OFF's success), ``MSG``, ``NMSG``, ``END``
    (another session took the subscription) or ``GONE`` (the queue was deleted).
    ``queue``: the queue's index in the program; ``body``, ``notify``, ``quota``: a MSG's
    record (body None for the quota marker).
    """

    tag: str
    queue: int = -1
    body: bytes | None = None
    notify: bool = False
    quota: bool = False


def render(seen: Seen, dialect: Dialect, version: int | None = None) -> Seen:
    """The prediction in one protocol's tags (DEP-4), at a deployed session's version (None:
    the newest): SOK is OK below 16, DELD is END below 10 (DEP-12)."""
    deployed = dialect is Dialect.DEPLOYED
    at = 18 if version is None else version
    tag = {"SUBSCRIBED": "SOK" if deployed and at >= 16 else "OK",
           "SUSPENDED": "OK" if deployed else "COUNT",
           "GONE": "DELD" if deployed and at >= 10 else "END",
           }.get(seen.tag, seen.tag)
    return Seen(tag, seen.queue, seen.body, seen.notify, seen.quota)


def coarse(seen: Seen) -> Seen:
    """What both protocols must agree on exactly: the tags' meaning, not their spelling."""
    tag = {"SOK": "OK", "COUNT": "OK", "DELD": "END"}.get(seen.tag, seen.tag)
    return Seen(tag, seen.queue, seen.body, seen.notify, seen.quota)


@dataclass
class Stored:
    label: int
    timestamp: int
    body: bytes | None  # None: the quota marker
    notify: bool


@dataclass
class OracleQueue:
    contact: bool
    notifier: bool
    sender_key: str | None = None  # the label of the key that secured it
    suspended: bool = False
    deleted: bool = False
    can_write: bool = True
    messages: list[Stored] = field(default_factory=list)
    subscriber: int | None = None
    ntf_subscriber: int | None = None


@dataclass
class OracleSession:
    modes: dict[int, str] = field(default_factory=dict)  # queue -> "SUB" | "GET"
    delivered: dict[int, int] = field(default_factory=dict)  # queue -> message label


Prediction = dict[int, list[Seen]]


class CoreOracle:
    """The queues and sessions of a program, and the transmissions each command causes."""

    def __init__(self, sessions: int, quota: int, message_ttl: int) -> None:
        self.queues: list[OracleQueue] = []
        self.sessions = [OracleSession() for _ in range(sessions)]
        self.quota = quota
        self.message_ttl = message_ttl
        self.labels = 0

    # --- helpers --------------------------------------------------------------------------

    def _msg(self, q: int, stored: Stored) -> Seen:
        return Seen("MSG", q, stored.body, stored.notify, stored.body is None)

    def _deliver_first(self, s: int, q: int) -> list[Seen]:
        """MSG-2: the first record goes to the session and stays in flight there."""
        queue = self.queues[q]
        if not queue.messages:
            return []
        first = queue.messages[0]
        self.sessions[s].delivered[q] = first.label
        return [self._msg(q, first)]

    def _reopen_if_empty(self, queue: OracleQueue) -> None:
        if not queue.messages:
            queue.can_write = True  # MSG-6

    @staticmethod
    def _one(s: int, *seen: Seen) -> Prediction:
        return {s: list(seen)}

    def recipient_check(self, q: int, right_key: bool) -> str | None:
        """AUTH-2: a deleted queue and a wrong key get the same answer."""
        return "ERR AUTH" if self.queues[q].deleted or not right_key else None

    # --- commands -------------------------------------------------------------------------

    def new(self, s: int, *, contact: bool, subscribe: bool, notifier: bool) -> Prediction:
        self.queues.append(OracleQueue(contact, notifier))
        q = len(self.queues) - 1
        if subscribe:
            self.queues[q].subscriber = s
            self.sessions[s].modes[q] = "SUB"
        return self._one(s, Seen("IDS", q))

    def key(self, s: int, q: int, right_key: bool, key: str) -> Prediction:
        """KEY (CMD-13): the recipient secures; the same key again changes nothing."""
        error = self.recipient_check(q, right_key)
        queue = self.queues[q]
        if error is None and queue.sender_key not in (None, key):
            error = "ERR AUTH"
        if error:
            return self._one(s, Seen(error))
        queue.sender_key = key
        return self._one(s, Seen("OK"))

    def skey(self, s: int, q: int, key: str) -> Prediction:
        """SKEY (CMD-14): only an invitation queue, only with no other key."""
        queue = self.queues[q]
        if queue.deleted or queue.contact or queue.sender_key not in (None, key):
            return self._one(s, Seen("ERR AUTH"))
        queue.sender_key = key
        return self._one(s, Seen("OK"))

    def send(self, s: int, q: int, signer: str | None, body: bytes, *, notify: bool, now: int
             ) -> Prediction:
        """SEND (MSG-1, MSG-5, MSG-6, ROT-3): the checks in the order of the spec."""
        queue = self.queues[q]
        if queue.deleted or (queue.sender_key is None and signer is not None) or (
                queue.sender_key is not None and signer != queue.sender_key) or \
                queue.suspended:
            return self._one(s, Seen("ERR AUTH"))
        if not queue.can_write:
            return self._one(s, Seen("ERR QUOTA"))
        self.labels += 1
        if len(queue.messages) >= self.quota:
            queue.messages.append(Stored(self.labels, now, None, False))
            queue.can_write = False
            return self._one(s, Seen("ERR QUOTA"))
        queue.messages.append(Stored(self.labels, now, body, notify))
        out: Prediction = self._one(s, Seen("OK"))
        sub = queue.subscriber
        if sub is not None and q not in self.sessions[sub].delivered:
            out.setdefault(sub, []).extend(self._deliver_first(sub, q))
        if notify and queue.notifier and queue.ntf_subscriber is not None:
            out.setdefault(queue.ntf_subscriber, []).append(Seen("NMSG", q))
        return out

    def sub(self, s: int, q: int, right_key: bool) -> Prediction:
        """SUB (MSG-2, MSG-3, CMD-33)."""
        error = self.recipient_check(q, right_key)
        if error is None and self.sessions[s].modes.get(q) == "GET":
            error = "ERR CMD PROHIBITED"
        if error:
            return self._one(s, Seen(error))
        queue = self.queues[q]
        out: Prediction = {}
        previous = queue.subscriber
        if previous is not None and previous != s:
            self.sessions[previous].modes.pop(q, None)
            self.sessions[previous].delivered.pop(q, None)
            out[previous] = [Seen("END", q)]
        queue.subscriber = s
        self.sessions[s].modes[q] = "SUB"
        self.sessions[s].delivered.pop(q, None)
        out[s] = [Seen("SUBSCRIBED"), *self._deliver_first(s, q)]
        return out

    def get(self, s: int, q: int, right_key: bool) -> Prediction:
        """GET (CMD-19, MSG-3)."""
        error = self.recipient_check(q, right_key)
        if error is None and self.sessions[s].modes.get(q) == "SUB":
            error = "ERR CMD PROHIBITED"
        if error:
            return self._one(s, Seen(error))
        self.sessions[s].modes[q] = "GET"
        return self._one(s, *(self._deliver_first(s, q) or [Seen("OK")]))

    def ack(self, s: int, q: int, right_key: bool, matching: bool, *,
            empty: bool = False) -> Prediction:
        """ACK (MSG-4): removes the message in flight on this session when its ID is given;
        an ``empty`` ID clears what is in flight and removes nothing, so a subscription gets
        the same message again."""
        error = self.recipient_check(q, right_key)
        session = self.sessions[s]
        if error is None and (q not in session.delivered or not matching):
            error = "ERR NO_MSG"
        if error:
            return self._one(s, Seen(error))
        queue = self.queues[q]
        label = session.delivered.pop(q)
        if not empty:
            queue.messages = [m for m in queue.messages if m.label != label]
            self._reopen_if_empty(queue)
        if session.modes.get(q) == "SUB":
            delivered = self._deliver_first(s, q)
            if delivered:
                return self._one(s, *delivered)
        return self._one(s, Seen("OK"))

    def off(self, s: int, q: int, right_key: bool) -> Prediction:
        """OFF (ROT-3, DEP-4): suspended; what is queued can still be read."""
        error = self.recipient_check(q, right_key)
        if error:
            return self._one(s, Seen(error))
        self.queues[q].suspended = True
        return self._one(s, Seen("SUSPENDED"))

    def delete(self, s: int, q: int, right_key: bool) -> Prediction:
        """DEL (CMD-21, MSG-8, DEP-4): the other subscribers are told."""
        error = self.recipient_check(q, right_key)
        if error:
            return self._one(s, Seen(error))
        queue = self.queues[q]
        out: Prediction = {}
        for sub in (queue.subscriber, queue.ntf_subscriber):
            if sub is not None and sub != s:
                out.setdefault(sub, []).append(Seen("GONE", q))
        queue.deleted, queue.subscriber, queue.ntf_subscriber = True, None, None
        queue.messages = []
        for session in self.sessions:
            session.modes.pop(q, None)
            session.delivered.pop(q, None)
        out.setdefault(s, []).append(Seen("OK"))
        return out

    def nsub(self, s: int, q: int) -> Prediction:
        """NSUB (CMD-23): a queue without notifier credentials has no notifier ID."""
        queue = self.queues[q]
        if queue.deleted or not queue.notifier:
            return self._one(s, Seen("ERR AUTH"))
        out: Prediction = {}
        previous = queue.ntf_subscriber
        if previous is not None and previous != s:
            out[previous] = [Seen("END", q)]
        queue.ntf_subscriber = s
        out.setdefault(s, []).append(Seen("SUBSCRIBED"))
        return out

    def service_signed(self, q: int | None, *, decodes: bool) -> dict[Dialect, str]:
        """The one answer each protocol gives a transmission with a service signature from a
        session that is no service, about queue ``q`` (None: an entity ID that names no
        queue), whose command ``decodes`` or not; nothing else happens. The seed design
        answers ``ERR SERVICE`` whatever the command (AUTH-4). Deployed SMP looks first: a
        command that does not decode is its ``CMD`` error, an entity ID that names no queue
        (or a deleted one's) ``ERR AUTH``, and only a found queue ``ERR SERVICE``, whatever
        key signed it (DEP-10)."""
        if not decodes:
            deployed = "ERR CMD UNKNOWN"
        elif q is None or self.queues[q].deleted:
            deployed = "ERR AUTH"
        else:
            deployed = "ERR SERVICE"
        return {Dialect.SEED: "ERR SERVICE", Dialect.DEPLOYED: deployed}

    def close(self, s: int) -> None:
        """A connection ends: its subscriptions end, its messages in flight stay queued."""
        for queue in self.queues:
            if queue.subscriber == s:
                queue.subscriber = None
            if queue.ntf_subscriber == s:
                queue.ntf_subscriber = None
        self.sessions[s] = OracleSession()

    def expire(self, now: int) -> None:
        """RET-5: messages older than the TTL go from the head, up to a quota marker, a younger
        message or one in flight; a queue emptied reopens (MSG-6)."""
        cutoff = now - self.message_ttl
        in_flight = {(q, label) for session in self.sessions
                     for q, label in session.delivered.items()}
        for q, queue in enumerate(self.queues):
            while queue.messages:
                head = queue.messages[0]
                if head.body is None or head.timestamp >= cutoff or (q, head.label) in in_flight:
                    break
                queue.messages.pop(0)
            self._reopen_if_empty(queue)
