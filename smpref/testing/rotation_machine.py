"""A Hypothesis state machine over two agents rotating queues between model servers.

Two agents, ``a`` and ``b``, share a duplex connection over two or three model servers, each
over the journal store in a temporary folder. The rules send in both directions, move
envelopes out of outboxes, release held deliveries from any server in any order, start
rotations from either side (overlapping ones included), abort them, restart agents (between
steps, or crashed just before an ``ACK``), restart servers, lose and restore subscriptions, and
delete the connection.

The oracle is the machine's own, written from spec/rotation.md; it never asks an agent what
to expect:

* after every step, in each direction, what the receiving application got is a prefix of what
  the sending application sent: nothing duplicated, reordered or invented (ROT-5, ROT-6);
* a second rotation is refused while one runs (ROT-12), and an abort is refused exactly when
  the servers show the sender may already use the new queue (ROT-11): in the seed flows once
  the old queue is suspended, in the deployed flow once the new queue is secured;
* at the end, once every connection is restored and every delivery and envelope has gone
  through (:meth:`RotationMachine.settle`): every message sent was delivered, exactly once, in
  order; no rotation is running; no message is held or unacknowledged anywhere; and the servers
  hold exactly the queues the agents use, so every old queue was deleted (ROT-2, ROT-9,
  ROT-13).

:func:`machine_for` makes the machine for a profile. The ``seed`` profile must pass; the
``seed-as-written`` and ``deployed`` ones are expected to fail, and tests keep their minimal
failing traces (docs/rotation.md).
"""

from __future__ import annotations

import shutil
import tempfile
from collections import Counter
from pathlib import Path
from typing import ClassVar

from hypothesis import strategies as st
from hypothesis import target
from hypothesis.control import currently_in_test_context
from hypothesis.stateful import invariant, precondition, rule

from smpref.agent.agent import Agent, connect
from smpref.agent.state import Profile
from smpref.crypto.randomness import SeededRandom
from smpref.errors import RotationRefusedError, SimulatedCrashError
from smpref.model.states import QueueStatus
from smpref.testing.agent_network import Network
from smpref.testing.machine_base import CountedMachine, counted
from smpref.wire.keys import PublicKey

AGENTS = ("a", "b")
SERVERS = (b"s1", b"s2", b"s3")
SIDE = st.sampled_from(AGENTS)
SERVER = st.sampled_from(SERVERS)


def other(agent: str) -> str:
    return "b" if agent == "a" else "a"


