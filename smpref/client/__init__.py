"""SMP clients: a sans-IO core (keys, authorized transmissions, link data, the ratchet mirror)
and an asyncio connection over TLS built on it.

``from smpref.client import SmpClient, OwnedQueue, ...`` is the public API; inside smpref,
modules import :mod:`smpref.client.core` or :mod:`smpref.client.connection` directly.
"""

from smpref.client.connection import SmpClient
from smpref.client.core import (
    AuthKeyPair,
    ClientSession,
    DhKeyPair,
    LinkKeys,
    OwnedQueue,
    Reply,
    make_link_blob,
    read_link_blob,
)
from smpref.errors import ClientError, UnsupportedError

__all__ = [
    "AuthKeyPair",
    "ClientError",
    "ClientSession",
    "DhKeyPair",
    "LinkKeys",
    "OwnedQueue",
    "Reply",
    "SmpClient",
    "UnsupportedError",
    "make_link_blob",
    "read_link_blob",
]
