"""Live targets: seeded random programs against a real SMP server over TLS, with the reference
model (in-process, over the loopback) predicting every answer.

- ``server``: any server at an ``smp://`` address. Each program creates and uses only its own
  queues, so programs are independent and many can run at once against one server.
- ``embedded``: a fresh ``smpref serve`` (in-process, on loopback, in a temporary store) per
  Spark partition.
- ``embedded-deployed``: the same server, spoken to in deployed SMP (ALPN ``smp/1`` only) at
  a version from 6 to 18 that each run takes from its seed (``seed % 13``): the deployed
  profile end to end at every version, the model's deployed profile at the same version as
  oracle (DEP-12).

A program is a list of steps over two connections (a queue owner and a sender) and up to three
queue handles. The server chooses IDs, keys and nonces; each side binds them to the handle when
its ``IDS`` arrives, and messages are opened by each side's own owner keys, so the verdict
compares meaning (a tag, an error, a message body), never random bytes. Receiving is by
``GET``, so no answer depends on the timing of pushed events. Behaviour that depends on the
server's clock (queue and message expiry) is tested only against the embedded server, whose
clock the campaign moves together with the model's (the ``expire`` step: both clocks advance by
the same whole days plus an hour, away from any threshold, and both sweep); against a remote
server it is left out.

The model speaks the protocol the live connection negotiated (TRANS-11): against a server that
speaks only deployed SMP, or at a forced deployed version, its sessions are deployed sessions,
so its deployed profile predicts deployed answers (``OK`` for OFF, message bodies without
ratchet records, DEP-4, DEP-7) and every operation runs in both protocols.

A divergence is shrunk by deleting steps (delta debugging, as ClusterFuzz minimizes) while the
same signature still appears, and reported with the minimal program, the exchange on both sides
and the requirement IDs the model reported for the diverging step.
"""

from __future__ import annotations

import asyncio
import enum
import json
import random
import tempfile
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

from smpref.campaign.run_records import FAIL, PASS, RunRecord
from smpref.campaign.signatures import shrink_now, signature
from smpref.campaign.targets import TargetSpec, executor_name, register
from smpref.client.connection import at_version, open_deployed_message
from smpref.client.core import AuthKeyPair, DhKeyPair, OwnedQueue, Reply
from smpref.crypto.randomness import SeededRandom
from smpref.errors import ClientError, CryptoError, SmprefError
from smpref.model.config import DAY, ServerConfig
from smpref.testing.loopback import Loopback
from smpref.text.addresses import parse_server_address
from smpref.transport.versions import DEPLOYED_VERSIONS
from smpref.wire.dialects import Dialect
from smpref.wire.messages import (
    ACK,
    COUNT,
    DEL,
    GET,
    IDS,
    KEY,
    MSG,
    NEW,
    OFF,
    PING,
    SEND,
    ConnectionMode,
    MsgFlags,
    QueueRequest,
    SubscriptionMode,
)
from smpref.wire.structs import Command

QUEUES = 3
#: operations and their weights; every one runs in both protocols (the model has a deployed
#: profile, DEP-4)
class Op(enum.Enum):
    """An abstract step's operation; the value is its name in a program's JSON."""

    NEW = "new"
    KEY = "key"
    SEND = "send"
    SEND_UNSIGNED = "send_unsigned"
    GET = "get"
    ACK = "ack"
    ACK_WRONG = "ack_wrong"
    OFF = "off"
    DEL = "del"
    PING = "ping"
    EXPIRE = "expire"


#: each operation's weight in a drawn program (in this order: a seed's program depends on it)
OPERATIONS = {Op.NEW: 3, Op.KEY: 2, Op.SEND: 5, Op.SEND_UNSIGNED: 1, Op.GET: 4, Op.ACK: 3,
              Op.ACK_WRONG: 1, Op.OFF: 1, Op.DEL: 1, Op.PING: 1, Op.EXPIRE: 1}
#: operations that need a server whose clock the campaign controls (the embedded one)
CLOCK_ONLY = {Op.EXPIRE}
#: the days an ``expire`` step moves both clocks by (the hour added keeps off thresholds)
EXPIRE_DAYS = (1, 6, 10, 22, 95)


