"""What a conformance case comes to: its :class:`Status`, and the verdicts a case raises to
end with one other than a plain pass (:class:`Fail`, :class:`Skip`, :class:`Info`).

The verdicts are exceptions because a case is straight-line code that stops where it finds
its answer; they are outcomes, not errors of smpref, so they live here with the runner that
catches them (:func:`smpref.conform.runner.run_case`) rather than in :mod:`smpref.errors`.
"""

from __future__ import annotations

import enum
from typing import ClassVar

from smpref.errors import SmprefError


class Status(enum.Enum):
    """A case's result; the value is its name in the JSON and terminal reports."""

    #: the server did what the case's requirements say
    PASS = "pass"
    #: the server broke a requirement: the report quotes it
    FAIL = "fail"
    #: the server does not support what the case needs (seed extensions at a deployed
    #: version, clock control on a server that is not embedded)
    SKIP = "skip"
    #: an observation, not a verdict on conformance
    INFO = "info"


class CaseVerdict(SmprefError):
    """A case's outcome other than a plain pass (``status`` names it), raised by the case."""

    status: ClassVar[Status] = Status.PASS

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class Fail(CaseVerdict):
    """The server broke a requirement."""

    status = Status.FAIL


class Skip(CaseVerdict):
    """The server does not support what the case needs."""

    status = Status.SKIP


class Info(CaseVerdict):
    """An observation, not a verdict on conformance."""

    status = Status.INFO
