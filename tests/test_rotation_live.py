"""Rotation over real servers: two `smpref serve` processes and two agents on TLS clients
(smpref.agent.live). Alice moves her receive queue from the first server to the second while
both send in both directions; every message arrives once, in order, and the old queue is
deleted on its server."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from reqs import req
from servers import ServeProcess

from smpref.agent.agent import Agent, connect
from smpref.agent.live import LivePort
from smpref.agent.state import Phase, Profile
from smpref.crypto.randomness import SeededRandom
from smpref.wire.messages import SUB

DEADLINE = 60.0


def pump(agents: list[tuple[Agent, LivePort]], until: Callable[[], bool]) -> None:
    """Hand every delivery to its agent and transmit what each has queued, until ``until``
    holds (or fail after DEADLINE seconds)."""
    end = time.monotonic() + DEADLINE
    while not until():
        assert time.monotonic() < end, "the agents did not get there in time"
        for agent, port in agents:
            for reply in port.deliveries():
                agent.deliver(reply)
            agent.transmit_all()
        time.sleep(0.02)


@req("ROT-2", "ROT-9")
def test_a_rotation_between_two_serve_processes(tmp_path: Path) -> None:
    with ServeProcess(tmp_path / "one") as one, ServeProcess(tmp_path / "two") as two:
        s1, s2 = one.address.encode(), two.address.encode()
        ports = [LivePort(), LivePort()]
        try:
            alice = Agent("alice", Profile.SEED, ports[0], SeededRandom(b"live alice"))
            bob = Agent("bob", Profile.SEED, ports[1], SeededRandom(b"live bob"))
            agents = list(zip((alice, bob), ports, strict=True))
            connect(alice, bob, s1, s2)
            to_alice = [b"to alice %d" % n for n in range(1, 9)]
            to_bob = [b"to bob %d" % n for n in range(1, 9)]
            for body in to_alice[:2]:
                bob.send(body)
            for body in to_bob[:2]:
                alice.send(body)
            pump(agents, lambda: len(alice.delivered) == 2 and len(bob.delivered) == 2)
            old = alice.durable.receive
            assert old is not None and old.server == s1
            alice.start_rotation(s2)
            for n in range(2, 8):  # both keep sending while the rotation runs
                bob.send(to_alice[n])
                alice.send(to_bob[n])
                for agent, port in agents:
                    for reply in port.deliveries():
                        agent.deliver(reply)
                    agent.transmit()
            pump(agents, lambda: alice.delivered == to_alice[:8]
                 and bob.delivered == to_bob[:8] and not alice.rotating
                 and bob.durable.send is not None and bob.durable.send.server == s2)
            assert alice.durable.phase is Phase.IDLE
            new = alice.durable.receive
            assert new is not None and new.server == s2
            assert alice.durable.counts["rotations completed"] == 1
            assert bob.durable.counts["switches"] == 1
            # the old queue is gone from the first server
            gone = ports[0].request(s1, SUB(), old.rid, old.owner.auth_key)
            assert gone.error == "AUTH"
        finally:
            for port in ports:
                port.close()

