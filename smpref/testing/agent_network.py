"""Several model servers and the agents that use them, in one process, with no I/O.

Each server is a :class:`~smpref.model.server.Server` over its own store: the journal store in
a folder (so a restart reopens what was written) or the memory store. Each agent has at most
one connection to each server, opened when it first needs one. Every command and answer goes
through the wire encoding both ways.

Deliveries are not handed to agents when the server sends them: they wait in the connection's
inbox until :meth:`Network.release` hands over the oldest one. That is how the state machine
holds deliveries back and releases them in any order across servers (one connection keeps its
order, as TLS does). Closing a connection (:meth:`Network.drop`) loses its subscriptions and
its inbox; the server keeps the messages.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from smpref.agent.agent import Agent
from smpref.client.core import AuthKeyPair, ClientSession, Reply
from smpref.crypto.primitives import x25519_public
from smpref.crypto.randomness import Random, SeededRandom
from smpref.errors import SimulatedCrashError
from smpref.independent.ratchet_mirror import RatchetMirror, open_msg_body
from smpref.model.config import ServerConfig
from smpref.model.environment import ManualClock
from smpref.model.queue_store import MemoryStore, QueueStore
from smpref.model.server import Server
from smpref.store.journal import JournalStore
from smpref.wire.messages import COUNT, IDS, MSG
from smpref.wire.structs import Command


class ModelServer:
    """A named model server; :meth:`restart` drops its sessions and reopens its store."""

    def __init__(self, name: bytes, clock: ManualClock, random: Random,
                 root: Path | None, config: ServerConfig) -> None:
        self.name, self.clock, self.random, self.root, self.config = (
            name, clock, random, root, config)
        self.store = self._open()
        self.server = Server(config, self.store, clock, random)
        self.restarts = 0

    def _open(self) -> QueueStore:
        if self.root is None:
            return MemoryStore()
        return JournalStore(self.root, clock=self.clock, sync=False, open_limit=8)

    def restart(self) -> None:
        """Stop and start again: the sessions are gone; the store keeps what was committed."""
        if self.root is not None:
            self.store.close()
            self.store = self._open()
        self.server = Server(self.config, self.store, self.clock, self.random)
        self.restarts += 1

    def queue_ids(self) -> list[bytes]:
        return self.store.queue_ids_after(None, 1 << 20)


@dataclass
class Link:
    """One agent's connection to one server."""

    client: ClientSession
    inbox: deque[Reply] = field(default_factory=deque)


