"""The deployed link machine's lowest layer: the queues as their owners know them, the sessions,
and the exchanges with the model server, everything every session receives compared with the
oracle (:class:`~smpref.testing.deployed_link_oracle.DeployedOracle`).

:mod:`~smpref.testing.deployed_routing` adds private routing above it, and
:mod:`smpref.testing.deployed_link_machine` the rules of links, notifiers, securing and
deletion above that.
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import strategies as st

from smpref.client.core import AuthKeyPair, OwnedQueue, Reply
from smpref.model.config import ServerConfig
from smpref.model.rules import RULES
from smpref.testing.deployed_link_oracle import DeployedOracle, DQueue, Event, Expected, Ids, Lnk
from smpref.testing.loopback import Loopback, LoopbackConnection
from smpref.testing.machine_base import CountedMachine, compare_sessions, drain
from smpref.wire.dialects import Dialect
from smpref.wire.keys import KeyAlgorithm, PublicKey
from smpref.wire.messages import ERR, NSUB, SEND, DeployedLNK, MsgFlags
from smpref.wire.schema import render_error
from smpref.wire.structs import Message

#: a password, so that NEW without it or with another is drawn too (DEP-3); a quota no run
#: reaches (the queue machines check quotas), since nobody reads these queues
DEPLOYED_LINK_CONFIG = ServerConfig(quota=1000, basic_auth=b"deployed password")
#: the sessions' versions: owners and the notification server at 18, a link reader at 14
#: (the link commands are laid out as at 18 at every version, DEP-12)
VERSIONS = (18, 18, 18, 14)
MAX_QUEUES = 4
#: the rows of the rule table, by name: each a deployed session takes is served by the generic
#: step (DEP-2) and never cites what deployed SMP does not have: the queue ratchet, the
#: last-message flag and the seed design's links (DEP-4, DEP-5, DEP-7)
TABLE_ROWS = frozenset(row.name for row in RULES)
SEED_ONLY = ("QENC-", "ROT-4", "LINK-")
PICK = st.integers(0, 63)
#: an X25519 point of order 1: its shared secret with any key is zero (QUEUE-10)
LOW_ORDER = PublicKey(KeyAlgorithm.X25519, bytes(32))


def shown(reply: Reply) -> Event:
    """A reply as the oracle writes events (payloads are compared apart)."""
    if isinstance(reply.message, ERR):
        return "ERR " + render_error(reply.message.error)
    if reply.tag in ("END", "DELD", "NMSG"):
        return (reply.tag, bytes(reply.transmission.entity_id))
    return reply.tag


@dataclass
class Handle:
    """One queue as its owner knows it, with the oracle's view of it."""

    owned: OwnedQueue
    spec: DQueue
    owner: int  # the session that created it
    #: the NEW's corrId when its link's sender ID was derived from it (DEP-3)
    corr_id: bytes | None = None
    ntf_key: AuthKeyPair | None = None
    sender_key: AuthKeyPair | None = None


def deployed_reports(name: str, requirements: tuple[str, ...]) -> None:
    """Coverage: each row of the rule table a deployed session takes is served by the generic
    step and reports it (DEP-2), and never what deployed SMP does not have (DEP-4, DEP-5,
    DEP-7)."""
    if name in TABLE_ROWS:
        assert "DEP-2" in requirements, f"{name} did not report DEP-2"
        seed_only = [r for r in requirements if r.startswith(SEED_ONLY)]
        assert not seed_only, f"{name} reported {seed_only} on a deployed session"