@dataclass(frozen=True)
class Step:
    """One abstract step: an operation on a queue handle (for ``expire``: the days)."""

    op: Op
    queue: int

    def text(self) -> str:
        if self.op is Op.PING:
            return "ping"
        if self.op is Op.EXPIRE:
            return f"expire {EXPIRE_DAYS[self.queue]} days"
        return f"{self.op.value} q{self.queue}"


def program(seed: int, steps: int, clock: bool = False) -> list[Step]:
    """The program of ``seed``: the same on every executor (a private PRNG, no globals) and in
    both protocols. ``clock``: the server's clock is the campaign's to move."""
    rng = random.Random(seed)
    ops = [op for op in OPERATIONS if clock or op not in CLOCK_ONLY]
    weights = [OPERATIONS[op] for op in ops]
    drawn = [Step(op, rng.randrange(len(EXPIRE_DAYS) if op is Op.EXPIRE else QUEUES))
             for op in rng.choices(ops, weights, k=steps)]
    return [Step(Op.NEW, 0), *drawn]  # every program has a queue to work on


@dataclass
class Handle:
    """One side's binding of a queue handle: the owner's keys and the IDs its server chose."""

    owner: OwnedQueue
    sender_key: AuthKeyPair | None = None
    delivered: bytes | None = None
    deleted: bool = False


class Side(ABC):
    """One side of the comparison: it runs steps and says what each answer meant. The model
    (:class:`ModelSide`) and the server under test (:class:`LiveSide`) are the two kinds."""

    dialect = Dialect.SEED

    @abstractmethod
    def request(self, connection: int, command: Command, entity: bytes,
                key: AuthKeyPair | None) -> Reply:
        """Send ``command`` on connection 0 (the owner) or 1 (the sender); its answer."""

    @abstractmethod
    def advance(self, seconds: int) -> None:
        """Move the server's clock and run a whole sweep."""

    @abstractmethod
    def close(self) -> None:
        """Release the side's connections."""


class ModelSide(Side):
    """The oracle: the reference model over the loopback, through the wire format."""

    def __init__(self, seed: int, dialect: Dialect = Dialect.SEED,
                 version: int | None = None) -> None:
        self.dialect = dialect
        #: the deployed version the live side negotiated (None: the seed design's layouts)
        self.version = version
        self.loopback = Loopback(seed, ServerConfig())
        self.connections = [self.loopback.connect(dialect, version),
                            self.loopback.connect(dialect, version)]
        self.reached: list[tuple[str, ...]] = []
        self.loopback.server.observer = lambda _name, reqs: self.reached.append(reqs)

    def request(self, connection: int, command: Command, entity: bytes,
                key: AuthKeyPair | None) -> Reply:
        if self.version is not None:  # as the live side's client sends it (DEP-12)
            command = cast(Command, at_version(command, self.version))
        return self.connections[connection].send(command, entity, key)[0]

    def advance(self, seconds: int) -> None:
        self.loopback.clock.advance(seconds)
        self.loopback.expire()

    def close(self) -> None:
        for connection in self.connections:
            connection.close()


class LiveSide(Side):
    """The server under test, over TLS, driven from a private event loop."""

    def __init__(self, address: str, timeout: float,
                 server: BackgroundServer | None = None, version: int | None = None) -> None:
        from smpref.client.connection import SmpClient

        self.timeout = timeout
        self.server = server
        self.loop = asyncio.new_event_loop()
        try:
            self.clients = [self.loop.run_until_complete(SmpClient.connect(
                address, timeout=timeout, version=version)) for _ in range(2)]
        except BaseException:
            self.loop.close()
            raise
        self.dialect = self.clients[0].negotiated.dialect
        negotiated = self.clients[0].negotiated
        self.version = None if negotiated.extended else negotiated.version

    def request(self, connection: int, command: Command, entity: bytes,
                key: AuthKeyPair | None) -> Reply:
        client = self.clients[connection]
        return self.loop.run_until_complete(client.request(command, entity, key,
                                                           timeout=self.timeout))

    def advance(self, seconds: int) -> None:
        assert self.server is not None, "only the embedded server's clock can be moved"
        self.server.advance(seconds)

    def close(self) -> None:
        for client in self.clients:
            self.loop.run_until_complete(client.close())
        self.loop.close()