class Network:
    """Model servers, agents and their connections. See the module docstring."""

    def __init__(self, names: list[bytes], *, seed: int = 0, root: Path | None = None,
                 config: ServerConfig | None = None,
                 log: Callable[[str], None] | None = None) -> None:
        self.clock = ManualClock()
        self.random: Random = SeededRandom(b"network" + seed.to_bytes(8, "big"))
        self.servers = {name: ModelServer(
            name, self.clock, SeededRandom(b"server" + name + seed.to_bytes(8, "big")),
            root / name.decode() if root is not None else None, config or ServerConfig())
            for name in names}
        self.links: dict[tuple[str, bytes], Link] = {}
        self.agents: dict[str, Agent] = {}
        #: agent -> the command tag at which it crashes next (:meth:`crash_before`)
        self.crash_at: dict[str, str] = {}
        self.log = log
        #: the second implementation's view of every queue (smpref.independent): the
        #: server's queue DH key from IDS, a ratchet mirror, and the records it has opened
        self.server_keys: dict[tuple[bytes, bytes], bytes] = {}
        self.mirrors: dict[tuple[bytes, bytes], RatchetMirror] = {}
        self.opened: dict[tuple[bytes, bytes], set[bytes]] = {}
        #: what the second implementation did: "records opened twice", ...
        self.counts: Counter[str] = Counter()

    # --- the port agents use -----------------------------------------------------------------

    def port(self, agent: str) -> AgentPort:
        return AgentPort(self, agent)

    def add(self, agent: Agent) -> Agent:
        self.agents[agent.name] = agent
        return agent

    def request(self, agent: str, server: bytes, message: Command, entity_id: bytes,
                key: AuthKeyPair | None) -> Reply:
        """Send one command on the agent's connection to ``server``; every MSG that comes
        back, the answer included, also goes to the inbox of the connection it is for."""
        if self.crash_at.get(agent) == message.TAG:
            del self.crash_at[agent]
            raise SimulatedCrashError(f"{agent} crashed before sending {message.TAG}")
        link = self._link(agent, server)
        corr, data = link.client.transmission(message, entity_id, key)
        answer: Reply | None = None
        for out in self.servers[server].server.receive(link.client.session_id, data):
            reply = Reply.decode(out.encode())
            if out.session_id == link.client.session_id and answer is None and (
                    reply.transmission.corr_id == corr):
                answer = reply
            if reply.tag == "MSG":
                target = self._by_session(server, out.session_id)
                if target is not None:
                    target.inbox.append(reply)
        assert answer is not None, f"{server.decode()} did not answer {message.TAG}"
        if isinstance(answer.message, IDS):  # the key the second implementation opens with
            self.server_keys[(server, answer.message.rcv_id)] = \
                answer.message.rcv_public_dh_key.raw
        if self.log is not None:
            shown = (f"ERR {answer.error}" if answer.error is not None
                     else f"COUNT {answer.message.remaining}"
                     if isinstance(answer.message, COUNT) else answer.tag)
            self.log(f"  {agent} -> {server.decode()}: {message.TAG} -> {shown}")
        return answer

    # --- what the state machine does to the network ------------------------------------------

    def pending(self, agent: str, server: bytes) -> int:
        link = self.links.get((agent, server))
        return len(link.inbox) if link is not None else 0

    def release(self, agent: str, server: bytes) -> bool:
        """Hand the oldest delivery waiting on the connection to its agent; whether there was
        one."""
        link = self.links.get((agent, server))
        if link is None or not link.inbox:
            return False
        reply = link.inbox.popleft()
        if self.log is not None:
            self.log(f"  {server.decode()} -> {agent}: {reply.tag}")
        receiver = self.agents[agent]
        rejected = receiver.durable.counts["records rejected"]
        verdict = self._open_independently(receiver, server, reply)
        receiver.deliver(reply)
        if verdict:  # the agent and the second implementation refuse the same records
            refused = receiver.durable.counts["records rejected"] > rejected
            assert refused == (verdict == "invalid"), (
                f"{agent} {'refused' if refused else 'took'} a record from {server.decode()} "
                f"that the second implementation finds {verdict}")
        return True

    def _open_independently(self, agent: Agent, server: bytes, reply: Reply) -> str:
        """Open a MSG for a queue ``agent`` owns with the second implementation
        (smpref.independent, written from QENC-5..8 and DEP-7): the body must open
        and read as the spec lays it out, and the record goes to a ratchet mirror of its own.
        Its verdict ("valid", "acceptable", "invalid"), or "" when there is nothing to open
        (not a MSG, a queue the agent no longer owns, a record opened before). A mistake
        smpref's server and client side share (say, the same wrong associated data) shows
        here, where the agent alone would open the record."""
        msg, rid = reply.message, reply.transmission.entity_id
        owned = next((q for q in agent.owned_queues() if q.server == server and q.rid == rid),
                     None)
        if not isinstance(msg, MSG) or owned is None or agent.durable.deleted:
            return ""
        key = (server, rid)
        body = open_msg_body(owned.owner.dh_key.secret, self.server_keys[key], msg.msg_id,
                             msg.enc_body)
        assert body is not None, f"the second implementation cannot open a MSG of {rid.hex()}"
        assert body[8:9] in (b"T", b"F") and body[9:10] in (b"T", b"F") and \
            body[10:11] == b" ", "the second implementation reads no flags in the MSG body"
        opened = self.opened.setdefault(key, set())
        if msg.msg_id in opened:  # delivered again: the mirror takes each record once (QENC-5)
            return ""
        opened.add(msg.msg_id)
        mirror = self.mirrors.setdefault(key, RatchetMirror(owned.owner.dh_key.secret))
        verdict, _, reason = mirror.receive(body[11:])
        self.counts["records opened twice"] += verdict != "invalid"
        self.counts[f"second implementation: {verdict} {reason}".strip()] += 1
        return verdict

    def release_all(self, agent: str, server: bytes) -> int:
        """Hand over every delivery waiting on the connection, in order; how many."""
        count = 0
        while self.release(agent, server):
            count += 1
        return count

    def crash_before(self, agent: str, tag: str) -> None:
        """Make the agent crash when it next tries to send a ``tag`` command."""
        self.crash_at[agent] = tag

    def drop(self, agent: str, server: bytes) -> None:
        """Close the agent's connection to ``server`` (lost subscriptions, lost inbox)."""
        link = self.links.pop((agent, server), None)
        if link is not None:
            self.servers[server].server.close_session(link.client.session_id)
        self.agents[agent].link_lost(server)

    def restart_server(self, server: bytes) -> None:
        """Restart a server: every connection to it closes."""
        for agent in self.agents:
            if (agent, server) in self.links:
                self.links.pop((agent, server))
                self.agents[agent].link_lost(server)
        self.servers[server].restart()

    def restart_agent(self, agent: str) -> None:
        """Restart an agent: its connections close, it loses its memory, and it subscribes
        again everywhere."""
        for name in self.servers:
            link = self.links.pop((agent, name), None)
            if link is not None:
                self.servers[name].server.close_session(link.client.session_id)
        self.agents[agent].restart()
        for name in self.servers:
            self.agents[agent].resubscribe(name)

    def _link(self, agent: str, server: bytes) -> Link:
        link = self.links.get((agent, server))
        if link is None:
            session_id, secret = self.random(32), self.random(32)
            self.servers[server].server.open_session(session_id, secret)
            link = Link(ClientSession(session_id, x25519_public(secret), self.random))
            self.links[(agent, server)] = link
        return link

    def _by_session(self, server: bytes, session_id: bytes) -> Link | None:
        return next((link for (_, name), link in self.links.items()
                     if name == server and link.client.session_id == session_id), None)


@dataclass
class AgentPort:
    """One agent's :class:`~smpref.agent.port.Port` onto a :class:`Network`."""

    network: Network
    agent: str

    def request(self, server: bytes, message: Command, entity_id: bytes,
                key: AuthKeyPair | None) -> Reply:
        return self.network.request(self.agent, server, message, entity_id, key)

