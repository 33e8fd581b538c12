"""Hooks for whoever watches a server's clients: the client checker
(:mod:`smpref.clientcheck`) judges every client that connects, and puts it in situations of its
choosing. The server calls each hook directly (typed) on :func:`guard`'s result: the watcher
behind a guard that logs and ignores its failures, or, without a watcher, hooks that do nothing.

Where each hook runs matters: :meth:`Watcher.judge` and :meth:`Watcher.pushed` run on the
engine's thread, with the model between two transmissions (its store and sessions may be read
there, never changed); every other hook runs on the event loop. A watcher that keeps state
across both guards it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

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


class Watcher:
    """The hooks a server calls on whoever watches its clients. Every hook does nothing; a
    watcher overrides what it needs. The server calls them through :func:`guard`, so a
    watcher's failure never reaches the server."""

    def tls(self, conn: int, alpn: str | None, sni: str | None) -> None:
        """A TLS connection was accepted (``alpn``: what TLS selected, ``sni``: what the
        client sent)."""

    def tls_refused(self, refusal: TlsRefusal) -> None:
        """A TLS handshake failed (no connection was made): why, and what the client
        offered."""

    def hello(self, hello: Hello) -> None:
        """The SMP handshake ended, accepted or refused."""

    def block(self, conn: int, session_id: bytes, transmissions: list[bytes],
              padding: bytes | None) -> Intervention | None:
        """A good block arrived: its transmissions, and (``padding``) the bytes after the
        content of an unencrypted block (None when it was encrypted). What is returned is
        done to the block before the model sees it; None: nothing."""
        return None

    def bad_block(self, conn: int, session_id: bytes, error: str) -> None:
        """A block arrived that does not decrypt or whose batch does not parse: why."""

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


def guard(watcher: Watcher | None) -> Watcher:
    """The hooks a server calls: ``watcher``'s, each guarded (:class:`GuardedWatcher`), or,
    without a watcher, hooks that do nothing. A guarded watcher is returned as it is."""
    if watcher is None:
        return Watcher()
    return watcher if isinstance(watcher, GuardedWatcher) else GuardedWatcher(watcher)


def _failed(hook: str, exc: Exception) -> None:
    events.event("watcher_failed", logging.ERROR, hook=hook, error=repr(exc))


class GuardedWatcher(Watcher):
    """Calls a watcher's hooks; a hook that fails is logged (``watcher_failed``) and ignored
    (as if it had returned None), so that a watcher can never cost a client its answer or its
    connection, nor the server its loop or its engine. Each hook is looked up inside the guard
    too: a watcher may fail there as well.

    Every hook of :class:`Watcher` is overridden here (tests/test_serve_watcher.py checks it):
    one that is not would silently never reach the watcher."""

    def __init__(self, watcher: Watcher) -> None:
        self.watcher = watcher

    def tls(self, conn: int, alpn: str | None, sni: str | None) -> None:
        try:
            self.watcher.tls(conn, alpn, sni)
        except Exception as exc:
            _failed("tls", exc)

    def tls_refused(self, refusal: TlsRefusal) -> None:
        try:
            self.watcher.tls_refused(refusal)
        except Exception as exc:
            _failed("tls_refused", exc)

    def hello(self, hello: Hello) -> None:
        try:
            self.watcher.hello(hello)
        except Exception as exc:
            _failed("hello", exc)

    def block(self, conn: int, session_id: bytes, transmissions: list[bytes],
              padding: bytes | None) -> Intervention | None:
        try:
            return self.watcher.block(conn, session_id, transmissions, padding)
        except Exception as exc:
            _failed("block", exc)
            return None

    def bad_block(self, conn: int, session_id: bytes, error: str) -> None:
        try:
            self.watcher.bad_block(conn, session_id, error)
        except Exception as exc:
            _failed("bad_block", exc)

    def answered(self, session_id: bytes, transmissions: list[bytes]) -> None:
        try:
            self.watcher.answered(session_id, transmissions)
        except Exception as exc:
            _failed("answered", exc)

    def judge(self, model: Server, session_id: bytes, data: bytes) -> Judgement | None:
        try:
            return self.watcher.judge(model, session_id, data)
        except Exception as exc:
            _failed("judge", exc)
            return None

    def pushed(self, model: Server, outgoing: list[Outgoing]) -> None:
        try:
            self.watcher.pushed(model, outgoing)
        except Exception as exc:
            _failed("pushed", exc)

    def closed(self, conn: int, session_id: bytes | None, reason: str) -> None:
        try:
            self.watcher.closed(conn, session_id, reason)
        except Exception as exc:
            _failed("closed", exc)


def give_judgement(judgement: Judgement, produced: list[Outgoing]) -> None:
    """Engine thread: hand a judgement (from :meth:`Watcher.judge`) what its transmission
    produced; one that fails is logged and ignored, as a failing hook is."""
    try:
        judgement(produced)
    except Exception as exc:
        _failed("judgement", exc)
