"""Clients for the client checker's tests: one polite flow, run over two clients.

:class:`PoliteClient` is what a careful SMP client does with queues of its own: create them
subscribed, send itself messages from a second connection (or the same one), acknowledge
every message it is given (also one that comes as an ACK's answer), take a subscription back
after END (with SUB or GET) or leave it, forget a deleted queue, wait for slow answers, send
again after an ERR, and connect and subscribe again when the server closes its connection. It
runs over the deployed client of tests/deployed_client.py (independent of smpref's codecs) at
any version 6-18, with one fault planted when asked, and over smpref's own client
(:class:`SmprefPolite`) at the seed version and at every deployed version.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from dataclasses import dataclass
from typing import Any

from deployed_client import (
    DeployedClient,
    Keys,
    Reply,
    ack_command,
    new_command,
    open_msg,
    parse_ids,
)

from smpref.client.connection import SmpClient
from smpref.conform.context import Context, Queue
from smpref.errors import ClientError
from smpref.transport.versions import SMPREF_VERSION
from smpref.wire.messages import ACK, GET, MSG, SUB
from smpref.wire.schema import render_error

#: the faults a deployed client can be given, one at a time: in what it sends
FAULTS = ("key-hash", "sni", "reused-corr-id", "wrong-ack", "unsigned-session",
          "no-resubscribe")
#: and in how it meets the server-side cases, each with the case it fails
CASE_FAULTS = {"ignore-ack-answer": 1, "ack-after-end": 2, "use-after-deld": 3,
               "ignore-quota": 4, "ignore-notification": 5, "first-of-block-only": 6,
               "give-up-on-err": 7, "impatient": 8, "no-resubscribe": 9}


@dataclass
class Event:
    tag: str
    entity: bytes
    msg_id: bytes = b""
    #: the deployed client's reply, to open the message
    reply: Reply | None = None


class PoliteClient:
    """The flow (module docstring); subclasses say how to speak. Options: ``shared`` sends
    on the receiving connection; ``burst`` messages go out each tick, one per queue in turn;
    ``after_end`` is ``sub``, ``get`` or ``leave``; ``on_err`` is ``retry`` or ``close`` (a
    sender with nothing else to send closes after an ERR)."""

    version: int | None = None

    def __init__(self, *, shared: bool = False, burst: int = 1, after_end: str = "sub",
                 on_err: str = "retry") -> None:
        self.shared, self.burst, self.after_end, self.on_err = shared, burst, after_end, on_err
        #: recipient IDs of the queues whose deletion the client was told of
        self.gone: set[bytes] = set()
        #: queues whose sender got ERR AUTH: not sent to any more
        self.unsendable: set[int] = set()
        self.sent = 0
        self.received = 0
        self.errors: list[str] = []
        self.resubscribe = True
        self.gives_up = False
        self.acks_answers = True

    # --- what a subclass provides ----------------------------------------------------------

    def rids(self) -> list[bytes]: ...
    async def connect(self) -> Any: ...
    async def create(self, conn: Any) -> None: ...
    async def subscribe(self, conn: Any, rid: bytes) -> Event | None: ...
    async def get(self, conn: Any, rid: bytes) -> Event | None: ...
    async def send(self, conn: Any, queue: int, body: bytes) -> str: ...
    async def ack(self, conn: Any, rid: bytes, msg_id: bytes) -> Event | None: ...
    async def event(self, conn: Any, timeout: float) -> Event | None: ...
    def alive(self, conn: Any) -> bool: ...
    async def close(self, conn: Any) -> None: ...

    # --- the flow --------------------------------------------------------------------------

    async def run(self, stop: asyncio.Event, *, interval: float = 0.05) -> None:
        """Until ``stop``: send ``burst`` messages every ``interval`` seconds and take every
        one."""
        receiver = await self.connect()
        while True:  # the server may close the connection while the queues are made
            try:
                await self.create(receiver)
                break
            except (ClientError, ConnectionError):
                await self.close(receiver)
                if stop.is_set():
                    return
                await asyncio.sleep(interval)  # a client that retries, not one that spins
                receiver = await self.connect()
                for rid in self.rids():
                    await self._take(receiver, await self.subscribe(receiver, rid))
        holder = {"conn": receiver}
        own_sender = None if self.shared else await self.connect()
        task = asyncio.create_task(self._receive(holder, stop))
        try:
            while not stop.is_set() and len(self.unsendable) < len(self.rids()):
                sender = holder["conn"] if own_sender is None else own_sender
                for _ in range(self.burst):
                    queue = self.sent % len(self.rids())
                    if queue in self.unsendable:
                        self.sent += 1
                        continue
                    try:
                        answer = await self.send(sender, queue, b"hello %d" % self.sent)
                    except (ClientError, ConnectionError):
                        break  # a shared connection the server closed: taken up again
                    if answer == "OK":
                        self.sent += 1
                    elif answer == "ERR AUTH":
                        self.unsendable.add(queue)  # the queue is gone
                    elif answer == "ERR INTERNAL" and self.gives_up and own_sender:
                        await self.close(own_sender)  # abandons the connection over one ERR
                        own_sender = sender = await self.connect()
                    elif answer == "ERR INTERNAL" and self.on_err == "close" and own_sender:
                        await self.close(own_sender)  # nothing else to send: done
                        self.unsendable = set(range(len(self.rids())))
                        break
                    else:
                        self.errors.append(answer)  # ERR INTERNAL, QUOTA: try again later
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(interval):
                        await stop.wait()
            await stop.wait()
        finally:
            await task
            if own_sender is not None:
                await self.close(own_sender)
            await self.close(holder["conn"])

    async def _receive(self, holder: dict[str, Any], stop: asyncio.Event) -> None:
        """Take what comes until ``stop``, then until nothing came for a moment: a careful
        client leaves nothing unacknowledged when it closes (CLNT-17)."""
        quiet = 0
        while quiet < 4:
            conn = holder["conn"]
            if not self.alive(conn):
                await self.close(conn)
                holder["conn"] = conn = await self.connect()
                if self.resubscribe:
                    with contextlib.suppress(ClientError, ConnectionError):
                        for rid in self.rids():
                            if rid not in self.gone:
                                await self._take(conn, await self.subscribe(conn, rid))
                continue
            event = await self.event(conn, 0.05)
            if event is None:
                quiet = quiet + 1 if stop.is_set() else 0
                continue
            try:
                if event.tag == "MSG":
                    await self._take(conn, event)
                elif event.tag == "END" and event.entity not in self.gone:
                    await self.ended(conn, event.entity)
                elif event.tag == "DELD":
                    await self.deleted(conn, event.entity)
            except (ClientError, ConnectionError):
                continue  # the server closed the connection: connect again above

    async def ended(self, conn: Any, rid: bytes) -> None:
        """END: take the queue up again (CLNT-20 allows SUB or GET), or leave it."""
        if self.after_end == "sub":
            await self._take(conn, await self.subscribe(conn, rid))
        elif self.after_end == "get":
            await self._take(conn, await self.get(conn, rid))

    async def deleted(self, conn: Any, rid: bytes) -> None:
        self.gone.add(rid)

    async def _take(self, conn: Any, event: Event | None) -> None:
        """Acknowledge a message, and every message an ACK answers with."""
        while event is not None and event.tag == "MSG":
            self.received += 1
            if self.ignores(event):
                return
            event = await self.ack(conn, event.entity, event.msg_id)
            if not self.acks_answers:
                return

    def ignores(self, event: Event) -> bool:
        """Whether this client leaves a message unacknowledged (a planted fault)."""
        return False


@dataclass
class Own:
    """One of a deployed client's queues."""

    keys: Keys
    rid: bytes
    sid: bytes
    dh: bytes


