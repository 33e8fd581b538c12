"""The signature of a failure: stable across seeds and across shrinking.

Like Hypothesis's ``InterestingOrigin``, it is the exception's type and the place it was raised
(the innermost frame inside smpref or the tests: its file, function and statement), never its
message, which carries random IDs and keys. The statement's text, not its line number, names
the place: two assertions in one function are two failures (the rotation machine's end check
asserts both "every message arrived" and "every rotation ended"), and an edit elsewhere in the
file does not rename a known failure. A live target adds the command and the answer that
diverged, by tag only.
"""

from __future__ import annotations

import hashlib
import traceback
from pathlib import PurePath


def origin(exc: BaseException) -> str:
    """``Type@module/file.py:function:statement``: the exception and the innermost frame of
    smpref's (the statement's source text, stripped, when the source is there)."""
    frames = traceback.extract_tb(exc.__traceback__)
    ours = [f for f in frames if "smpref" in PurePath(f.filename).parts
            or "tests" in PurePath(f.filename).parts] or frames
    where = "?"
    if ours:
        frame = ours[-1]
        path = PurePath(frame.filename)
        where = f"{'/'.join(path.parts[-2:])}:{frame.name}:{(frame.line or '').strip()}"
    return f"{type(exc).__name__}@{where}"


def signature(kind: str, *parts: str) -> str:
    """A short stable name: the readable kind and a digest of the parts."""
    digest = hashlib.sha256("\x00".join((kind, *parts)).encode()).hexdigest()[:12]
    return f"{kind}#{digest}"


def failure_message(exc: BaseException) -> str:
    """The first line of ``Type: message``, at most 500 characters: the runs table's
    ``message``."""
    return f"{type(exc).__name__}: {exc}".splitlines()[0][:500]


def shrink_now(found: str, known: frozenset[str], shrunk: set[str] | None) -> bool:
    """Whether a failure with signature ``found`` is to be shrunk: not when it is known, nor
    when this target already shrank it (a target runs its seeds in ascending order, so the one
    it shrinks is its smallest), nor at all when ``shrunk`` is None (a campaign's first pass,
    which shrinks afterwards, once per campaign: :func:`smpref.campaign.spark_job.run_campaign`).
    Records it as shrunk when it is."""
    if shrunk is None or found in known or found in shrunk:
        return False
    shrunk.add(found)
    return True