class RotationMachine(CountedMachine):
    """See the module docstring. Subclasses set ``PROFILE``. Its totals (``TOTALS``) add what
    the agents and the network counted to its own counts: what the machine exercised."""

    PROFILE: ClassVar[Profile] = Profile.SEED

    def __init__(self) -> None:
        super().__init__()
        self.root = Path(tempfile.mkdtemp(prefix="smpref-rotation-"))
        self.network = Network(list(SERVERS), root=self.root)
        for name in AGENTS:
            self.network.add(Agent(name, self.PROFILE, self.network.port(name),
                                   SeededRandom(b"agent " + name.encode())))
        connect(self.agent("a"), self.agent("b"), b"s1", b"s2")
        #: what each application sent, by sender: the oracle's record
        self.sent: dict[str, list[bytes]] = {name: [] for name in AGENTS}
        self.deleted = False
        #: every recipient key each agent has used: how the machine finds its queues on the
        #: servers, including ones it should have deleted
        self.keys: dict[str, set[PublicKey]] = {name: set() for name in AGENTS}
        self.learn_keys()

    def agent(self, name: str) -> Agent:
        return self.network.agents[name]

    def teardown(self) -> None:
        # Steer generation towards the rarest interleaving: a delivery from the new queue
        # while the old one still drains (ROT-8). Only generation reads this; no verdict does.
        if currently_in_test_context():  # not when a test replays a trace by hand
            target(float(sum(self.agent(n).durable.counts["held"] for n in AGENTS)),
                   label="held deliveries")
        try:
            self.settle()
            self.check_the_end()
        finally:
            self.stats.update(self.network.counts)  # the second implementation's
            for name in AGENTS:  # what the agents did, for the figures: never for verdicts
                self.stats.update(self.agent(name).durable.counts)
            super().teardown()
            shutil.rmtree(self.root, ignore_errors=True)

    # --- rules -------------------------------------------------------------------------------
    # Rules draw among what can happen now (a connection with deliveries waiting, an agent
    # with envelopes to send), so that few steps are spent doing nothing; every kind of
    # disruption is one rule, so that together they are as likely as one kind of progress.

    def _waiting(self) -> list[tuple[str, bytes]]:
        return [(n, s) for n in AGENTS for s in SERVERS if self.network.pending(n, s)]

    def _unsent(self) -> list[str]:
        return [n for n in AGENTS if self.agent(n).durable.outbox]

    @rule(sender=SIDE, count=st.integers(1, 4), now=st.booleans())
    @counted
    def send(self, sender: str, count: int, now: bool) -> None:
        """The application sends; after the connection is deleted only the other side can,
        and what it sends is never delivered (ROT-13)."""
        if self.agent(sender).durable.deleted:
            return
        for _ in range(count):
            body = f"{sender}>{other(sender)} {len(self.sent[sender]) + 1}".encode()
            self.agent(sender).send(body)
            self.sent[sender].append(body)
            if now:  # and transmit at once, as an agent with a working connection does
                self.agent(sender).transmit()
        self.stats["messages sent"] += count

    @precondition(lambda self: self._unsent())
    @rule(data=st.data(), count=st.integers(1, 4))
    @counted
    def transmit(self, data: st.DataObject, count: int) -> None:
        sender = data.draw(st.sampled_from(self._unsent()), label="sender")
        for _ in range(count):
            if not self.agent(sender).transmit():
                break

    @precondition(lambda self: self._waiting())
    @rule(data=st.data(), count=st.integers(1, 3), crash=st.integers(0, 5))
    @counted
    def release(self, data: st.DataObject, count: int, crash: int) -> None:
        """Hand over deliveries waiting on one connection, the others staying held; now and
        then the agent crashes after processing one, just before its ACK."""
        receiver, server = data.draw(st.sampled_from(self._waiting()), label="connection")
        if crash == 0 and not self.deleted:
            self.network.crash_before(receiver, "ACK")
            try:
                self.network.release(receiver, server)
            except SimulatedCrashError:
                self.stats["crashes before ACK"] += 1
                self.network.restart_agent(receiver)
            self.network.crash_at.pop(receiver, None)
            return
        for _ in range(count):
            if not self.network.release(receiver, server):
                break
            self.stats["deliveries"] += 1

    @precondition(lambda self: self._waiting() or self._unsent())
    @rule(data=st.data(), steps=st.integers(2, 16))
    @counted
    def pump(self, data: st.DataObject, steps: int) -> None:
        """Several steps of progress in one rule, each a delivery released on a connection or
        an envelope transmitted, chosen among what can happen: deep interleavings in few
        rules."""
        for _ in range(steps):
            moves = [("release", n, s) for n, s in self._waiting()] + [
                ("transmit", n, b"") for n in self._unsent()]
            if not moves:
                return
            move, name, server = data.draw(st.sampled_from(moves), label="move")
            if move == "release":
                self.network.release(name, server)
                self.stats["deliveries"] += 1
            else:
                self.agent(name).transmit()

    @precondition(lambda self: not self.deleted)
    @rule(owner=SIDE, server=SERVER)
    @counted
    def start_rotation(self, owner: str, server: bytes) -> None:
        agent = self.agent(owner)
        running = self._rotation_running(owner)
        try:
            agent.start_rotation(server)
        except RotationRefusedError:
            assert running, f"{owner} refused a rotation with none running (ROT-12)"
            self.stats["second rotations refused"] += 1
            self.checked.add("ROT-12")
            return
        assert not running, f"{owner} started a second rotation while one ran (ROT-12)"
        self.stats["rotations started"] += 1
        self.checked.add("ROT-12")

    @precondition(lambda self: not self.deleted)
    @rule(owner=SIDE, weight=st.integers(0, 3))
    @counted
    def abort_rotation(self, owner: str, weight: int) -> None:
        """Now and then (so that most rotations run to their end): abort (ROT-11)."""
        if weight:
            return
        agent = self.agent(owner)
        running = self._rotation_running(owner)
        allowed = running and not self._past_the_point_of_no_return(owner)
        try:
            agent.abort_rotation()
        except RotationRefusedError:
            assert not allowed, f"{owner} refused an abort that ROT-11 allows"
            self.checked.add("ROT-11")
            return
        assert allowed, f"{owner} aborted a rotation ROT-11 does not let it abort"
        self.stats["aborts accepted"] += 1
        self.checked.add("ROT-11")

    @precondition(lambda self: not self.deleted)
    @rule(kind=st.sampled_from(["restart agent", "restart server", "lose connection",
                                "restore", "delete connection"]),
          name=SIDE, server=SERVER, weight=st.integers(0, 9))
    @counted
    def disrupt(self, kind: str, name: str, server: bytes, weight: int) -> None:
        """Restarts (an agent keeps its durable state; a server its journal store), a lost
        connection, resubscribing, and, rarely, deleting the connection (ROT-13)."""
        if kind == "restart agent":
            self.network.restart_agent(name)
        elif kind == "restart server":
            self.network.restart_server(server)
        elif kind == "lose connection":
            self.network.drop(name, server)
        elif kind == "restore":
            self.agent(name).resubscribe(server)
        elif weight == 0:
            self.agent(name).delete_connection()
            self.deleted = True
        else:
            return
        self.stats[kind] += 1

    # --- the oracle --------------------------------------------------------------------------

    @invariant()
    def learn_keys(self) -> None:
        """Runs after every step (and once at the start): the steps are counted here."""
        self.stats["steps"] += 1
        for name in AGENTS:
            self.keys[name] |= {q.owner.auth_key.public for q in self.agent(name).owned_queues()}

    @invariant()
    def nothing_duplicated_reordered_or_invented(self) -> None:
        for sender in AGENTS:
            got = self.agent(other(sender)).delivered
            sent = self.sent[sender]
            assert got == sent[:len(got)], (
                f"{other(sender)} received {_show(got)} but {sender} sent {_show(sent)}")
            if got:
                self.checked |= {"ROT-5", "ROT-6"}

    def _rotation_running(self, owner: str) -> bool:
        """From the servers: the agent owns two queues while a rotation runs."""
        return len(self._queues_of(owner)) == 2

    def _queues_of(self, owner: str) -> list[tuple[bytes, bytes]]:
        """(server, recipient ID) of every queue on the servers that the agent can
        authorize: the servers' view, not the agent's."""
        keys = self.keys[owner]
        found = []
        for name, server in self.network.servers.items():
            for rid in server.queue_ids():
                record = server.store.get(rid)
                if record is not None and record.recipient_key in keys:
                    found.append((name, rid))
        return found

    def _past_the_point_of_no_return(self, owner: str) -> bool:
        """ROT-11 and ROT-14, read from the servers: seed flows, the old queue is suspended;
        deployed, the new queue is secured."""
        queues = [self.network.servers[s].store.get(r) for s, r in self._queues_of(owner)]
        if self.PROFILE is Profile.DEPLOYED:
            return any(q is not None and q.sender_key is not None
                       and q.recipient_id != self._current_rid(owner) for q in queues)
        return any(q is not None and q.status is QueueStatus.SUSPENDED for q in queues)

    def _current_rid(self, owner: str) -> bytes:
        receive = self.agent(owner).durable.receive
        return receive.rid if receive is not None else b""

    def settle(self) -> None:
        """Restore every connection and let every delivery and envelope go through, until
        nothing changes."""
        if self.deleted:
            return
        for _ in range(10_000):
            progress = False
            for name in AGENTS:
                agent = self.agent(name)
                for server in SERVERS:
                    if agent.needs_subscription(server):
                        agent.resubscribe(server)
                        progress = True
                    progress |= self.network.release_all(name, server) > 0
                progress |= agent.transmit_all() > 0
            if not progress:
                return
        raise AssertionError("the network did not settle in 10,000 rounds")

    def check_the_end(self) -> None:
        """The invariants that hold once everything has gone through (see the module
        docstring)."""
        for name in AGENTS:
            agent = self.agent(name)
            if self.deleted:  # nothing settles on a deleted connection (ROT-13)
                continue
            assert agent.memory.held is None, f"{name} still holds a delivery (ROT-8)"
            assert agent.delivered == self.sent[other(name)], (
                f"{name} received {_show(agent.delivered)}, "
                f"{other(name)} sent {_show(self.sent[other(name)])}")
            assert not agent.rotating, f"{name}'s rotation never ended"
            assert not agent.durable.outbox, f"{name} has envelopes it never sent"
            assert len(self._queues_of(name)) == 1, (
                f"{name} has {len(self._queues_of(name))} queues on the servers: an old "
                f"queue was not deleted")
        if self.deleted:
            deleter = next(n for n in AGENTS if self.agent(n).durable.deleted)
            assert not self._queues_of(deleter), (
                f"{deleter} deleted the connection but its queues remain (ROT-13)")
            self.checked.add("ROT-13")
            return
        for server_name, server in self.network.servers.items():
            for rid in server.queue_ids():
                records = server.store.records(rid)
                assert not records, (
                    f"{server_name.decode()} still stores {len(records)} records nobody read")
        self._checked_at_the_end()

    def _checked_at_the_end(self) -> None:
        """What the end checked, once everything went through: every message delivered in
        order (ROT-5, ROT-6); when the run rotated, every rotation ended, its QHELLO acted on
        (ROT-7), its old queue drained and deleted (ROT-2, ROT-9) and every envelope sent on
        to the new queue (ROT-10); when a delivery was held (ROT-8), that it was let go."""
        if any(self.sent.values()):
            self.checked |= {"ROT-5", "ROT-6"}
        if self.stats["rotations started"]:
            self.checked |= {"ROT-2", "ROT-7", "ROT-9", "ROT-10"}
        if any(self.agent(name).durable.counts["held"] for name in AGENTS):
            self.checked.add("ROT-8")