class DeployedPolite(PoliteClient):
    """The flow over tests/deployed_client.py with ``queues`` queues, and ``fault`` planted
    (one of FAULTS or CASE_FAULTS)."""

    def __init__(self, address: str, version: int = 18, fault: str | None = None, *,
                 queues: int = 1, **options: Any) -> None:
        super().__init__(**options)
        assert fault is None or fault in FAULTS or fault in CASE_FAULTS, fault
        self.address, self.version, self.fault, self.count = address, version, fault, queues
        self.own: list[Own] = []
        self.fixed_corr = os.urandom(24)
        self.resubscribe = fault != "no-resubscribe"
        self.gives_up = fault == "give-up-on-err"
        self.acks_answers = fault != "ignore-ack-answer"

    def rids(self) -> list[bytes]:
        return [q.rid for q in self.own]

    def _queue(self, rid: bytes) -> Own:
        return next(q for q in self.own if q.rid == rid)

    async def connect(self) -> DeployedClient:
        if self.version == 6:
            conn = await DeployedClient.connect_v6(self.address)
        else:
            conn = await DeployedClient.connect(
                self.address, version=self.version,
                key_hash=os.urandom(32) if self.fault == "key-hash" else None,
                sni="smp.example" if self.fault == "sni" else None)
        conn.sign_session = self.fault != "unsigned-session"
        conn.whole_blocks = self.fault != "first-of-block-only"
        if self.fault == "impatient":
            conn.timeout, conn.close_on_timeout = 0.2, True
        if self.fault == "key-hash":  # refused: nothing will answer
            conn.timeout = 1.0
        return conn

    async def create(self, conn: DeployedClient) -> None:
        while len(self.own) < self.count:
            keys = Keys()
            reply = await conn.request(new_command(keys, version=conn.version), key=keys.sign)
            assert reply.tag == "IDS", reply.command
            ids = parse_ids(reply.body, conn.version)
            self.own.append(Own(keys, ids.recipient_id, ids.sender_id, ids.server_dh))

    async def subscribe(self, conn: DeployedClient, rid: bytes) -> Event | None:
        return _event(await conn.request(b"SUB", rid, self._queue(rid).keys.sign))

    async def get(self, conn: DeployedClient, rid: bytes) -> Event | None:
        return _event(await conn.request(b"GET", rid, self._queue(rid).keys.sign))

    async def send(self, conn: DeployedClient, queue: int, body: bytes) -> str:
        corr = self.fixed_corr if self.fault == "reused-corr-id" else None
        reply = await conn.request(b"SEND F " + body, self.own[queue].sid, corr_id=corr)
        return reply.command.decode()

    async def ack(self, conn: DeployedClient, rid: bytes, msg_id: bytes) -> Event | None:
        key = self._queue(rid).keys.sign
        if self.fault == "wrong-ack":
            await conn.request(ack_command(os.urandom(24)), rid, key)
        return _event(await conn.request(ack_command(msg_id), rid, key))

    async def ended(self, conn: DeployedClient, rid: bytes) -> None:
        if self.fault == "ack-after-end":
            await asyncio.sleep(1.2)  # past any crossing on the wire
            await conn.request(ack_command(b""), rid, self._queue(rid).keys.sign)
        await super().ended(conn, rid)

    async def deleted(self, conn: DeployedClient, rid: bytes) -> None:
        await super().deleted(conn, rid)
        if self.fault == "use-after-deld":
            await asyncio.sleep(1.2)  # past any crossing on the wire
            await conn.request(b"SUB", rid, self._queue(rid).keys.sign)

    def ignores(self, event: Event) -> bool:
        if self.fault not in ("ignore-quota", "ignore-notification") or event.reply is None:
            return False
        opened = open_msg(event.reply, self._queue(event.entity).keys.dh,
                          self._queue(event.entity).dh)
        return opened.quota if self.fault == "ignore-quota" else opened.notification

    async def event(self, conn: DeployedClient, timeout: float) -> Event | None:
        try:
            return _event(await conn.event(timeout))
        except TimeoutError:
            return None

    def alive(self, conn: DeployedClient) -> bool:
        return not conn.reader.done()

    async def close(self, conn: DeployedClient) -> None:
        await conn.close()


