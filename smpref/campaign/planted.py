"""Bugs planted on purpose, to show that a campaign finds, deduplicates, shrinks and replays
what it should. Test-only: a bug is planted only when the environment variable
``SMPREF_TEST_PLANT`` names it. Nothing in smpref sets it.

A campaign reads the variable once, in the driver, and each task plants the bug for its own
runs and takes it out when it ends (:func:`planted`): Spark reuses Python workers between
tasks, and a test session's SparkSession runs other campaigns after a planted one. ``campaign
replay`` plants it for its whole process (:func:`plant_from_environment`).

- ``ack-any-id``: the model accepts an ACK whose message ID is not the delivered one, so the
  delivered message is acknowledged by any ACK (MSG-4 broken).
- ``unsigned-send``: the model accepts an unsigned SEND on a secured queue (MSG-1 broken).
- ``server-quota``: ``smpref serve`` (not the model) keeps a quota of 2 messages instead of its
  configured one, so SEND gets ERR QUOTA where the model still accepts (MSG-5 broken).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any
from unittest import mock

from smpref.errors import UsageError

ENV = "SMPREF_TEST_PLANT"

#: a bug as unittest.mock's patcher: entered (or started) it is planted, left (or stopped) it
#: is taken out again
Patch = AbstractContextManager[Any]


def _ack_any_id() -> Patch:
    from smpref.model import rules
    from smpref.model.rules import Guard

    return mock.patch.dict(rules.GUARDS, {Guard.OTHER_MESSAGE: lambda _step: False})


def _unsigned_send() -> Patch:
    from smpref.model import server
    from smpref.model.states import Credential

    honest = server.decide_step  # type: ignore[attr-defined]

    def decide_step(step):  # type: ignore[no-untyped-def]
        if step.command.TAG == "SEND" and step.credential is Credential.NONE:
            step.credential = Credential.VALID
        return honest(step)

    return mock.patch.object(server, "decide_step", decide_step)


def _server_quota() -> Patch:
    from dataclasses import replace

    from smpref.serve import listener

    honest = listener.SmpServer.__init__

    def init(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        honest(self, *args, **kwargs)
        self.model.config = replace(self.model.config, quota=2)

    return mock.patch.object(listener.SmpServer, "__init__", init)


BUGS: dict[str, Callable[[], Patch]] = {"ack-any-id": _ack_any_id,
                                        "unsigned-send": _unsigned_send,
                                        "server-quota": _server_quota}
_planted: set[str] = set()


def plant_name() -> str | None:
    """The bug ``SMPREF_TEST_PLANT`` names, or None when it is unset; a UsageError when it
    names none of :data:`BUGS`."""
    name = os.environ.get(ENV)
    if not name:
        return None
    if name not in BUGS:
        raise UsageError(f"{ENV}={name!r} names no planted bug: expected one of "
                         f"{', '.join(sorted(BUGS))}")
    return name


@contextmanager
def planted(name: str | None) -> Iterator[None]:
    """The bug ``name`` planted for the block and taken out after it, however the block ends
    (nothing when ``name`` is None, or when this process planted it for good)."""
    if name is None or name in _planted:
        yield
        return
    with BUGS[name]():
        yield


def plant_from_environment() -> None:
    """Plant the bug ``SMPREF_TEST_PLANT`` names for the rest of this process, once; nothing
    when it is unset."""
    name = plant_name()
    if name is None or name in _planted:
        return
    BUGS[name]().start()  # type: ignore[attr-defined]  # a patcher; never stopped
    _planted.add(name)