def meaning(reply: Reply, handle: Handle | None, dialect: Dialect = Dialect.SEED) -> str:
    """What an answer means, without random bytes: a tag, an error, or an opened body."""
    if reply.tag == "ERR":
        return f"ERR {reply.error}"
    if reply.tag == "MSG" and handle is not None and dialect is Dialect.DEPLOYED:
        try:
            body = open_deployed_message(handle.owner.rcv_dh_secret, reply.expect(MSG))
        except CryptoError as exc:
            return f"MSG that does not open ({exc})"
        return "MSG Quota None" if body.quota else f"MSG Message {body.body!r}"
    if reply.tag == "MSG" and handle is not None:
        msg = reply.expect(MSG)
        try:
            _, received, _ = handle.owner.open_message(msg)
        except CryptoError as exc:
            return f"MSG that does not open ({exc})"
        return f"MSG {received.kind.name} {received.body!r}"
    if reply.tag == "COUNT":
        return f"COUNT {reply.expect(COUNT).remaining}"
    return reply.tag


class Runner:
    """Runs one program on one side, step by step, keeping that side's handle bindings."""

    def __init__(self, side: Side, seed: int, password: bytes | None) -> None:
        self.side = side
        self.random = SeededRandom(b"campaign" + seed.to_bytes(8, "big"))
        self.handles: dict[int, Handle] = {}
        self.password = password
        self.counter = 0

    def meaning(self, reply: Reply, handle: Handle | None = None) -> str:
        """What an answer means in the protocol this side speaks."""
        return meaning(reply, handle, self.side.dialect)

    def step(self, step: Step) -> str:
        handle = self.handles.get(step.queue)
        if step.op is Op.PING:
            return self.meaning(self.side.request(1, PING(), b"", None))
        if step.op is Op.EXPIRE:
            self.side.advance(EXPIRE_DAYS[step.queue] * DAY + 3600)
            return "swept"
        if step.op is Op.NEW:
            if handle is not None and not handle.deleted:
                return "skip (exists)"
            owner = OwnedQueue(AuthKeyPair.ed25519(self.random), DhKeyPair.generate(self.random))
            version = getattr(self.side, "version", None)
            # below 9 NEW cannot say the queue's mode: it gets none (DEP-12, DIV-39)
            request = None if version is not None and version < 9 else QueueRequest(
                conn_mode=ConnectionMode.Invitation, queue_link=None)
            command = NEW(rcv_auth_key=owner.auth_key.public, rcv_dh_key=owner.dh_key.public,
                          basic_auth=self.password, sub_mode=SubscriptionMode.OnlyCreate,
                          queue_request=request, ntf_request=None)
            reply = self.side.request(0, command, b"", owner.auth_key)
            if reply.tag == "IDS":
                owner.created(reply.expect(IDS))
                self.handles[step.queue] = Handle(owner)
            return self.meaning(reply)
        if handle is None:
            return "skip (no queue)"
        owner = handle.owner
        if step.op is Op.KEY:
            key = AuthKeyPair.ed25519(self.random)
            reply = self.side.request(0, KEY(sender_key=key.public), owner.recipient_id,
                                      owner.auth_key)
            if reply.tag == "OK":
                handle.sender_key = key
            return self.meaning(reply, handle)
        if step.op in (Op.SEND, Op.SEND_UNSIGNED):
            self.counter += 1
            body = b"message %d" % self.counter
            signer = handle.sender_key if step.op is Op.SEND else None
            send = SEND(flags=MsgFlags(notification=False), body=body)
            return self.meaning(self.side.request(1, send, owner.sender_id, signer), handle)
        if step.op is Op.GET:
            reply = self.side.request(0, GET(), owner.recipient_id, owner.auth_key)
            if reply.tag == "MSG":
                handle.delivered = reply.expect(MSG).msg_id
            return self.meaning(reply, handle)
        if step.op in (Op.ACK, Op.ACK_WRONG):
            msg_id = handle.delivered or b""
            if step.op is Op.ACK_WRONG:
                msg_id = bytes(24)
            reply = self.side.request(0, ACK(msg_id=msg_id), owner.recipient_id, owner.auth_key)
            if step.op is Op.ACK and reply.tag in ("OK", "MSG"):
                handle.delivered = reply.expect(MSG).msg_id if reply.tag == "MSG" else None
            return self.meaning(reply, handle)
        if step.op is Op.OFF:
            reply = self.side.request(0, OFF(), owner.recipient_id, owner.auth_key)
            return self.meaning(reply, handle)
        if step.op is Op.DEL:
            reply = self.side.request(0, DEL(), owner.recipient_id, owner.auth_key)
            if reply.tag == "OK":
                handle.deleted = True
            return self.meaning(reply, handle)
        raise AssertionError(f"unknown operation {step.op}")


