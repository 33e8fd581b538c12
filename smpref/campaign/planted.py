"""Bugs planted on purpose, to show that a campaign finds, deduplicates, shrinks and replays
what it should. Test-only: a bug is planted only when the environment variable
``SMPREF_TEST_PLANT`` names it, in the process that reads it (the campaign forwards the variable
to its executors). Nothing in smpref sets it.

- ``ack-any-id``: the model accepts an ACK whose message ID is not the delivered one, so the
  delivered message is acknowledged by any ACK (MSG-4 broken).
- ``unsigned-send``: the model accepts an unsigned SEND on a secured queue (MSG-1 broken).
- ``server-quota``: ``smpref serve`` (not the model) keeps a quota of 2 messages instead of its
  configured one, so SEND gets ERR QUOTA where the model still accepts (MSG-5 broken).
"""

from __future__ import annotations

import os
from collections.abc import Callable

from smpref.errors import UsageError

ENV = "SMPREF_TEST_PLANT"


def _ack_any_id() -> None:
    from smpref.model import rules
    from smpref.model.rules import Guard

    rules.GUARDS[Guard.OTHER_MESSAGE] = lambda _step: False


def _unsigned_send() -> None:
    from smpref.model import server
    from smpref.model.states import Credential

    honest = server.decide_step  # type: ignore[attr-defined]

    def decide_step(step):  # type: ignore[no-untyped-def]
        if step.command.TAG == "SEND" and step.credential is Credential.NONE:
            step.credential = Credential.VALID
        return honest(step)

    server.decide_step = decide_step  # type: ignore[attr-defined]


def _server_quota() -> None:
    from dataclasses import replace

    from smpref.serve import listener

    honest = listener.SmpServer.__init__

    def init(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        honest(self, *args, **kwargs)
        self.model.config = replace(self.model.config, quota=2)

    listener.SmpServer.__init__ = init  # type: ignore[method-assign]


BUGS: dict[str, Callable[[], None]] = {"ack-any-id": _ack_any_id, "unsigned-send": _unsigned_send,
                                       "server-quota": _server_quota}
_planted: set[str] = set()


def plant_from_environment() -> None:
    """Plant the bug ``SMPREF_TEST_PLANT`` names, once per process; nothing when it is unset."""
    name = os.environ.get(ENV)
    if not name or name in _planted:
        return
    if name not in BUGS:
        raise UsageError(f"{ENV}={name!r} names no planted bug: expected one of "
                         f"{', '.join(sorted(BUGS))}")
    BUGS[name]()
    _planted.add(name)
