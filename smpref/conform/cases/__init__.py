"""The conformance cases, one module per area, each with its :class:`CaseGroup` (the queues
area, too long for one module, is a package whose ``group`` joins its parts').

:data:`CASES` lists every case in the order they run and appear in reports: the areas in the
order below, each area's cases in the order its module registers them.
"""

from smpref.conform.cases import (
    authorization,
    deployed_short_links,
    expiry,
    lifecycle,
    limits,
    links,
    malformed,
    message_delivery,
    negotiation,
    notifications,
    queues,
    rotation,
    routing,
    transport,
)
from smpref.conform.registry import Case, CaseGroup

AREAS: tuple[CaseGroup, ...] = (authorization.group, lifecycle.group,
                                message_delivery.group, queues.group, links.group,
                                deployed_short_links.group,
                                notifications.group, malformed.group, negotiation.group,
                                transport.group, limits.group, expiry.group, rotation.group,
                                routing.group)
CASES: list[Case] = [c for area in AREAS for c in area.cases]
# an ID names one case in reports and in --cases globs, across every area
_twice = sorted({c.id for c in CASES if [d.id for d in CASES].count(c.id) > 1})
if _twice:
    raise ValueError(f"conformance case IDs registered in two areas: {', '.join(_twice)}")

__all__ = ["AREAS", "CASES", "Case"]
