"""Rotation step by step over model servers: each requirement of spec/rotation.md on a written
scenario, and the traces where the seed as written and the deployed flow lose messages
(docs/rotation.md shows the same traces).

Alice (``a``) receives on s1 and rotates to s3; Bob (``b``) receives on s2. Nothing is delivered
until a test releases it, so each scenario fixes the order of every delivery."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from reqs import req

from smpref.agent.agent import Agent, connect
from smpref.agent.state import Phase, Profile
from smpref.crypto.randomness import SeededRandom
from smpref.errors import AgentError, RotationRefusedError
from smpref.model.states import QueueStatus
from smpref.testing.agent_network import Network

S1, S2, S3 = b"s1", b"s2", b"s3"


class Pair:
    """Two connected agents over three journal-store model servers."""

    def __init__(self, profile: Profile, root: Path) -> None:
        self.net = Network([S1, S2, S3], root=root)
        self.a = self.net.add(Agent("a", profile, self.net.port("a"), SeededRandom(b"a")))
        self.b = self.net.add(Agent("b", profile, self.net.port("b"), SeededRandom(b"b")))
        connect(self.a, self.b, S1, S2)
        self.drain("a", S1)
        self.drain("b", S2)

    def drain(self, agent: str, server: bytes) -> int:
        """Release every delivery waiting on one connection; how many."""
        return self.net.release_all(agent, server)

    def flush(self, agent: Agent) -> None:
        agent.transmit_all()

    def bob_sends(self, n: int) -> None:
        """Bob's application sends message n, and Bob transmits what he can."""
        self.b.send(body(n))
        self.flush(self.b)

    def queues_on(self, server: bytes) -> list[bytes]:
        return self.net.servers[server].queue_ids()

    def to_secured(self) -> None:
        """Alice starts a rotation to s3; QNEW, QKEYS and QREADY go through."""
        self.a.start_rotation(S3)
        self.flush(self.a)  # QNEW to Bob's queue on s2
        self.drain("b", S2)
        self.flush(self.b)  # QKEYS to Alice's old queue on s1
        self.drain("a", S1)  # Alice secures the new queue and queues QREADY
        self.flush(self.a)
        self.drain("b", S2)  # Bob sends QHELLO to s3


@pytest.fixture
def seed(tmp_path: Path) -> Iterator[Pair]:
    yield Pair(Profile.SEED, tmp_path)


def body(n: int) -> bytes:
    return b"b>a %d" % n


@req("ROT-2", "ROT-8", "ROT-9", "ROT-10", "DIV-33", "DIV-34")
def test_the_seed_flow_holds_the_new_queue_until_the_old_is_drained(seed: Pair) -> None:
    seed.to_secured()
    seed.b.send(body(1))
    seed.flush(seed.b)  # 1 goes to the old queue on s1, and waits there
    seed.drain("a", S3)  # QHELLO: Alice sends QSWITCH and suspends the old queue
    old = seed.a.durable.receive
    assert old is not None and old.server == S1
    record = seed.net.servers[S1].store.get(old.rid)
    assert record is not None and record.status is QueueStatus.SUSPENDED
    seed.b.send(body(2))
    assert seed.b.transmit()  # the old queue answers ERR AUTH: Bob switches (ROT-10)
    assert seed.b.durable.send is not None and seed.b.durable.send.server == S3
    seed.flush(seed.b)  # 2 goes to the new queue
    seed.drain("a", S3)  # 2 arrives first, and is held
    assert seed.a.delivered == []
    assert seed.a.memory.held is not None
    seed.drain("a", S1)  # 1, the last of the old queue; then the old queue is deleted
    assert seed.a.delivered == [body(1), body(2)]
    assert seed.a.durable.phase is Phase.IDLE and seed.a.memory.held is None
    assert old.rid not in seed.queues_on(S1)
    assert seed.a.durable.counts["rotations completed"] == 1


@req("ROT-8")
def test_a_restart_while_holding_gets_the_held_message_again(seed: Pair) -> None:
    seed.to_secured()
    seed.bob_sends(1)
    seed.drain("a", S3)
    seed.bob_sends(2)
    seed.drain("a", S3)
    assert seed.a.memory.held is not None
    seed.net.restart_agent("a")  # memory lost: held message and drain count; OFF again
    assert seed.a.memory.held is None and seed.a.memory.drain_left == 1
    seed.drain("a", S3)  # the server delivers 2 again; held again
    assert seed.a.memory.held is not None and seed.a.delivered == []
    seed.drain("a", S1)
    assert seed.a.delivered == [body(1), body(2)]