class DeployedExchanges(CountedMachine):
    """The deployed link machine's state and exchanges (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__()
        self.lb = self.make_loopback()
        self.sessions: list[LoopbackConnection] = [
            self.lb.connect(Dialect.DEPLOYED, version) for version in VERSIONS]
        self.spec = DeployedOracle()
        self.handles: list[Handle] = []
        self.link_ids: list[bytes] = []  # every LinkId ever used, to read gone links too
        self.counter = 0
        self.proxy_connection: LoopbackConnection | None = None
        self.proxying: Loopback | None = None  # a model that proxies, made when needed
        self.count_table_rows(self.lb, deployed_reports)

    def make_loopback(self) -> Loopback:
        return Loopback(seed=0, config=DEPLOYED_LINK_CONFIG)

    def _random(self, n: int) -> bytes:
        return self.lb.client_random(n)

    def _parts(self) -> tuple[bytes, bytes]:
        """A fixed and a user part: opaque to the server, distinct every time."""
        self.counter += 1
        return b"fixed %d" % self.counter, b"user %d" % self.counter

    def _live(self) -> list[Handle]:
        return [h for h in self.handles if not h.spec.deleted]

    def _any(self, q: int) -> Handle:
        return self.handles[q % len(self.handles)]

    def _queue(self, q: int) -> Handle:
        live = self._live()
        return live[q % len(live)]

    def _exchange(self, label: str, s: int, message: Message, entity: bytes,  # noqa: PLR0917
                  key: AuthKeyPair | None, expected: Expected, corr_id: bytes | None = None
                  ) -> list[Reply]:
        """Send one transmission on session ``s``; everything every session received must be
        what the oracle said (computed before it was sent)."""
        replies = self.sessions[s].send(message, entity, key, corr_id)
        self._others(label, expected, {s: list(replies)})
        return replies

    def _match(self, label: str, index: int, reply: Reply, event: Event) -> None:
        where = f"{label}: session {index}"
        if isinstance(event, Lnk):
            assert reply.tag == "LNK", f"{where} received {shown(reply)}, the spec says LNK"
            lnk = reply.expect(DeployedLNK)
            assert (lnk.sender_id, lnk.link_data.enc_fixed, lnk.link_data.enc_user) == (
                event.sender_id, event.fixed, event.user), f"{where}: LNK of other link data"
            self.stats["links read"] += 1
            self.checked.add("DEP-5")
        elif isinstance(event, Ids):
            assert reply.tag == "IDS", f"{where} received {shown(reply)}, the spec says IDS"
        else:
            assert shown(reply) == event, f"{where} received {shown(reply)}, the spec says {event}"
            if event == "SOK" or (isinstance(event, tuple) and event[0] == "DELD"):
                self.checked.add("DEP-4")  # where deployed answers otherwise than the seed

    def _others(self, label: str, expected: Expected,
                got: dict[int, list[Reply]] | None = None) -> None:
        """What the sessions received (``got``, a session's own replies, then every inbox)
        must be the oracle's events."""
        got = drain(enumerate(self.sessions), got if got is not None else {})
        self.trace.append(f"{label} -> {({i: [shown(r) for r in rs] for i, rs in got.items()})}")
        compare_sessions(label, got, expected.events,
                         lambda index, reply, event: self._match(label, index, reply, event),
                         name=str, show=lambda r: str(shown(r)))

    def _send_message(self, *, notify: bool = False) -> SEND:
        self.counter += 1
        return SEND(flags=MsgFlags(notification=notify), body=b"message %d" % self.counter)

    def _send(self, handle: Handle, s: int, key: AuthKeyPair | None, label: str = "SEND"
              ) -> None:
        expected = self.spec.send(handle.spec, s, key.public.raw if key else None)
        self._exchange(label, s, self._send_message(), handle.owned.sender_id, key, expected)

    def _nsub(self, handle: Handle, s: int, *, right_key: bool) -> None:
        notifier_id = handle.spec.notifier_id
        assert notifier_id is not None
        key = handle.ntf_key if right_key and handle.ntf_key else AuthKeyPair.ed25519(
            self._random)
        self._exchange("NSUB", s, NSUB(), notifier_id, key,
                       self.spec.nsub(handle.spec, s, key.public.raw))