@dataclass
class Divergence:
    """Where the server's answer differed from the model's."""

    index: int
    step: Step
    expected: str
    got: str
    requirements: tuple[str, ...]
    exchange: list[str] = field(default_factory=list)

    def signature(self, target: str) -> str:
        # The command (send and send_unsigned are both SEND) and the tags of the two answers:
        # bodies and counters differ between seeds, the kind of divergence does not.
        command = self.step.op.value.split("_")[0]
        return signature(target, command, " ".join(self.expected.split(" ")[:2]),
                         " ".join(self.got.split(" ")[:2]))


def compare(steps: list[Step], seed: int, live: Callable[[], Side], password: bytes | None,
            reached: set[str] | None = None) -> Divergence | None:
    """Run ``steps`` on the model and on a fresh live side; the first divergence, or None.
    ``reached`` collects the requirement IDs the model reported on the way. The model speaks
    the protocol the live side negotiated."""
    server = live()
    model = ModelSide(seed, server.dialect, getattr(server, "version", None))
    try:
        expected, got = Runner(model, seed, None), Runner(server, seed, password)
        exchange: list[str] = []
        for index, step in enumerate(steps):
            before = len(model.reached)
            want = expected.step(step)
            have = got.step(step)
            exchange.append(f"{step.text()}: model {want} | server {have}")
            if want != have:
                requirements = tuple(sorted({r for reqs in model.reached[before:] for r in reqs}))
                return Divergence(index, step, want, have, requirements, exchange)
        return None
    finally:
        if reached is not None:
            reached.update(r for reqs in model.reached for r in reqs)
        model.close()
        server.close()


