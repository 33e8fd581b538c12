"""Clients for the client checker's tests: one polite flow, run over two clients.

:class:`PoliteClient` is what a careful SMP client does with one queue of its own: create it
subscribed, send itself messages from a second connection, acknowledge every message it is
given (also one that comes as an ACK's answer), take a subscription back after END, forget a
deleted queue, wait for slow answers, send again after an ERR, and connect and subscribe again
when the server closes its connection. It runs over the deployed client of
tests/deployed_client.py (independent of smpref's codecs) at any version 6-18, with one fault
planted when asked, and over smpref's own client (:class:`SmprefPolite`) at the seed version
and at every deployed version.
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
from smpref.wire.messages import ACK, MSG, SUB

#: the faults a deployed client can be given, one at a time: in what it sends
FAULTS = ("key-hash", "sni", "reused-corr-id", "wrong-ack", "unsigned-session",
          "no-resubscribe")
#: and in how it meets the server-side cases, each with the case it fails
CASE_FAULTS = {"wrong-ack": 1, "ack-after-end": 2, "use-after-deld": 3, "ignore-quota": 4,
               "ignore-notification": 5, "first-of-block-only": 6, "give-up-on-err": 7,
               "impatient": 8, "no-resubscribe": 9}


@dataclass
class Event:
    tag: str
    entity: bytes
    msg_id: bytes = b""
    #: the deployed client's reply, to open the message
    reply: Reply | None = None


class PoliteClient:
    """The flow (module docstring); subclasses say how to speak."""

    version: int | None = None

    def __init__(self) -> None:
        self.deleted = False
        self.sent = 0
        self.received = 0
        self.errors: list[str] = []
        self.resubscribe = True
        self.gives_up = False

    # --- what a subclass provides ----------------------------------------------------------

    async def connect(self) -> Any: ...
    async def create(self, conn: Any) -> None: ...
    async def subscribe(self, conn: Any) -> Event | None: ...
    async def send(self, conn: Any, body: bytes) -> str: ...
    async def ack(self, conn: Any, msg_id: bytes) -> Event | None: ...
    async def event(self, conn: Any, timeout: float) -> Event | None: ...
    def alive(self, conn: Any) -> bool: ...
    async def close(self, conn: Any) -> None: ...

    # --- the flow --------------------------------------------------------------------------

    async def run(self, stop: asyncio.Event, *, interval: float = 0.05) -> None:
        """Until ``stop``: send a message every ``interval`` seconds and take every one."""
        receiver = await self.connect()
        await self.create(receiver)
        sender = await self.connect()
        holder = {"conn": receiver}
        task = asyncio.create_task(self._receive(holder, stop))
        try:
            while not stop.is_set() and not self.deleted:
                answer = await self.send(sender, b"hello %d" % self.sent)
                if answer == "OK":
                    self.sent += 1
                elif answer == "ERR AUTH":
                    break  # the queue is gone
                elif answer == "ERR INTERNAL" and self.gives_up:
                    await self.close(sender)  # abandons the connection over one ERR
                    sender = await self.connect()
                else:
                    self.errors.append(answer)  # ERR INTERNAL, QUOTA: try again later
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(interval):
                        await stop.wait()
            await stop.wait()
        finally:
            await task
            await self.close(sender)
            await self.close(holder["conn"])

    async def _receive(self, holder: dict[str, Any], stop: asyncio.Event) -> None:
        """Take what comes until ``stop``, then until nothing came for a moment: a careful
        client leaves nothing unacknowledged when it closes (CLNT-17)."""
        quiet = 0
        while quiet < 4:
            conn = holder["conn"]
            if not self.alive(conn):
                await self.close(conn)
                if self.deleted:
                    return
                holder["conn"] = conn = await self.connect()
                if self.resubscribe:
                    with contextlib.suppress(ClientError, ConnectionError):
                        await self._take(conn, await self.subscribe(conn))
                continue
            event = await self.event(conn, 0.05)
            if event is None:
                quiet = quiet + 1 if stop.is_set() else 0
                continue
            try:
                if event.tag == "MSG":
                    await self._take(conn, event)
                elif event.tag == "END" and not self.deleted:
                    await self.after_end(conn)
                elif event.tag == "DELD":
                    await self.after_deld(conn)
            except (ClientError, ConnectionError):
                continue  # the server closed the connection: connect again above

    async def after_end(self, conn: Any) -> None:
        """Take the subscription back (CLNT-20 allows it)."""
        await self._take(conn, await self.subscribe(conn))

    async def after_deld(self, conn: Any) -> None:
        self.deleted = True

    async def _take(self, conn: Any, event: Event | None) -> None:
        """Acknowledge a message, and every message an ACK answers with."""
        while event is not None and event.tag == "MSG":
            self.received += 1
            if self.ignores(event):
                return
            event = await self.ack(conn, event.msg_id)

    def ignores(self, event: Event) -> bool:
        """Whether this client leaves a message unacknowledged (a planted fault)."""
        return False


class DeployedPolite(PoliteClient):
    """The flow over tests/deployed_client.py, with ``fault`` planted (one of FAULTS)."""

    def __init__(self, address: str, version: int = 18, fault: str | None = None) -> None:
        super().__init__()
        assert fault is None or fault in FAULTS or fault in CASE_FAULTS, fault
        self.address, self.version, self.fault = address, version, fault
        self.owner = Keys()
        self.rid = self.sid = b""
        self.dh = b""
        self.fixed_corr = os.urandom(24)
        self.resubscribe = fault != "no-resubscribe"
        self.gives_up = fault == "give-up-on-err"

    async def after_end(self, conn: DeployedClient) -> None:
        if self.fault == "ack-after-end":
            await conn.request(ack_command(b""), self.rid, self.owner.sign)
        await super().after_end(conn)

    async def after_deld(self, conn: DeployedClient) -> None:
        await super().after_deld(conn)
        if self.fault == "use-after-deld":
            await asyncio.sleep(0.6)  # past any crossing on the wire
            await conn.request(b"SUB", self.rid, self.owner.sign)

    def ignores(self, event: Event) -> bool:
        if self.fault not in ("ignore-quota", "ignore-notification") or event.reply is None:
            return False
        opened = open_msg(event.reply, self.owner.dh, self.dh)
        return opened.quota if self.fault == "ignore-quota" else opened.notification

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
        return conn

    async def create(self, conn: DeployedClient) -> None:
        reply = await conn.request(new_command(self.owner, version=conn.version),
                                   key=self.owner.sign)
        assert reply.tag == "IDS", reply.command
        ids = parse_ids(reply.body, conn.version)
        self.rid, self.sid, self.dh = ids.recipient_id, ids.sender_id, ids.server_dh

    async def subscribe(self, conn: DeployedClient) -> Event | None:
        return _event(await conn.request(b"SUB", self.rid, self.owner.sign))

    async def send(self, conn: DeployedClient, body: bytes) -> str:
        corr = self.fixed_corr if self.fault == "reused-corr-id" else None
        return (await conn.request(b"SEND F " + body, self.sid, corr_id=corr)).command.decode()

    async def ack(self, conn: DeployedClient, msg_id: bytes) -> Event | None:
        if self.fault == "wrong-ack":
            await conn.request(ack_command(os.urandom(24)), self.rid, self.owner.sign)
        return _event(await conn.request(ack_command(msg_id), self.rid, self.owner.sign))

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
    """The flow over smpref's own client, at the seed version or a deployed one."""

    def __init__(self, address: str, version: int | None = None) -> None:
        super().__init__()
        self.version = version
        seed = version is None or version == SMPREF_VERSION
        self.ctx = Context(address, extended=seed, version=version or SMPREF_VERSION,
                           forced=version)
        self.queue: Queue | None = None

    async def connect(self) -> SmpClient:
        return await SmpClient.connect(self.ctx.address, version=self.version)

    async def create(self, conn: SmpClient) -> None:
        self.queue = await self.ctx.create(conn, subscribe=True)

    async def subscribe(self, conn: SmpClient) -> Event | None:
        assert self.queue is not None
        return _smpref_event(await conn.request(SUB(), self.queue.rid, self.queue.key))

    async def send(self, conn: SmpClient, body: bytes) -> str:
        assert self.queue is not None
        reply = await self.ctx.send(conn, self.queue, body)
        return reply.tag if reply.tag != "ERR" else f"ERR {reply.message.error}"  # type: ignore[attr-defined]

    async def ack(self, conn: SmpClient, msg_id: bytes) -> Event | None:
        assert self.queue is not None
        return _smpref_event(await conn.request(ACK(msg_id=msg_id), self.queue.rid,
                                                self.queue.key))

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
