"""One rotation, scripted step by step over three model servers: what ``smpref demo rotate``
prints and docs/rotation.md shows.

Alice receives on s1 and Bob on s2; Alice moves her receive queue to s3 while Bob keeps
sending to her. Bob sends one message just before Alice suspends the old queue and one just
after, so the run shows the hold (ROT-8), the drain (ROT-9) and the switch on ``ERR AUTH``
(ROT-10). Every delivery is released explicitly, so the order, and the output, is the same on
every run.
"""

from __future__ import annotations

from collections.abc import Callable

from smpref.agent.agent import Agent, connect
from smpref.agent.state import Profile
from smpref.crypto.randomness import SeededRandom
from smpref.testing.agent_network import Network

S1, S2, S3 = b"s1", b"s2", b"s3"


class _Walk:
    """The network, the two agents and what Bob sent, with the moves the script is made of."""

    def __init__(self, profile: Profile, say: Callable[[str], None]) -> None:
        self.say = say
        self.net = Network([S1, S2, S3], log=say)
        self.alice = self.net.add(Agent("alice", profile, self.net.port("alice"),
                                        SeededRandom(b"alice"), log=say))
        self.bob = self.net.add(Agent("bob", profile, self.net.port("bob"),
                                      SeededRandom(b"bob"), log=say))
        self.sent: list[bytes] = []

    def deliver(self, agent: str, server: bytes) -> None:
        self.net.release_all(agent, server)

    def bob_sends(self, text: str) -> None:
        self.sent.append(text.encode())
        self.bob.send(text.encode())
        self.bob.transmit_all()


def _script(w: _Walk) -> list[tuple[str, list[Callable[[], object]]]]:
    """The steps: a title and its moves, in order."""
    alice, bob = w.alice, w.bob
    return [
        ("set-up: Alice receives on s1, Bob on s2", [
            lambda: connect(alice, bob, S1, S2),
            lambda: w.deliver("alice", S1), lambda: w.deliver("bob", S2)]),
        ("Alice creates a queue on s3 and announces it", [
            lambda: alice.start_rotation(S3), alice.transmit_all]),
        ("Bob answers with his key for it", [
            lambda: w.deliver("bob", S2), bob.transmit_all]),
        ("Alice secures the new queue and says it is ready", [
            lambda: w.deliver("alice", S1), alice.transmit_all]),
        ("Bob tests the new queue, then sends a message, still to the old one", [
            lambda: w.deliver("bob", S2), lambda: w.bob_sends("hello 1")]),
        ("the new queue's first delivery reaches Alice before the old queue's", [
            lambda: w.deliver("alice", S3)]),
        ("Bob sends again", [
            lambda: w.bob_sends("hello 2"), lambda: w.deliver("alice", S3)]),
        ("the old queue drains; Alice deletes it", [
            lambda: w.deliver("alice", S1), lambda: w.deliver("alice", S3),
            alice.transmit_all, lambda: w.deliver("bob", S2), bob.transmit_all,
            lambda: w.deliver("alice", S3)]),
    ]


def walk_through(profile: Profile, say: Callable[[str], None]) -> tuple[list[bytes], list[bytes]]:
    """Run the scripted rotation under ``profile``, narrating through ``say``; (what Bob
    sent, what Alice received)."""
    w = _Walk(profile, say)
    for title, moves in _script(w):
        say("")
        say(f"## {title}")
        for move in moves:
            move()
    say("")
    say("## result")
    say(f"bob sent:       {', '.join(b.decode() for b in w.sent)}")
    say(f"alice received: {', '.join(b.decode() for b in w.alice.delivered)}")
    queues = {name.decode(): len(server.queue_ids()) for name, server in w.net.servers.items()}
    say(f"queues on the servers: {queues}")
    return w.sent, w.alice.delivered