@req("ROT-9")
def test_an_empty_old_queue_is_deleted_at_once(seed: Pair) -> None:
    seed.to_secured()
    old = seed.a.durable.receive
    assert old is not None
    seed.drain("a", S3)  # QHELLO; OFF answers COUNT 0
    assert seed.a.durable.phase is Phase.IDLE
    assert old.rid not in seed.queues_on(S1)
    seed.flush(seed.a)  # QSWITCH
    seed.drain("b", S2)
    assert seed.b.durable.send is not None and seed.b.durable.send.server == S3


@req("ROT-9", "ROT-4")
def test_the_drain_ends_on_the_last_flag_after_a_lost_subscription(seed: Pair) -> None:
    seed.to_secured()
    for n in (1, 2, 3):
        seed.b.send(body(n))
    seed.flush(seed.b)
    seed.net.drop("a", S1)  # the old queue's subscription is lost: nothing drains
    seed.drain("a", S3)  # QHELLO: OFF on a new connection, COUNT 3
    seed.a.resubscribe(S1)  # SUB again, OFF again
    seed.drain("a", S1)
    assert seed.a.delivered == [body(1), body(2), body(3)]
    assert seed.a.durable.phase is Phase.IDLE


@req("ROT-10")
def test_the_sender_keeps_what_it_could_not_send(seed: Pair) -> None:
    seed.b.send(body(1))
    seed.to_secured()  # 1 goes to the old queue with QKEYS
    assert seed.b.durable.outbox == []
    seed.drain("a", S3)  # old queue suspended: Bob's next SEND is refused
    seed.b.send(body(2))
    seed.b.send(body(3))
    assert seed.b.transmit()  # ERR AUTH from the old queue: switch, nothing leaves
    assert len(seed.b.durable.outbox) == 2
    seed.flush(seed.b)
    seed.drain("a", S1)
    seed.drain("a", S3)
    assert seed.a.delivered == [body(1), body(2), body(3)]


@req("ROT-11", "DIV-36")
@pytest.mark.parametrize("when", ["created", "secured"])
def test_an_abort_before_qswitch_deletes_the_new_queue(seed: Pair, when: str) -> None:
    seed.a.start_rotation(S3)
    if when == "secured":
        seed.flush(seed.a)
        seed.drain("b", S2)
        seed.flush(seed.b)
        seed.drain("a", S1)
        assert seed.a.durable.phase is Phase.SECURED
    new = seed.a.durable.receive_new
    assert new is not None
    seed.a.abort_rotation()
    assert new.rid not in seed.queues_on(S3)
    assert seed.a.durable.phase is Phase.IDLE
    seed.flush(seed.a)
    seed.drain("b", S2)  # QREADY, if sent, makes Bob's QHELLO fail: Bob drops the new queue
    assert seed.b.durable.send_new is None or when == "created"
    seed.bob_sends(1)
    seed.drain("a", S1)
    assert seed.a.delivered == [body(1)]
    assert seed.b.durable.send is not None and seed.b.durable.send.server == S1


@req("ROT-11", "DIV-36")
def test_an_abort_after_qswitch_is_refused(seed: Pair) -> None:
    seed.to_secured()
    seed.bob_sends(1)
    seed.drain("a", S3)
    assert seed.a.durable.phase is Phase.SWITCHING
    with pytest.raises(RotationRefusedError, match="ROT-11"):
        seed.a.abort_rotation()
    with pytest.raises(RotationRefusedError, match="ROT-11"):
        seed.b.abort_rotation()  # Bob runs no rotation


@req("ROT-12", "DIV-36")
def test_a_second_rotation_is_refused_and_the_other_direction_may_overlap(seed: Pair) -> None:
    seed.a.start_rotation(S3)
    with pytest.raises(RotationRefusedError, match="ROT-12"):
        seed.a.start_rotation(S2)
    seed.b.start_rotation(S3)  # Bob rotates his own receive queue at the same time
    for _ in range(10):
        for agent, server in (("a", S1), ("a", S3), ("b", S2), ("b", S3)):
            seed.drain(agent, server)
        seed.flush(seed.a)
        seed.flush(seed.b)
    assert not seed.a.rotating and not seed.b.rotating
    assert seed.queues_on(S1) == [] and seed.queues_on(S2) == []
    assert len(seed.queues_on(S3)) == 2


@req("ROT-13")
def test_deleting_the_connection_mid_rotation_deletes_every_queue(seed: Pair) -> None:
    seed.to_secured()
    seed.a.delete_connection()
    assert seed.queues_on(S1) == [] and seed.queues_on(S3) == []
    assert not seed.a.rotating
    with pytest.raises(AgentError, match="deleted"):
        seed.a.send(b"late")
    with pytest.raises(RotationRefusedError, match="deleted"):
        seed.a.start_rotation(S3)
    seed.b.send(body(1))
    seed.flush(seed.b)  # ERR AUTH from the old queue, then from the new one: nothing leaves
    assert len(seed.b.durable.outbox) == 1
    assert seed.a.delivered == []