def shrink(steps: list[Step], seed: int, live: Callable[[], Side],  # noqa: PLR0917
           password: bytes | None,
           target: str, found: Divergence, budget: int = 60
           ) -> tuple[list[Step], Divergence]:
    """Delete chunks of steps while the same signature still appears (delta debugging)."""
    wanted = found.signature(target)
    current, best = steps[: found.index + 1], found
    chunk = max(1, len(current) // 2)
    tries = 0
    while chunk >= 1 and tries < budget:
        removed = False
        start = 0
        while start < len(current) and tries < budget:
            candidate = current[:start] + current[start + chunk:]
            tries += 1
            again = compare(candidate, seed, live, password) if candidate else None
            if again is not None and again.signature(target) == wanted:
                current, best, removed = candidate[: again.index + 1], again, True
            else:
                start += chunk
        if not removed:
            chunk //= 2
    return current, best


#: a LiveTarget's version meaning: each run draws its deployed version from its seed
VERSION_BY_SEED = -1


class LiveTarget:
    """Programs against a live server, the model as oracle."""

    def __init__(self, name: str, address: str | None, timeout: float = 10.0,
                 version: int | None = None) -> None:
        self.name = name
        self.address = address
        self.timeout = timeout
        self.version = version
        self.server: BackgroundServer | None = None
        self.known: frozenset[str] = frozenset()
        self.shrunk: set[str] | None = set()  # signatures shrunk (shrink_now)

    def open(self) -> None:
        if self.name.startswith("embedded"):
            self.server = BackgroundServer()
            self.address = self.server.address

    def close(self) -> None:
        if self.server is not None:
            self.server.stop()
            self.server = None

    def run(self, seed: int, steps: int) -> RunRecord:
        assert self.address is not None, "open() first"
        address = self.address
        parsed = parse_server_address(address)
        password = parsed.basic_auth.encode() if parsed.basic_auth else None
        started = time.perf_counter()

        version = self.version
        if version == VERSION_BY_SEED:  # one version per run, a function of its seed
            version = DEPLOYED_VERSIONS[seed % len(DEPLOYED_VERSIONS)]

        def live() -> Side:
            return LiveSide(address, self.timeout, self.server, version)

        try:
            steps_list = program(seed, steps, clock=self.server is not None)
            reached: set[str] = set()
            found = compare(steps_list, seed, live, password, reached)
        except (ClientError, SmprefError, OSError) as exc:
            return RunRecord(seed, self.name, 0, FAIL, time.perf_counter() - started,
                             executor_name(), signature=signature(self.name, "connection"),
                             message=f"the server could not be used: {exc}"[:500])
        if found is None:
            return RunRecord(seed, self.name, len(steps_list), PASS,
                             time.perf_counter() - started, executor_name(),
                             requirements=sorted(reached))
        found_signature = found.signature(self.name)
        known = found_signature in self.known
        if shrink_now(found_signature, self.known, self.shrunk):
            minimal, last = shrink(steps_list, seed, live, password, self.name, found)
        else:  # reported as it ran
            minimal, last = steps_list[:found.index + 1], found
        return RunRecord(
            seed, self.name, len(steps_list), FAIL, time.perf_counter() - started,
            executor_name(), signature=last.signature(self.name),
            message=f"{last.step.text()}: the model answers {last.expected}, "
                    f"the server {last.got}"[:500],
            program="\n".join(s.text() for s in minimal),
            program_json=json.dumps([{"op": s.op.value, "queue": s.queue} for s in minimal]),
            program_steps=len(minimal), requirements=sorted(reached),
            failure_requirements=list(last.requirements), exchange="\n".join(last.exchange),
            known=known)


class BackgroundServer:
    """``smpref serve`` in this process: its own event loop in a thread, a temporary store."""

    def __init__(self) -> None:
        from smpref.serve.listener import ServeConfig, SmpServer

        self.folder = tempfile.TemporaryDirectory(prefix="smpref-campaign-")
        self.loop = asyncio.new_event_loop()
        self.server = SmpServer(self.folder.name, ServeConfig.embedded())
        started = threading.Event()
        self.thread = threading.Thread(target=self._serve, args=(started,), daemon=True)
        self.thread.start()
        started.wait(60)
        self.address = self.server.address

    def _serve(self, started: threading.Event) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_until_complete(self.server.start())
        started.set()
        self.loop.run_forever()

    def advance(self, seconds: int) -> None:
        """Move the server's clock and wait for a whole sweep cycle (RET-*)."""
        self.server.clock.advance(seconds)
        asyncio.run_coroutine_threadsafe(self.server.sweep_cycle(), self.loop).result(60)

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self.server.stop(), self.loop).result(60)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(60)
        self.loop.close()
        self.folder.cleanup()


def _server(address: Any) -> LiveTarget:
    return LiveTarget("server", address)


def _embedded(_address: Any) -> LiveTarget:
    return LiveTarget("embedded", None)


def _embedded_deployed(_address: Any) -> LiveTarget:
    return LiveTarget("embedded-deployed", None, version=VERSION_BY_SEED)


register(TargetSpec("server", "a live server at --address, the model predicting every answer",
                    _server, needs_address=True))
register(TargetSpec("embedded", "a fresh smpref serve per Spark partition, the model "
                    "predicting every answer", _embedded))
register(TargetSpec("embedded-deployed", "the same, spoken to in deployed SMP at a version "
                    "from 6 to 18 drawn by the seed: "
                    "the deployed profile end to end (DEP-4, TRANS-11)", _embedded_deployed))
