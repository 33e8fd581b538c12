"""The reference model: a pure, sans-IO SMP server and the client-side helper.

``Server`` processes transmissions against a ``QueueStore`` with an injected clock and random
source; ``ClientSession`` builds authorized transmissions, link data and reads responses.
"""

from __future__ import annotations

from smpref.model.config import DAY, ServerConfig
from smpref.model.environment import Clock, ManualClock, Random, SeededRandom
from smpref.model.queue_store import MemoryStore, QueueStore
from smpref.model.server import Outgoing, Server

__all__ = [
    "DAY",
    "Clock",
    "ManualClock",
    "MemoryStore",
    "Outgoing",
    "QueueStore",
    "Random",
    "SeededRandom",
    "Server",
    "ServerConfig",
]