#: what each count shows was exercised: the requirement IDs a run reached (campaign coverage)
REACHED_BY = {
    "verdict next": ("ROT-5", "ROT-6"),
    "verdict duplicate": ("ROT-6",),
    "hellos": ("ROT-1", "ROT-7"),
    "held": ("ROT-8",),
    "suspensions": ("ROT-3", "ROT-9"),
    "last flags": ("ROT-4",),
    "rotations completed": ("ROT-2", "ROT-9"),
    "switches": ("ROT-10",),
    "aborts accepted": ("ROT-11",),
    "second rotations refused": ("ROT-12",),
    "delete connection": ("ROT-13",),
}


#: what a run of the deployed flow can reach: the envelope, refusals and deletion
DEPLOYED_REACHES = {"ROT-5", "ROT-6", "ROT-12", "ROT-13"}


def reached(counts: Counter[str], profile: Profile) -> list[str]:
    """The requirement IDs the counts of a run show it exercised."""
    ids = {rid for name, rids in REACHED_BY.items() if counts[name] for rid in rids}
    if profile is Profile.DEPLOYED:  # the seed's flow requirements do not apply to it
        ids = (ids & DEPLOYED_REACHES) | ({"ROT-14"} if counts["switches"] else set())
    return sorted(ids)


def _show(bodies: list[bytes]) -> str:
    return "[" + ", ".join(b.decode() for b in bodies) + "]"


def machine_for(profile: Profile) -> type[RotationMachine]:
    """The rotation machine running ``profile``, with its own totals."""
    return type(f"RotationMachine_{profile.name}", (RotationMachine,),
                {"PROFILE": profile, "TOTALS": Counter()})
