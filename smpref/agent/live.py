"""Agents over real servers: a :class:`~smpref.agent.port.Port` over TLS.

:class:`LivePort` keeps one :class:`~smpref.client.connection.SmpClient` per server, opened
when the agent first needs it, on an asyncio loop in a background thread, so the agent itself
stays synchronous and free of I/O. A server is named in agent messages by its ``smp://``
address. Deliveries (MSG pushed to a subscription, or the MSG answering SUB or ACK) are kept
in arrival order until :meth:`LivePort.deliveries` hands them over.

This module does I/O; the rest of :mod:`smpref.agent` does not.
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from collections.abc import Coroutine
from typing import Any, TypeVar

from smpref.client.connection import SmpClient
from smpref.client.core import AuthKeyPair, Reply
from smpref.wire.structs import Command

T = TypeVar("T")


class LivePort:
    """One agent's connections to real servers. Close it when done."""

    def __init__(self, *, timeout: float = 10.0) -> None:
        self.timeout = timeout
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.clients: dict[bytes, SmpClient] = {}
        self.inbox: deque[Reply] = deque()

    def _run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(
            self.timeout + 5)

    def _client(self, server: bytes) -> SmpClient:
        client = self.clients.get(server)
        if client is None or client.closed_reason is not None:
            client = self._run(SmpClient.connect(server.decode(), timeout=self.timeout))
            self.clients[server] = client
        return client

    def request(self, server: bytes, message: Command, entity_id: bytes,
                key: AuthKeyPair | None) -> Reply:
        """Send one command to the server named by its ``smp://`` address; its answer."""
        client = self._client(server)
        reply = self._run(client.request(message, entity_id, key, timeout=self.timeout))
        if reply.tag == "MSG":
            self.inbox.append(reply)
        return reply

    def deliveries(self) -> list[Reply]:
        """Every MSG that arrived since the last call, oldest first."""
        for client in self.clients.values():
            while not client.events.empty():
                event = client.events.get_nowait()
                if event.tag == "MSG":
                    self.inbox.append(event)
        out = list(self.inbox)
        self.inbox.clear()
        return out

    def close(self) -> None:
        for client in self.clients.values():
            self._run(client.close())
        self.clients.clear()
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
        self.loop.close()
