"""The registry of conformance cases. Each case has a stable ID, a title, the requirement IDs it
checks, and what it needs from the server.

``needs`` is ``core`` (any server speaking SMP: deployed SMP at any version 6-18, or smpref's
seed design), ``deployed`` (deployed SMP's own commands, which the seed design replaces: a
server that negotiates the seed design reports skip), ``seed`` (smpref's seed extensions: a
deployed server reports skip) or ``clock`` (moving the server's clock: only the embedded
server). IDs are stable: reports and ``--cases`` globs use them. The cases register
themselves in the :class:`CaseGroup` of their area's module of :mod:`smpref.conform.cases`,
which puts the groups in order.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from smpref.conform.context import Context

CaseFunction = Callable[[Context], Awaitable[str | None]]
NEEDS = ("core", "deployed", "seed", "clock")


@dataclass(frozen=True)
class Case:
    id: str
    title: str
    requirements: tuple[str, ...]
    needs: str
    run: CaseFunction


class CaseGroup:
    """The cases of one area, in the order they were registered."""

    def __init__(self, area: str) -> None:
        self.area = area
        self.cases: list[Case] = []

    def case(self, case_id: str, title: str, *requirements: str,
             needs: str = "core") -> Callable[[CaseFunction], CaseFunction]:
        """Register the decorated function as a case of this group."""
        if needs not in NEEDS:
            raise ValueError(f"case {case_id}: needs must be one of {NEEDS}")

        def register(function: CaseFunction) -> CaseFunction:
            if any(c.id == case_id for c in self.cases):
                raise ValueError(f"case {case_id} is registered twice")
            self.cases.append(Case(case_id, title, requirements, needs, function))
            return function
        return register
