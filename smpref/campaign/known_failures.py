"""Known failure signatures: what a campaign reports apart and does not shrink again.

A campaign against a target that fails by design (``rotation-deployed``: the deployed flow's
documented losses) or against a server whose faults are already filed would otherwise spend
its time shrinking the same failures run after run, and its exit status could not tell a new
fault from an old one. A file of known signatures fixes both: a run whose failure carries a
known signature is recorded as failed and ``known``, with its program unshrunk; only new
signatures are shrunk, and only they count for the exit status.

The file is TOML, one table per signature::

    [[known]]
    signature = "rotation-deployed#0123456789ab"   # as the runs table prints it
    title = "what the failure is"
    reference = "where it is written down"         # optional

smpref ships its own file (the deployed flow's flaws, docs/rotation.md); ``smpref campaign run
--known FILE`` adds a user's.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from smpref.errors import UsageError

#: the file smpref ships, beside this module
SHIPPED = Path(__file__).with_name("known-failures.toml")


@dataclass(frozen=True)
class KnownFailure:
    """One entry of a known-failures file."""

    signature: str
    title: str
    reference: str
    source: str


def read_known(path: Path) -> list[KnownFailure]:
    """The entries of one file; a UsageError naming the file and the entry when it is not
    a readable known-failures file."""
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"cannot read the known-failures file: {exc.strerror or exc}",
                         path=str(path), option="--known") from exc
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"the known-failures file is not TOML: {exc}", path=str(path),
                         option="--known") from exc
    entries = document.get("known", [])
    if not isinstance(entries, list):
        raise UsageError("the known-failures file needs [[known]] tables", path=str(path),
                         option="--known")
    found = []
    for number, entry in enumerate(entries, 1):
        where = f"[[known]] entry {number}"
        if not isinstance(entry, dict):
            raise UsageError(f"{where} is not a table", path=str(path), option="--known")
        sig, title = entry.get("signature"), entry.get("title")
        if not isinstance(sig, str) or "#" not in sig:
            raise UsageError(f"{where}: 'signature' must be a string like 'target#digest'",
                             path=str(path), option="--known")
        if not isinstance(title, str) or not title:
            raise UsageError(f"{where}: 'title' must be a non-empty string", path=str(path),
                             option="--known")
        reference = entry.get("reference", "")
        if not isinstance(reference, str):
            raise UsageError(f"{where}: 'reference' must be a string", path=str(path),
                             option="--known")
        found.append(KnownFailure(sig, title, reference, str(path)))
    return found


def load_known(extra: Iterable[Path] = ()) -> dict[str, KnownFailure]:
    """The shipped entries, then those of ``extra`` files, by signature (a later file's title
    wins for a signature listed twice)."""
    known: dict[str, KnownFailure] = {}
    for path in (SHIPPED, *extra):
        for entry in read_known(path):
            known[entry.signature] = entry
    return known
