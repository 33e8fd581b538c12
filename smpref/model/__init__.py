"""The reference model: a pure, sans-IO SMP server.

``Server`` processes transmissions against a ``QueueStore`` with an injected clock and random
source; :mod:`smpref.model.rules` is the table that decides the outcome of every command that
decodes and passes its credential rule (the few answers the generic step gives itself are
listed in that module), and :mod:`smpref.model.effects` what each accepted command does. The
client side lives in :mod:`smpref.client.core`; what tests the model lives in
:mod:`smpref.testing`.
"""

from __future__ import annotations

from smpref.model.config import DAY, ServerConfig
from smpref.model.environment import Clock, ManualClock
from smpref.model.queue_store import MemoryStore, QueueStore
from smpref.model.server import Server
from smpref.model.server_state import Observer
from smpref.model.sessions import Outgoing

__all__ = [
    "DAY",
    "Clock",
    "ManualClock",
    "MemoryStore",
    "Observer",
    "Outgoing",
    "QueueStore",
    "Server",
    "ServerConfig",
]
