"""SMP clients: a sans-IO core (keys, authorized transmissions, link data, the ratchet mirror)
and an asyncio connection over TLS built on it.

``from smpref.client import SmpClient, OwnedQueue, ...`` is the public API; inside smpref,
modules import :mod:`smpref.client.core` or :mod:`smpref.client.connection` directly. The
asyncio connection is imported only when it is asked for, so that code using the sans-IO core
does not load asyncio and the TLS transport.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

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

if TYPE_CHECKING:
    from smpref.client.connection import SmpClient

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


def __getattr__(name: str) -> Any:
    if name == "SmpClient":
        from smpref.client.connection import SmpClient

        return SmpClient
    raise AttributeError(f"module 'smpref.client' has no attribute {name!r}")
