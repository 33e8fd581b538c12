"""The registry of campaign targets.

A target runs seeded programs: ``run(seed, steps)`` gives a :class:`RunRecord`, and the same
seed gives the same program on any executor. One target object serves one Spark partition:
``open`` before its first run (an embedded server starts there) and ``close`` after its last.
Nothing a run leaves may reach the next one, since Python workers are reused between tasks.

Targets register here by name, so a new machine (rotation, for one) plugs in as one more entry.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from smpref.campaign.run_records import RunRecord
from smpref.errors import UsageError


class Target(Protocol):
    """One partition's view of a target. A run whose failure has a signature in ``known`` is
    reported as known and not shrunk (:mod:`smpref.campaign.known_failures`); a new signature
    is shrunk the first time this target meets it, unless ``shrunk`` is None (then the run is
    reported as it ran)."""

    name: str
    known: frozenset[str]
    shrunk: set[str] | None

    def open(self) -> None: ...

    def run(self, seed: int, steps: int) -> RunRecord: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class TargetSpec:
    """A registered target: its name, what it is, and how to build one for a partition."""

    name: str
    summary: str
    factory: Callable[[str | None], Target]
    needs_address: bool = False


_REGISTRY: dict[str, TargetSpec] = {}


def register(spec: TargetSpec) -> None:
    _REGISTRY[spec.name] = spec


def targets() -> dict[str, TargetSpec]:
    """Every registered target, by name (the built-in ones are registered on first use)."""
    from smpref.campaign import (  # noqa: F401  (they register)
        live_targets,
        machine_targets,
        rotation_target,
    )

    return dict(_REGISTRY)


def build(name: str, address: str | None, known: frozenset[str] = frozenset(), *,
          shrinks: bool = True) -> Target:
    """The target ``name`` (with ``address`` for ``server``) knowing the failure signatures
    ``known``, shrinking new ones unless ``shrinks`` is False, or a UsageError naming the
    choices."""
    registered = targets()
    spec = registered.get(name)
    if spec is None:
        raise UsageError(f"unknown target {name!r}: expected one of "
                         f"{', '.join(sorted(registered))}")
    if spec.needs_address and not address:
        raise UsageError(f"the target {name!r} needs --address smp://...")
    target = spec.factory(address)
    target.known = known
    if not shrinks:
        target.shrunk = None
    return target


def executor_name() -> str:
    """Where a run ran: host and process, for the runs table."""
    return f"{socket.gethostname()}:{os.getpid()}"
