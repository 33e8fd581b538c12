"""Hooks for whoever watches a server's clients: the client checker
(:mod:`smpref.clientcheck`) judges every client that connects, and puts it in situations of its
choosing. A server without a watcher calls none of this.

Where each hook runs matters: :meth:`Watcher.judge` and :meth:`Watcher.pushed` run on the
engine's thread, with the model between two transmissions (its store and sessions may be read
there, never changed); every other hook runs on the event loop. A watcher that keeps state
across both guards it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from smpref.model.server import Outgoing, Server
from smpref.serve import events
from smpref.transport.tls import TlsRefusal
from smpref.wire.dialects import Dialect
from smpref.wire.structs import Response

#: something the server does on its own in the engine (:mod:`smpref.model.server_events`):
#: it may change the model, and returns what it pushes
ServerEvent = Callable[[Server], list[Outgoing]]
#: a transmission answered by the watcher instead of the model: its corrId, its entity ID and
#: the answer
Refusal = tuple[bytes, bytes, Response]
#: called with everything one transmission produced (its answer first, then its pushes)
Judgement = Callable[[list[Outgoing]], None]


@dataclass
class Intervention:
    """What the watcher does to a block a client sent, before the model sees it."""

    #: answer this block only after so many seconds (its later blocks wait behind it)
    delay: float = 0.0
    #: transmissions (by index in the block) answered with this response, never given to
    #: the model: as if the server had failed them
    refuse: dict[int, Refusal] = field(default_factory=dict)
    #: run in the same engine job, after the block's transmissions: what it pushes is sent
    #: with their answers, in the same block when it fits
    after: ServerEvent | None = None
    #: called after ``delay`` with whether the client closed its side meanwhile
    waited: Callable[[bool], None] | None = None


@dataclass(frozen=True)
class Hello:
    """A client's SMP handshake as the server saw it."""

    conn: int
    session_id: bytes
    dialect: Dialect
    #: the versions the server offered
    offered: tuple[int, int]
    #: the client hello's bytes (unpadded); None when none came
    data: bytes | None
    #: the version the client picked, when the hello was accepted
    version: int | None
    #: deployed's handshake error and why, when it was refused
    error: str | None = None
    reason: str | None = None


def call_hook(watcher: Watcher | None, hook: str, *args: Any) -> Any:
    """Call ``watcher``'s ``hook`` (None without a watcher)."""
    if watcher is None:
        return None
    # the hook is looked up inside the guard too: a watcher may fail there as well
    return guarded(hook, lambda: getattr(watcher, hook)(*args))


def guarded(hook: str, function: Callable[..., Any], *args: Any) -> Any:
    """Call a watcher's function; one that fails is logged and ignored (None), so that a
    watcher can never cost a client its answer or its connection, nor the server its loop
    or its engine."""
    try:
        return function(*args)
    except Exception as exc:
        events.event("watcher_failed", logging.ERROR, hook=hook, error=repr(exc))
        return None


class Watcher:
    """Every hook does nothing; a watcher overrides what it needs."""

    def tls(self, conn: int, alpn: str | None, sni: str | None) -> None:
        """A TLS connection was accepted (``alpn``: what TLS selected, ``sni``: what the
        client sent)."""

    def tls_refused(self, refusal: TlsRefusal) -> None:
        """A TLS handshake failed (no connection was made): why, and what the client
        offered."""

    def hello(self, hello: Hello) -> None:
        """The SMP handshake ended, accepted or refused."""

    def block(self, conn: int, session_id: bytes,
              transmissions: list[bytes] | None, error: str | None,
              padding: bytes | None) -> Intervention | None:
        """A block arrived: its transmissions, or (``transmissions`` None) why it is bad;
        ``padding``: the bytes after the content of an unencrypted block."""
        return None

    def answered(self, session_id: bytes, transmissions: list[bytes]) -> None:
        """The answers to a block's transmissions are queued for the client."""

    def judge(self, model: Server, session_id: bytes, data: bytes) -> Judgement | None:
        """Engine thread: a transmission is about to go to the model; the judgement returned
        gets what it produced."""
        return None

    def pushed(self, model: Server, outgoing: list[Outgoing]) -> None:
        """Engine thread: what a server event or a sweep pushed."""

    def closed(self, conn: int, session_id: bytes | None, reason: str) -> None:
        """A connection ended (``session_id`` None: before its handshake ended)."""
