"""What an agent needs from the network: one request-answer call per SMP command.

The agent decides which command goes to which server; a :class:`Port` carries it and returns
the answer. Deliveries (``MSG`` pushed to a subscription, or ``MSG`` as the answer of ``SUB``
and ``ACK``) do not come back through the port: whoever runs the agent hands them to
:meth:`smpref.agent.agent.Agent.deliver`, in whatever order and with whatever delay the network
gives them. That keeps the agent free of I/O: the state machines run it over model servers in
memory, and the asyncio client runs it over TLS.
"""

from __future__ import annotations

from typing import Protocol

from smpref.client.core import AuthKeyPair, Reply
from smpref.wire.structs import Command


class Port(Protocol):
    """Sends one command to a server and returns its answer."""

    def request(self, server: bytes, message: Command, entity_id: bytes,
                key: AuthKeyPair | None) -> Reply:
        """The answer of ``server`` to ``message``: a ``MSG`` answer means the command was
        accepted and the delivery is on its way to :meth:`Agent.deliver`."""
        ...