def _event(reply: Reply) -> Event | None:
    if reply.tag == "MSG":
        return Event("MSG", reply.entity_id, reply.body[1:1 + reply.body[0]], reply)
    if reply.tag in ("END", "DELD"):
        return Event(reply.tag, reply.entity_id)
    return None


class SmprefPolite(PoliteClient):
    """The flow over smpref's own client, with one queue, at the seed version or a deployed
    one."""

    def __init__(self, address: str, version: int | None = None, **options: Any) -> None:
        super().__init__(**options)
        self.version = version
        seed = version is None or version == SMPREF_VERSION
        self.ctx = Context(address, extended=seed, version=version or SMPREF_VERSION,
                           forced=version)
        self.queue: Queue | None = None

    def rids(self) -> list[bytes]:
        return [self.queue.rid] if self.queue is not None else []

    async def connect(self) -> SmpClient:
        return await SmpClient.connect(self.ctx.address, version=self.version)

    async def create(self, conn: SmpClient) -> None:
        self.queue = await self.ctx.create(conn, subscribe=True)

    async def subscribe(self, conn: SmpClient, rid: bytes) -> Event | None:
        assert self.queue is not None
        return _smpref_event(await conn.request(SUB(), rid, self.queue.key))

    async def get(self, conn: SmpClient, rid: bytes) -> Event | None:
        assert self.queue is not None
        return _smpref_event(await conn.request(GET(), rid, self.queue.key))

    async def send(self, conn: SmpClient, queue: int, body: bytes) -> str:
        assert self.queue is not None
        reply = await self.ctx.send(conn, self.queue, body)
        if reply.tag != "ERR":
            return reply.tag
        return f"ERR {render_error(reply.message.error)}"  # type: ignore[union-attr]

    async def ack(self, conn: SmpClient, rid: bytes, msg_id: bytes) -> Event | None:
        assert self.queue is not None
        return _smpref_event(await conn.request(ACK(msg_id=msg_id), rid, self.queue.key))

    async def event(self, conn: SmpClient, timeout: float) -> Event | None:
        try:
            return _smpref_event(await conn.next_event(timeout))
        except (TimeoutError, ClientError):
            return None

    def alive(self, conn: SmpClient) -> bool:
        return conn.closed_reason is None

    async def close(self, conn: SmpClient) -> None:
        await conn.close()


def _smpref_event(reply: Any) -> Event | None:
    message = reply.message
    if isinstance(message, MSG):
        return Event("MSG", reply.transmission.entity_id, message.msg_id)
    if reply.tag in ("END", "DELD"):
        return Event(reply.tag, reply.transmission.entity_id)
    return None