# --- the seed as written (DIV-33) ----------------------------------------------------------


def test_seed_as_written_drops_a_message_sent_before_qhello(tmp_path: Path) -> None:
    pair = Pair(Profile.SEED_AS_WRITTEN, tmp_path)
    pair.a.start_rotation(S3)
    pair.flush(pair.a)
    pair.drain("b", S2)  # QNEW
    pair.flush(pair.b)  # QKEYS (1) to the old queue
    pair.drain("a", S1)
    pair.flush(pair.a)  # QREADY
    pair.b.send(body(1))  # number 2, queued before QREADY arrives
    pair.flush(pair.b)  # 2 to the old queue, where it waits
    pair.drain("b", S2)  # QREADY: QHELLO is number 3, straight to the new queue
    pair.drain("a", S3)  # QHELLO (3) arrives first: a gap; Alice moves her chain to 3
    pair.drain("a", S1)  # 2 is now below the chain: a duplicate, dropped
    pair.flush(pair.a)
    pair.drain("b", S2)
    pair.flush(pair.b)
    assert pair.a.delivered == []
    assert pair.a.durable.counts["verdict duplicate"] == 1
    assert not pair.a.rotating  # the rotation "completed": the message is gone for good


def test_the_seed_flow_keeps_that_message(seed: Pair) -> None:
    """The same order as the trace above, under ROT-7: QHELLO carries number 0."""
    seed.a.start_rotation(S3)
    seed.flush(seed.a)
    seed.drain("b", S2)
    seed.flush(seed.b)
    seed.drain("a", S1)
    seed.flush(seed.a)
    seed.bob_sends(1)
    seed.drain("b", S2)
    seed.drain("a", S3)
    seed.drain("a", S1)
    assert seed.a.delivered == [body(1)]
    assert seed.a.durable.counts["verdict duplicate"] == 0


# --- the deployed flow (ROT-14) ------------------------------------------------------------


@pytest.fixture
def deployed(tmp_path: Path) -> Iterator[Pair]:
    yield Pair(Profile.DEPLOYED, tmp_path)


def deployed_to_quse(pair: Pair) -> None:
    pair.a.start_rotation(S3)
    pair.flush(pair.a)  # QADD
    pair.drain("b", S2)
    pair.flush(pair.b)  # QKEY to the old queue
    pair.drain("a", S1)  # KEY, QUSE queued
    pair.flush(pair.a)


@req("ROT-14")
def test_the_deployed_flow_rotates_when_nothing_is_in_flight(deployed: Pair) -> None:
    deployed_to_quse(deployed)
    old = deployed.a.durable.receive
    assert old is not None
    deployed.drain("b", S2)  # QUSE: QTEST to the new queue, and Bob moves there
    deployed.drain("a", S3)  # QTEST: Alice deletes the old queue at once
    assert old.rid not in deployed.queues_on(S1)
    deployed.b.send(body(1))
    deployed.flush(deployed.b)
    deployed.drain("a", S3)
    assert deployed.a.delivered == [body(1)]
    assert not deployed.a.rotating


@req("ROT-14")
def test_deployed_deletes_a_message_still_in_the_old_queue(deployed: Pair) -> None:
    deployed_to_quse(deployed)
    deployed.b.send(body(1))
    deployed.flush(deployed.b)  # 1 reaches the old queue, and waits there
    deployed.drain("b", S2)  # QUSE: QTEST to the new queue
    deployed.drain("a", S3)  # QTEST first: the old queue is deleted with 1 in it
    deployed.drain("a", S1)
    deployed.b.send(body(2))
    deployed.flush(deployed.b)
    deployed.drain("a", S3)
    assert deployed.a.delivered == [body(2)]  # 1 is lost
    assert deployed.a.durable.counts["verdict gap"] == 1


@req("ROT-14")
def test_deployed_drops_what_was_waiting_for_the_old_queue(deployed: Pair) -> None:
    deployed_to_quse(deployed)
    deployed.b.send(body(1))  # queued for the old queue, not yet sent
    deployed.drain("b", S2)  # QUSE: QTEST sent, Bob moves and drops what was queued
    assert deployed.b.durable.outbox == []
    assert deployed.b.durable.counts["dropped unsent"] == 1
    deployed.drain("a", S3)
    deployed.b.send(body(2))
    deployed.flush(deployed.b)
    deployed.drain("a", S3)
    assert deployed.a.delivered == [body(2)]
